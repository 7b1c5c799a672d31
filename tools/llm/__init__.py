"""Language-model helpers: sentence embedders (:mod:`taskloom.tools.llm.embedders`), the
one LLM interface (:mod:`taskloom.tools.llm.client`, disk cache in :mod:`taskloom.tools.llm.cache`)
and the prompt templates (:mod:`taskloom.tools.llm.templates`)."""

from __future__ import annotations

from taskloom.tools.llm.embedders import (
    MINILM_PACKAGE,
    MINILM_SHA256,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    make_embedder,
)
from taskloom.tools.llm.cache import LLMCache
from taskloom.tools.llm.templates import render_prompt
from taskloom.tools.llm.client import (
    LLM,
    Completion,
    LLMError,
    LLMUnavailable,
    NoneLLM,
    OpenAILLM,
    TokenUsage,
    UsageTotals,
    make_llm,
)

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "HashingEmbedder",
    "make_embedder",
    "MINILM_SHA256",
    "MINILM_PACKAGE",
    "OpenAIEmbedder",
    "LLM",
    "Completion",
    "TokenUsage",
    "UsageTotals",
    "LLMError",
    "LLMUnavailable",
    "NoneLLM",
    "OpenAILLM",
    "make_llm",
    "LLMCache",
    "render_prompt",
]

"""Language-model helpers: sentence embedders (see :mod:`taskloom.tools.llm.embedders`)."""

from __future__ import annotations

from taskloom.tools.llm.embedders import (
    MINILM_PACKAGE,
    MINILM_SHA256,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    make_embedder,
)

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "HashingEmbedder",
    "make_embedder",
    "MINILM_SHA256",
    "MINILM_PACKAGE",
]

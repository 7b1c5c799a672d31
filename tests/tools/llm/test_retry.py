"""Retries (tenacity) around the openai client, against the local OpenAI-compatible TEST DOUBLE over real HTTP."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).parent))
import openai_double  # noqa: E402

from taskloom.tools.llm import LLM, Completion, LLMError, OpenAILLM  # noqa: E402


class Answer(BaseModel):
    value: int


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        yield d


@pytest.mark.anyio
async def test_invalid_replies_are_asked_again_without_backoff(double: openai_double.OpenAIDouble) -> None:
    double.replies.extend(["nope", "{}", json.dumps({"value": 7})])
    llm = OpenAILLM(double.base_url, "m", backoff_base=30.0, max_retries=2)
    start = time.perf_counter()
    out = await llm.complete([{"role": "user", "content": "x"}], schema=Answer)
    assert time.perf_counter() - start < 15.0  # a transport retry would have waited ≥ 30 s (the margin is for a loaded machine)
    assert out.parsed == Answer(value=7) and llm.usage.requests == 3 and llm.usage.calls == 1
    await llm.aclose()


@pytest.mark.anyio
async def test_every_http_request_is_counted_and_the_clients_own_retries_are_off(double: openai_double.OpenAIDouble) -> None:
    double.fail_next(2, status=503)
    double.replies.append(json.dumps({"value": 1}))
    llm = OpenAILLM(double.base_url, "m", backoff_base=0.001, max_retries=2)
    assert llm._client.max_retries == 0
    out = await llm.complete([{"role": "user", "content": "x"}], schema=Answer, tag="t")
    assert out.parsed.value == 1 and len(double.log) == 3
    assert llm.usage_report()["by_tag"]["t"]["requests"] == 3
    await llm.aclose()


@pytest.mark.anyio
async def test_transport_and_invalid_replies_share_one_budget(double: openai_double.OpenAIDouble) -> None:
    double.fail_next(1, status=500)
    double.replies.extend(["bad", "still bad", json.dumps({"value": 2})])
    llm = OpenAILLM(double.base_url, "m", backoff_base=0.001, max_retries=2)
    with pytest.raises(LLMError, match=r"after 3 attempts.*did not validate against Answer"):
        await llm.complete([{"role": "user", "content": "x"}], schema=Answer)
    assert len(double.log) == 3 and llm.usage.failed_calls == 1
    await llm.aclose()


@pytest.mark.anyio
async def test_completion_is_generic_in_the_schema(double: openai_double.OpenAIDouble) -> None:
    double.replies.extend([json.dumps({"value": 3}), "plain"])
    backend = OpenAILLM(double.base_url, "m")
    llm: LLM = backend
    typed: Completion[Answer] = await llm.complete([{"role": "user", "content": "x"}], schema=Answer)
    text: Completion[None] = await llm.complete([{"role": "user", "content": "y"}])
    assert typed.parsed.value + 1 == 4 and text.parsed is None and text.text == "plain"
    assert Completion[Answer].model_validate({"text": "", "parsed": {"value": 5}}).parsed == Answer(value=5)
    await backend.aclose()

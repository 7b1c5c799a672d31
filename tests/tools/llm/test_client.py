"""OpenAILLM / NoneLLM / make_llm against the local OpenAI-compatible TEST DOUBLE, over real HTTP."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).parent))
import openai_double  # noqa: E402

from taskloom.tools.errors import InputError, TaskloomError  # noqa: E402
from taskloom.tools.llm import LLM, LLMError, LLMUnavailable, NoneLLM, OpenAILLM, make_llm  # noqa: E402
from taskloom.tools.llm.client import strip_fences  # noqa: E402
from taskloom.tools.settings import Settings  # noqa: E402


class Step(BaseModel):
    action: str
    target: str
    count: int


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble() as d:
        yield d


def make(double: openai_double.OpenAIDouble, **kw) -> OpenAILLM:
    kw.setdefault("backoff_base", 0.001)
    kw.setdefault("max_retries", 4)
    return OpenAILLM(double.base_url, "double-model", None, **kw)


STEP = json.dumps({"action": "click", "target": "#submit", "count": 2})
MSGS = [{"role": "system", "content": "You plan steps."}, {"role": "user", "content": "Plan one step."}]


@pytest.mark.anyio
async def test_plain_text_completion(double):
    double.replies.append("hello there")
    llm = make(double)
    out = await llm.complete([{"role": "user", "content": "hi"}])
    assert out.text == "hello there" and out.parsed is None and not out.cached
    assert out.model == "double-model"
    assert out.usage.prompt_tokens == 1 and out.usage.completion_tokens == 2
    body = double.chat_requests()[0]
    assert body["temperature"] == 0.1 and "response_format" not in body and "max_tokens" not in body
    await llm.aclose()


@pytest.mark.anyio
async def test_structured_output_parsed_and_schema_sent(double):
    double.replies.append("```json\n" + STEP + "\n```")
    llm = make(double)
    out = await llm.complete(MSGS, schema=Step, temperature=0.0, max_tokens=50)
    assert isinstance(out.parsed, Step)
    assert out.parsed == Step(action="click", target="#submit", count=2)
    assert json.loads(out.text) == json.loads(STEP)
    (body,) = double.chat_requests()
    rf = body["response_format"]
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "Step" and rf["json_schema"]["strict"] is False
    assert rf["json_schema"]["schema"] == Step.model_json_schema()
    # the schema is also in the (single, first) system message
    systems = [m for m in body["messages"] if m["role"] == "system"]
    assert len(systems) == 1 and body["messages"][0]["role"] == "system"
    assert "You plan steps." in systems[0]["content"]
    assert json.dumps(Step.model_json_schema()) in systems[0]["content"]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 50
    await llm.aclose()


@pytest.mark.anyio
async def test_schema_system_message_added_when_none(double):
    double.replies.append(STEP)
    llm = make(double)
    await llm.complete([{"role": "user", "content": "go"}], schema=Step)
    msgs = double.chat_requests()[0]["messages"]
    assert msgs[0]["role"] == "system" and '"count"' in msgs[0]["content"]
    assert msgs[1] == {"role": "user", "content": "go"}


@pytest.mark.anyio
async def test_invalid_json_then_valid_retries_with_error(double):
    double.replies.extend(["not json at all", STEP])
    llm = make(double)
    out = await llm.complete(MSGS, schema=Step, tag="t1")
    assert out.parsed.count == 2
    reqs = double.chat_requests()
    assert len(reqs) == 2
    second = reqs[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "not json at all"}
    assert second[-1]["role"] == "user" and "not valid" in second[-1]["content"]
    # both attempts' tokens are counted in the completion and the totals
    assert out.usage.prompt_tokens > 0
    assert llm.usage.requests == 2 and llm.usage.calls == 1


@pytest.mark.anyio
async def test_validation_error_also_retried(double):
    double.replies.extend([json.dumps({"action": "click"}), STEP])
    llm = make(double)
    out = await llm.complete(MSGS, schema=Step)
    assert out.parsed.target == "#submit"
    assert "target" in double.chat_requests()[1]["messages"][-1]["content"]


@pytest.mark.anyio
async def test_always_invalid_raises_after_max_attempts(double):
    double.handler = lambda body: "{broken"
    llm = make(double, max_retries=2)
    with pytest.raises(LLMError, match=r"failed after 3 attempts.*did not validate against Step"):
        await llm.complete(MSGS, schema=Step, tag="bad")
    assert len(double.chat_requests()) == 3
    assert llm.usage.failed_calls == 1 and llm.usage.calls == 0
    assert llm.usage_report()["by_tag"]["bad"]["failed_calls"] == 1
    assert issubclass(LLMError, TaskloomError)


@pytest.mark.anyio
async def test_503_twice_then_success_backs_off(double):
    double.fail_next(2, status=503)
    double.replies.append("fine")
    llm = make(double, backoff_base=0.05, seed=7)
    out = await llm.complete([{"role": "user", "content": "x"}])
    assert out.text == "fine"
    times = [e.at for e in double.log]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.05  # retry 1: base * 2**0 * (1 + jitter)
    assert times[2] - times[1] >= 0.10  # retry 2: base * 2**1 * (1 + jitter)


@pytest.mark.anyio
async def test_connection_drop_and_429_are_retried(double):
    double.fail_next(1, status="drop")
    double.fail_next(1, status=429)
    double.replies.append("after all")
    llm = make(double)
    assert (await llm.complete([{"role": "user", "content": "x"}])).text == "after all"
    assert len(double.log) == 3


@pytest.mark.anyio
async def test_transport_errors_exhaust_attempts(double):
    double.fail_next(10, status=500)
    llm = make(double, max_retries=3)
    with pytest.raises(LLMError, match=r"after 4 attempts.*InternalServerError"):
        await llm.complete([{"role": "user", "content": "x"}])
    assert len(double.log) == 4


@pytest.mark.anyio
async def test_client_error_is_not_retried(double):
    double.fail_next(1, status=400)
    llm = make(double)
    with pytest.raises(LLMError, match="refused the request"):
        await llm.complete([{"role": "user", "content": "x"}])
    assert len(double.log) == 1


def test_backoff_is_seeded_and_capped():
    a = OpenAILLM("http://127.0.0.1:9/v1", "m", seed=3, backoff_base=0.2, backoff_cap=1.0)
    b = OpenAILLM("http://127.0.0.1:9/v1", "m", seed=3, backoff_base=0.2, backoff_cap=1.0)
    da = [a.backoff_delay(k) for k in range(1, 8)]
    assert da == [b.backoff_delay(k) for k in range(1, 8)]
    assert 0.2 <= da[0] < 0.3 and 0.4 <= da[1] < 0.6
    assert max(da) == 1.0


@pytest.mark.anyio
async def test_cache_hit_skips_http_and_survives_new_instance(double, tmp_path):
    double.handler = lambda body: STEP
    cache = tmp_path / "cache"
    llm = make(double, cache_dir=cache)
    first = await llm.complete(MSGS, schema=Step, tag="a")
    second = await llm.complete(MSGS, schema=Step, tag="a")
    assert not first.cached and second.cached
    assert second.parsed == first.parsed and second.usage == first.usage
    assert len(double.chat_requests()) == 1
    assert llm.usage.calls == 2 and llm.usage.cached_calls == 1 and llm.usage.requests == 1

    fresh = make(double, cache_dir=cache)
    third = await fresh.complete(MSGS, schema=Step)
    assert third.cached and third.parsed == first.parsed
    assert len(double.chat_requests()) == 1
    assert fresh.usage.prompt_tokens == 0  # cache hits spend nothing

    # anything in the key changes → a miss
    await fresh.complete(MSGS, schema=Step, temperature=0.7)
    await fresh.complete(MSGS, schema=Step, max_tokens=10)
    await fresh.complete(MSGS)
    assert len(double.chat_requests()) == 4
    assert not list(cache.rglob("*.tmp"))


@pytest.mark.anyio
async def test_corrupt_cache_entry_is_a_miss(double, tmp_path):
    double.handler = lambda body: "v"
    llm = make(double, cache_dir=tmp_path)
    await llm.complete([{"role": "user", "content": "x"}])
    (entry,) = list(tmp_path.rglob("*.json"))
    entry.write_text("{truncated", encoding="utf-8")
    out = await llm.complete([{"role": "user", "content": "x"}])
    assert not out.cached and len(double.log) == 2


@pytest.mark.anyio
async def test_token_accounting_totals_and_per_tag(double):
    double.handler = lambda body: "one two three"
    llm = make(double)
    a = await llm.complete([{"role": "user", "content": "alpha beta"}], tag="task-1")
    b = await llm.complete([{"role": "user", "content": "gamma"}], tag="task-2")
    c = await llm.complete([{"role": "user", "content": "delta epsilon zeta"}], tag="task-1")
    await llm.complete([{"role": "user", "content": "untagged"}])
    assert (a.usage.prompt_tokens, b.usage.prompt_tokens, c.usage.prompt_tokens) == (2, 1, 3)
    rep = llm.usage_report()
    assert rep["model"] == "double-model"
    assert rep["total"]["calls"] == 4 and rep["total"]["prompt_tokens"] == 7 and rep["total"]["completion_tokens"] == 12
    assert rep["by_tag"]["task-1"] == {
        "calls": 2, "cached_calls": 0, "requests": 2, "failed_calls": 0, "prompt_tokens": 5, "completion_tokens": 6,
    }
    assert rep["by_tag"]["task-2"]["prompt_tokens"] == 1
    assert set(rep["by_tag"]) == {"task-1", "task-2"}


@pytest.mark.anyio
async def test_concurrency_limit_respected(double):
    double.delay = 0.15
    double.handler = lambda body: "slow"
    llm = make(double, max_concurrency=2)
    results: list[str] = []

    async def one(i: int) -> None:
        results.append((await llm.complete([{"role": "user", "content": f"q{i}"}])).text)

    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(one, i)
    assert results == ["slow"] * 6
    assert double.max_in_flight == 2


@pytest.mark.anyio
async def test_none_llm_raises_with_configuration_hint():
    llm = NoneLLM()
    assert llm.name == "none" and llm.available is False
    assert isinstance(llm, LLM)
    with pytest.raises(LLMUnavailable) as info:
        await llm.complete([{"role": "user", "content": "x"}])
    msg = str(info.value)
    for env in ("TASKLOOM_LLM_BACKEND=openai", "TASKLOOM_LLM_BASE_URL", "TASKLOOM_LLM_MODEL", "TASKLOOM_LLM_API_KEY"):
        assert env in msg
    assert isinstance(info.value, TaskloomError)
    assert llm.usage_report()["total"]["calls"] == 0


def test_make_llm_backends(tmp_path):
    assert isinstance(make_llm(Settings(workspace=tmp_path)), NoneLLM)
    llm = make_llm(
        Settings(
            workspace=tmp_path, llm_backend="openai", llm_base_url="http://127.0.0.1:9/v1", llm_model="m1",
            llm_api_key="sk-test", llm_temperature=0.3, llm_max_concurrency=3,
        ),
        cache_dir=tmp_path / "cache",
    )
    assert isinstance(llm, OpenAILLM) and isinstance(llm, LLM)
    assert llm.name == "m1" and llm.available and llm.temperature == 0.3 and llm.max_concurrency == 3
    assert llm.cache is not None and llm.cache.dir == tmp_path / "cache"


@pytest.mark.parametrize(
    ("kw", "missing", "present"),
    [
        ({}, ["TASKLOOM_LLM_BASE_URL", "TASKLOOM_LLM_MODEL"], []),
        ({"llm_model": "m"}, ["TASKLOOM_LLM_BASE_URL"], []),
        ({"llm_base_url": "http://x/v1"}, ["TASKLOOM_LLM_MODEL"], ["TASKLOOM_LLM_BASE_URL and"]),
    ],
)
def test_make_llm_openai_missing_settings(tmp_path, kw, missing, present):
    with pytest.raises(InputError) as info:
        make_llm(Settings(workspace=tmp_path, llm_backend="openai", **kw))
    head = str(info.value).split(".")[0]
    for env in missing:
        assert env in head
    for text in present:
        assert text not in head


def test_strip_fences():
    assert strip_fences('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fences('```\n{"a": 1}```') == '{"a": 1}'
    assert strip_fences('  {"a": 1}  ') == '{"a": 1}'

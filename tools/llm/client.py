"""The one LLM interface, with two backends: none (no model) and any OpenAI-compatible endpoint.

:class:`NoneLLM` refuses every call with :class:`LLMUnavailable`, telling the reader how
to configure a model. :class:`OpenAILLM` speaks the chat-completions API through the
``openai`` package, with structured outputs validated by pydantic, retries with seeded
exponential backoff, a concurrency limit, a disk cache and token accounting.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
from pydantic import BaseModel, ValidationError

from taskloom.tools.errors import InputError, TaskloomError
from taskloom.tools.llm.cache import LLMCache, cache_key

if TYPE_CHECKING:
    from taskloom.tools.settings import Settings

__all__ = [
    "LLM",
    "Completion",
    "TokenUsage",
    "UsageTotals",
    "LLMError",
    "LLMUnavailable",
    "NoneLLM",
    "OpenAILLM",
    "make_llm",
]

_CONFIGURE = (
    "To use a model, set TASKLOOM_LLM_BACKEND=openai, TASKLOOM_LLM_BASE_URL (an OpenAI-compatible "
    "endpoint, e.g. http://localhost:8000/v1), TASKLOOM_LLM_MODEL (the model name at that endpoint) "
    "and, if the endpoint needs one, TASKLOOM_LLM_API_KEY."
)


class LLMError(TaskloomError):
    """A language-model call failed for good (after retries, or with a non-retryable error)."""


class LLMUnavailable(TaskloomError):
    """No language model is configured."""


class TokenUsage(BaseModel):
    """Tokens of one completion (summed over its attempts)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


class Completion(BaseModel):
    """The result of :meth:`LLM.complete`.

    Attributes
    ----------
    text : str
        The reply text (for structured output: the JSON, with code fences removed).
    parsed : BaseModel or None
        The reply validated into the requested schema, or ``None`` without a schema.
    usage : TokenUsage
        Tokens spent on the call, including failed attempts; for a cache hit, what
        the original call spent.
    cached : bool
        True when served from the disk cache without an HTTP call.
    model : str
        The model that answered, as reported by the endpoint.
    """

    text: str
    parsed: Any = None
    usage: TokenUsage = TokenUsage()
    cached: bool = False
    model: str = ""


class UsageTotals(BaseModel):
    """Running totals of one backend, overall or for one tag.

    ``calls`` counts :meth:`LLM.complete` calls that returned; ``cached_calls`` those of
    them served from the cache; ``requests`` HTTP requests sent (attempts included);
    ``failed_calls`` calls that raised :class:`LLMError`. Tokens are those actually
    spent, so cache hits add none.
    """

    calls: int = 0
    cached_calls: int = 0
    requests: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``name`` is ``"none"`` or the model name; ``available`` says whether calls can succeed."""

    name: str
    available: bool

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[BaseModel] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion:
        """Complete the chat ``messages``; with ``schema``, the reply is validated into it."""
        ...

    def usage_report(self) -> dict[str, Any]:
        """Token and call totals, overall and per tag."""
        ...


class NoneLLM:
    """The backend when no model is configured: every call raises :class:`LLMUnavailable`."""

    name: str = "none"
    available: bool = False

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[BaseModel] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion:
        raise LLMUnavailable(f"No LLM is configured (TASKLOOM_LLM_BACKEND is 'none'). {_CONFIGURE}")

    def usage_report(self) -> dict[str, Any]:
        return {"model": self.name, "total": UsageTotals().model_dump(), "by_tag": {}}


_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def strip_fences(text: str) -> str:
    """``text`` without a surrounding Markdown code fence (```json … ```), trimmed."""
    m = _FENCE.match(text)
    return (m.group(1) if m else text).strip()


def _schema_instruction(schema_json: dict[str, Any]) -> str:
    return (
        "Reply with a single JSON object, and nothing else, that conforms to this JSON Schema:\n"
        + json.dumps(schema_json, ensure_ascii=False)
    )


def _with_schema(messages: list[dict[str, Any]], schema_json: dict[str, Any]) -> list[dict[str, Any]]:
    """``messages`` with the schema instruction in the (first) system message."""
    instruction = _schema_instruction(schema_json)
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system" and isinstance(out[0].get("content"), str):
        out[0]["content"] = out[0]["content"].rstrip() + "\n\n" + instruction
    else:
        out.insert(0, {"role": "system", "content": instruction})
    return out


class OpenAILLM:
    """A model behind any OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    base_url : str
        Endpoint base URL, e.g. ``http://localhost:8000/v1``.
    model : str
        Model name at that endpoint.
    api_key : str or None
        API key; ``None`` sends ``"none"`` (local servers accept anything).
    temperature : float
        Default sampling temperature.
    max_concurrency : int
        At most this many HTTP requests in flight at once (per instance).
    cache_dir : Path or None
        Disk cache directory; ``None`` disables caching.
    max_retries : int
        Retries after the first attempt, so at most ``max_retries + 1`` requests per
        call. Transport errors (connection, timeout, 429, 5xx) and invalid structured
        replies both count.
    timeout : float
        Per-request timeout, seconds.
    seed : int
        Seed of the private ``random.Random`` used for backoff jitter.
    backoff_base, backoff_cap : float
        Backoff before retry ``k`` (1-based) after a transport error is
        ``min(cap, base * 2**(k-1) * (1 + 0.5 * u))`` with ``u`` uniform in [0, 1).
    """

    available: bool = True

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        temperature: float = 0.1,
        max_concurrency: int = 4,
        cache_dir: Path | None = None,
        max_retries: int = 4,
        *,
        timeout: float = 120.0,
        seed: int = 0,
        backoff_base: float = 0.2,
        backoff_cap: float = 10.0,
    ) -> None:
        import openai

        if max_concurrency < 1:
            raise InputError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if max_retries < 0:
            raise InputError(f"max_retries must be at least 0, got {max_retries}")
        self.name = model
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.cache = LLMCache(cache_dir) if cache_dir is not None else None
        self._openai = openai
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "none", max_retries=0, timeout=timeout)
        self._semaphore = anyio.Semaphore(max_concurrency)
        self._rng = random.Random(seed)
        self.usage = UsageTotals()
        self.usage_by_tag: dict[str, UsageTotals] = {}
        self._transport_errors: tuple[type[Exception], ...] = (
            openai.APIConnectionError,  # includes APITimeoutError
            openai.APITimeoutError,
            openai.RateLimitError,
            openai.InternalServerError,
        )

    # -- accounting -------------------------------------------------------------------

    def _totals(self, tag: str) -> list[UsageTotals]:
        if not tag:
            return [self.usage]
        return [self.usage, self.usage_by_tag.setdefault(tag, UsageTotals())]

    def usage_report(self) -> dict[str, Any]:
        """``{"model", "total": {...}, "by_tag": {tag: {...}}}`` with :class:`UsageTotals` fields."""
        return {
            "model": self.model,
            "total": self.usage.model_dump(),
            "by_tag": {tag: u.model_dump() for tag, u in sorted(self.usage_by_tag.items())},
        }

    # -- the call ---------------------------------------------------------------------

    def backoff_delay(self, retry: int) -> float:
        """Seconds to wait before transport retry number ``retry`` (1-based)."""
        raw = self.backoff_base * (2 ** (retry - 1)) * (1.0 + 0.5 * self._rng.random())
        return min(self.backoff_cap, raw)

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[BaseModel] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion:
        """Complete ``messages``; see :class:`LLM`.

        Raises
        ------
        LLMError
            All attempts failed, or the endpoint refused the request (4xx other than 429).
        """
        temp = self.temperature if temperature is None else temperature
        schema_json = schema.model_json_schema() if schema is not None else None
        totals = self._totals(tag)

        key = cache_key(self.model, messages, schema_json, temp, max_tokens)
        if self.cache is not None:
            hit = self._from_cache(key, schema)
            if hit is not None:
                for t in totals:
                    t.calls += 1
                    t.cached_calls += 1
                return hit

        request: dict[str, Any] = {"model": self.model, "temperature": temp}
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        convo = list(messages)
        if schema is not None and schema_json is not None:
            convo = _with_schema(messages, schema_json)
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _SCHEMA_NAME.sub("_", schema.__name__)[:64] or "reply", "schema": schema_json, "strict": False},
            }

        usage = TokenUsage()
        attempts = self.max_retries + 1
        transport_retries = 0
        last_error = ""
        for attempt in range(1, attempts + 1):
            try:
                async with self._semaphore:
                    for t in totals:
                        t.requests += 1
                    response = await self._client.chat.completions.create(messages=convo, **request)  # type: ignore[call-overload, arg-type]
            except self._transport_errors as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                if attempt < attempts:
                    transport_retries += 1
                    await anyio.sleep(self.backoff_delay(transport_retries))
                continue
            except self._openai.APIError as exc:
                self._fail(totals)
                raise LLMError(
                    f"The LLM endpoint {self.base_url} refused the request for model {self.model!r}: "
                    f"{type(exc).__name__}: {exc}. Check TASKLOOM_LLM_BASE_URL, TASKLOOM_LLM_MODEL and TASKLOOM_LLM_API_KEY."
                ) from exc

            if response.usage is not None:
                usage.prompt_tokens += response.usage.prompt_tokens or 0
                usage.completion_tokens += response.usage.completion_tokens or 0
                for t in totals:
                    t.prompt_tokens += response.usage.prompt_tokens or 0
                    t.completion_tokens += response.usage.completion_tokens or 0
            content = response.choices[0].message.content if response.choices else None
            answered_by = response.model or self.model

            if schema is None:
                result = Completion(text=content or "", parsed=None, usage=usage, cached=False, model=answered_by)
                break
            text = strip_fences(content or "")
            try:
                parsed = schema.model_validate_json(text)
            except ValidationError as exc:
                last_error = f"reply did not validate against {schema.__name__}: {_short(exc)}"
                convo = [
                    *convo,
                    {"role": "assistant", "content": content or ""},
                    {
                        "role": "user",
                        "content": f"Your reply was not valid: {_short(exc)}\n"
                        "Reply again with only a JSON object that conforms to the schema.",
                    },
                ]
                continue
            result = Completion(text=text, parsed=parsed, usage=usage, cached=False, model=answered_by)
            break
        else:
            self._fail(totals)
            raise LLMError(
                f"The LLM call to model {self.model!r} at {self.base_url} failed after {attempts} attempts; "
                f"last error: {last_error}"
            )

        for t in totals:
            t.calls += 1
        if self.cache is not None:
            self.cache.put(key, {"text": result.text, "usage": result.usage.model_dump(), "model": result.model})
        return result

    def _fail(self, totals: list[UsageTotals]) -> None:
        for t in totals:
            t.failed_calls += 1

    def _from_cache(self, key: str, schema: type[BaseModel] | None) -> Completion | None:
        assert self.cache is not None
        entry = self.cache.get(key)
        if entry is None or not isinstance(entry.get("text"), str):
            return None
        parsed = None
        if schema is not None:
            try:
                parsed = schema.model_validate_json(entry["text"])
            except ValidationError:
                return None
        try:
            usage = TokenUsage.model_validate(entry.get("usage") or {})
        except ValidationError:
            usage = TokenUsage()
        return Completion(text=entry["text"], parsed=parsed, usage=usage, cached=True, model=str(entry.get("model") or self.model))

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    async def __aenter__(self) -> OpenAILLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _short(exc: ValidationError) -> str:
    """A compact one-line summary of a pydantic validation error."""
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {err.get('msg', '')}")
    return "; ".join(parts)


def make_llm(settings: Settings, cache_dir: Path | None = None) -> LLM:
    """The backend named by ``settings.llm_backend``.

    Raises
    ------
    InputError
        ``openai`` without ``llm_base_url`` or ``llm_model``.
    """
    if settings.llm_backend == "none":
        return NoneLLM()
    if settings.llm_backend == "openai":
        missing = [env for env, value in (("TASKLOOM_LLM_BASE_URL", settings.llm_base_url), ("TASKLOOM_LLM_MODEL", settings.llm_model)) if not value]
        if missing:
            raise InputError(f"TASKLOOM_LLM_BACKEND=openai needs {' and '.join(missing)}; set {'them' if len(missing) > 1 else 'it'}. {_CONFIGURE}")
        assert settings.llm_base_url is not None and settings.llm_model is not None
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key is not None else None
        return OpenAILLM(
            base_url=settings.llm_base_url,
            model=settings.llm_model,
            api_key=key,
            temperature=settings.llm_temperature,
            max_concurrency=settings.llm_max_concurrency,
            cache_dir=cache_dir,
            seed=settings.seed,
        )
    raise InputError(f"Unknown llm_backend {settings.llm_backend!r}; choose 'none' or 'openai'.")

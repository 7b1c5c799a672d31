"""The one LLM interface, with two backends: none (no model) and any OpenAI-compatible endpoint.

:class:`NoneLLM` refuses every call with :class:`LLMUnavailable`, telling the reader how
to configure a model. :class:`OpenAILLM` speaks the chat-completions API through the
``openai`` package, with structured outputs validated by pydantic, retries (``tenacity``)
with seeded exponential backoff, a concurrency limit, a disk cache and token accounting.

Callers type against the :class:`LLM` protocol; ``complete(messages, schema=S)`` returns a
``Completion[S]`` whose ``parsed`` is an ``S``, and ``complete(messages)`` a ``Completion[None]``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload, runtime_checkable

import anyio
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

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


#: The type of :attr:`Completion.parsed`: the requested schema, or ``None`` without one.
ParsedT = TypeVar("ParsedT")
#: A structured-output schema.
SchemaT = TypeVar("SchemaT", bound=BaseModel)


class Completion(BaseModel, Generic[ParsedT]):
    """The result of :meth:`LLM.complete`: ``Completion[S]`` for schema ``S``, ``Completion[None]`` without one.

    Attributes
    ----------
    text : str
        The reply text (for structured output: the JSON, with code fences removed).
    parsed : ParsedT
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
    parsed: ParsedT
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

    @overload
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[SchemaT],
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[SchemaT]: ...

    @overload
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[None]: ...

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[SchemaT] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[SchemaT] | Completion[None]:
        """Complete the chat ``messages``; with ``schema``, the reply is validated into it (``parsed``)."""
        ...

    def usage_report(self) -> dict[str, Any]:
        """Token and call totals, overall and per tag."""
        ...


class NoneLLM:
    """The backend when no model is configured: every call raises :class:`LLMUnavailable`."""

    name: str = "none"
    available: bool = False

    @overload
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[SchemaT],
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[SchemaT]: ...

    @overload
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[None]: ...

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[SchemaT] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[SchemaT] | Completion[None]:
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
        call (run by ``tenacity``; the ``openai`` client's own retries are off so each
        request is counted and holds the concurrency limit only while in flight).
        Transport errors (connection, timeout, 429, 5xx) and invalid structured replies
        both count.
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

    @overload
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[SchemaT],
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[SchemaT]: ...

    @overload
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[None]: ...

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: type[SchemaT] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tag: str = "",
    ) -> Completion[SchemaT] | Completion[None]:
        """Complete ``messages``; see :class:`LLM`.

        Attempts are run by ``tenacity``: at most ``max_retries + 1``; a transport error
        waits :meth:`backoff_delay` before the next, an invalid structured reply is asked
        again at once with the validation error appended to the conversation.

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
        transport_failures = 0

        def wait(state: RetryCallState) -> float:
            nonlocal transport_failures
            failed = state.outcome.exception() if state.outcome is not None else None
            if isinstance(failed, _InvalidReply) or state.attempt_number >= attempts:
                return 0.0
            transport_failures += 1
            return self.backoff_delay(transport_failures)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=wait,
            retry=retry_if_exception_type((*self._transport_errors, _InvalidReply)),
            sleep=anyio.sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    result = await self._attempt(convo, request, schema, usage, totals)
        except _InvalidReply as exc:
            self._fail(totals)
            raise LLMError(f"The LLM call to model {self.model!r} at {self.base_url} failed after {attempts} attempts; last error: {exc}") from None
        except self._transport_errors as exc:
            self._fail(totals)
            raise LLMError(
                f"The LLM call to model {self.model!r} at {self.base_url} failed after {attempts} attempts; "
                f"last error: {type(exc).__name__}: {exc}"
            ) from exc
        except self._openai.APIError as exc:
            self._fail(totals)
            raise LLMError(
                f"The LLM endpoint {self.base_url} refused the request for model {self.model!r}: "
                f"{type(exc).__name__}: {exc}. Check TASKLOOM_LLM_BASE_URL, TASKLOOM_LLM_MODEL and TASKLOOM_LLM_API_KEY."
            ) from exc

        for t in totals:
            t.calls += 1
        if self.cache is not None:
            self.cache.put(key, {"text": result.text, "usage": result.usage.model_dump(), "model": result.model})
        return result

    async def _attempt(
        self,
        convo: list[dict[str, Any]],
        request: dict[str, Any],
        schema: type[SchemaT] | None,
        usage: TokenUsage,
        totals: list[UsageTotals],
    ) -> Completion[SchemaT] | Completion[None]:
        """One request; tokens go to ``usage`` and ``totals``. An invalid structured reply extends ``convo`` and raises :class:`_InvalidReply`."""
        async with self._semaphore:
            for t in totals:
                t.requests += 1
            response = await self._client.chat.completions.create(messages=convo, **request)  # type: ignore[call-overload, arg-type]
        if response.usage is not None:
            usage.prompt_tokens += response.usage.prompt_tokens or 0
            usage.completion_tokens += response.usage.completion_tokens or 0
            for t in totals:
                t.prompt_tokens += response.usage.prompt_tokens or 0
                t.completion_tokens += response.usage.completion_tokens or 0
        content = response.choices[0].message.content if response.choices else None
        answered_by = response.model or self.model
        if schema is None:
            return Completion(text=content or "", parsed=None, usage=usage, cached=False, model=answered_by)
        text = strip_fences(content or "")
        try:
            parsed = schema.model_validate_json(text)
        except ValidationError as exc:
            convo += [
                {"role": "assistant", "content": content or ""},
                {
                    "role": "user",
                    "content": f"Your reply was not valid: {_short(exc)}\nReply again with only a JSON object that conforms to the schema.",
                },
            ]
            raise _InvalidReply(f"reply did not validate against {schema.__name__}: {_short(exc)}") from exc
        return Completion(text=text, parsed=parsed, usage=usage, cached=False, model=answered_by)

    def _fail(self, totals: list[UsageTotals]) -> None:
        for t in totals:
            t.failed_calls += 1

    def _from_cache(self, key: str, schema: type[SchemaT] | None) -> Completion[SchemaT] | Completion[None] | None:
        assert self.cache is not None
        entry = self.cache.get(key)
        if entry is None or not isinstance(entry.get("text"), str):
            return None
        text: str = entry["text"]
        try:
            usage = TokenUsage.model_validate(entry.get("usage") or {})
        except ValidationError:
            usage = TokenUsage()
        model = str(entry.get("model") or self.model)
        if schema is None:
            return Completion(text=text, parsed=None, usage=usage, cached=True, model=model)
        try:
            parsed = schema.model_validate_json(text)
        except ValidationError:
            return None
        return Completion(text=text, parsed=parsed, usage=usage, cached=True, model=model)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    async def __aenter__(self) -> OpenAILLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _InvalidReply(Exception):
    """A structured reply that did not validate (retried by asking again)."""


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

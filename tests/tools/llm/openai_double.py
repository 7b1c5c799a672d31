"""TEST DOUBLE: a tiny local OpenAI-compatible HTTP server, for tests only.

This is not a model and not a mock of the ``openai`` package: it is a real HTTP server
(stdlib ``http.server``, one thread per request, on ``127.0.0.1`` and a free port)
that answers ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` with the JSON
shapes OpenAI documents, so the real ``openai`` client is exercised over HTTP.

Scripting, from the test:

* ``double.replies`` — a queue of canned chat replies, consumed in order;
* ``double.handler`` — or a function ``(request_json) -> reply`` computing the reply;
* a reply is a text, or :class:`ToolCalls` — the assistant message then carries
  ``tool_calls`` (OpenAI's function-calling shape, ``finish_reason: "tool_calls"``);
* ``double.fail_next(n, status=503)`` — the next ``n`` requests fail with that HTTP
  status, or with ``status="drop"`` the connection is closed without a response;
* ``double.delay`` — seconds each chat request sleeps before replying (to measure
  concurrency: ``double.max_in_flight`` is the most requests handled at once);
* ``double.log`` — every request as a :class:`Logged` (path, JSON body, arrival time).

Embeddings are deterministic: each lower-cased word is hashed (blake2b) into one of
``embed_dim`` signed buckets; the vectors are returned un-normalised.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = ["OpenAIDouble", "Logged", "ToolCalls", "Reply", "double_embedding"]

_WORD = re.compile(r"\w+")


@dataclass
class Logged:
    """One request the double received."""

    path: str
    body: dict[str, Any]
    at: float


@dataclass
class ToolCalls:
    """A scripted reply that calls tools: ``calls`` are (function name, arguments) pairs, ``content`` optional text."""

    calls: list[tuple[str, dict[str, Any]]]
    content: str | None = None


Reply = str | ToolCalls


def double_embedding(text: str, dim: int) -> list[float]:
    """The double's deterministic (un-normalised) embedding of ``text``."""
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
        vec[(h >> 1) % dim] += 1.0 if h & 1 else -1.0
    if not any(vec):
        vec[0] = 1.0
    return vec


def _count_tokens(text: str) -> int:
    return len(_WORD.findall(text))


class OpenAIDouble:
    """TEST DOUBLE of an OpenAI-compatible server; use as a context manager.

    Parameters
    ----------
    model : str
        Model name reported in responses.
    embed_dim : int
        Length of the embedding vectors.
    """

    def __init__(self, model: str = "double-model", embed_dim: int = 16) -> None:
        self.model = model
        self.embed_dim = embed_dim
        self.replies: deque[Reply] = deque()
        self.handler: Callable[[dict[str, Any]], Reply] | None = None
        self.delay = 0.0
        self.log: list[Logged] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._failures: deque[int | str] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------

    def fail_next(self, n: int, status: int | str = 503) -> None:
        """Make the next ``n`` requests fail with HTTP ``status`` (or ``"drop"`` the connection)."""
        with self._lock:
            self._failures.extend([status] * n)

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests received so far."""
        return [entry.body for entry in self.log if entry.path.endswith("/chat/completions")]

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the double first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> OpenAIDouble:
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # silence stderr
                pass

            def do_POST(self) -> None:
                double._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-double", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling ----------------------------------------------------------------

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        length = int(req.headers.get("Content-Length") or 0)
        raw = req.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(req, 400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        with self._lock:
            self.log.append(Logged(path=req.path, body=body, at=time.monotonic()))
            failure = self._failures.popleft() if self._failures else None
        if failure == "drop":
            req.close_connection = True
            return  # the server closes the socket without a response
        if isinstance(failure, int):
            self._send(req, failure, {"error": {"message": f"scripted failure {failure}", "type": "server_error"}})
            return
        if req.path == "/v1/chat/completions":
            self._chat(req, body)
        elif req.path == "/v1/embeddings":
            self._embeddings(req, body)
        else:
            self._send(req, 404, {"error": {"message": f"no route {req.path}", "type": "invalid_request_error"}})

    def _chat(self, req: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            with self._lock:
                if self.replies:
                    reply: Reply | None = self.replies.popleft()
                elif self.handler is not None:
                    reply = None
                else:
                    reply = "ok"
            if reply is None:
                assert self.handler is not None
                reply = self.handler(body)
        finally:
            with self._lock:
                self.in_flight -= 1
        with self._lock:
            n = len(self.log)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        message, finish = self._message(reply, n)
        pt, ct = _count_tokens(prompt), _count_tokens(reply if isinstance(reply, str) else json.dumps(message))
        self._send(
            req,
            200,
            {
                "id": f"chatcmpl-double-{len(self.log)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
            },
        )

    @staticmethod
    def _message(reply: Reply, n: int) -> tuple[dict[str, Any], str]:
        """The assistant message and finish reason for a reply (call ids ``call-{request}-{i}``)."""
        if isinstance(reply, str):
            return {"role": "assistant", "content": reply}, "stop"
        calls = [
            {"id": f"call-{n}-{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(reply.calls)
        ]
        return {"role": "assistant", "content": reply.content, "tool_calls": calls}, "tool_calls"

    def _embeddings(self, req: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        data = []
        for i, text in enumerate(inputs):
            vec = double_embedding(str(text), self.embed_dim)
            emb: Any = vec
            if body.get("encoding_format") == "base64":
                emb = base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode("ascii")
            data.append({"index": i, "embedding": emb, "object": "embedding"})
        pt = sum(_count_tokens(str(t)) for t in inputs)
        self._send(
            req,
            200,
            {"object": "list", "data": data, "model": body.get("model", self.model), "usage": {"prompt_tokens": pt, "total_tokens": pt}},
        )

    @staticmethod
    def _send(req: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

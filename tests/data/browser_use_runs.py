"""Real browser-use runs for the consensus importer's tests: run by tests/data/build-browser-use-logs.sh in a side venv.

browser-use (PyPI, MIT) drives Debian's chromium over three local pages; its model is a TEST
DOUBLE: a small OpenAI-compatible server on 127.0.0.1 in this process that reads the browser
state browser-use sends and answers with the next action of a fixed plan. Everything else is
browser-use's own code, and each run's file is written by its own ``AgentHistoryList.save_to_file``:
``<out>/<agent>/find-dune/<run>/history.json``.

Usage: python browser_use_runs.py OUT_DIR
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAGES = {
    "index.html": '<title>Shop</title><h1>Shop</h1><a href="books.html">Books (12)</a> <input aria-label="Search" id="q">'
    "<button onclick=\"location='books.html?q='+document.getElementById('q').value\">Go</button>",
    "books.html": '<title>Books</title><h1>Books</h1><a href="index.html">Home</a> <select aria-label="Sort"><option>Title</option><option>Year</option></select>',
}
#: Each run's plan: (action, element pattern in the browser state or None, parameters).
PLANS: dict[tuple[str, int], list[tuple[str, str | None, dict[str, Any]]]] = {
    ("direct", 0): [("input", r"<input[^\n]*Search", {"text": "Dune", "clear": True}), ("click", r"<button[^\n]*\n\s*Go", {}),
                    ("select_dropdown", r"<select[^\n]*Sort", {"text": "Year"}), ("done", None, {"text": "Sorted by year.", "success": True})],
    ("direct", 1): [("input", r"<input[^\n]*Search", {"text": "Dnue", "clear": True}), ("send_keys", None, {"keys": "Enter"}),
                    ("done", None, {"text": "Nothing found.", "success": False})],
    ("detour", 0): [("click", r"<a[^\n]*\n\s*Books", {}), ("go_back", None, {}), ("input", r"<input[^\n]*Search", {"text": "dune", "clear": True}),
                    ("click", r"<button[^\n]*\n\s*Go", {}), ("done", None, {"text": "Found it.", "success": True})],
}  # fmt: skip


class QuietFiles(SimpleHTTPRequestHandler):
    """The pages, served without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ScriptedModel:
    """TEST DOUBLE of an LLM: an OpenAI-compatible chat endpoint answering with the plan's next action."""

    def __init__(self, plan: list[tuple[str, str | None, dict[str, Any]]]) -> None:
        self.plan, self.step = plan, 0

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]["content"]
        state = last if isinstance(last, str) else json.dumps(last)
        name, pattern, params = self.plan[min(self.step, len(self.plan) - 1)]
        self.step += 1
        if pattern is not None:
            found = re.search(r"\[(\d+)\]" + pattern, state)
            if found is None:
                raise RuntimeError(f"step {self.step}: no element like {pattern!r} in the browser state:\n{state[-1500:]}")
            params = {"index": int(found.group(1)), **params}
        return {"thinking": f"Step {self.step}.", "evaluation_previous_goal": "As planned.", "memory": "", "next_goal": name, "action": [{name: params}]}


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _model_server(model: ScriptedModel) -> ThreadingHTTPServer:
    class Chat(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            message = {"role": "assistant", "content": json.dumps(model.reply(body))}
            usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            data = json.dumps({"id": "double", "object": "chat.completion", "created": 0, "model": body.get("model"),
                               "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return _serve(Chat)


async def _run(out: Path, site_url: str, agent: str, run: int) -> None:
    from browser_use import Agent, BrowserProfile, BrowserSession
    from browser_use.llm.openai.chat import ChatOpenAI

    model = ScriptedModel(PLANS[(agent, run)])
    server = _model_server(model)
    try:
        llm = ChatOpenAI(model="scripted-double", base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="none")
        profile = BrowserProfile(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, chromium_sandbox=False, enable_default_extensions=False)
        task = f"Open {site_url}/index.html, search the shop for the book Dune and sort the results by year."
        runner = Agent(task=task, llm=llm, browser_session=BrowserSession(browser_profile=profile), use_vision=False, use_judge=False)
        history = await runner.run(max_steps=len(model.plan) + 2)
        folder = out / agent / "find-dune" / str(run)
        folder.mkdir(parents=True, exist_ok=True)
        history.save_to_file(folder / "history.json")
    finally:
        server.shutdown()


def main() -> int:
    out = Path(sys.argv[1])
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
    os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")
    with tempfile.TemporaryDirectory() as site:
        for name, html in PAGES.items():
            (Path(site) / name).write_text(html, encoding="utf-8")
        pages = _serve(partial(QuietFiles, directory=site))  # type: ignore[arg-type]
        try:
            for agent, run in PLANS:
                asyncio.run(_run(out, f"http://127.0.0.1:{pages.server_port}", agent, run))
        finally:
            pages.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

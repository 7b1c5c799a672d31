"""Browser tools answer in Playwright MCP's Markdown sections; the snapshot after an action goes to a file.

The real ``@playwright/mcp`` answers an action with a few lines: the code it ran, the page's URL
and title, and a link to the snapshot it saved (``### Snapshot`` / ``- [Snapshot](….yml)``);
only ``browser_snapshot`` shows the snapshot itself. :class:`MarkdownAnswers` gives every
``browser_*`` tool that answers with an :class:`~.observation.Observation` the same shape:

- ``### Action``: the canonical form of what was done, after an action (Taskloom runs no generated Playwright
  code, so it names the action rather than claiming code it did not run);
- ``### Page``: ``- Page URL: …`` and ``- Page Title: …``;
- ``### Open tabs`` and ``### Modal state`` when there are several tabs or a dialog waits;
- ``### Snapshot``: after an action, a link to ``files/page-<n>.yml`` in the episode folder
  (``n``: the action's index), inline in a ``yaml`` block for ``browser_snapshot`` or with the
  ``inline_snapshots`` setting.

The structured content is unchanged (the whole observation, snapshot included), so clients and
agents that read it, such as the harness's own, see everything. Errors keep their one-line text.

>>> print(page_markdown({"action": "navigate(url='http://h/a')", "url": "http://h/a", "title": "A", "snapshot": "- heading \\"A\\" [ref=e1]"}, None))
### Action
- navigate(url='http://h/a')
### Page
- Page URL: http://h/a
- Page Title: A
### Snapshot
```yaml
- heading "A" [ref=e1]
```
>>> page_markdown({"url": "http://h/a", "title": "A", "snapshot": "…"}, "files/page-3.yml").splitlines()[-2:]
['### Snapshot', '- [Snapshot](files/page-3.yml)']
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp.types import TextContent

from .trajectory import CALL

__all__ = ["MarkdownAnswers", "page_markdown", "is_observation"]

#: Tools whose snapshot is the answer itself: shown inline, as Playwright MCP shows it.
SNAPSHOT_TOOLS = frozenset({"browser_snapshot"})


def is_observation(data: Any) -> bool:
    """Whether structured content is a browser observation (a page's URL and title, maybe its snapshot)."""
    return isinstance(data, dict) and isinstance(data.get("url"), str) and "title" in data and "snapshot" in data


def page_markdown(data: dict[str, Any], snapshot_link: str | None, read_only: bool = False) -> str:
    """The Markdown sections of an observation; ``snapshot_link``: where its snapshot was saved (None: inline); ``read_only``: no action section."""
    lines: list[str] = []
    if data.get("action") and not read_only:
        lines += ["### Action", f"- {data['action']}"]
    lines += ["### Page", f"- Page URL: {data['url']}", f"- Page Title: {data.get('title') or ''}"]
    if data.get("tabs"):
        lines.append("### Open tabs")
        for tab in data["tabs"]:
            current = " (current)" if tab.get("current") else ""
            lines.append(f"- {tab.get('index')}:{current} [{tab.get('title') or ''}]({tab.get('url') or ''})")
    if data.get("modal"):
        lines += ["### Modal state", f"- {data['modal']}"]
    snapshot = data.get("snapshot")
    if snapshot is not None:
        lines.append("### Snapshot")
        lines += [f"- [Snapshot]({snapshot_link})"] if snapshot_link else ["```yaml", str(snapshot), "```"]
    return "\n".join(lines)


class MarkdownAnswers(Middleware):
    """Rewrite the text of ``browser_*`` observations as Markdown sections, saving snapshots after actions (see the module notes)."""

    def __init__(self, inline_snapshots: bool = False) -> None:
        self.inline = inline_snapshots

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        result = await call_next(context)
        tool = str(getattr(context.message, "name", "") or "")
        data = getattr(result, "structured_content", None)
        if not tool.startswith("browser_") or not isinstance(data, dict) or not is_observation(data) or getattr(result, "is_error", False):
            return result
        link = None
        call = CALL.get()
        if not self.inline and tool not in SNAPSHOT_TOOLS and data.get("snapshot") is not None and call is not None and call.recorded:
            recorder, index = call.recorded[-1]
            folder = recorder.folder / "files"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"page-{index}.yml").write_text(str(data["snapshot"]), encoding="utf-8")
            link = f"files/page-{index}.yml"
        others = [part for part in getattr(result, "content", None) or [] if getattr(part, "type", "") != "text"]
        return ToolResult(content=[TextContent(type="text", text=page_markdown(data, link, tool in SNAPSHOT_TOOLS)), *others], structured_content=data, meta=getattr(result, "meta", None))

"""Find targets that are app states (``statefind``): a passage a single-page app shows only after its own links are used.

Real material: a one-file wiki served on 127.0.0.1 whose topic links (``href="#"``) swap the
article in place, as single-file wikis do; crawled in Chromium with app-state exploration, its
tasks generated through the service with replay, and other routes tried in a fresh browser.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Page

from taskloom.tools.environment.site import serve_static
from taskloom.tools.generate.web.find import find_tasks
from taskloom.tools.runtime import Runtime
from taskloom.tools.tasks.model import Task

from .conftest import crawl, route_passes

pytestmark = pytest.mark.integration

STORIES = {
    "Tides": "The water climbs twice a day along the eastern breakwater of the old port.",
    "Keeper": "A lonely guardian writes every passing vessel into a leather ledger each night.",
    "Ferries": "Three small boats carry walkers across the narrow channel from early spring until autumn.",
}
WIKI = """<!doctype html><html><head><title>Harbour wiki</title></head><body><main><h1>Harbour wiki</h1>
<nav>{links}</nav><article id="story"><p>Welcome. Choose a topic.</p></article>
<script>
const stories = {stories};
document.querySelectorAll("a[data-t]").forEach(a => a.addEventListener("click", e => {{
  e.preventDefault();
  document.getElementById("story").innerHTML = `<h2>${{a.textContent}}</h2><p>${{stories[a.textContent]}}</p>`;
}}));
</script></main></body></html>"""


def _wiki(root: Path) -> Path:
    root.mkdir()
    links = " ".join(f'<a href="#" data-t="{name}">{name}</a>' for name in STORIES)
    stories = "{" + ", ".join(f'"{k}": "{v}"' for k, v in STORIES.items()) + "}"
    (root / "index.html").write_text(WIKI.format(links=links, stories=stories), encoding="utf-8")
    return root


def _click(name: str):  # type: ignore[no-untyped-def]
    async def route(page: Page) -> None:
        await page.get_by_role("link", name=name).click()

    return route


def test_each_article_of_a_one_file_wiki_is_a_find_target_reached_by_its_link(tmp_path: Path) -> None:
    with serve_static(_wiki(tmp_path / "site")) as served:
        site = crawl(served.url, served.url + "/index.html", tmp_path / "ws", max_pages=3, max_states=6, click_budget=0)
        states = [p for p in site.kg.nodes("page") if p.attrs.get("state")]
        assert len(states) >= 3
        tasks = [t for t in find_tasks(site.kg, 0, 10)[0] if t.quality["target"]["kind"] == "state"]
        assert sorted(t.quality["target"]["sentence"] for t in tasks) == sorted(STORIES.values())
        for task in tasks:
            name = next(k for k, v in STORIES.items() if v == task.quality["target"]["sentence"])
            assert [s.action for s in task.gold_steps] == ["click"] and task.start_url.startswith(served.url)
            assert name not in task.instruction  # the goal is the passage, not the link to follow
            other = next(k for k in STORIES if k != name)
            assert asyncio.run(route_passes(task, _click(name)))
            assert not asyncio.run(route_passes(task, _click(other)))

            async def nothing(page: Page) -> None:
                return None

            assert not asyncio.run(route_passes(task, nothing))  # the fresh load does not show it

        async def generate() -> list[Task]:
            async with Runtime(site.settings) as rt:
                service = rt.task_service()
                result = await service.generate(site.graph_id, count=6, seed=0, generator="web-find", use_llm=False)
                return [service.get(i) for i in result.task_ids]

        stored = [t for t in asyncio.run(generate()) if t.quality["target"]["kind"] == "state"]
    assert len(stored) >= 2 and all(t.quality["replay"]["ok"] for t in stored)

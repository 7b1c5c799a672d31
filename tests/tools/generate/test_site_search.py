"""Second routes to a find target's uniqueness (``confirm_gold``): the site's own search (``sitesearch``), else the pages the crawl left unread (``unseen``).

Real material: a small site served on 127.0.0.1 whose search page, like Sphinx's, lists its
results by script one at a time, and a page the crawl never reaches (no link leads to it) that
repeats one target's sentence; and the Python documentation (Debian's python3.11-doc), whose
Sphinx search is asked for each target sentence and whose HTML files on disk are the truth.
"""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.generate.filter.stages import GenerationReport
from taskloom.tools.generate.web.confirm import confirm_gold
from taskloom.tools.generate.web.find import find_tasks
from taskloom.tools.generate.web.sitesearch import SiteSearch, site_search
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

from .conftest import crawl

pytestmark = pytest.mark.integration

REPEATED = "Harbour tides rise twice each day along the eastern breakwater of the old port."
OWN = "The lighthouse keeper writes every passing vessel into a leather ledger each night."
_FORM = '<form action="search.html" method="get" role="search"><input type="search" name="q" aria-label="Search"><button>Go</button></form>'
_NAV = '<nav><a href="index.html">Home</a> <a href="one.html">First note</a> <a href="two.html">Second note</a></nav>'
PAGES = {
    "index.html": f"<h1>Notes</h1>{_NAV}{_FORM}<p>Two notes.</p>",
    "one.html": f"<h1>First note</h1>{_NAV}{_FORM}<p>{REPEATED}</p>",
    "two.html": f"<h1>Second note</h1>{_NAV}{_FORM}<p>{OWN}</p>",
    "archive.html": f"<h1>Archive</h1>{_NAV}<p>From the almanac. {REPEATED}</p>",  # no link leads here
}
SEARCH = """<h1>Search</h1>{nav}<ul id="results"></ul><script>
const pages = {pages};
const words = (new URLSearchParams(location.search).get("q") || "").toLowerCase().match(/[a-z]+/g) || [];
const hits = Object.keys(pages).filter(p => words.length && words.every(w => pages[p].toLowerCase().includes(w)));
hits.forEach((p, i) => setTimeout(() => {{ document.getElementById("results").insertAdjacentHTML("beforeend", `<li><a href="${{p}}?highlight=${{words[0]}}">${{p}}</a></li>`); }}, 300 * (i + 1)));
</script>"""


def _site(root: Path) -> Path:
    root.mkdir()
    texts = {}
    for name, body in PAGES.items():
        (root / name).write_text(f"<!doctype html><html><head><title>Note {len(texts)}</title></head><body><main>{body}</main></body></html>", encoding="utf-8")
        texts[name] = re.sub(r"<[^>]+>", " ", body)
    script = SEARCH.format(nav=_NAV, pages=repr(texts).replace("'", '"'))
    (root / "search.html").write_text(f"<!doctype html><html><head><title>Search</title></head><body><main>{script}</main></body></html>", encoding="utf-8")
    return root


def _confirm(settings: Settings, kg: KnowledgeGraph, tasks: list[Task]) -> tuple[list[Task], GenerationReport]:
    report = GenerationReport()

    async def go() -> list[Task]:
        async with Runtime(settings) as rt:
            return await confirm_gold(kg, tasks, rt.browsers, report)

    return asyncio.run(go()), report


def test_a_sentence_the_sites_search_finds_on_an_uncrawled_page_is_dropped(tmp_path: Path) -> None:
    with serve_static(_site(tmp_path / "site")) as served:
        site = crawl(served.url, served.url + "/index.html", tmp_path / "ws", max_pages=10, max_states=0, click_budget=0)
        urls = {str(p.attrs["url"]) for p in site.kg.nodes("page")}
        assert not any("archive" in u for u in urls)  # the crawl never saw the repeat
        assert site_search(site.kg) == SiteSearch(action=served.url + "/search.html", field="q")
        tasks = [t for t in find_tasks(site.kg, 0, 10)[0] if t.quality["target"].get("sentence") in (REPEATED, OWN)]
        assert {t.quality["target"]["sentence"] for t in tasks} == {REPEATED, OWN}
        kept, report = _confirm(site.settings, site.kg, tasks)
    assert [t.quality["target"]["sentence"] for t in kept] == [OWN]
    assert any("the site's search finds 0 other pages" in r for r in kept[0].quality["confirmed"]), kept[0].quality["confirmed"]
    (dropped,) = report.dropped
    assert dropped.stage == "not_unique" and f"also on {served.url}/archive.html" in dropped.reason


def _disk_text(path: Path) -> str:
    raw = re.sub(r"(?s)<(script|style)\b.*?</\1>", "", path.read_text(encoding="utf-8", errors="replace"))
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", raw)).replace("\u2019", "'").split()).casefold()


def test_docs_targets_kept_after_the_sphinx_search_stand_on_no_other_file(python_docs_site: str, tmp_path: Path) -> None:
    docs = Path("/usr/share/doc/python3.11/html")
    site = crawl(python_docs_site, python_docs_site + "/library/text.html", tmp_path / "ws", max_pages=8, max_depth=1, max_states=0, click_budget=0)
    assert site_search(site.kg) is not None
    tasks = [t for t in find_tasks(site.kg, 0, 6)[0] if t.quality["target"].get("sentence")]
    assert len(tasks) >= 3
    kept, report = _confirm(site.settings, site.kg, tasks)
    assert kept and all(any("the site's search finds" in r for r in t.quality["confirmed"]) for t in kept)
    corpus: dict[str, Any] = {}
    found_on_disk = 0
    for task in kept:  # the truth: every HTML file of the docs, crawled or not
        sentence = " ".join(task.quality["target"]["sentence"].replace("\u2019", "'").split()).casefold()
        target = task.success[0].value.split(python_docs_site + "/", 1)[1]
        holders = [str(p.relative_to(docs)) for p in docs.rglob("*.html") if sentence in corpus.setdefault(p, _disk_text(p))]
        assert holders in ([target], []), (sentence, holders)  # [] when markup splits the sentence in the file
        found_on_disk += holders == [target]
    assert found_on_disk >= len(kept) / 2
    for drop in report.dropped:
        assert drop.stage == "not_unique", drop


def test_on_a_site_without_search_the_pages_the_crawl_left_unread_are_read_over_http(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    nav = '<nav><a href="index.html">Home</a> <a href="one.html">First note</a> <a href="two.html">Second note</a></nav>'
    pages = {
        "index.html": f"<h1>Notes</h1>{nav}<p>Two notes.</p>",
        "one.html": f'<h1>First note</h1>{nav}<p>{REPEATED}</p><p><a href="all.html">Every note on one page</a></p>',
        "two.html": f"<h1>Second note</h1>{nav}<p>{OWN}</p>",
        "all.html": f"<h1>All notes</h1>{nav}<p>Harbour <em>tides</em> rise twice each day along the eastern breakwater of the old port .</p>",
    }
    for i, (name, body) in enumerate(pages.items()):
        (root / name).write_text(f"<!doctype html><html><head><title>Note {i}</title></head><body><main>{body}</main></body></html>", encoding="utf-8")
    with serve_static(root) as served:
        site = crawl(served.url, served.url + "/index.html", tmp_path / "ws", max_pages=10, max_depth=1, max_states=0, click_budget=0)
        assert site_search(site.kg) is None and site.kg.meta.stats["unvisited"] == [served.url + "/all.html"]  # beyond the depth limit
        tasks = [t for t in find_tasks(site.kg, 0, 10)[0] if t.quality["target"].get("sentence") in (REPEATED, OWN)]
        assert len(tasks) == 2
        kept, report = _confirm(site.settings, site.kg, tasks)
    assert [t.quality["target"]["sentence"] for t in kept] == [OWN]
    assert any("none of the 1 pages of the site the crawl did not open shows it" in r for r in kept[0].quality["confirmed"])
    (dropped,) = report.dropped
    assert dropped.stage == "not_unique" and dropped.reason.endswith(served.url + "/all.html")

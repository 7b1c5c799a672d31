"""Find-and-open tasks (web-find) on real sites: targets described by content, checked by normalised page identity.

Truths come from outside the code under test: palmerpenguins' CSV (a record's named fields
match exactly one row), the Python docs' HTML on disk (titles, link texts, the sentence is on
the target page only), the example site's books.json (no book title in the instruction) and
the harbour site's own data (``harbour_site``: a sentence shared past 2,000 characters, boats
of two tables sharing values, a listing at ``/fleet.sqlite/`` whose first column is ``code``).
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse

import pytest
from playwright.async_api import async_playwright

from taskloom.tools.browser.pool import CHROMIUM_ARGS, find_chromium
from taskloom.tools.environment.site import serve_static
from taskloom.tools.evaluate.checks import check_criteria
from taskloom.tools.generate.web.find import find_tasks
from taskloom.tools.generate.web.style import instruction_style
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

from .conftest import penguin_rows
from .harbour_site import FLEET, MOORINGS, NOTES_OWN, SHARED, serve_harbour

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
DOCS = Path("/usr/share/doc/python3.11/html")
BOOKS = json.loads((ROOT / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))
QUICK: dict[str, Any] = {"max_states": 0, "click_budget": 0}


@dataclass
class Site:
    base: str
    kg: KnowledgeGraph
    tasks: list[Task]
    settings: Settings
    graph_id: str


def _crawl(tmp: Path, url: str, **options: Any) -> tuple[Settings, str, KnowledgeGraph]:
    settings = Settings(workspace=tmp / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False)

    async def go() -> tuple[str, KnowledgeGraph]:
        async with Runtime(settings) as rt:
            graph_id = (await rt.graphs.ingest_website(url, **options)).graph_id
            return graph_id, rt.graphs.load(graph_id)

    graph_id, kg = asyncio.run(go())
    return settings, graph_id, kg


@pytest.fixture(scope="module")
def penguins(penguins_graph: Any) -> Site:
    """The session's shared penguins crawl (see conftest) and its find tasks."""
    kg = penguins_graph.kg
    return Site(penguins_graph.base, kg, find_tasks(kg, 0, 20)[0], penguins_graph.settings, penguins_graph.graph_id)


@pytest.fixture(scope="module")
def docs(python_docs_site: str, tmp_path_factory: pytest.TempPathFactory) -> Site:
    settings, graph_id, kg = _crawl(
        tmp_path_factory.mktemp("find-docs"), python_docs_site + "/library/index.html", max_pages=30, max_depth=2, **QUICK
    )
    return Site(python_docs_site, kg, find_tasks(kg, 0, 20)[0], settings, graph_id)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve_static() as site:
        settings, graph_id, kg = _crawl(
            tmp_path_factory.mktemp("find-example"), site.url + "/index.html", max_pages=30, max_depth=3, **QUICK
        )
        yield Site(site.url, kg, find_tasks(kg, 0, 20)[0], settings, graph_id)


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve_harbour() as base:
        settings, graph_id, kg = _crawl(tmp_path_factory.mktemp("find-harbour"), base + "/", max_pages=50, max_depth=3, **QUICK)
        yield Site(base, kg, find_tasks(kg, 0, 20)[0], settings, graph_id)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _target(task: Task) -> str:
    return task.success[0].value


def _common_checks(task: Task) -> None:
    assert task.type == "find" and [c.kind for c in task.success] == ["page_is"]
    assert task.start_url != _target(task)
    assert [s.action for s in task.gold_steps] == ["navigate"] and task.gold_steps[0].text == _target(task)
    assert instruction_style(task.instruction).style == "goal", task.instruction
    assert not task.instruction.lower().startswith("on the page")


# --------------------------------------------------------------------------- penguins: records by their fields


def test_penguin_records_are_named_by_fields_that_identify_one_csv_row(penguins: Site) -> None:
    rows = penguin_rows()
    records = [t for t in penguins.tasks if t.quality["target"]["kind"] == "record"]
    assert len(records) >= 8  # detail pages the crawl only saw linked are targets too
    assert {t.quality["target"]["crawled"] for t in records} == {True, False}
    for task in records:
        _common_checks(task)
        # sqlite-web's row URL holds the primary key, base64 of a JSON list: /penguins/row/WzFd/ → [1] → CSV row 1
        key = json.loads(base64.b64decode(urlparse(_target(task)).path.rstrip("/").rsplit("/", 1)[-1] + "=="))[0]
        row = rows[int(key) - 1]
        labels = task.quality["target"]["fields"]
        assert labels and "id" not in labels
        named = {label: row[label] for label in labels}
        matching = [r for r in rows if all(r[label] == value for label, value in named.items())]
        assert matching == [row], (task.instruction, named, len(matching))
        for value in named.values():
            assert re.sub(r"\s*\(.*\)$", "", value).lower() in task.instruction.lower()
        assert "sqlite web" not in task.instruction.lower()  # the detail page's title


# --------------------------------------------------------------------------- Python docs: content pages by a sentence


def _html_text(path: Path) -> str:
    raw = path.read_text(encoding="utf-8")
    raw = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", raw)
    return re.sub(r"\s+([.,;:!?])", r"\1", _norm(html.unescape(re.sub(r"<[^>]+>", " ", raw))))


def _disk(base: str, url: str) -> Path:
    path = urlparse(url).path.lstrip("/")
    file = DOCS / path
    return file / "index.html" if not path or path.endswith("/") else file


def _links_to(base: str, kg: KnowledgeGraph, target: str) -> list[str]:
    """Texts of the links to ``target`` in the crawled pages' HTML on disk."""
    texts: list[str] = []
    for page in kg.nodes("page"):
        url = str(page.attrs["url"])
        file = _disk(base, url)
        if not file.is_file():
            continue
        for href, body in re.findall(r'(?s)<a\b[^>]*href="([^"]*)"[^>]*>(.*?)</a>', file.read_text(encoding="utf-8")):
            full = urljoin(url, html.unescape(href)).split("#")[0]
            if full.replace("index.html", "") == target.replace("index.html", ""):
                text = _norm(html.unescape(re.sub(r"<[^>]+>", " ", body)))
                if text:
                    texts.append(text)
    return texts


def test_docs_pages_are_found_by_a_sentence_that_is_not_their_title_or_link_text(docs: Site) -> None:
    contents = [t for t in docs.tasks if t.quality["target"]["kind"] == "content"]
    assert len(contents) >= 3
    others = {
        str(p.attrs["url"]): _html_text(_disk(docs.base, str(p.attrs["url"])))
        for p in docs.kg.nodes("page")
        if _disk(docs.base, str(p.attrs["url"])).is_file()
    }
    for task in contents:
        _common_checks(task)
        target = _target(task)
        sentence = _norm(task.quality["target"]["sentence"])
        assert sentence.rstrip(".") in _norm(task.instruction) or sentence[1:].rstrip(".") in _norm(task.instruction)
        assert sentence in others[target]  # the fact is on the target page…
        assert not [u for u, text in others.items() if u != target and sentence in text]  # …and on no other crawled page
        raw = _disk(docs.base, target).read_text(encoding="utf-8")
        title = _norm(html.unescape(re.search(r"(?s)<title>(.*?)</title>", raw).group(1))).split(" — ")[0]  # type: ignore[union-attr]
        assert not re.search(rf"\b{re.escape(title)}", _norm(task.instruction)), (title, task.instruction)
        name = title.split(" ")[0]
        assert not re.search(rf"\b{re.escape(name)}\b", _norm(task.instruction)) or len(name) < 4, (name, task.instruction)
        links = _links_to(docs.base, docs.kg, target)
        assert not [text for text in links if len(text.split()) >= 2 and text in _norm(task.instruction)], task.instruction
        words = {w for w in re.findall(r"[a-z]{4,}", sentence)}
        shared = words & {w for text in [title, *links] for w in re.findall(r"[a-z]{4,}", text)}
        assert len(shared) <= len(words) / 3, (shared, task.instruction)  # the sentence's words are mostly not the title's or links'


# --------------------------------------------------------------------------- example site


def test_example_site_find_tasks_never_name_the_book(example: Site) -> None:
    assert len(example.tasks) >= 3
    titles = [_norm(b["title"]) for b in BOOKS]
    authors = [_norm(b["author"]) for b in BOOKS]
    for task in example.tasks:
        _common_checks(task)
        text = _norm(task.instruction)
        assert not [t for t in titles if t in text] and not [a for a in authors if a in text], task.instruction
        if "book.html" in _target(task):
            book = next(b for b in BOOKS if b["id"] == urlparse(_target(task)).query.split("=")[1])
            named = task.quality["target"].get("fields") or []
            if named:  # a record target: the named values pick this book alone in books.json
                by_label = {"ISBN": "isbn", "Year": "year", "Shelf": "shelf", "Genre": "genre", "Format": "format", "Copies": "copies"}
                keys = [by_label[label] for label in named]
                assert [b["id"] for b in BOOKS if all(str(b[k]) == str(book[k]) for k in keys)] == [book["id"]]


def test_same_graph_and_seed_give_the_same_tasks(docs: Site) -> None:
    again = find_tasks(docs.kg, 0, 20)[0]
    assert [t.model_dump() for t in again] == [t.model_dump() for t in docs.tasks]
    other = find_tasks(docs.kg, 7, 20)[0]
    assert len({t.instruction for t in docs.tasks}) == len(docs.tasks)
    assert {t.instruction for t in other} != {t.instruction for t in docs.tasks}


# --------------------------------------------------------------------------- routes: normalised URLs pass, a wrong page fails


async def _verdicts(task: Task, urls: list[str]) -> list[bool]:
    out: list[bool] = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            for url in urls:
                await page.goto(url)
                results = await check_criteria(page, task.success, [], grace_s=0)
                out.append(all(r.ok for r in results))
        finally:
            await browser.close()
    return out


def test_other_routes_to_the_target_pass_and_a_wrong_page_fails(docs: Site, penguins: Site) -> None:
    task = next(t for t in docs.tasks if t.quality["target"]["kind"] == "content" and _target(t).endswith(".html"))
    target = _target(task)
    folder = target.rsplit("/", 1)[0] + "/"
    wrong = next(str(p.attrs["url"]) for p in docs.kg.nodes("page") if str(p.attrs["url"]) not in (target, task.start_url))
    assert asyncio.run(_verdicts(task, [target + "#module-contents", target, wrong, task.start_url, folder])) == [
        True,
        True,
        False,
        False,
        False,
    ]
    library = next((t for t in docs.tasks if _target(t).endswith("/library/")), None)
    if library is not None:
        assert asyncio.run(_verdicts(library, [_target(library) + "index.html", _target(library) + "index.html#x"])) == [True, True]
    record = next(t for t in penguins.tasks if t.quality["target"]["kind"] == "record")
    other = next(t for t in penguins.tasks if t.quality["target"]["kind"] == "record" and _target(t) != _target(record))
    assert asyncio.run(_verdicts(record, [_target(record) + "#top", _target(record) + "?b=2&a=1", _target(other)])) == [True, False, False]


def test_generated_through_the_service_with_replay(penguins: Site) -> None:
    async def go() -> list[Task]:
        async with Runtime(penguins.settings) as rt:
            service = rt.task_service()
            result = await service.generate(penguins.graph_id, count=4, seed=3, generator="web-find", use_llm=False)
            no_op = result.report.stages["no_op"]
            assert no_op["kept"] == no_op["in"], result.report.dropped
            return [service.get(i) for i in result.task_ids]

    stored = asyncio.run(go())
    assert len(stored) >= 3
    for task in stored:
        assert task.quality["replay"]["ok"] and task.quality["style"]["style"] == "goal"


# --------------------------------------------------------------------------- harbour site: unique over whole pages and every listing


def _served_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        raw = response.read().decode("utf-8")
    return _norm(html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", raw))))


def test_a_sentence_another_page_shows_after_2000_characters_is_never_a_target(harbour: Site) -> None:
    almanac = next(p for p in harbour.kg.nodes("page") if str(p.attrs["url"]).endswith("/almanac.html"))
    assert int(almanac.attrs["text_chars"]) > 2000 and _norm(SHARED) not in _norm(almanac.text)  # past what the node's text holds
    contents = [t for t in harbour.tasks if t.quality["target"]["kind"] == "content"]
    assert _norm(SHARED) not in [_norm(t.quality["target"]["sentence"]) for t in contents]
    notes = [t for t in contents if _target(t).endswith("/notes.html")]
    assert [t.quality["target"]["sentence"] for t in notes] == [NOTES_OWN]  # the page's own sentence names it instead
    served = {str(p.attrs["url"]): _served_text(str(p.attrs["url"])) for p in harbour.kg.nodes("page")}
    for task in contents:
        _common_checks(task)
        sentence = _norm(task.quality["target"]["sentence"])
        assert [u for u, text in served.items() if sentence in text] == [_target(task)], task.instruction


def test_records_are_unique_over_every_listing_and_not_named_by_file_or_code_column(harbour: Site) -> None:
    records = [t for t in harbour.tasks if t.quality["target"]["kind"] == "record" and "/fleet.sqlite/" in _target(t)]
    assert len(records) >= 3
    rows = [dict(zip(("name", "type", "colour", "port"), row)) for row in [*FLEET.values(), *MOORINGS]]
    for task in records:
        _common_checks(task)
        code = _target(task).rsplit("/", 1)[-1]
        own = dict(zip(("name", "type", "colour", "port"), FLEET[code]))
        labels = task.quality["target"]["fields"]
        assert labels and set(labels) <= set(own), labels
        matching = [r for r in rows if all(r[label] == own[label] for label in labels)]
        assert matching == [own], (task.instruction, labels)  # one boat in both tables, not only in its own
        text = task.instruction.lower()
        assert "fleet" not in text and "sqlite" not in text and not re.search(r"\bthe codes?\b", text), task.instruction  # not the file or column

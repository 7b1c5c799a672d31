"""What a page's elements become in the web graph, on real sites: accessible names, page-scoped forms, listings.

Every expectation is read from the HTML (on disk, or as the live site serves it), never from the
code under test: form counts from ``<form`` tags, sort fields from table headers, page numbers from
pagination hrefs, names from labels.
"""

from __future__ import annotations

import re
import urllib.request
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlparse

import pytest

from taskloom.tools.browser import CHROMIUM_ARGS, EnvironmentUnavailable, find_chromium
from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.graph.web.extract import ElementInfo, read_page
from taskloom.tools.graph.web.urls import query_role
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
SITE = ROOT / "examples" / "site"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
_INVISIBLE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff\u200b-\u200f\u2060-\u2064\ufeff]")


def _crawl(workspace: Path, url: str, max_pages: int, max_depth: int = 1) -> KnowledgeGraph:
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0))

    async def go() -> str:
        return (await runtime.graphs.ingest_website(url, max_pages=max_pages, max_depth=max_depth)).graph_id

    graph_id = runtime.run(go)
    return runtime.graphs.load(graph_id)


def _on(kg: KnowledgeGraph, kind: str, path: str) -> list:
    """``kind`` nodes seen on the page(s) whose URL path ends with ``path``."""
    return [n for n in kg.nodes(kind) if urlparse(n.attrs["page_url"]).path.endswith(path)]


def _out(kg: KnowledgeGraph, source: str, kind: str) -> list[tuple[str, dict]]:
    return [(v, d.get("attrs", {})) for _, v, k, d in kg.g.out_edges(source, keys=True, data=True) if k == kind]


def _page_url(kg: KnowledgeGraph, node: str) -> str:
    return str(kg.node(node).attrs["url"])


# --------------------------------------------------------------------------- names, in a real browser

NAMES_HTML = """<!doctype html><html><body>
<button id="icon-only"><i class="fa">\ue001</i></button>
<button id="icon-label" aria-label="Close"><i>\ue002</i></button>
<a id="icon-text" href="/x">\ue003\u200b Settings</a>
<a id="svg-title" href="/y"><svg><title>Download</title><path d="M0 0"/></svg></a>
<a id="img-alt" href="/z"><img alt="Home" src="data:,"></a>
<span id="lbl">Search terms</span><input id="by" name="_filter_column" aria-labelledby="lbl">
<label for="lab">Your email</label><input id="lab" name="email_field">
<textarea id="bare" name="sql"></textarea>
<input id="ph" name="qq" placeholder="Find a book">
<input id="ti" name="tt" title="Postcode">
<button id="hidden-part">Browse <span aria-hidden="true">\u25be</span></button>
</body></html>"""


@pytest.fixture(scope="module")
def named() -> dict[str, ElementInfo]:
    playwright = pytest.importorskip("playwright.async_api")
    try:
        chromium = find_chromium()
    except EnvironmentUnavailable:
        pytest.skip("needs Chromium")
    import asyncio

    async def go() -> dict[str, ElementInfo]:
        async with playwright.async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = await browser.new_page()
            await page.set_content(NAMES_HTML)
            data = await read_page(page)
            await browser.close()
        return {e["selector"]: ElementInfo.model_validate(e) for e in data["elements"]}

    return asyncio.run(go())


def test_accessible_names_never_use_glyphs_or_the_name_attribute(named: dict[str, ElementInfo]) -> None:
    names = {sel: e.name for sel, e in named.items()}
    assert names["#icon-only"] == ""  # an icon-font glyph is not a name
    assert names["#icon-label"] == "Close"
    assert names["#icon-text"] == "Settings"
    assert names["#svg-title"] == "Download"
    assert names["#img-alt"] == "Home"
    assert names["#by"] == "Search terms"
    assert names["#lab"] == "Your email"
    assert names["#bare"] == "" and named["#bare"].field_name == "sql"
    assert names["#ph"] == "Find a book"
    assert names["#ti"] == "Postcode"
    assert names["#hidden-part"] == "Browse"
    assert not any(_INVISIBLE.search(e.name + e.text) for e in named.values())


# --------------------------------------------------------------------------- the bundled example site


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    from taskloom.tools.environment.site import serve_static

    with serve_static() as site:
        return _crawl(tmp_path_factory.mktemp("example"), site.url + "/index.html", max_pages=14, max_depth=2)


def _html_file(url: str) -> Path:
    path = urlparse(url).path.lstrip("/") or "index.html"
    return SITE / (path + "index.html" if path.endswith("/") else path)


def test_one_form_node_per_form_per_page(example: KnowledgeGraph) -> None:
    pages = list(example.nodes("page"))
    assert len(pages) >= 8
    forms = Counter(n.attrs["page_url"] for n in example.nodes("form"))
    for page in pages:
        url = page.attrs["url"]
        assert forms[url] == _html_file(url).read_text(encoding="utf-8").count("<form"), url
    for edge in example.edges("fills"):  # a field fills only a form on its own page
        assert example.node(edge.source).attrs["page_url"] == example.node(edge.target).attrs["page_url"]


def test_filters_only_where_a_listing_is_narrowed(example: KnowledgeGraph) -> None:
    filters = list(example.nodes("filter"))
    assert {n.attrs["name"] for n in _on(example, "filter", "/search.html")} >= {"Genre", "Available now"}
    # genres.html links to search.html: another page, so none of its links narrows a listing there.
    assert 'href="search.html?genre=' in (SITE / "genres.html").read_text(encoding="utf-8")
    assert _on(example, "filter", "/genres.html") == []
    for node in filters:
        page = urlparse(node.attrs["page_url"])
        if node.attrs.get("href"):  # a facet link: same listing, with a filter parameter the page lacks
            target = urlparse(node.attrs["href"])
            assert target.path == page.path, node.attrs
            narrowing = {k: v for k, v in parse_qs(page.query).items() if query_role(k) == "filter"}
            assert all(parse_qs(target.query).get(k) == v for k, v in narrowing.items())
            assert len([k for k in parse_qs(target.query) if query_role(k) == "filter"]) > len(narrowing)
            for target_page, attrs in _out(example, node.id, "filters"):
                assert parse_qs(urlparse(_page_url(example, target_page)).query)[attrs["param"]] == [attrs["value"]]
        else:
            assert node.attrs.get("field_name"), node.attrs


def test_names_hold_no_private_use_or_zero_width_characters(example: KnowledgeGraph) -> None:
    for node in example.nodes():
        assert not _INVISIBLE.search(str(node.attrs.get("name", "")) + node.text), node.id


def test_live_regions_are_regions_unless_a_click_revealed_them(example: KnowledgeGraph) -> None:
    # search.html's result count is a role=status region present at load: not a toast.
    assert 'id="result-count" role="status"' in (SITE / "search.html").read_text(encoding="utf-8")
    counts = [n for n in _on(example, "region", "/search.html") if n.attrs["selector"] == "#result-count"]
    assert counts and all(n.attrs.get("role") == "status" for n in counts)
    assert not [n for n in example.nodes("toast") if n.attrs["selector"] == "#result-count"]


# --------------------------------------------------------------------------- sqlite-web over the penguins


@pytest.fixture(scope="module")
def penguins(penguins_site: str, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    return _crawl(tmp_path_factory.mktemp("penguins"), penguins_site + "/penguins/content/", max_pages=8, max_depth=1)


def _fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode("utf-8"))


def test_pagination_links_paginate_the_content_listing(penguins: KnowledgeGraph, penguins_site: str) -> None:
    url = penguins_site + "/penguins/content/"
    html = _fetch(url)
    shown = {int(parse_qs(urlparse(urljoin(url, h)).query)["page"][0]) for h in re.findall(r'href="([^"]*\bpage=\d+[^"]*)"', html)}
    links = [n for n in _on(penguins, "link", "/penguins/content/") if n.attrs["page_url"] == url and n.attrs.get("pagination")]
    assert {n.attrs["pagination"]["page"] for n in links} == shown
    assert {n.attrs["pagination"]["direction"] for n in links} >= {"next", "last"}
    paginates = [(n, v, attrs) for n in links for v, attrs in _out(penguins, n.id, "paginates")]
    assert paginates, "no paginates edge from the content listing"
    for _, target, attrs in paginates:
        assert parse_qs(urlparse(_page_url(penguins, target)).query)["page"] == [str(attrs["page"])]
    assert [n for n in penguins.nodes("pagination") if n.attrs["page_url"] == url]


def test_sort_orders_name_their_columns(penguins: KnowledgeGraph, penguins_site: str) -> None:
    url = penguins_site + "/penguins/content/"
    columns = set(re.findall(r'<th data-col="([^"]+)"', _fetch(url)))
    assert len(columns) == 18  # id + the 17 CSV columns
    sorts = [n.attrs["sort"] for n in penguins.nodes("link") if n.attrs["page_url"] == url and n.attrs.get("sort")]
    assert {s["field"] for s in sorts} == columns
    assert {s["key"] for s in sorts} == {"ordering"}
    edges = list(penguins.edges("sorts"))
    assert edges and all(e.attrs["field"] in columns for e in edges)
    for edge in edges:  # to the sorted view, or to the listing page it re-orders
        assert urlparse(_page_url(penguins, edge.target)).path == "/penguins/content/"


def test_query_form_is_one_form_node_and_its_textarea_is_not_named_by_name(penguins: KnowledgeGraph, penguins_site: str) -> None:
    url = penguins_site + "/penguins/query/"
    html = _fetch(url)
    forms = [n for n in penguins.nodes("form") if n.attrs["page_url"] == url]
    if not any(p.attrs["url"] == url for p in penguins.nodes("page")):
        pytest.skip("the crawl did not reach /penguins/query/")
    assert len(forms) == html.count("<form")
    (sql,) = [n for n in penguins.nodes("input") if n.attrs["page_url"] == url and n.attrs.get("field_name") == "sql"]
    assert sql.attrs.get("name", "") != "sql"
    assert re.search(r'<textarea[^>]*name="sql"', html) and not re.search(r'<label[^>]*for="table-sql"', html)


# --------------------------------------------------------------------------- Python docs and TodoMVC


@pytest.fixture(scope="module")
def docs(python_docs_site: str, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    return _crawl(tmp_path_factory.mktemp("docs"), python_docs_site + "/search.html", max_pages=3, max_depth=1)


def test_search_forms_submit_to_the_search_page(docs: KnowledgeGraph, python_docs_site: str) -> None:
    html = (PYTHON_DOCS / "search.html").read_text(encoding="utf-8")
    url = python_docs_site + "/search.html"
    forms = [n for n in docs.nodes("form") if n.attrs["page_url"] == url]
    assert len(forms) == html.count("<form")
    for form in forms:  # each (with or without an action attribute) submits to search.html
        targets = [urlparse(_page_url(docs, v)).path for v, _ in _out(docs, form.id, "submits")]
        assert targets == ["/search.html"], form.attrs
    # the query box is named by the heading its aria-labelledby points at, and fills its form
    heading = re.search(r'<h1 id="search-documentation">([^<]+)</h1>', html).group(1)  # type: ignore[union-attr]
    (box,) = [n for n in docs.nodes() if n.attrs.get("page_url") == url and n.attrs.get("field_name") == "q"]
    assert box.attrs["name"] == heading
    assert [v for v, _ in _out(docs, box.id, "fills")] == [forms[0].id]
    for form in docs.nodes("form"):  # every docs form (quick search in the sidebars) submits to search.html
        assert [urlparse(_page_url(docs, v)).path for v, _ in _out(docs, form.id, "submits")] == ["/search.html"], form.attrs


@pytest.fixture(scope="module")
def todomvc(todomvc_site: str, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    return _crawl(tmp_path_factory.mktemp("todomvc"), todomvc_site + "/", max_pages=4, max_depth=1)


def test_todomvc_controls_are_named_as_their_labels_say(todomvc: KnowledgeGraph) -> None:
    html = (ROOT / "tests" / "data" / "cache" / "todomvc-vanillajs" / "index.html").read_text(encoding="utf-8")
    assert "<form" not in html and list(todomvc.nodes("form")) == []
    base = min(p.attrs["url"] for p in todomvc.nodes("page"))  # the plain load (app states add #fragments)
    by_selector = {n.attrs.get("selector"): n for n in todomvc.nodes() if n.attrs.get("page_url") == base}
    assert by_selector["#new-todo"].attrs["name"] == re.search(r'id="new-todo" placeholder="([^"]+)"', html).group(1)  # type: ignore[union-attr]
    assert by_selector["#toggle-all"].attrs["name"] == re.search(r'<label for="toggle-all">([^<]+)</label>', html).group(1)  # type: ignore[union-attr]
    assert by_selector["#new-todo"].id.startswith("input:") and by_selector["#new-todo"].id != by_selector["#toggle-all"].id

"""Crawling the bundled example site into a web graph, with a real browser and real servers."""

from __future__ import annotations

import functools
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from taskloom.tools.graph.model import KnowledgeGraph
from taskloom.tools.graph.service import GraphService
from taskloom.tools.graph.web.pipeline import WebIngestReport
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration
SITE = Path(__file__).resolve().parents[3] / "examples" / "site"


class _Logged(SimpleHTTPRequestHandler):
    log: list[str]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.log.append(self.path)
        super().do_GET()


def _serve(directory: Path, host: str) -> tuple[ThreadingHTTPServer, list[str]]:
    log: list[str] = []
    handler = type("Handler", (_Logged,), {"log": log})
    server = ThreadingHTTPServer((host, 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, log


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """The example site on 127.0.0.1 (with a link and an image pointing at an outside host) and that outside host on 127.0.0.2."""
    outside_root = tmp_path_factory.mktemp("outside")
    (outside_root / "secret.html").write_text("<h1>outside</h1>")
    outside, outside_log = _serve(outside_root, "127.0.0.2")
    outside_url = f"http://127.0.0.2:{outside.server_address[1]}"
    root = tmp_path_factory.mktemp("site") / "site"
    shutil.copytree(SITE, root)
    index = root / "index.html"
    index.write_text(
        index.read_text(encoding="utf-8").replace(
            "</main>", f'<p><a href="{outside_url}/secret.html" id="outside-link">Partner</a><img src="{outside_url}/pixel.png" alt=""></p></main>'
        ),
        encoding="utf-8",
    )
    site, site_log = _serve(root, "127.0.0.1")
    yield {"url": f"http://127.0.0.1:{site.server_address[1]}/index.html", "site_log": site_log, "outside_log": outside_log, "outside_url": outside_url}
    site.shutdown()
    outside.shutdown()


def _crawl(url: str, workspace: Path, **kwargs: object) -> tuple[GraphService, WebIngestReport]:
    runtime = Runtime(Settings(workspace=workspace, embedder="hashing", crawl_delay=0))

    async def go() -> WebIngestReport:
        return await runtime.graphs.ingest_website(url, max_pages=kwargs.get("max_pages", 20), max_depth=2)  # type: ignore[arg-type]

    return runtime.graphs, runtime.run(go)


@pytest.fixture(scope="module")
def crawled(servers: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> tuple[GraphService, WebIngestReport, KnowledgeGraph]:
    service, report = _crawl(str(servers["url"]), tmp_path_factory.mktemp("ws"))
    return service, report, service.load(report.graph_id)


def _one(kg: KnowledgeGraph, kind: str, name: str, page: str | None = None) -> str:
    """The one ``kind`` node named ``name`` (on the page whose URL ends with ``page``: controls are per page)."""
    found = [n.id for n in kg.nodes(kind) if n.attrs.get("name") == name and (page is None or n.attrs["page_url"].endswith(page))]
    assert len(found) == 1, (kind, name, [n.attrs.get("name") for n in kg.nodes(kind)])
    return found[0]


def _edges(kg: KnowledgeGraph, source: str, kind: str) -> list[str]:
    return [v for _, v, k in kg.g.out_edges(source, keys=True) if k == kind]


def test_crawl_never_leaves_the_allowed_domains(crawled: tuple, servers: dict[str, object]) -> None:
    _, report, _ = crawled
    assert servers["outside_log"] == []
    assert report.blocked >= 1  # the outside image was aborted in the browser
    assert report.allowed_domains == ["127.0.0.1"]
    assert any(path.startswith("/search.html") for path in servers["site_log"])
    outside = report.skipped[f"{servers['outside_url']}/secret.html"]  # the partner link is reported, not followed
    assert outside.reason == "out_of_domain" and report.skip_counts["out_of_domain"] >= 1


def test_search_box_fills_a_form_that_submits_to_the_search_page(crawled: tuple) -> None:
    _, _, kg = crawled
    box = _one(kg, "search_box", "Search the catalogue", "/about.html")
    (form,) = _edges(kg, box, "fills")
    assert kg.node_type(form) == "form"
    targets = [kg.node(p).attrs["url"] for p in _edges(kg, form, "submits")]
    assert any("/search.html" in url for url in targets)


def test_filters_control_the_result_list(crawled: tuple) -> None:
    _, _, kg = crawled
    genre = _one(kg, "filter", "Genre", "/search.html")
    (available,) = [n.id for n in kg.nodes("filter") if n.attrs["name"] == "Available now" and n.attrs.get("input_type") == "checkbox" and n.attrs["page_url"].endswith("/search.html")]
    for control in (genre, available):
        (results,) = _edges(kg, control, "filters")
        assert kg.node(results).attrs["selector"] == "#results"
        items = [v for v in _edges(kg, results, "contains") if kg.node_type(v) == "business_data"]
        assert len(items) >= 3
    assert kg.node(genre).attrs["options"][:2] == ["All genres", "Mystery"]
    assert len(_edges(kg, genre, "contains")) == len(kg.node(genre).attrs["options"])


def test_pagination_holds_page_links_that_navigate(crawled: tuple) -> None:
    _, _, kg = crawled
    (pagination,) = [n.id for n in kg.nodes("pagination") if n.attrs["page_url"].endswith("/search.html")]
    links = [v for v in _edges(kg, pagination, "contains") if kg.node_type(v) == "link"]
    assert {kg.node(v).attrs["name"] for v in links} >= {"2", "Next"}
    assert any(_edges(kg, v, "navigates_to") for v in links)


def test_modal_and_menu_are_found_by_click_simulation(crawled: tuple) -> None:
    _, _, kg = crawled
    # one node per page; on pages of books out on loan the button is disabled and was not clicked
    book = min(n.attrs["page_url"] for n in kg.nodes("button") if n.attrs.get("name") == "Request a loan" and _edges(kg, n.id, "opens"))
    button = _one(kg, "button", "Request a loan", book)
    opened = [(v, kg.g.edges[button, v, "opens"]["attrs"]) for v in _edges(kg, button, "opens")]
    assert [(kg.node_type(v), attrs.get("verified")) for v, attrs in opened] == [("modal", "click")]
    modal = opened[0][0]
    fields = {kg.node(v).attrs.get("name") for v in _edges(kg, modal, "contains")}
    assert "Submit request" in fields or any("card" in (f or "").lower() for f in fields)
    browse = _one(kg, "button", "Browse", book)
    assert [kg.node_type(v) for v in _edges(kg, browse, "opens")] == ["menu"]


def test_tabs_open_their_panels(crawled: tuple) -> None:
    _, _, kg = crawled
    tabs = list(kg.nodes("tab"))
    assert {t.attrs["name"] for t in tabs} == {"Summary", "Details", "Reviews"}
    assert len(tabs) == 3 * len({t.attrs["page_url"] for t in tabs})  # one tab node per tab per page
    for tab in tabs:
        panels = _edges(kg, tab.id, "opens")
        assert panels and all(kg.node_type(p) == "region" for p in panels)


def test_links_navigate_to_crawled_pages_and_pages_have_screenshots(crawled: tuple) -> None:
    service, report, kg = crawled
    assert report.pages >= 10
    assets = Path(kg.meta.stats["screenshots"])
    for page in kg.nodes("page"):
        shot, marked = (assets / page.attrs["screenshot"]).read_bytes(), (assets / page.attrs["marks_screenshot"]).read_bytes()
        assert len(shot) > 1000 and shot[:3] == marked[:3] == b"\xff\xd8\xff"  # JPEG
        assert marked != shot or not page.attrs["marks"]  # the boxes are drawn on the copy
        assert all(m in kg for m in page.attrs["marks"].values())
    navigations = list(kg.edges("navigates_to"))
    assert navigations and all(kg.node_type(e.target) == "page" for e in navigations)


def test_element_text_is_embedded_and_searchable(crawled: tuple) -> None:
    service, report, kg = crawled
    assert report.embedded == service.vectors.collection_info(report.graph_id)["count"] > 0
    hits = service.search(report.graph_id, "Request a loan", k=3, node_types=["button"])
    assert hits and hits[0].text == "Request a loan"


def test_ids_are_stable_across_recrawls(crawled: tuple, servers: dict[str, object], tmp_path: Path) -> None:
    _, report, kg = crawled
    service, again = _crawl(str(servers["url"]), tmp_path)
    assert again.graph_id == report.graph_id
    assert set(service.load(again.graph_id).g.nodes) == set(kg.g.nodes)


def test_web_sampling_is_seed_driven_k_hop(crawled: tuple) -> None:
    from taskloom.tools.graph.sampling import SampleSpec

    service, report, kg = crawled
    box = _one(kg, "search_box", "Search the catalogue", "/about.html")
    sub = service.sample(report.graph_id, SampleSpec(seed_nodes=[box], k_hops=2, max_nodes=40))
    assert box in sub
    assert any(n.type.value == "form" for n in sub.nodes())
    assert service.default_hops(report.graph_id) == 2
    drawn = service.sample(report.graph_id, SampleSpec(k_hops=2, max_nodes=40, seed=3))
    again = service.sample(report.graph_id, SampleSpec(k_hops=2, max_nodes=40, seed=3))
    assert list(drawn.g.nodes) == list(again.g.nodes) and len(drawn) > 1

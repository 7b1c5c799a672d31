"""The meta-path graph-regex engine and the shipped web meta-paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from taskloom.tools.environment.site import serve_static
from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.generate.metapath.engine import (
    MAX_REPEAT,
    EdgeTerm,
    NodeTerm,
    Predicate,
    Repeat,
    Step,
    compile_pattern,
    iter_matches,
    match,
    normalize_type_name,
    parse_pattern,
)
from taskloom.tools.generate.metapath.patterns import META_PATHS, TIERS, get_meta_path, patterns_by_priority
from taskloom.tools.graph.model import Edge, GraphMeta, KnowledgeGraph, Node
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

SITE = Path(__file__).resolve().parents[3] / "examples" / "site"


def make_graph(nodes: list[tuple[str, str] | tuple[str, str, dict]], edges: list[tuple[str, str, str]]) -> KnowledgeGraph:
    kg = KnowledgeGraph(GraphMeta(id="t"))
    for spec in nodes:
        node_id, kind = spec[0], spec[1]
        attrs = spec[2] if len(spec) > 2 else {}
        kg.add_node(Node(id=node_id, type=kind, text=f"text of {node_id}", attrs=attrs))
    for source, kind, target in edges:
        kg.add_edge(Edge(source=source, target=target, type=kind))
    return kg


def chain(n: int, kind: str = "paragraph", edge: str = "next") -> KnowledgeGraph:
    return make_graph([(f"n{i}", kind) for i in range(n)], [(f"n{i}", edge, f"n{i + 1}") for i in range(n - 1)])


# ------------------------------------------------------------------ parser


def test_parse_simple_path_ast() -> None:
    p = parse_pattern("SearchBox($q) -[fills]-> Form($f) <-[controls]- Button")
    assert p.head == NodeTerm(("search_box",), "q", (), 1)
    assert p.body == (
        Step(EdgeTerm(("fills",), "out", 15), NodeTerm(("form",), "f", (), 26)),
        Step(EdgeTerm(("controls",), "in", 35), NodeTerm(("button",), None, (), 49)),
    )
    assert p.slots == ("q", "f")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("SearchBox", "search_box"),
        ("search_box", "search_box"),
        ("BusinessData", "business_data"),
        ("SEARCH_BOX", "search_box"),
        ("searchBox", "search_box"),
        ("Page", "page"),
        ("NavigatesTo", "navigates_to"),
        ("TableCell", "table_cell"),
    ],
)
def test_type_names_in_snake_and_camel_case(given: str, expected: str) -> None:
    assert normalize_type_name(given) == expected


def test_camel_and_snake_patterns_parse_to_the_same_ast() -> None:
    a = parse_pattern("BusinessData -[NavigatesTo]-> SearchBox")
    b = parse_pattern("business_data -[navigates_to]-> search_box")
    assert (a.head.types, a.body[0].edge.types, a.body[0].node.types) == (b.head.types, b.body[0].edge.types, b.body[0].node.types)


def test_alternations_and_wildcards() -> None:
    p = parse_pattern("(Toast|Modal)($x) -[opens|controls]-> Toast|Modal -[*]-> * --> Any <-- Page")
    assert p.head.types == ("toast", "modal") and p.head.slot == "x"
    steps = p.body
    assert steps[0].edge.types == ("opens", "controls") and steps[0].node.types == ("toast", "modal")
    assert steps[1].edge.types is None and steps[1].node.types is None
    assert steps[2].edge == EdgeTerm(None, "out", steps[2].edge.column) and steps[2].node.types is None
    assert steps[3].edge.direction == "in" and steps[3].edge.types is None


@pytest.mark.parametrize(
    ("quant", "bounds"),
    [
        ("?", (0, 1)),
        ("*", (0, MAX_REPEAT)),
        ("+", (1, MAX_REPEAT)),
        ("{2}", (2, 2)),
        ("{1,3}", (1, 3)),
        ("{ 0 , 2 }", (0, 2)),
        ("{2,}", (2, MAX_REPEAT)),
        ("{10,}", (10, 10)),
    ],
)
def test_quantifiers_on_a_node_repeat_the_edge_before_it(quant: str, bounds: tuple[int, int]) -> None:
    p = parse_pattern(f"Page -[contains]-> Region{quant} -[contains]-> Link")
    rep = p.body[0]
    assert isinstance(rep, Repeat) and (rep.min, rep.max) == bounds
    assert rep.items == (Step(EdgeTerm(("contains",), "out", 6), NodeTerm(("region",), None, (), 20)),)
    assert isinstance(p.body[1], Step)


def test_groups_nest_and_take_quantifiers() -> None:
    p = parse_pattern("SearchBox($q) -[fills]-> Form($f) (-[submits|navigates_to]-> Page (-[contains]-> Link)?)+")
    group = p.body[1]
    assert isinstance(group, Repeat) and (group.min, group.max) == (1, MAX_REPEAT)
    assert isinstance(group.items[0], Step) and group.items[0].edge.types == ("submits", "navigates_to")
    inner = group.items[1]
    assert isinstance(inner, Repeat) and (inner.min, inner.max) == (0, 1)
    plain = parse_pattern("Page (-[contains]-> Link)").body[0]
    assert isinstance(plain, Repeat) and (plain.min, plain.max) == (1, 1)


def test_predicates_parse_in_either_order_with_slots() -> None:
    p = parse_pattern("Region[name~Breadcrumb]($c) -[contains]-> Link($l)[href!~'#'][role = \"link\"]")
    assert p.head.predicates == (Predicate("name", "~", "Breadcrumb"),) and p.head.slot == "c"
    assert p.body[0].node.predicates == (Predicate("href", "!~", "#"), Predicate("role", "=", "link"))


def _col(text: str, at: str | int | None) -> int:
    if isinstance(at, int):
        return at
    return len(text) + 1 if at is None else text.index(at) + 1


@pytest.mark.parametrize(
    ("text", "at", "message"),
    [
        ("", None, "empty pattern"),
        ("-[contains]-> Page", "-[", "starts with a node"),
        ("Page -[contains]-> Widget", "Widget", "unknown node type 'Widget'"),
        ("Page -[contain]-> Link", "contain]", "unknown edge type 'contain'"),
        ("Button -[opens| ]-> Modal", "]", "expected an edge type name, found nothing"),
        ("Button -[opens|x y]-> Modal", "x y", "expected an edge type name, found 'x y'"),
        ("Page -[contains] Link", "-[", "malformed forward edge"),
        ("Page <-[contains]-> Link", "<-", "bidirectional"),
        ("Page <-contains- Link", "<-", "malformed backward edge"),
        ("Page+ -[contains]-> Link", "+", "first node cannot take a quantifier"),
        ("Page (Link)", "Link", "group must start with an edge"),
        ("Page (-[contains]-> Link", None, "unclosed group"),
        ("Page -[contains]-> Link)", ")", "unbalanced"),
        ("Page -[contains]-> Link{3,1}", "{", "upper bound below"),
        ("Page -[contains]-> Link{0}", "{", "no repetition"),
        ("Page -[contains]-> Link{x}", "{", "malformed quantifier"),
        ("Page -[contains]-> Link??", 25, "quantifier '?' follows another quantifier"),
        ("Page ? -[contains]-> Link", "?", "first node cannot take a quantifier"),
        ("Page -[contains]-> Link (-[navigates_to]-> Page)* *", 51, "follows another quantifier"),
        ("Page ?", "?", "first node cannot take a quantifier"),
        ("Page -[contains]-> Link | ?", "?", "expected a node type"),
        ("Page($a) -[contains]-> Link($a)", 29, "slot $a is already bound at column 6"),
        ("Page -[contains]-> Link[name]", "[name", "malformed predicate"),
        ("Page & Link", "&", "unexpected character '&'"),
        ("Page -[contains]-> Link($ x)", "$", "slot is $ followed by a name"),
        ("Page -[contains]-> -[contains]-> Link", "-[contains]-> Link", "expected a node type"),
        ("Page Link", "Link", "expected an edge"),
        ("Page -[contains]-> (Link|Button", None, "')' closing the type alternation"),
    ],
)
def test_syntax_errors_point_at_the_column(text: str, at: str | None, message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_pattern(text)
    col = text.rindex(at) + 1 if at == "-[contains]-> Link" else _col(text, at)
    text_of = str(err.value)
    assert f"column {col}:" in text_of, text_of
    assert message in text_of, text_of
    caret_line = text_of.splitlines()[-1]
    assert caret_line.index("^") - 2 == col - 1


def test_compile_pattern_caches() -> None:
    assert compile_pattern("Page -[contains]-> Link") is compile_pattern("Page -[contains]-> Link")
    with pytest.raises(InputError):
        compile_pattern("Page -[nope]-> Link")


# ------------------------------------------------------------------ matching


def web() -> KnowledgeGraph:
    """A page with a search form, a link, a button, a dialog and a nested result list."""
    return make_graph(
        [
            ("p1", "page", {"title": "Home"}),
            ("p2", "page", {"title": "Results"}),
            ("p3", "page", {"title": "Detail"}),
            ("sb", "search_box", {"name": "Search the catalogue"}),
            ("f", "form", {"name": "Search"}),
            ("go", "button", {"name": "Search"}),
            ("lnk", "link", {"name": "About", "href": "/about"}),
            ("skip", "link", {"name": "Skip", "href": "/#main"}),
            ("btn", "button", {"name": "Open"}),
            ("dlg", "modal", {"name": "Dialog"}),
            ("r1", "region", {"name": "Main", "pages": ["/", "/results"]}),
            ("r2", "region", {"name": "Breadcrumb trail"}),
            ("bd", "business_data", {"name": "Record"}),
            ("deep", "link", {"name": "Record link"}),
        ],
        [
            ("p1", "contains", "f"),
            ("p1", "contains", "lnk"),
            ("p1", "contains", "skip"),
            ("p1", "contains", "btn"),
            ("p1", "contains", "r1"),
            ("f", "contains", "sb"),
            ("sb", "fills", "f"),
            ("go", "controls", "f"),
            ("f", "submits", "p2"),
            ("lnk", "navigates_to", "p2"),
            ("skip", "navigates_to", "p1"),
            ("btn", "opens", "dlg"),
            ("btn", "controls", "dlg"),
            ("btn", "navigates_to", "p3"),
            ("r1", "contains", "r2"),
            ("r2", "contains", "bd"),
            ("r2", "contains", "deep"),
            ("deep", "navigates_to", "p3"),
        ],
    )


def paths(found: list) -> list[list[str]]:
    return [m.nodes for m in found]


def test_type_matching_is_exact() -> None:
    kg = web()
    assert paths(match(kg, "Button -[navigates_to]-> Page")) == [["btn", "p3"]]
    assert paths(match(kg, "Link -[navigates_to]-> Page")) == [["lnk", "p2"], ["skip", "p1"], ["deep", "p3"]]
    assert match(kg, "SearchBox -[navigates_to]-> Page") == []
    assert paths(match(kg, "search_box -[fills]-> form")) == [["sb", "f"]]


def test_edge_direction_and_edge_records() -> None:
    kg = web()
    assert paths(match(kg, "Form <-[fills]- SearchBox")) == [["f", "sb"]]
    assert match(kg, "Form -[fills]-> SearchBox") == []
    found = match(kg, "SearchBox($q) -[fills]-> Form <-[controls]- Button($go)")
    assert len(found) == 1
    assert found[0].edges == [("sb", "fills", "f"), ("go", "controls", "f")]
    assert found[0].slots == {"q": "sb", "go": "go"}


def test_edge_and_node_alternation_and_wildcards() -> None:
    kg = web()
    found = match(kg, "Button -[opens|controls]-> Modal")
    assert [m.edges for m in found] == [[("btn", "controls", "dlg")], [("btn", "opens", "dlg")]]  # keys sorted
    assert paths(match(kg, "Page -[contains]-> (Form|Button)")) == [["p1", "f"], ["p1", "btn"]]
    assert paths(match(kg, "Page -[contains]-> Form|Button")) == [["p1", "f"], ["p1", "btn"]]
    assert paths(match(kg, "Button -[*]-> *")) == [["go", "f"], ["btn", "dlg"], ["btn", "dlg"], ["btn", "p3"]]
    assert paths(match(kg, "Modal <-- Any")) == [["dlg", "btn"], ["dlg", "btn"]]


def test_optional_node() -> None:
    kg = web()
    found = match(kg, "Page -[contains]-> Region? -[contains]-> (Link|Region)")
    assert paths(found) == [["p1", "lnk"], ["p1", "skip"], ["p1", "r1"], ["p1", "r1", "r2"]]


def test_star_plus_and_bounds_on_nodes() -> None:
    kg = chain(6)
    assert sorted(len(m.nodes) for m in match(kg, "Paragraph -[next]-> Paragraph*", start="n0")) == [1, 2, 3, 4, 5, 6]
    assert sorted(len(m.nodes) for m in match(kg, "Paragraph -[next]-> Paragraph+", start="n0")) == [2, 3, 4, 5, 6]
    assert sorted(len(m.nodes) for m in match(kg, "Paragraph -[next]-> Paragraph{2,3}", start="n0")) == [3, 4]
    assert [m.nodes for m in match(kg, "Paragraph -[next]-> Paragraph{2}")] == [
        ["n0", "n1", "n2"],
        ["n1", "n2", "n3"],
        ["n2", "n3", "n4"],
        ["n3", "n4", "n5"],
    ]
    assert match(kg, "Paragraph -[next]-> Paragraph{6,}") == []


def test_quantified_groups() -> None:
    kg = make_graph(
        [("a", "link"), ("pa", "page"), ("b", "link"), ("pb", "page"), ("c", "link"), ("pc", "page")],
        [
            ("a", "navigates_to", "pa"),
            ("pa", "contains", "b"),
            ("b", "navigates_to", "pb"),
            ("pb", "contains", "c"),
            ("c", "navigates_to", "pc"),
        ],
    )
    pattern = "Link -[navigates_to]-> Page (-[contains]-> Link -[navigates_to]-> Page){1,2}"
    assert paths(match(kg, pattern, start="a")) == [["a", "pa", "b", "pb"], ["a", "pa", "b", "pb", "c", "pc"]]
    assert paths(match(kg, "Link -[navigates_to]-> Page (-[contains]-> Link -[navigates_to]-> Page)?", start="a")) == [
        ["a", "pa"],
        ["a", "pa", "b", "pb"],
    ]
    assert paths(match(kg, "Link (-[navigates_to]-> Page -[contains]-> Link)+ -[navigates_to]-> Page", start="a")) == [
        ["a", "pa", "b", "pb"],
        ["a", "pa", "b", "pb", "c", "pc"],
    ]
    # a partial repetition is not a match
    assert match(kg, "Link (-[navigates_to]-> Page -[contains]-> Link){3}", start="a") == []


def test_repetition_is_capped() -> None:
    kg = chain(15)
    longest = max(len(m.nodes) for m in match(kg, "Paragraph (-[next]-> Paragraph)*", start="n0"))
    assert longest == MAX_REPEAT + 1
    assert max(len(m.nodes) for m in match(kg, "Paragraph -[next]-> Paragraph{11,}", start="n0")) == 12


def test_slots_bind_the_last_repetition() -> None:
    kg = chain(4)
    found = match(kg, "Paragraph($first) (-[next]-> Paragraph($step))+", start="n0")
    assert [(m.nodes[-1], m.slots) for m in found] == [
        ("n1", {"first": "n0", "step": "n1"}),
        ("n2", {"first": "n0", "step": "n2"}),
        ("n3", {"first": "n0", "step": "n3"}),
    ]
    # a slot in a group that matched zero times stays unbound
    assert match(kg, "Paragraph($first) (-[next]-> Paragraph($step))?", start="n3")[0].slots == {"first": "n3"}


def test_start_pins_the_first_node() -> None:
    kg = web()
    assert paths(match(kg, "Link -[navigates_to]-> Page", start="deep")) == [["deep", "p3"]]
    assert match(kg, "Button -[navigates_to]-> Page", start="deep") == []
    with pytest.raises(NotFoundError):
        match(kg, "Link", start="missing")


def test_predicates_filter_nodes() -> None:
    kg = web()
    assert paths(match(kg, "Region[name~breadcrumb] -[contains]-> Link")) == [["r2", "deep"]]
    assert paths(match(kg, "Region[name=breadcrumb trail]")) == [["r2"]]
    assert paths(match(kg, "Region[name!=Main]")) == [["r2"]]
    assert paths(match(kg, "Link[href!~#] -[navigates_to]-> Page")) == [["lnk", "p2"], ["deep", "p3"]]
    assert paths(match(kg, "Link[missing!=x]")) == [["lnk"], ["skip"], ["deep"]]
    assert match(kg, "Link[missing~x]") == []
    assert paths(match(kg, "Region[pages~/results]")) == [["r1"]]  # list values: any element
    assert paths(match(kg, "*[text~'of deep']")) == [["deep"]]  # top-level field


def test_matches_are_deterministic_and_follow_insertion_order() -> None:
    kg = web()
    pattern = "Page -[contains]-> Region* -[*]-> *"
    first = match(kg, pattern)
    assert first == match(kg, pattern)
    assert [m.nodes[-1] for m in first[:4]] == ["f", "lnk", "skip", "btn"]


def test_simple_paths_and_termination_on_cycles() -> None:
    kg = make_graph(
        [("a", "page"), ("b", "page"), ("c", "page")],
        [
            ("a", "navigates_to", "b"),
            ("b", "navigates_to", "c"),
            ("c", "navigates_to", "a"),
            ("b", "contains", "a"),
            ("a", "contains", "a"),
        ],
    )
    found = match(kg, "Page (-[*]-> Page)*", limit=1000)
    assert all(len(set(m.nodes)) == len(m.nodes) for m in found)
    assert max(len(m.nodes) for m in found) == 3
    assert len(match(kg, "Page (<-[*]- Page)* (-[*]-> *)*", limit=1000)) > 0
    assert match(kg, "Page (-[navigates_to]-> Page){4}") == []
    # repeating a group that can match nothing still terminates
    assert paths(match(kg, "Page ((-[contains]-> Page)?){3}", start="b")) == [["b"], ["b", "a"]]


def test_duplicate_paths_are_reported_once() -> None:
    kg = chain(3)
    assert paths(match(kg, "Paragraph (-[next]-> Paragraph)? (-[next]-> Paragraph)?", start="n0")) == [
        ["n0"],
        ["n0", "n1"],
        ["n0", "n1", "n2"],
    ]


def test_limit_and_budget() -> None:
    kg = chain(10)
    assert len(match(kg, "Paragraph (-[next]-> Paragraph)*", limit=5)) == 5
    assert len(list(iter_matches(kg, "Paragraph"))) == 10
    with pytest.raises(InputError, match="limit"):
        match(kg, "Paragraph", limit=0)
    with pytest.raises(InputError, match="search steps"):
        match(kg, "Paragraph (-[next]-> Paragraph)* -[contains]-> Link", max_steps=20)


# ------------------------------------------------------------------ shipped meta-paths


def test_shipped_patterns_compile_and_are_ordered_by_priority() -> None:
    ordered = patterns_by_priority()
    assert [m.tier for m in ordered] == sorted((m.tier for m in ordered), key=TIERS.index)
    assert {m.id for m in ordered} == {m.id for m in META_PATHS} and len(ordered) == len(META_PATHS)
    assert ordered[0].tier == "business" and ordered[-1].tier == "basic"
    assert {"business", "general", "basic"} == {m.tier for m in META_PATHS}
    assert [m.tier for m in patterns_by_priority(["basic"])] == ["basic"] * sum(m.tier == "basic" for m in META_PATHS)
    for meta_path in META_PATHS:
        slots = set(meta_path.compiled.slots)
        placeholders = set(re.findall(r"\{(\w+)\}", meta_path.template))
        assert placeholders <= slots, (meta_path.id, placeholders - slots)
    assert get_meta_path("search").tier == "general"
    with pytest.raises(NotFoundError):
        get_meta_path("nope")


# ------------------------------------------------------------------ the real example site


@pytest.fixture(scope="module")
def site_graph(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeGraph:
    runtime = Runtime(Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing", crawl_delay=0))
    service = runtime.graphs
    with serve_static(SITE) as site:

        async def go() -> str:
            report = await service.ingest_website(site.url + "/index.html", max_pages=15, max_depth=2)
            return report.graph_id

        graph_id = runtime.run(go)
    return service.load(graph_id)


def _name(kg: KnowledgeGraph, node: str) -> str:
    attrs = kg.g.nodes[node]["attrs"]
    return str(attrs.get("name") or attrs.get("title") or "")


def _check_shape(kg: KnowledgeGraph, meta_path_id: str, found: list) -> None:
    """Every match is a real simple path whose node types are allowed by the pattern."""
    terms = {t.slot: t for t in get_meta_path(meta_path_id).compiled.terms() if t.slot}
    for m in found:
        assert len(set(m.nodes)) == len(m.nodes)
        assert len(m.edges) == len(m.nodes) - 1
        for u, key, v in m.edges:
            assert kg.g.has_edge(u, v, key=key)
        for slot, node in m.slots.items():
            assert node in m.nodes
            allowed = terms[slot].types
            assert allowed is None or kg.node_type(node) in allowed, (meta_path_id, slot, kg.node_type(node))


@pytest.mark.integration
def test_every_shipped_meta_path_matches_the_example_site(site_graph: KnowledgeGraph) -> None:
    for meta_path in patterns_by_priority():
        found = match(site_graph, meta_path.pattern, limit=50)
        assert found, meta_path.id
        _check_shape(site_graph, meta_path.id, found)
        assert "{" not in meta_path.instruction(site_graph, found[0]), meta_path.id


@pytest.mark.integration
def test_example_site_slot_bindings_make_sense(site_graph: KnowledgeGraph) -> None:
    kg = site_graph

    def first(meta_path_id: str, limit: int = 100) -> list:
        return match(kg, get_meta_path(meta_path_id).pattern, limit=limit)

    search = first("search")
    assert {_name(kg, m.slots["q"]) for m in search} == {"Search the catalogue"}
    assert all(kg.g.nodes[m.slots["results"]]["attrs"]["url"].split("?")[0].endswith("/search.html") for m in search)  # forms are per page: a results page's own box submits its query

    sfd = first("search_filter_detail")
    assert {_name(kg, m.slots["q"]) for m in sfd} == {"Search the catalogue"}
    assert {"Genre", "Available now"} <= {_name(kg, m.slots["filter"]) for m in sfd}
    assert any("Lantern Keeper" in _name(kg, m.slots["detail"]) for m in sfd)
    assert all(_name(kg, m.slots["detail"]).startswith(_name(kg, m.slots["item"])) for m in sfd)  # result link → its book page

    modal = first("modal_form_submit")
    assert {(_name(kg, m.slots["open"]), _name(kg, m.slots["submit"])) for m in modal} == {("Request a loan", "Submit request")}
    assert {_name(kg, m.slots["field"]) for m in modal} == {"Your name", "Library card number", "Pickup branch"}

    assert {_name(kg, m.slots["tab"]) for m in first("tab_switch")} == {"Summary", "Details", "Reviews"}

    menu = first("menu_navigation")
    assert {_name(kg, m.slots["trigger"]) for m in menu} == {"Browse"}  # the ▾ is aria-hidden: not in the accessible name
    assert "Mystery" in {_name(kg, m.slots["item"]) for m in menu}

    crumbs = first("breadcrumb_navigation")
    assert {_name(kg, m.slots["crumbs"]) for m in crumbs} == {"Breadcrumb"}
    assert "Home" in {_name(kg, m.slots["crumb"]) for m in crumbs}

    pages = first("pagination_browse")
    assert {kg.node_type(m.slots["pager"]) for m in pages} == {"pagination"}
    assert all(_name(kg, m.slots["target"]).startswith("Search") for m in pages)

    hops = first("multi_hop_navigation")
    assert all(len(m.nodes) >= 5 and "#" not in kg.g.nodes[m.slots["first"]]["attrs"].get("href", "") for m in hops)

    for meta_path_id in ("business_detail", "business_lookup"):
        assert {kg.node_type(m.slots["record"]) for m in first(meta_path_id)} == {"business_data"}
    assert any(
        _name(kg, m.slots["record"]).startswith(_name(kg, m.slots["item"]))
        and _name(kg, m.slots["detail"]).startswith(_name(kg, m.slots["item"]))
        for m in first("business_detail", limit=500)
    )

    # exact typing on real data: a button pattern never lands on links and vice versa
    assert all(kg.node_type(m.nodes[0]) == "button" for m in first("button_click"))
    assert all(kg.node_type(m.slots["link"]) == "link" for m in first("link_click"))

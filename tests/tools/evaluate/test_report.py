"""Run summaries, the terminal table and the self-contained HTML report with consensus drawings.

The result set is hand-made (2 agents × 3 tasks) and every expected number below is computed by hand
in the comments; the drawings are in the consensus helper's drawing format.
"""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from taskloom.tools.errors import InputError
from taskloom.tools.evaluate.model import EpisodeResult
from taskloom.tools.evaluate.report import Drawing, analysis_rows, layout_drawing, render_report
from taskloom.tools.evaluate.summary import Mean, ReportSummary, RunSummary, build_summary, rich_summary, summarize, terminal_summary

EVIL = "click(text='<b>x</b>', element=\"button\")"
CHROMIUM = Path("/usr/bin/chromium")


def ep(task: str, agent: str, success: bool, **kw: Any) -> EpisodeResult:
    kinds = {"d1": ("document", "fact", "easy", None), "w1": ("web", "search", "medium", None), "c1": ("composite", "chain", "hard", 2)}
    kind, type_, diff, level = kinds[task]
    return EpisodeResult(run_id="run-7", task_id=task, task_kind=kind, task_type=type_, difficulty=diff, level=level, agent=agent, success=success, **kw)


def results() -> list[EpisodeResult]:
    return [
        ep("d1", "alpha", True, model="m1", steps=1, duration_s=2.0, tokens=100, answer="42", scores={"f1": 1.0, "rouge_l": 0.8, "exact_match": 1.0}),
        ep("w1", "alpha", True, model="m1", steps=4, duration_s=10.0, tokens=300, scores={"cr": 1.0, "lc": 0.5, "f1": 0.0}),
        ep("c1", "alpha", False, model="m1", steps=7, duration_s=20.0, tokens=600, scores={"cr": 0.5, "lc": 1.0}),
        ep("d1", "beta", False, model="m2", steps=2, duration_s=4.0, tokens=50, answer="41", scores={"f1": 0.4, "rouge_l": 0.2}),
        ep("w1", "beta", False, model="m2", status="timeout", reason="time limit 60 s", steps=10, duration_s=60.0, scores={"cr": 0.25}),
        ep("c1", "beta", False, status="crashed", reason="browser crashed", steps=1, duration_s=1.0),
    ]


def node(id_: str, label: str, kind: str, visits: int, step: float, necessary: bool = True, importance: float = 0.5) -> dict[str, Any]:
    return {"id": id_, "label": label, "visits": visits, "importance": importance, "necessary": necessary, "mean_step": step, "kind": kind}


def edge(s: str, t: str, count: int, wins: int, cls: str = "normal") -> dict[str, Any]:
    return {"source": s, "target": t, "count": count, "successes": wins, "failures": count - wins, "success_rate": wins / count, "class": cls}


def drawing_w1() -> dict[str, Any]:
    """START → n1 → n2 → SUCCESS, n1 → FAILURE, a back edge n2 → n1 and a self loop on n2."""
    return {
        "nodes": [
            node("S", "START", "start", 2, 0),
            node("n1", EVIL, "action", 2, 1, importance=0.8),
            node("n2", "type(text='dune', element='Search the catalogue')", "action", 1, 2, necessary=False, importance=0.2),
            node("OK", "SUCCESS", "success", 1, 3),
            node("KO", "FAILURE", "failure", 1, 2),
        ],
        "edges": [
            edge("S", "n1", 2, 1, "bottleneck"),
            edge("n1", "n2", 1, 1, "critical"),
            edge("n2", "n1", 1, 0, "trap"),
            edge("n2", "n2", 1, 0),
            edge("n2", "OK", 1, 1, "critical"),
            edge("n1", "KO", 1, 0, "trap"),
        ],
    }


def drawing_c1() -> dict[str, Any]:
    return {
        "nodes": [node("S", "START", "start", 2, 0), node("a", "navigate(url='http://127.0.0.1/x')", "action", 2, 1), node("KO", "FAILURE", "failure", 2, 2)],
        "edges": [edge("S", "a", 2, 0), edge("a", "KO", 2, 0, "trap")],
    }


TASKS = {
    "d1": {"instruction": "What is the answer in the <i>appendix</i>?", "type": "fact", "kind": "document", "difficulty": "easy"},
    "w1": {"instruction": "Search for <script>alert('dune')</script> & open it", "type": "search", "kind": "web", "difficulty": "medium"},
    "c1": {"instruction": "Search, then request a loan", "type": "chain", "kind": "composite", "difficulty": "hard"},
}
ANALYSES = {"w1": {"strategy_entropy": 0.918, "step_inflation": {"alpha": 1.0, "beta": 2.5}, "traps": ["n1 -> KO"]}}


def write(out: Path, rs: list[EpisodeResult] | None = None, consensus: dict[str, Any] | None = None, **kw: Any) -> tuple[str, Path]:
    cons = {"w1": drawing_w1(), "c1": drawing_c1()} if consensus is None else consensus
    paths = render_report("run-7", results() if rs is None else rs, TASKS, cons, ANALYSES, out, **kw)
    return paths.html.read_text(encoding="utf-8"), paths.summary


# --- summary numbers --------------------------------------------------------------------------


def test_per_agent_rows_match_hand_computed_values() -> None:
    s = summarize(results())
    alpha, beta = s.per_agent
    assert (alpha.agent, beta.agent) == ("alpha", "beta")
    # alpha: 2 of 3; steps (1+4+7)/3 = 4; duration (2+10+20)/3; CR (1+0.5)/2; LC (0.5+1)/2; tokens 100+300+600.
    assert (alpha.episodes, alpha.successes, alpha.models) == (3, 2, ["m1"])
    assert alpha.success_rate == pytest.approx(2 / 3)
    assert alpha.mean_steps == pytest.approx(4.0)
    assert alpha.mean_duration_s == pytest.approx(32 / 3)
    assert alpha.cr == Mean(value=0.75, n=2) and alpha.lc == Mean(value=0.75, n=2)
    # F1 over document tasks only (1.0), while the all-scores table averages both episodes having f1 ((1+0)/2).
    assert alpha.f1 == Mean(value=1.0, n=1) and alpha.rouge_l == Mean(value=0.8, n=1)
    assert alpha.scores["f1"] == Mean(value=0.5, n=2)
    assert alpha.tokens == 1000
    assert alpha.failures == {"finished": 1, "failed": 0, "timeout": 0, "crashed": 0}
    # beta: 0 of 3; steps 13/3; duration 65/3; CR only on w1; no LC at all.
    assert (beta.successes, beta.success_rate, beta.models) == (0, 0.0, ["m2"])
    assert beta.mean_steps == pytest.approx(13 / 3) and beta.mean_duration_s == pytest.approx(65 / 3)
    assert beta.cr == Mean(value=0.25, n=1) and beta.lc == Mean(value=None, n=0)
    assert beta.f1 == Mean(value=0.4, n=1) and beta.tokens == 50
    assert beta.failures == {"finished": 1, "failed": 0, "timeout": 1, "crashed": 1}


def test_group_rates_carry_counts_and_sort_deterministically() -> None:
    s = summarize(results())
    assert (s.episodes, s.tasks, s.agents, s.successes, s.run_ids) == (6, 3, 2, 2, ["run-7"])
    assert s.success_rate == pytest.approx(1 / 3)
    assert s.statuses == {"finished": 4, "failed": 0, "timeout": 1, "crashed": 1}
    assert (s.unsuccessful, s.outcomes) == (4, {"success": 2, "failed": 2, "timeout": 1, "crashed": 1})  # as the badges read
    assert [(g.group, g.n, g.successes, g.success_rate) for g in s.by_type] == [("chain", 2, 0, 0.0), ("fact", 2, 1, 0.5), ("search", 2, 1, 0.5)]
    # Difficulty in its natural order, not alphabetical (which would put "hard" before "medium").
    assert [(g.group, g.n, g.successes) for g in s.by_difficulty] == [("easy", 2, 1), ("medium", 2, 1), ("hard", 2, 0)]
    assert [(g.group, g.n, g.successes) for g in s.by_level] == [("2", 2, 0)]
    assert [(g.group, g.n, g.successes) for g in s.by_kind] == [("composite", 2, 0), ("document", 2, 1), ("web", 2, 1)]
    cells = [(c.agent, c.group, c.n, c.successes) for c in s.by_agent_type]
    assert cells == [
        ("alpha", "chain", 1, 0),
        ("alpha", "fact", 1, 1),
        ("alpha", "search", 1, 1),
        ("beta", "chain", 1, 0),
        ("beta", "fact", 1, 0),
        ("beta", "search", 1, 0),
    ]
    shuffled = results()
    random.Random(3).shuffle(shuffled)
    assert summarize(shuffled) == s


def test_levels_sort_numerically_and_empty_runs_summarize() -> None:
    base = results()[2]
    rs = [base.model_copy(update={"level": lv, "task_id": f"c{lv}"}) for lv in (10, 2, 3)]
    assert [g.group for g in summarize(rs).by_level] == ["2", "3", "10"]
    empty = summarize([])
    assert (empty.episodes, empty.success_rate, empty.per_agent) == (0, None, [])
    assert "0 episodes" in terminal_summary(empty)


def test_task_rows_aggregate_per_agent() -> None:
    report = build_summary("run-7", results(), TASKS, ["zz-consensus-only"])
    rows = {r.task_id: r for r in report.tasks}
    assert [r.task_id for r in report.tasks] == ["c1", "d1", "w1", "zz-consensus-only"]
    w1 = rows["w1"]
    assert (w1.kind, w1.type, w1.difficulty, w1.n, w1.successes, w1.success_rate) == ("web", "search", "medium", 2, 1, 0.5)
    assert w1.instruction.startswith("Search for <script>")
    beta = w1.agents[1]
    assert (beta.agent, beta.statuses, beta.reasons, beta.scores) == ("beta", {"timeout": 1}, ["time limit 60 s"], {"cr": 0.25})
    assert rows["d1"].agents[0].answers == ["42"]
    assert rows["c1"].level == 2
    assert (rows["zz-consensus-only"].n, rows["zz-consensus-only"].success_rate, rows["zz-consensus-only"].agents) == (0, None, [])


def test_terminal_summary_shows_rates_counts_and_scores() -> None:
    text = terminal_summary(summarize(results()))
    lines = text.splitlines()
    assert lines[0] == "Run run-7: 6 episodes, 3 tasks, 2 agents, 2/6 succeeded (33.3%)"
    assert lines[1] == "4 unsuccessful: 2 failed, 1 timeout, 1 crashed"
    alpha = next(line for line in lines if line.startswith("alpha"))
    beta = next(line for line in lines if line.startswith("beta"))
    assert alpha.split() == ["alpha", "3", "2/3", "66.7%", "4.0", "0.75", "0.75", "1.00", "1000"]
    assert beta.split() == ["beta", "3", "0/3", "0.0%", "4.3", "0.25", "—", "0.40", "50"]
    search = next(line for line in lines if line.startswith("search"))
    assert search.split() == ["search", "2", "1/2", "50.0%"]


def test_rich_summary_has_one_row_per_agent() -> None:
    table = rich_summary(summarize(results()))
    assert table.row_count == 2
    assert [c.header for c in table.columns][:4] == ["agent", "n", "ok", "success"]


# --- layout -----------------------------------------------------------------------------------


def test_layout_layers_routes_and_sizes() -> None:
    lay = layout_drawing(drawing_w1())
    layer = {n.id: n.layer for n in lay.nodes}
    # Longest forward path: S 0, n1 1, n2 2; both terminals on the last layer (3), even KO (mean_step 2).
    assert layer == {"S": 0, "n1": 1, "n2": 2, "OK": 3, "KO": 3}
    routes = {(e.source, e.target): e.route for e in lay.edges}
    assert routes[("n2", "n1")] == "back" and routes[("n2", "n2")] == "loop" and routes[("S", "n1")] == "forward"
    xs = {n.id: n.x for n in lay.nodes}
    assert xs["S"] < xs["n1"] < xs["n2"] < xs["OK"] == xs["KO"]
    r = {n.id: n.r for n in lay.nodes}
    shade = {n.id: n.shade for n in lay.nodes}
    assert shade == {"S": 0.625, "n1": 1.0, "n2": 0.25, "OK": 0.625, "KO": 0.625}  # importance / 0.8
    assert r["S"] == r["n1"] == 22.0 and r["n2"] < r["n1"]
    widths = {(e.source, e.target): e.width for e in lay.edges}
    assert widths[("S", "n1")] == 9.0 and widths[("n1", "n2")] < 9.0
    assert lay.layers == 4 and all(0 < n.x < lay.width and 0 < n.y < lay.height for n in lay.nodes)


def test_layout_barycentre_sweep_removes_a_crossing() -> None:
    # Rank order would put c above d, but c's parent b sits below d's parent a: the sweep swaps them.
    d = {
        "nodes": [
            node("S", "START", "start", 2, 0),
            node("a", "A", "action", 1, 1),
            node("b", "B", "action", 1, 1),
            node("c", "C", "action", 1, 2),
            node("d", "D", "action", 1, 2),
        ],
        "edges": [edge("S", "a", 1, 1), edge("S", "b", 1, 0), edge("a", "d", 1, 1), edge("b", "c", 1, 0)],
    }
    y = {n.id: n.y for n in layout_drawing(d).nodes}
    assert y["a"] < y["b"]
    assert y["d"] < y["c"]


def test_actions_reached_only_by_back_edges_stay_right_of_start() -> None:
    # c (mean step 2) is only reached from b (mean step 3): a back edge, so c has no forward predecessor.
    d = {
        "nodes": [node("S", "START", "start", 1, 0), node("a", "A", "action", 1, 1), node("c", "C", "action", 1, 2), node("b", "B", "action", 1, 3)],
        "edges": [edge("S", "a", 1, 1), edge("a", "b", 1, 1), edge("b", "c", 1, 1)],
    }
    lay = layout_drawing(d)
    assert {n.id: n.layer for n in lay.nodes} == {"S": 0, "a": 1, "c": 1, "b": 2}
    assert {(e.source, e.target): e.route for e in lay.edges} == {("S", "a"): "forward", ("a", "b"): "forward", ("b", "c"): "back"}
    assert lay.height == 80 * 2 + 84 + 60  # two nodes in layer 1, plus room for the back arc


def test_layout_is_independent_of_node_and_edge_order() -> None:
    d = drawing_w1()
    shuffled = {"nodes": list(reversed(d["nodes"])), "edges": list(reversed(d["edges"]))}
    assert layout_drawing(shuffled) == layout_drawing(d)


def test_drawing_validation_rejects_dangling_edges_and_duplicates() -> None:
    bad = drawing_w1()
    bad["edges"].append(edge("n1", "ghost", 1, 0))
    with pytest.raises(ValueError, match="ghost"):
        Drawing.model_validate(bad)
    dup = drawing_w1()
    dup["nodes"].append(node("n1", "again", "action", 1, 1))
    with pytest.raises(ValueError, match="duplicate"):
        Drawing.model_validate(dup)


# --- HTML -------------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """Strict enough to fail: every non-void tag must be closed in order; records tags, attributes and script blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: dict[str, str] = {}
        self._script: str | None = None
        self._buf: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "script":
            self._script = dict(attrs).get("id") or f"inline-{len(self.scripts)}"
            self._buf = []

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag == "script" and self._script is not None:
            self.scripts[self._script] = "".join(self._buf)
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._buf.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_html_is_well_formed_and_self_contained(tmp_path: Path) -> None:
    html, _ = write(tmp_path)
    page = parse(html)
    assert page.errors == [] and page.stack == []
    assert html.startswith("<!DOCTYPE html>")
    names = [t for t, _ in page.tags]
    assert "link" not in names and "img" not in names and "iframe" not in names
    for tag, attrs in page.tags:
        assert "src" not in attrs, f"<{tag}> loads {attrs['src']}"
        href = attrs.get("href")
        assert href is None or href.startswith("#"), f"<{tag}> links to {href}"
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not re.search(r"""url\(\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "@import" not in html
    inline = [code for key, code in page.scripts.items() if key.startswith("inline-")]
    assert len(inline) == 1 and "createElementNS" in inline[0]


def test_html_shows_every_task_agent_and_table(tmp_path: Path) -> None:
    html, _ = write(tmp_path)
    page = parse(html)
    sections = [a["data-task-id"] for t, a in page.tags if t == "section"]
    assert sections == ["c1", "d1", "w1"]
    for agent in ("alpha", "beta"):
        assert f"<td>{agent}</td>" in html
    assert "66.7%" in html and "33.3%" in html
    assert "strategy_entropy" in html and "step_inflation.beta" in html and "0.918" in html
    assert "No consensus graph." in html  # d1 has none
    assert "generated" not in html.split("<main>")[0]


def test_each_drawing_embeds_all_its_nodes_and_edges(tmp_path: Path) -> None:
    html, _ = write(tmp_path)
    page = parse(html)
    boxes = [a for t, a in page.tags if t == "div" and "data-src" in a]
    expected = {"c1": drawing_c1(), "w1": drawing_w1()}
    assert len(boxes) == 2
    order = [a["data-task-id"] for t, a in page.tags if t == "section" and a["data-task-id"] in expected]
    for box, task in zip(boxes, order):
        data = json.loads(page.scripts[str(box["data-src"])])
        want = expected[task]
        assert len(data["nodes"]) == len(want["nodes"]) == int(str(box["data-nodes"]))
        assert len(data["edges"]) == len(want["edges"]) == int(str(box["data-edges"]))
        assert sorted(n["label"] for n in data["nodes"]) == sorted(n["label"] for n in want["nodes"])


def test_labels_and_instructions_cannot_inject_markup(tmp_path: Path) -> None:
    rs = results()
    rs[0] = rs[0].model_copy(update={"agent": "<img src=x onerror=alert(1)>", "answer": "</td><b>bold</b>"})
    html, _ = write(tmp_path, rs)
    page = parse(html)
    assert page.errors == []
    tags = [t for t, _ in page.tags]
    assert "img" not in tags and tags.count("script") == 3  # two JSON blocks and the one inline script
    assert not [a for t, a in page.tags if t == "b"]
    assert "<b>x</b>" not in html and "<script>alert" not in html and "</b>bold" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    w1 = next(code for key, code in page.scripts.items() if not key.startswith("inline-") and "dune" in code)
    assert "<" not in w1 and ">" not in w1
    labels = [n["label"] for n in json.loads(w1)["nodes"]]
    assert EVIL in labels


def test_rendering_is_byte_identical_for_the_same_inputs(tmp_path: Path) -> None:
    first, first_json = write(tmp_path / "a")
    shuffled = results()
    random.Random(11).shuffle(shuffled)
    w1 = drawing_w1()
    cons = {"c1": drawing_c1(), "w1": {"nodes": w1["nodes"][::-1], "edges": w1["edges"][::-1]}}
    second, second_json = write(tmp_path / "b", shuffled, cons)
    assert first == second
    assert first_json.read_bytes() == second_json.read_bytes()
    stamped, _ = write(tmp_path / "c", generated_at="2025-01-02T03:04:05Z")
    assert "2025-01-02T03:04:05Z" in stamped and stamped != first


def test_summary_json_round_trips(tmp_path: Path) -> None:
    _, path = write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "summary.json"]  # no temp files left
    data = json.loads(path.read_text(encoding="utf-8"))
    assert RunSummary.model_validate(data["summary"]) == summarize(results())
    report = ReportSummary.model_validate(data)
    assert report == build_summary("run-7", results(), TASKS, ["c1", "w1"])
    assert [t.task_id for t in report.tasks] == ["c1", "d1", "w1"]


def test_an_empty_run_still_renders(tmp_path: Path) -> None:
    paths = render_report("empty", [], {}, {}, None, tmp_path)
    html = paths.html.read_text(encoding="utf-8")
    page = parse(html)
    assert page.errors == [] and "No episodes." in html and "<section" not in html
    assert RunSummary.model_validate(json.loads(paths.summary.read_text(encoding="utf-8"))["summary"]).episodes == 0


def test_a_malformed_drawing_is_an_input_error_naming_the_task(tmp_path: Path) -> None:
    bad = drawing_c1()
    del bad["nodes"][1]["kind"]
    with pytest.raises(InputError, match="'c1'"):
        write(tmp_path, consensus={"c1": bad})
    assert not (tmp_path / "report.html").exists()


def test_malformed_task_info_is_an_input_error() -> None:
    with pytest.raises(InputError, match="'w1'"):
        build_summary("run-7", results(), {"w1": {"instruction": "x", "level": "two"}})


def test_analysis_rows_flatten_one_level() -> None:
    rows = analysis_rows({"b": {"y": 2, "x": 0.123456}, "a": [1, "<2>"], "c": "text", "d": {}})
    assert rows == [("a", '[1, "<2>"]'), ("b.x", "0.1235"), ("b.y", "2"), ("c", "text"), ("d", "{}")]


# --- in a real browser ------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_report_draws_and_explains_graphs_offline_in_chromium(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    html, _ = write(tmp_path)
    requested: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requested.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((tmp_path / "report.html").as_uri())
            graphs = page.locator(".graph")
            assert graphs.count() == 2
            for i in range(2):
                box = graphs.nth(i)
                assert box.locator("circle").count() == int(box.get_attribute("data-nodes") or -1)
                assert box.locator("path.edge").count() == int(box.get_attribute("data-edges") or -1)
            w1 = page.locator("section[data-task-id='w1'] .graph")
            w1.scroll_into_view_if_needed()
            w1.locator("g.node[data-id='n1']").hover()
            tip = page.locator(".tip")
            assert tip.is_visible()
            assert tip.locator(".tip-title").inner_text() == EVIL
            assert "visits" in tip.inner_text() and "importance" in tip.inner_text()
            assert page.locator(".graph b, .tip b").count() == 0
            assert w1.locator("path.edge.dim").count() == 2  # the edges not touching n1: n2→n2 and n2→OK
            svg = w1.locator("svg")
            before = svg.get_attribute("viewBox")
            svg.dispatch_event("wheel", {"deltaY": -120, "clientX": 100, "clientY": 100})
            assert svg.get_attribute("viewBox") != before
        finally:
            browser.close()
    assert errors == []
    assert requested and all(url.startswith("file://") for url in requested)
    assert "<b>x</b>" not in html


def test_edge_width_follows_runs_so_one_looping_run_is_a_thin_edge() -> None:
    node = {"importance": 0, "necessary": True, "kind": "action"}
    d = {
        "nodes": [{"id": "s", "label": "START", "visits": 3, "mean_step": 0, **node, "kind": "start"},
                  {"id": "a", "label": "click(text='More')", "visits": 6, "mean_step": 1, **node},
                  {"id": "b", "label": "click(text='Go')", "visits": 2, "mean_step": 1, **node}],
        "edges": [{"source": "s", "target": "a", "count": 6, "successes": 0, "failures": 6, "success_rate": 0, "class": "normal", "runs": 1},
                  {"source": "s", "target": "b", "count": 2, "successes": 2, "failures": 0, "success_rate": 1, "class": "normal", "runs": 2}],
    }  # fmt: skip
    width = {e.target: e.width for e in layout_drawing(d).edges}
    assert width["b"] > width["a"]  # two runs beat one run that looped six times
    for e in d["edges"]:
        del e["runs"]
    width = {e.target: e.width for e in layout_drawing(d).edges}
    assert width["a"] > width["b"]  # without runs (a run's own trajectories), traversals decide

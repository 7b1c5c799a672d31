"""The HTML report of an imported trajectory set, built from real consensus graphs.

Three tasks: "flight" (t1) and "coupon" (t2) each have four trajectories by agents a1, a2, a3, where
a1 and a2 fail through the same Help link (a trap they share) and a1 and a3 succeed through Submit;
"weather" (t0) has a single trajectory, so its edge classes are not computable. Task ids run against
the instruction order, so the index order is checked, not inherited.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markupsafe import escape
from taskloom.tools.evaluate.consensus import AgentTrajectory, CanonicalAction, ConsensusGraph, Thresholds, build_consensus, make_action
from taskloom.tools.evaluate.consensus.sets import SetSummary, summarize_set
from taskloom.tools.evaluate.set_report import render_set_html, write_set_report

EVIL = "</script><img src=x onerror=alert(1)>"
CHROMIUM = Path("/usr/bin/chromium")


def act(name: str, **fields: str) -> CanonicalAction:
    return make_action(name, dict(fields), confidence=1.0, source="test")


NAV, HELP, SUBMIT = (
    act("navigate", url="shop.example"),
    act("click", text="Help", element="link"),
    act("click", text="Submit", element="button"),
)
BAD = act("click", text=EVIL, element="button")
INSTRUCTIONS = {"t1": "Book a flight to Oslo", "t2": f"Apply coupon {EVIL}", "t0": "Check the weather"}
LEVELS = {"t1": "easy", "t2": "medium", "t0": "hard"}


def run(task: str, i: int, agent: str, actions: list[CanonicalAction], ok: bool, reference: int | None = None) -> AgentTrajectory:
    return AgentTrajectory(id=f"{task}-{i}", task_id=task, agent=agent, actions=actions, success=ok, instruction=INSTRUCTIONS[task],
                           level=LEVELS[task], reference_steps=reference)  # fmt: skip


def trajectories() -> list[AgentTrajectory]:
    out = []
    for task in ("t1", "t2"):
        win = [NAV, SUBMIT] if task == "t1" else [NAV, SUBMIT, BAD]
        out += [
            run(task, 0, "a1", [NAV, HELP], False),
            run(task, 1, "a2", [NAV, HELP], False),
            run(task, 2, "a3", win, True),
            run(task, 3, "a1", win, True),
        ]
    return [*out, run("t0", 0, "solo", [NAV, SUBMIT, SUBMIT], True, reference=2)]


@pytest.fixture(scope="module")
def data() -> tuple[SetSummary, list[ConsensusGraph]]:
    trajs = trajectories()
    loose = Thresholds(min_runs=2, alpha=0.5)  # 4 runs a task are too few for p <= 0.05; the report's rendering is what is tested here
    graphs = [build_consensus([t for t in trajs if t.task_id == task], thresholds=loose) for task in ("t0", "t1", "t2")]
    return summarize_set("bench<1>", graphs, trajs), graphs


@pytest.fixture(scope="module")
def page(data: tuple[SetSummary, list[ConsensusGraph]]) -> str:
    return render_set_html(*data)


def between(html: str, start: str, end: str) -> str:
    return html[html.index(start) : html.index(end, html.index(start))]


def test_summary_numbers_and_agents(page: str, data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    summary = data[0]
    assert (summary.tasks, summary.trajectories, summary.successes) == (3, 9, 5)
    assert "<code>bench&lt;1&gt;</code>" in page
    assert "<strong>3</strong>tasks" in page and "<strong>9</strong>trajectories" in page
    assert "<strong>55.6%</strong>success (5/9)" in page
    agents = between(page, '<h2 id="agents">', '<h2 id="inflation">')
    # agent, tasks, trajectories, successes, then the rate
    for row in ("a1</td><td>2</td><td>4</td><td>2</td><td>50.0%", "a2</td><td>2</td><td>2</td><td>0</td><td>0.0%", "a3</td><td>2</td><td>2</td><td>2</td><td>100.0%",
                "solo</td><td>1</td><td>1</td><td>1</td><td>100.0%"):  # fmt: skip
        assert f"<tr><td>{row}" in agents
    assert "2</strong> of 2." in page  # both multi-agent tasks share the navigate step


def test_inflation_histograms_per_level(page: str, data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    summary = data[0]
    assert sorted(summary.inflation_by_level) == ["easy", "hard", "medium"]
    section = between(page, '<h2 id="inflation">', '<h2 id="findings">')
    assert section.count('<table class="hist">') == 4
    assert [m for m in re.findall(r"<h3>Level (\w+)</h3>", section)] == ["easy", "hard", "medium"]
    assert f"<span>n={summary.inflation.count}</span>" in section and summary.inflation.count == 9
    assert "<tr><td>1.5-2</td><td>" in section


def test_findings_shared_traps_and_separating_steps(page: str, data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    summary = data[0]
    assert [f.label for f in summary.recurring_traps] == [HELP.text]
    findings = between(page, '<h2 id="findings">', "<h3>Traps shared")
    assert f'<td class="label">{escape(HELP.text)}</td><td>2</td><td>4</td><td class="text">a1, a2</td>' in findings
    shared = between(page, "<h3>Traps shared", '<h2 id="separating">')
    assert shared.count(str(escape(HELP.text))) == 2 and shared.count("a1, a2") == 2
    separating = between(page, '<h2 id="separating">', '<h2 id="index">')
    assert str(escape(SUBMIT.text)) in separating and "+100.0 pp" in separating


def test_task_index_sorted_by_instruction_with_working_anchors(page: str) -> None:
    index = between(page, '<h2 id="index">', '<h2 id="tasks">')
    links = re.findall(r'<a href="#(task-\d+)">([^<]*)</a>', index)
    assert [title for _, title in links] == [str(escape(INSTRUCTIONS[t])) for t in ("t2", "t1", "t0")]
    for (anchor, _), task in zip(links, ("t2", "t1", "t0")):
        section = re.search(rf'<section class="task" id="{anchor}" data-task-id="([^"]*)">', page)
        assert section is not None and section.group(1) == task
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    assert set(re.findall(r'href="#([^"]+)"', page)) <= ids
    assert "edge classes: not computable: 1 run" in index
    assert "2 (external)" in index and "2 (shortest success)" in index


def test_one_graph_block_per_task_with_its_analysis(page: str, data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    blocks = re.findall(r'<script type="application/json" id="(graph-\d+)">(.*?)</script>', page)
    assert [b for b, _ in blocks] == ["graph-1", "graph-2", "graph-3"]
    by_task = {g.task_id: g for g in data[1]}
    for (block_id, text), task in zip(blocks, ("t2", "t1", "t0")):
        drawn = json.loads(text)
        assert sorted(n["id"] for n in drawn["nodes"]) == sorted(n.id for n in by_task[task].nodes)
        assert f'data-src="{block_id}" data-nodes="{len(drawn["nodes"])}"' in page
    t2 = between(page, 'data-task-id="t2"', "</section>")
    assert f'<tr><td>trap</td><td class="label">{escape(NAV.text)}</td><td class="label">{escape(HELP.text)}</td><td>2</td>' in t2
    assert "<tr><td>a2</td><td>1</td>" in t2 and 'class="ko">0/1 (0.0%)' in t2 and 'class="ok">1/1 (100.0%)' in t2


def test_each_labelled_step_shows_its_p_value_support_and_agents(page: str, data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    """Help on t2: a1 and a2 take it and fail (0/2), the two runs without it succeed (100%): Fisher's p = 2/6."""
    t2 = next(g for g in data[1] if g.task_id == "t2")
    ids = {n.label: n.id for n in t2.nodes}
    trap = next(e for e in t2.edges if e.target == ids[HELP.text])
    assert trap.edge_class == "trap" and trap.p_value == pytest.approx(1 / 3) and trap.attribution == {"a1": (1, 0), "a2": (1, 0)}
    section = between(page, 'data-task-id="t2"', "</section>")
    row = next(r for r in section.split("<tr>") if r.startswith(f'<td>trap</td><td class="label">{escape(NAV.text)}</td><td class="label">{escape(HELP.text)}</td>'))
    assert '<td>100.0%</td><td class="p">0.333</td><td class="text">agents</td><td class="text">a1 0/1, a2 0/1</td>' in row
    shared = between(page, "<h3>Traps shared", '<h2 id="separating">')
    assert shared.count('<td class="p">0.333</td><td class="text">a1 0/1, a2 0/1</td>') == 2  # t1 and t2
    separating = between(page, '<h2 id="separating">', '<h2 id="index">')
    assert '+100.0 pp</td><td class="p">0.333</td>' in separating
    drawn = json.loads(re.findall(r'<script type="application/json" id="graph-1">(.*?)</script>', page)[0])  # t2 comes first
    assert [e["p_value"] for e in drawn["edges"] if e["class"] == "trap"] == [pytest.approx(1 / 3)]  # the drawing's hover shows it too


def test_self_contained_and_escaped(page: str) -> None:
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "<link" not in page and "@import" not in page
    assert "<img" not in page and EVIL not in page
    assert f"Apply coupon {escape(EVIL)}" in page  # the instruction, autoescaped
    assert str(escape(BAD.text)) in page  # the action label, autoescaped in the analysis tables
    assert page.count("</script>") == page.count("<script") == 4  # three graphs and the drawing script
    labels = {n["label"] for _, text in re.findall(r'id="(graph-\d+)">(.*?)</script>', page) for n in json.loads(text)["nodes"]}
    assert BAD.text in labels


def test_byte_identical_whatever_the_graph_order(data: tuple[SetSummary, list[ConsensusGraph]], page: str, tmp_path: Path) -> None:
    summary, graphs = data
    assert render_set_html(summary, graphs) == page
    assert render_set_html(summary, list(reversed(graphs))) == page
    path = write_set_report(tmp_path / "set", summary, graphs)
    assert path == tmp_path / "set" / "report.html" and path.read_text(encoding="utf-8") == page


def test_three_hundred_tasks_render_in_index_order(data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    _, graphs = data
    many = [graphs[i % 3].model_copy(update={"task_id": f"bulk-{i:03d}", "instruction": f"Task {299 - i:03d}"}) for i in range(300)]
    summary = summarize_set("bulk", many, trajectories())
    html = render_set_html(summary, many)
    assert html.count('<script type="application/json" id="graph-') == 300
    assert html.index(">Task 000</a>") < html.index(">Task 001</a>") < html.index(">Task 299</a>")


@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_every_graph_draws_offline_in_chromium(data: tuple[SetSummary, list[ConsensusGraph]], tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    path = write_set_report(tmp_path, *data)
    requested: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requested.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            graphs = page.locator(".graph")
            assert graphs.count() == 3
            for i in range(3):
                box = graphs.nth(i)
                assert box.locator("circle").count() == int(box.get_attribute("data-nodes") or -1)
                assert box.locator("path.edge").count() == int(box.get_attribute("data-edges") or -1)
            assert page.locator("img").count() == 0
            graphs.nth(0).locator("g.edge-group:has(path.edge.trap)").dispatch_event("mouseenter")  # t2's trap: its p-value on hover
            assert "p (Fisher)0.333" in page.locator(".tip").inner_text().replace("\n", "")
        finally:
            browser.close()
    assert errors == []
    assert requested and all(url.startswith("file://") for url in requested)


def test_each_task_lists_its_runs_with_their_outcomes(page: str, data: tuple[SetSummary, list[ConsensusGraph]]) -> None:
    for g in data[1]:
        section = between(page, f'data-task-id="{g.task_id}"', "</section>")
        runs = re.findall(r'<tr><td class="text">([^<]+)</td><td>([^<]+)</td><td class="(ok|ko)">(success|failure)</td>', between(section, '<table class="runs">', "</table>"))
        assert sorted(runs) == sorted((r.id, r.agent, "ok" if r.success else "ko", "success" if r.success else "failure") for r in g.trajectories)
        assert len(runs) == g.summary.trajectories

"""Consensus graphs on real agent logs (tests/data/consensus/real): imports account for every run, typed merging, sets, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.evaluate.consensus import AgentTrajectory, build_consensus
from taskloom.tools.evaluate.consensus.canonicalize import make_action
from taskloom.tools.evaluate.consensus.reports import ImportOptions
from taskloom.tools.evaluate.service import EvaluationService
from taskloom.tools.workspace import Workspace

REAL = Path(__file__).resolve().parents[2] / "data" / "consensus" / "real"
ABP, TASKS, ARB = REAL / "abp" / "runs", REAL / "abp" / "Online_Mind2Web.json", REAL / "agentrewardbench"
TASKLOOM = Path(sys.executable).parent / "taskloom"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> EvaluationService:
    return EvaluationService(Workspace(tmp_path_factory.mktemp("ws")))


def test_every_abp_run_is_accounted_for_and_failures_stay_failures(service: EvaluationService) -> None:
    result = service.import_trajectories("abp", [ABP], ImportOptions(tasks=TASKS))
    report = result.report
    assert report.found == 300 and report.imported + len(report.skipped) == 300
    assert report.statuses == {"error_max_turns": 37, "success": 263}
    assert report.outcomes == {"success": 263, "failure": 37}
    assert report.with_reference == 300 and report.agents == ["abp"]  # "runs" names no agent: its parent folder does
    assert report.kinds["click"] / report.actions < 0.55 and report.kinds.get("other", 0) / report.actions < 0.01
    texts = {a.source: a for t in result.trajectories for a in t.actions}
    assert texts["Navigate reload"].name == "refresh" and texts["Navigate back"].kind == "back"
    assert texts["Press BS"].kind == "key" and texts["Press BS"].value == "Backspace"
    assert texts["Scroll (delta_x=0, delta_y=-400)"].value == "up" and texts["Scroll (delta_x=0, delta_y=550)"].value == "down"
    assert texts["Click at (600, 475)"].target is not None and texts["Click at (600, 475)"].target.x == 600
    assert all(t.instruction and t.level in ("easy", "medium", "hard") for t in result.trajectories)


def test_unknown_status_is_an_error_unless_the_user_says(tmp_path: Path, service: EvaluationService) -> None:
    runs = tmp_path / "runs"
    for name in sorted(os.listdir(ABP))[:3]:
        shutil.copytree(ABP / name, runs / name)
    odd = runs / sorted(os.listdir(runs))[0] / "result.json"
    data = json.loads(odd.read_text())
    odd.write_text(json.dumps({**data, "result_status": "paused"}))
    with pytest.raises(InputError, match="unknown status 'paused'.*--unknown"):
        service.import_trajectories("abp", [runs], ImportOptions())
    skipped = service.import_trajectories("abp", [runs], ImportOptions(unknown="skip")).report
    assert skipped.imported == 2 and skipped.skipped[0].reason == "unknown status 'paused'" and skipped.skip_reasons == {"unknown status": 1}
    failed = service.import_trajectories("abp", [runs], ImportOptions(unknown="fail")).report
    assert failed.imported == 3 and failed.statuses.get("paused") == 1 and failed.outcomes["failure"] >= 1


def test_a_single_run_says_what_it_cannot_compute_and_uses_the_human_reference(service: EvaluationService) -> None:
    result = service.import_trajectories("abp", [ABP], ImportOptions(tasks=TASKS))
    run = next(t for t in result.trajectories if sum(a.kind == "scroll" for a in t.actions) >= 3 and t.reference_steps)
    graph = build_consensus([run])
    assert graph.not_computable["edge_classes"].startswith("not computable: 1 run")
    assert "necessity" in graph.not_computable and "strategy_entropy" in graph.not_computable
    assert graph.summary.edge_classes["critical"] == 0 and graph.summary.edge_classes["trap"] == 0
    assert graph.summary.reference_source == "external" and graph.summary.reference_steps == run.reference_steps
    assert graph.trajectories[0].step_inflation == pytest.approx(len(run.actions) / run.reference_steps)
    assert all(e.source != e.target for e in graph.edges)
    repeated = [n for n in graph.nodes if n.repeats]
    consecutive = sum(1 for a, b in zip(run.actions, run.actions[1:]) if a.kind == b.kind == "scroll" and a.value == b.value)
    assert consecutive == 0 or sum(n.repeats for n in repeated) >= consecutive


def test_agentrewardbench_agents_share_nodes_on_most_tasks(service: EvaluationService) -> None:
    result = service.import_trajectories("browsergym", [ARB], ImportOptions())
    assert result.report.imported == 290 and len(result.report.agents) == 4 and result.report.no_action_markers > 0
    service.save_set("arb", [result])
    built = service.build_set("arb")
    s = built.summary
    assert s.tasks == 94 and s.tasks_with_several_agents >= 80
    assert s.tasks_with_shared_nodes / s.tasks_with_several_agents > 0.8
    # at most 4 runs per task (one per agent): no step's success rate can differ significantly from the others' (Fisher p ≥ 0.33)
    assert max(r.trajectories for r in s.task_index) <= 4 and s.shared_traps == [] and s.traps == 0
    assert s.separating_steps and s.separating_steps[0].gap > 0
    graphs = service.set_graphs("arb")[1]
    post = next(g for g in graphs if g.task_id == "webarena.629")  # "Create a discussion post …": three agents start on "Submit"
    submit = next(n for n in post.nodes if "click(id='62')" in n.variants)
    assert submit.label == "click(id='62')  “Submit”" and submit.hint is not None and submit.hint.startswith("Submit (")
    start = post.edge("start", submit.id)
    assert len(submit.agents) == 3 and start.runs == 3 and start.run_successes == 0 and start.edge_class == "normal"
    assert start.p_value is not None and start.p_value > 0.05 and sorted(start.attribution) == submit.agents  # 0 of 3 against 1 of 1: p = 0.25
    no_success = [g for g in graphs if g.summary.successes == 0 and g.summary.trajectories >= 2]
    assert no_success and all(g.summary.edge_classes["trap"] == 0 and "traps" in g.not_computable for g in no_success)


def _click(**fields: object) -> object:
    return make_action("click", dict(fields), confidence=1.0, source="test")


def _traj(i: int, actions: list[object], success: bool = True, agent: str = "a") -> AgentTrajectory:
    return AgentTrajectory(id=f"t{i}", task_id="x", agent=agent, actions=actions, success=success)  # type: ignore[arg-type]


def test_field_merging_compares_typed_fields() -> None:
    nav = make_action("navigate", {"url": "https://www.shop.test/a/"}, confidence=1, source="t")
    nav2 = make_action("navigate", {"url": "http://shop.test/a#top"}, confidence=1, source="t")
    other_page = make_action("navigate", {"url": "https://shop.test/b"}, confidence=1, source="t")
    down, up = (make_action("scroll", {"direction": d}, confidence=1, source="t") for d in ("down", "up"))
    trajs = [
        _traj(0, [nav, _click(x=600, y=475), down]),
        _traj(1, [nav2, _click(x=606, y=470), up]),
        _traj(2, [nav, _click(x=1405, y=475)], success=False),
        _traj(3, [other_page, _click(x=600, y=475)], success=False),
    ]
    graph = build_consensus(trajs)
    node = {v: n for n in graph.nodes for v in n.variants}
    assert node["navigate(url='https://www.shop.test/a/')"].visits == 3  # URLs normalised: three runs open page a
    near = node["click(x='606', y='470')"]
    assert "click(x='600', y='475')" in near.variants and near.visits == 2  # within tolerance on page a
    assert "click(x='1405', y='475')" not in near.variants  # 805 px apart
    same_xy = [n for n in graph.nodes if "click(x='600', y='475')" in n.variants]
    assert len(same_xy) == 2  # the same coordinates on another page are another click
    assert node["scroll(direction='down')"].id != node["scroll(direction='up')"].id
    string = build_consensus(trajs, mode="string")
    assert string.merge.mode == "string" and graph.merge.mode == "fields"


def test_type_merges_by_target_and_value_and_repeats_never_make_critical_edges() -> None:
    typed = [make_action("type", {"text": t, "id": i}, confidence=1, source="t") for t, i in (("Dune", "12"), ("DUNE", "12"), ("Dune", "13"))]
    search = _click(id="12")
    trajs = [_traj(i, [search, search, search, typed[i % 3]], agent=f"ag{i % 2}") for i in range(6)]
    graph = build_consensus(trajs)
    node = {v: n for n in graph.nodes for v in n.variants}
    assert node["type(text='Dune', id='12')"].id == node["type(text='DUNE', id='12')"].id
    assert node["type(text='Dune', id='13')"].id != node["type(text='Dune', id='12')"].id
    click = node["click(id='12')"]
    assert click.visits == 6 and click.repeats == 12
    assert not [e for e in graph.edges if e.source == e.target]


def _cli(*args: str, workspace: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_ALLOW_ROOTS=json.dumps([str(REAL)]), FASTMCP_SHOW_SERVER_BANNER="false")
    return subprocess.run([str(TASKLOOM), "consensus", *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.integration
def test_cli_imports_builds_and_reports_a_set(tmp_path: Path) -> None:
    imported = _cli("import", "abp", str(ABP), "--set", "abp", "--tasks", str(TASKS), workspace=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "300 found, 300 imported, 0 skipped" in imported.stdout and "263 success, 37 failure" in imported.stdout
    assert "layout: <root>/<task>/result.json (300)" in imported.stdout and "runs per agent: abp 300" in imported.stdout
    built = _cli("build", "--set", "abp", workspace=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "300 tasks, 300 trajectories" in built.stdout and "level hard" in built.stdout
    assert len(list((tmp_path / "runs" / "abp" / "consensus").glob("*.json"))) == 300
    report = _cli("report", "--set", "abp", workspace=tmp_path)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "reports" / "abp" / "report.html").read_text(encoding="utf-8")
    assert "not computable: 1 run" in html
    missing = _cli("build", "--set", "nobody", workspace=tmp_path)
    assert missing.returncode != 0 and "no imported set 'nobody'" in (missing.stderr + missing.stdout)
    wrong = _cli("import", "mind2web", str(ARB), "--set", "arb", "--dry-run", workspace=tmp_path)  # BrowserGym files, not result folders
    assert wrong.returncode != 0 and "0 runs found" in wrong.stderr + wrong.stdout and "expected <root>/<task>/result.json" in wrong.stderr + wrong.stdout
    assert not (tmp_path / "runs" / "arb").exists()

"""Importers on the fixtures in tests/data/consensus/ and on trajectories written by the real recorder."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from taskloom.tools.environment.trajectory import CriterionResult, EpisodeRecord, Recorder
from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.evaluate.consensus import build_consensus, load_jsonl, load_labels, load_online_mind2web, load_ours
from taskloom.tools.evaluate.consensus.reports import ImportLog, ImportOptions
from taskloom.tools.tasks.model import SuccessCriterion

DATA = Path(__file__).resolve().parents[2] / "data" / "consensus"
OM2W = DATA / "online_mind2web"


def test_online_mind2web_with_webjudge_labels() -> None:
    trajs = load_online_mind2web(OM2W / "seeact", labels=OM2W / "webjudge_seeact.jsonl")
    assert [(t.id, t.task_id, t.agent, t.success) for t in trajs] == [
        ("seeact/0f2d9e41", "0f2d9e41", "seeact", False),
        ("seeact/b7a1c3e9", "b7a1c3e9", "seeact", True),
    ]  # task_blocked has label 2 (not executable); task_nolabel has no outcome
    flights, movies = trajs
    assert [a.text for a in movies.actions] == [
        "click(text='Movies', element='link')",
        "select(option='Comedy', element='Genre')",
        "select(option='Audience rating', element='Sort by')",
        "click(text='Apply', element='button')",
    ]
    assert [a.text for a in flights.actions][-2:] == ["click(text='Search flights', element='button')", "scroll(direction='down')"]
    assert all(a.source for a in movies.actions)


def test_online_mind2web_outcomes_from_result_json_and_unknown_policy() -> None:
    trajs = load_online_mind2web(OM2W / "seeact", agent="SeeAct")
    assert [(t.task_id, t.success, t.agent) for t in trajs] == [("0f2d9e41", False, "SeeAct")]  # "status": "failed"
    with_fail = load_online_mind2web(OM2W / "seeact", labels=OM2W / "webjudge_seeact.jsonl", unknown="fail")
    nolabel = [t for t in with_fail if t.task_id == "task_nolabel"]  # no task_id in the file: the folder name
    assert len(with_fail) == 3 and nolabel[0].success is False
    assert [a.text for a in nolabel[0].actions] == ["navigate(url='https://library.example.org')", "click(text='Opening hours', element='link')"]
    with pytest.raises(InputError, match="no outcome"):
        load_online_mind2web(OM2W / "seeact", unknown="error")
    with pytest.raises(NotFoundError):
        load_online_mind2web(OM2W / "nobody")


def test_labels_file_formats(tmp_path: Path) -> None:
    assert load_labels(OM2W / "webjudge_seeact.jsonl") == {"b7a1c3e9": 1, "0f2d9e41": 0, "c4c4aa10": 2}
    (tmp_path / "human.json").write_text(json.dumps({"b7a1c3e9": 0}), encoding="utf-8")
    assert load_labels(tmp_path / "human.json") == {"b7a1c3e9": 0}
    trajs = load_online_mind2web(OM2W / "seeact", labels=tmp_path / "human.json")
    assert [(t.task_id, t.success) for t in trajs] == [("0f2d9e41", False), ("b7a1c3e9", False)]
    (tmp_path / "bad.jsonl").write_text('{"task": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match="predicted_label"):
        load_labels(tmp_path / "bad.jsonl")


def test_agentsynth_jsonl() -> None:
    trajs = load_jsonl(DATA / "agentsynth.jsonl")
    assert [(t.id, t.agent, t.model, t.success) for t in trajs] == [
        ("as-1", "agentsynth-gpt41", "gpt-4.1", True),
        ("as-2", "agentsynth-gpt41", None, False),
        ("agentsynth:4", "agentsynth", None, False),  # reward 0.0; id from the line number, agent from the file stem
    ]
    assert [a.text for a in trajs[0].actions] == ["click(x='512', y='300')", "type(text='quarterly report')", "press(key='enter')", "press(key='ctrl+s')"]
    assert [a.confidence for a in trajs[1].actions] == [0.5, 0.9, 0.1]
    assert trajs[2].actions[0].text == "dblclick(x='40', y='80')"
    assert len(load_jsonl(DATA / "agentsynth.jsonl", agent="synth", unknown="fail")) == 4
    assert load_jsonl(DATA / "agentsynth.jsonl", agent="synth")[2].agent == "synth"


def test_insta_jsonl_objects() -> None:
    ok, failed = load_jsonl(DATA / "insta.jsonl")
    assert [a.text for a in ok.actions] == [
        "navigate(url='https://www.example.org')",
        "click(text='Recipes', element='link')",
        "type(text='lentil soup', element='searchbox')",
        "answer(text='three lentil soup recipes')",  # 'stop' is no browser action: its description is canonicalised, an answer
    ]
    assert ok.actions[1].confidence == 0.9 and ok.actions[3].confidence == 0.9
    assert failed.success is False  # "label": 0
    assert [a.text for a in failed.actions] == ["click(text='Sign in', element='button')", "select(option='Vegan', element='Diet')"]
    assert failed.actions[0].necessary is False and failed.actions[1].necessary is None


def test_jsonl_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"success": true, "actions": []}\nnot json\n', encoding="utf-8")
    log = ImportLog(ImportOptions(unknown="skip"))
    assert len(load_jsonl(bad, log=log)) == 1  # a broken line is skipped with its reason, never silently
    assert [(s.item.endswith("bad.jsonl:2"), s.reason.split(":")[0]) for s in log.skipped] == [(True, "invalid JSON")]
    bad.write_text('{"success": true, "actions": "click"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="JSON array"):
        load_jsonl(bad)
    with pytest.raises(NotFoundError):
        load_jsonl(tmp_path / "missing.jsonl")


def _episode(folder: Path, agent: str, ok: bool | None, clicks: list[str]) -> None:
    rec = Recorder(folder, EpisodeRecord(episode_id=folder.name, env="browser", task_id="web-1", agent=agent))
    now = time.time()
    rec.action(name="snapshot", args={}, canonical="snapshot()", t_start=now, t_end=now)
    for text in clicks:
        rec.action(name="click", args={"ref": "e1"}, canonical=f"click(text='{text}', element='button')", t_start=now, t_end=now)
    checks = None if ok is None else [CriterionResult(criterion=SuccessCriterion(kind="clicked", value="Buy"), ok=ok, observed="")]
    rec.close(checks=checks)


def test_our_trajectories_feed_a_consensus_graph(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _episode(runs / "r1" / "ep-a", "alpha", True, ["Search", "Buy"])
    _episode(runs / "r1" / "ep-b", "beta", False, ["Search", "Help"])
    _episode(runs / "r2" / "ep-c", "beta", None, ["Search"])
    trajs = load_ours(runs)
    assert [(t.id, t.agent, t.success, len(t.actions)) for t in trajs] == [("ep-a", "alpha", True, 2), ("ep-b", "beta", False, 2)]
    assert len(load_ours([runs / "r2" / "ep-c" / "trajectory.jsonl"], unknown="fail")) == 1
    with pytest.raises(InputError):
        load_ours(runs, unknown="error")
    with pytest.raises(NotFoundError):
        load_ours(tmp_path / "nothing")
    g = build_consensus(trajs)
    assert g.task_id == "web-1" and g.summary.action_nodes == 3 and g.summary.successes == 1


def test_a_taskloom_runs_own_trajectories_import_with_the_runs_verdicts(tmp_path: Path) -> None:
    """Document episodes close without a verdict of their own; their run's results.jsonl has it, so no --unknown is needed."""
    run = tmp_path / "runs" / "run-1"
    _episode(run / "episodes" / "web-1" / "alpha" / "ep-a", "alpha", None, ["Search", "Buy"])
    _episode(run / "episodes" / "web-1" / "beta" / "ep-b", "beta", None, ["Help"])
    rows = [
        {"task_id": "web-1", "agent": "alpha", "success": False, "task_kind": "document"},
        {"task_id": "web-1", "agent": "alpha", "success": True, "task_kind": "document"},  # a resumed run: the last line wins
        {"task_id": "web-1", "agent": "beta", "success": False, "task_kind": "document"},
    ]
    (run / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + '\n{"task_id": "torn', encoding="utf-8")
    trajs = load_ours(run, unknown="error")
    assert sorted((t.agent, t.success) for t in trajs) == [("alpha", True), ("beta", False)]
    _episode(tmp_path / "loose" / "ep-c", "gamma", None, ["Search"])  # no run around it: still an unknown outcome
    with pytest.raises(InputError, match="no outcome"):
        load_ours(tmp_path / "loose", unknown="error")

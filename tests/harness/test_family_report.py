"""The run report's per-family table: episodes and successes per agent and task family (the generator that made the task; an LLM rewrite keeps the family)."""

from __future__ import annotations

from pathlib import Path

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.finish import family_rows, family_table, finish_run
from taskloom.harness.store import RunSpec, RunStore
from taskloom.tools.evaluate.model import EpisodeResult
from taskloom.tools.tasks.model import Provenance, Task
from taskloom.tools.workspace import Workspace


def _task(task_id: str, generator: str) -> Task:
    return Task(id=task_id, kind="web", type="lookup", instruction=f"What is recorded for {task_id}?", gold_answer="1",
                provenance=Provenance(graph_id="g", generator=generator))


def _result(task_id: str, agent: str, success: bool) -> EpisodeResult:
    return EpisodeResult(run_id="fam", task_id=task_id, task_kind="web", task_type="lookup", difficulty="easy", agent=agent, success=success)


TASKS = {t.id: t for t in [_task("l1", "web-lookup"), _task("l2", "web-lookup+llm"), _task("f1", "web-find"), _task("c1", "web-change")]}
OUTCOMES = [
    ("l1", "oracle", True), ("l2", "oracle", True), ("f1", "oracle", True), ("c1", "oracle", True),
    ("l1", "explorer", True), ("l2", "explorer", False), ("f1", "explorer", True), ("c1", "explorer", False),
    ("l1", "word-match", False), ("l2", "word-match", False), ("f1", "word-match", True),
]


def test_family_rows_count_episodes_and_successes() -> None:
    rows = family_rows([_result(*o) for o in OUTCOMES] + [_result("gone", "oracle", False)], TASKS)
    table = {(r.agent, r.family): (r.episodes, r.successes, r.rate) for r in rows}
    assert table == {
        ("explorer", "web-change"): (1, 0, 0.0), ("explorer", "web-find"): (1, 1, 1.0), ("explorer", "web-lookup"): (2, 1, 0.5),
        ("oracle", "unknown"): (1, 0, 0.0), ("oracle", "web-change"): (1, 1, 1.0), ("oracle", "web-find"): (1, 1, 1.0),
        ("oracle", "web-lookup"): (2, 2, 1.0), ("word-match", "web-find"): (1, 1, 1.0), ("word-match", "web-lookup"): (2, 0, 0.0),
    }
    lines = family_table(rows).splitlines()
    assert lines[0].split() == ["family", "explorer", "oracle", "word-match"]
    assert lines[-1].split() == ["web-lookup", "1/2", "(50%)", "2/2", "(100%)", "0/2", "(0%)"]
    assert next(line for line in lines if line.startswith("web-change")).split()[-1] == "-"  # word-match never ran it
    assert family_table([]) == ""


def test_a_finished_run_reports_its_families(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws")
    store = RunStore(workspace, "fam")
    store.create(RunSpec(run_id="fam", task_ids=list(TASKS), agents=[AgentSpec.parse(a) for a in ("oracle", "explorer", "word-match")]))
    for outcome in OUTCOMES:
        store.append(_result(*outcome))
    report = finish_run(store, TASKS, workspace)
    assert report.summary.episodes == len(OUTCOMES)  # the old fields are still there
    rows = {(r.agent, r.family): (r.episodes, r.successes) for r in report.families}
    assert rows[("explorer", "web-lookup")] == (2, 1) and rows[("word-match", "web-find")] == (1, 1)
    assert sum(n for n, _ in rows.values()) == len(OUTCOMES) and sum(ok for _, ok in rows.values()) == sum(o[2] for o in OUTCOMES)
    assert "web-change" in report.family_text()
    assert report.model_dump(mode="json")["families"][0]["agent"] == "explorer"

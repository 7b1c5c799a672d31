"""Runs as first-class data: layouts of repeated runs, tagless Mind2Web operations, labels backed by Fisher's exact test, pass@k.

The result folders here are constructed in the shape of Online-Mind2Web logs (no public log has
repeated runs of several agents); the layouts and outcomes on real logs are tested in test_consensus_real_logs.py.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from scipy.stats import fisher_exact as scipy_fisher

from taskloom.tools.errors import InputError, NotFoundError
from taskloom.tools.evaluate.consensus import build_consensus, canonicalize_text, fisher_exact, group_by_task, pass_at_k, pass_hat_k
from taskloom.tools.evaluate.consensus.reports import ImportOptions
from taskloom.tools.evaluate.consensus.sets import number_runs, summarize_set
from taskloom.tools.evaluate.service import EvaluationService
from taskloom.tools.workspace import Workspace

REAL_ABP = Path(__file__).resolve().parents[2] / "data" / "consensus" / "real" / "abp" / "runs"
SEARCH = ["-> NAVIGATE: https://books.example/", "[textbox]  Title -> TYPE: Dune", "-> PRESS: Enter", "[link]  Dune -> CLICK"]
BROWSE = ["-> NAVIGATE: https://books.example", "[link]  Categories -> CLICK", "-> SCROLL: up", "-> SCROLL: down", "-> GO_BACK"]


def _write(path: Path, data: dict[str, object]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "result.json").write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """<root>/<agent>/<task>/<run>/result.json: agent 'op' searches (6 runs, 5 succeed), agent 'bu' browses (6 runs, all fail) and
    searches in 2 more runs (both succeed); a run without an action list; a Mind2Web action_reprs run."""
    root = tmp_path_factory.mktemp("m2w") / "results"
    for run in range(6):
        _write(root / "op" / "t1" / f"run_{run}", {"task_id": "t1", "task": "Find Dune", "action_history": SEARCH + ["-> ANSWER: Dune, by Frank Herbert"]})
        _write(root / "bu" / "t1" / f"run_{run}", {"task_id": "t1", "task": "Find Dune", "action_history": BROWSE})
    _write(root / "bu" / "t1" / "run_6", {"task_id": "t1", "action_history": SEARCH})
    _write(root / "bu" / "t1" / "run_7", {"task_id": "t1", "action_history": SEARCH + ["-> WAIT: 2", "hmm ~~"]})
    _write(root / "bu" / "t2" / "run_0", {"task_id": "t2", "predicted_label": 0, "final_result_response": "gave up"})  # no action list
    _write(root / "op" / "t2" / "0", {"task_id": "t2", "predicted_label": 1, "action_reprs": ["[combobox]  Sort -> SELECT: Price", "[button]  Apply -> CLICK"]})
    labels = [{"task_id": "t1", "agent": "op", "run": r, "predicted_label": int(r != 3)} for r in range(6)]
    labels += [{"task_id": "t1", "agent": "bu", "run": r, "predicted_label": int(r >= 6)} for r in range(8)]
    (root.parent / "webjudge.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> EvaluationService:
    return EvaluationService(Workspace(tmp_path_factory.mktemp("ws")))


def test_tagless_operations_are_the_actions_they_name() -> None:
    got = {t: canonicalize_text(t).text for t in ("-> PRESS: Enter", "-> SCROLL: up", "-> GO_BACK", "-> KEY: ctrl+a", "-> WAIT: 2")}
    assert got == {
        "-> PRESS: Enter": "press(key='Enter')", "-> SCROLL: up": "scroll(direction='up')", "-> GO_BACK": "go_back()",
        "-> KEY: ctrl+a": "press(key='Control+a')", "-> WAIT: 2": "wait(seconds='2')",
    }  # fmt: skip
    answer = canonicalize_text("-> ANSWER: I could not select a date, so I clicked Search")
    assert (answer.kind, answer.value) == ("answer", "I could not select a date, so I clicked Search")  # not a fake type/select/click
    assert canonicalize_text("-> NAVIGATE: https://a.example/x").value == "https://a.example/x"
    assert canonicalize_text("a -> b is not an operation").kind == "other"


def test_repeated_runs_of_several_agents_import_with_their_layout(service: EvaluationService, logs: Path) -> None:
    result = service.import_trajectories("mind2web", [logs], ImportOptions(labels=logs.parent / "webjudge.jsonl"))
    r = result.report
    assert (r.found, r.imported, r.runs_per_agent, r.repeated) == (16, 16, {"bu": 9, "op": 7}, 2)
    assert r.layouts == {"<root>/<agent>/<task>/<run>/result.json": 16}
    assert r.verdict_sources == {"judge": 16} and r.outcomes == {"success": 8, "failure": 8}
    assert (r.empty_runs, r.no_action_list, r.unparsed, r.unparsed_examples) == (1, 1, 1, [("hmm ~~", 1)])
    assert any("1 runs have no actions" in n for n in r.notes) and any("not understood" in n for n in r.notes)
    assert r.kinds == {"click": 15, "type": 8, "select": 1, "scroll": 12, "navigate": 14, "back": 6, "key": 8, "answer": 6, "wait": 1, "other": 1}
    op = sorted((t for t in result.trajectories if t.agent == "op" and t.task_id == "t1"), key=lambda t: t.run or 0)
    assert [t.run for t in op] == list(range(6)) and [t.success for t in op] == [True, True, True, False, True, True]
    assert op[3].id == "op/t1#3" and op[3].source is not None and op[3].source.endswith("run_3/result.json")
    assert next(t for t in result.trajectories if t.task_id == "t2" and t.agent == "op").actions[0].text == "select(option='Price', element='Sort')"


def test_zero_runs_found_says_what_was_expected(service: EvaluationService, tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "webarena.1.json").write_text("{}", encoding="utf-8")
    with pytest.raises(NotFoundError, match=r"0 runs found in .*logs: expected <root>/<task>/result.json or .*webarena.1.json"):
        service.import_trajectories("mind2web", [tmp_path / "logs"], ImportOptions())


def test_two_imports_of_one_agent_are_two_runs_and_the_same_folder_twice_is_an_error(service: EvaluationService, tmp_path: Path) -> None:
    for attempt in ("a", "b"):
        _write(tmp_path / attempt / "t9", {"task_id": "t9", "status": "success" if attempt == "a" else "failed", "action_history": SEARCH})
    result = service.import_trajectories("mind2web", [tmp_path / "a", tmp_path / "b"], ImportOptions(agent="solo"))
    assert sorted((t.id, t.run, t.success, t.verdict_source) for t in result.trajectories) == [
        ("solo/t9#0", 0, True, "agent"), ("solo/t9#1", 1, False, "agent"),
    ]  # fmt: skip
    with pytest.raises(InputError, match="imported twice"):
        number_runs([*result.trajectories, *result.trajectories])


def test_labels_carry_fisher_p_values_support_and_attribution(service: EvaluationService, logs: Path) -> None:
    trajs = service.import_trajectories("mind2web", [logs], ImportOptions(labels=logs.parent / "webjudge.jsonl")).trajectories
    graphs = [build_consensus(group) for _, group in sorted(group_by_task(trajs).items())]
    t1 = graphs[0]
    labelled = {(t1.node(e.source).label, t1.node(e.target).label): e for e in t1.edges if e.edge_class != "normal"}
    # one node for https://books.example and https://books.example/ (URLs normalised), labelled by its most frequent spelling
    trap = labelled[("navigate(url='https://books.example/')", "click(text='Categories', element='link')")]
    # 0 of bu's 6 browsing runs succeed against 7 of the 8 searching runs
    assert (trap.edge_class, trap.runs, trap.run_successes, trap.success_without) == ("trap", 6, 0, 0.875)
    assert trap.p_value == pytest.approx(scipy_fisher([[0, 6], [7, 1]]).pvalue) and trap.p_value < 0.005 and trap.support == "one agent"
    assert trap.attribution == {"bu": (6, 0)}
    search = t1.edge(t1.node_of("type(text='Dune', element='Title')").id, t1.node_of("press(key='Enter')").id)
    assert search.edge_class == "critical" and search.support == "agents" and search.attribution == {"bu": (2, 2), "op": (6, 5)}
    summary = summarize_set("s", graphs, trajs)
    assert (summary.traps, summary.one_agent_traps) == (sum(e.edge_class == "trap" for e in t1.edges), summary.traps) and summary.traps >= 1
    assert summary.labelled_steps[0].p_value is not None and summary.labelled_steps[0].p_value <= 0.05
    bu = next(a for a in summary.agents if a.agent == "bu")
    assert (bu.trajectories, bu.successes, bu.runs_per_task) == (9, 2, 4.5)
    assert bu.pass_at_k == {1: pytest.approx((2 / 8 + 0) / 2, abs=1e-4)}  # k only up to its fewest runs on a task (1 on t2)
    op_t1 = next(r for r in summary.agent_tasks if (r.agent, r.task_id) == ("op", "t1"))
    assert (op_t1.runs, op_t1.successes, op_t1.pass_at_k[2], op_t1.pass_hat_k[2]) == (6, 5, 1.0, round(10 / 15, 4))


def test_fisher_exact_matches_scipy_and_pass_k_by_hand() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a, b, c, d = (rng.randint(0, 15) for _ in range(4))
        assert fisher_exact(a, b, c, d) == pytest.approx(scipy_fisher([[a, b], [c, d]]).pvalue, rel=1e-9, abs=1e-12)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10) and pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)
    assert pass_at_k(2000, 3, 16) == pytest.approx(1 - math.comb(1997, 16) / math.comb(2000, 16))


def test_fisher_exact_holds_on_tables_of_thousands_of_runs() -> None:
    """A task with 10,000 runs: the big-int form overflowed a float; the walk from the mode matches SciPy."""
    rng = random.Random(11)
    for _ in range(40):
        a, b, c, d = (rng.randint(0, 5000) for _ in range(4))
        assert fisher_exact(a, b, c, d) == pytest.approx(scipy_fisher([[a, b], [c, d]]).pvalue, rel=1e-9, abs=1e-12)
    assert fisher_exact(1400, 3600, 1500, 3500) == pytest.approx(scipy_fisher([[1400, 3600], [1500, 3500]]).pvalue, rel=1e-9)
    assert fisher_exact(30, 4970, 3000, 2000) == 0.0  # far below 1e-300


def test_real_abp_folder_layout_is_detected(service: EvaluationService) -> None:
    r = service.import_trajectories("abp", [REAL_ABP], ImportOptions()).report
    assert r.layouts == {"<root>/<task>/result.json": 300} and r.repeated == 0 and r.verdict_sources == {"agent": 300}
    assert r.runs_per_agent == {"abp": 300} and 0 < r.unparsed < r.kinds["other"]  # hover, refresh, drag are understood, just no kind of their own
    assert r.unparsed_examples[0][0] == "Select picker sp_1 -> CANCEL" and any("not understood" in n for n in r.notes)

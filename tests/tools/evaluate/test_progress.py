"""The OmniEval graph evaluator: node states replayed over hand-made trajectories, Coverage Rate, Logical Consistency."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest

from taskloom.tools.environment.trajectory import ActionRecord, CloseRecord, CriterionResult, EpisodeRecord, Target, Trajectory
from taskloom.tools.errors import InputError
from taskloom.tools.evaluate.coherency import application, coherency_score, logical_consistency, max_coherency
from taskloom.tools.evaluate.progress import coverage_rate, evaluate_progress
from taskloom.tools.tasks.dag import Dag
from taskloom.tools.tasks.model import Provenance, SuccessCriterion, Subtask, Task, criterion_key

# -- builders ---------------------------------------------------------------------------------


def _clicked(text: str) -> SuccessCriterion:
    return SuccessCriterion(kind="clicked", value=text)


def _text(text: str) -> SuccessCriterion:
    return SuccessCriterion(kind="text_present", value=text)


def _url(pattern: str) -> SuccessCriterion:
    return SuccessCriterion(kind="url_matches", value=pattern)


def _sub(sid: str, *checks: SuccessCriterion, app: str = "") -> Subtask:
    return Subtask(id=sid, instruction=f"do {sid}", category=app, checks=list(checks))


def _task(subtasks: list[Subtask], dag: list[tuple[str, str]]) -> Task:
    return Task(
        id="comp-1", kind="composite", type="dag", instruction="do it all", subtasks=subtasks, dag=dag,
        provenance=Provenance(graph_id="g", generator="compose"),
    )


def _click(index: int, text: str, holds: Sequence[SuccessCriterion] | None = (), url: str | None = None, error: str | None = None) -> ActionRecord:
    return ActionRecord(
        index=index, name="click", args={"ref": f"e{index}"}, canonical=f"click(text='{text}', element='button')",
        target=Target(role="button", name=text), url_after=url, t_start=float(index), t_end=index + 0.5, error=error,
        holds=None if holds is None else [criterion_key(c) for c in holds],
    )


def _noop(index: int, holds: Sequence[SuccessCriterion] | None = (), url: str | None = None) -> ActionRecord:
    return ActionRecord(
        index=index, name="scroll", args={"direction": "down"}, canonical="scroll(direction='down')", url_after=url,
        t_start=float(index), t_end=index + 0.5, holds=None if holds is None else [criterion_key(c) for c in holds],
    )


def _traj(actions: list[ActionRecord], closed: CloseRecord | None = None) -> Trajectory:
    return Trajectory(episode=EpisodeRecord(episode_id="ep-1", env="browser", task_id="comp-1"), actions=actions, closed=closed)


# -- node states --------------------------------------------------------------------------------


def test_roots_evaluate_and_a_state_only_successor_completes_in_the_same_action_cascade() -> None:
    # a (click A) -> b (text 'Saved'); c (click C) is an independent root
    task = _task([_sub("a", _clicked("A")), _sub("b", _text("Saved")), _sub("c", _clicked("C"))], [("a", "b")])
    before = evaluate_progress(task, _traj([]))
    assert [(n.id, n.state, n.evaluating_since) for n in before.nodes] == [("a", "evaluating", -1), ("b", "waiting", None), ("c", "evaluating", -1)]
    result = evaluate_progress(task, _traj([_click(0, "A", holds=[_text("Saved")]), _click(1, "C")]))
    assert result.sequence == [("a", 0), ("b", 0), ("c", 1)]  # b released by action 0 and checked on it: state persists
    assert result.state("b") == "completed" and result.nodes[1].evaluating_since == 0
    assert (result.completed, result.total, result.success, result.steps) == (3, 3, True, 2)


def test_work_done_before_release_counts_but_completes_only_with_the_predecessors() -> None:
    # the export was clicked before logging in: b was done at 0, released after 1, so it completes at 1
    task = _task([_sub("a", _text("Logged in")), _sub("b", _clicked("Export"))], [("a", "b")])
    result = evaluate_progress(task, _traj([_click(0, "Export"), _noop(1, holds=[_text("Logged in")]), _noop(2)]))
    assert result.sequence == [("a", 1), ("b", 1)] and result.nodes[1].evaluating_since == 1
    never = evaluate_progress(task, _traj([_click(0, "Export"), _noop(1)]))  # a never held: b waits however much it did
    assert never.sequence == [] and never.state("b") == "waiting" and never.cr == 0.0


def test_a_page_seen_before_release_counts_as_gold_replays_count_it() -> None:
    # /results was seen at 0, before a completed at 1: b's state held after some action, so b completes with a
    task = _task([_sub("a", _clicked("Next")), _sub("b", _url(r"/results"))], [("a", "b")])
    gone = [_noop(0, holds=[_url(r"/results")]), _click(1, "Next", holds=[]), _noop(2, holds=[])]
    assert evaluate_progress(task, _traj(gone)).sequence == [("a", 1), ("b", 1)]
    unseen = [_noop(0, holds=[]), _click(1, "Next", holds=[]), _noop(2, holds=[])]
    result = evaluate_progress(task, _traj(unseen))
    assert result.sequence == [("a", 1)] and result.state("b") == "evaluating" and result.nodes[1].unmet == [criterion_key(_url(r"/results"))]


def test_action_and_state_checks_can_be_met_on_different_actions_but_state_is_read_on_the_latest() -> None:
    task = _task([_sub("a", _clicked("Save"), _text("Saved"))], [])
    met = evaluate_progress(task, _traj([_click(0, "Save", holds=[]), _noop(1, holds=[_text("Saved")])]))
    assert met.sequence == [("a", 1)]
    lost = evaluate_progress(task, _traj([_noop(0, holds=[_text("Saved")]), _click(1, "Save", holds=[])]))
    assert lost.sequence == [] and lost.nodes[0].unmet == [criterion_key(_text("Saved"))]


def test_failed_actions_meet_no_action_check_but_their_observed_state_counts() -> None:
    task = _task([_sub("a", _clicked("Pay")), _sub("b", _text("Receipt"))], [])
    result = evaluate_progress(task, _traj([_click(0, "Pay", holds=[_text("Receipt")], error="element detached")]))
    assert result.sequence == [("b", 0)] and result.state("a") == "evaluating"


def test_a_join_waits_for_every_predecessor() -> None:
    task = _task([_sub("a", _clicked("A")), _sub("b", _clicked("B")), _sub("j", _text("Both"))], [("a", "j"), ("b", "j")])
    partial = evaluate_progress(task, _traj([_click(0, "A", holds=[_text("Both")])]))
    assert partial.state("j") == "waiting"
    full = evaluate_progress(task, _traj([_click(0, "A", holds=[_text("Both")]), _click(1, "B", holds=[_text("Both")])]))
    assert full.sequence == [("a", 0), ("b", 1), ("j", 1)]


def test_a_subtask_without_checks_is_credited_only_through_a_successor_that_consumed_it() -> None:
    task = _task([_sub("a"), _sub("b", _text("x"))], [("a", "b")])
    result = evaluate_progress(task, _traj([_noop(0, holds=[]), _noop(1, holds=[_text("x")])]))
    assert result.sequence == [("a", 1), ("b", 1)] and result.cr == 1.0
    idle = evaluate_progress(task, _traj([_noop(0, holds=[])]))
    assert [n.state for n in idle.nodes] == ["evaluating", "evaluating"] and idle.cr == 0.0


def test_a_sink_without_checks_completes_on_a_right_answer_only() -> None:
    task = _task([_sub("a", _text("x")), _sub("b")], [("a", "b")]).model_copy(update={"gold_answer": "12", "answer_kind": "number", "metrics": ["exact_match", "f1", "numeric"]})
    seen = [_noop(0, holds=[_text("x")]), _noop(1, holds=[])]
    right = evaluate_progress(task, _traj(seen).model_copy(update={"answer": "12"}))
    assert right.sequence == [("a", 0), ("b", 1)] and right.success
    for answer in ("13", None):
        wrong = evaluate_progress(task, _traj(seen).model_copy(update={"answer": answer}))
        assert wrong.sequence == [("a", 0)] and wrong.cr == pytest.approx(1 / 3)
    unseen = evaluate_progress(task, _traj([_noop(0, holds=[])]).model_copy(update={"answer": "12"}))
    assert unseen.sequence == []  # the answer alone does not complete a sink whose predecessor was never done


def test_simultaneous_completions_enter_the_sequence_wave_by_wave_then_in_task_order() -> None:
    # c is listed first but depends on b; a and b are roots completed by the same action
    task = _task([_sub("c", _text("t")), _sub("b", _text("t")), _sub("a", _text("t"))], [("b", "c")])
    assert evaluate_progress(task, _traj([_noop(0, holds=[_text("t")])])).sequence == [("b", 0), ("a", 0), ("c", 0)]


def test_max_steps_replays_only_the_first_n_actions() -> None:
    task = _task([_sub("a", _clicked("A")), _sub("b", _clicked("B"))], [("a", "b")])
    traj = _traj([_click(0, "A"), _click(1, "B")])
    assert evaluate_progress(task, traj, max_steps=1).sequence == [("a", 0)]
    assert evaluate_progress(task, traj, max_steps=1).steps == 1
    assert evaluate_progress(task, traj, max_steps=0).completed == 0
    with pytest.raises(InputError, match="max_steps"):
        evaluate_progress(task, traj, max_steps=-1)


# -- imported trajectories (holds = None) --------------------------------------------------------


def test_imported_trajectory_reads_urls_from_url_after_and_other_state_checks_are_unobservable() -> None:
    task = _task([_sub("a", _url(r"/search\?q=dune")), _sub("b", _text("Dune"))], [("a", "b")])
    actions = [_noop(0, holds=None, url="http://x/"), _noop(1, holds=None, url="http://x/search?q=dune"), _noop(2, holds=None, url="http://x/book/1")]
    result = evaluate_progress(task, _traj(actions))
    assert result.sequence == [("a", 1)] and result.state("b") == "evaluating"
    assert result.unobservable == [criterion_key(_text("Dune"))]


def test_imported_trajectory_takes_the_close_records_final_verdicts_after_the_last_action_only() -> None:
    task = _task([_sub("a", _clicked("A")), _sub("b", _text("Done"))], [("a", "b")])
    verdict = CriterionResult(criterion=_text("Done"), ok=True, observed="text found")
    closed = CloseRecord(checks=[verdict], success=True)
    actions = [_click(0, "A", holds=None), _noop(1, holds=None)]
    result = evaluate_progress(task, _traj(actions, closed))
    assert result.sequence == [("a", 0), ("b", 1)]  # at action 0 'Done' is unobservable; after the last action the verdict holds
    assert result.unobservable == [criterion_key(_text("Done"))]
    truncated = evaluate_progress(task, _traj(actions, closed), max_steps=1)  # the final page is not the state after action 0
    assert truncated.sequence == [("a", 0)]
    refuted = CloseRecord(checks=[verdict.model_copy(update={"ok": False})], success=False)
    assert evaluate_progress(task, _traj(actions, refuted)).sequence == [("a", 0)]


def test_recorded_holds_win_over_the_url_fallback() -> None:
    task = _task([_sub("a", _url(r"/done"))], [])
    # the URL matches, but the probe recorded that the check did not hold (e.g. it was watched on another frame)
    assert evaluate_progress(task, _traj([_noop(0, holds=[], url="http://x/done")])).completed == 0
    assert evaluate_progress(task, _traj([_noop(0, holds=None, url="http://x/done")])).completed == 1


# -- errors -------------------------------------------------------------------------------------


def test_bad_tasks_are_refused_with_what_to_do() -> None:
    web = Task(id="w", kind="web", type="search", instruction="x", provenance=Provenance(graph_id="g", generator="template"))
    with pytest.raises(InputError, match="no subtasks"):
        evaluate_progress(web, _traj([]))
    with pytest.raises(InputError, match="duplicate subtask ids"):
        evaluate_progress(_task([_sub("a"), _sub("a")], []), _traj([]))
    with pytest.raises(InputError, match="cycle"):
        evaluate_progress(_task([_sub("a"), _sub("b")], [("a", "b"), ("b", "a")]), _traj([]))
    with pytest.raises(InputError, match="not a valid regular expression"):
        evaluate_progress(_task([_sub("a", _url("(unclosed"))], []), _traj([_noop(0, holds=None, url="http://x/")]))
    with pytest.raises(InputError, match="not in the DAG"):
        coverage_rate(Dag(["a"], []), {"z"})


# -- Coverage Rate ------------------------------------------------------------------------------


def test_coverage_rate_on_a_chain_by_hand() -> None:
    chain = Dag(["a", "b", "c"], [("a", "b"), ("b", "c")])  # depths 1, 2, 3; sum 6
    assert coverage_rate(chain, set()) == 0.0
    assert coverage_rate(chain, {"a"}) == pytest.approx(1 / 6, abs=1e-12)
    assert coverage_rate(chain, {"a", "b"}) == pytest.approx(3 / 6, abs=1e-12)
    assert coverage_rate(chain, {"a", "b", "c"}) == pytest.approx(1.0, abs=1e-12)


def test_coverage_rate_counts_the_deepest_level_when_only_it_is_missing() -> None:
    diamond = Dag(["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])  # depths 1, 2, 2, 3; sum 8
    assert coverage_rate(diamond, {"a", "b", "c"}) == pytest.approx(1 - 3 / 8, abs=1e-12)  # 0.625
    assert coverage_rate(diamond, {"a", "b", "c", "d"}) == pytest.approx(1.0, abs=1e-12)
    # uneven: a -> b -> c -> d, a -> e, plus an isolated root f; depths 1,2,3,4,2,1; sum 13; only d (depth 4) missing
    uneven = Dag(["a", "b", "c", "d", "e", "f"], [("a", "b"), ("b", "c"), ("c", "d"), ("a", "e")])
    assert coverage_rate(uneven, {"a", "b", "c", "e", "f"}) == pytest.approx(1 - 4 / 13, abs=1e-12)
    assert coverage_rate(uneven, {"f"}) == pytest.approx(1 / 13, abs=1e-12)
    assert coverage_rate(Dag([], []), set()) == 0.0


def test_evaluate_progress_reports_the_coverage_rate_of_what_completed() -> None:
    task = _task([_sub(s, _clicked(s.upper())) for s in "abcd"], [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    result = evaluate_progress(task, _traj([_click(0, "A"), _click(1, "C"), _click(2, "B")]))
    assert result.sequence == [("a", 0), ("c", 1), ("b", 2)]
    assert result.cr == pytest.approx(5 / 8, abs=1e-12)
    assert [n.depth for n in result.nodes] == [1, 2, 2, 3]


# -- Logical Consistency -------------------------------------------------------------------------


def test_coherency_score_counts_adjacent_pairs_in_one_known_application() -> None:
    apps = {"a": "Mail", "b": " mail ", "c": "Maps", "d": "", "e": ""}
    assert coherency_score(["a", "b", "c"], apps) == 1
    assert coherency_score(["d", "e"], apps) == 0  # unknown applications never match
    assert coherency_score(["a", "c", "b"], apps) == 0
    assert coherency_score([], apps) == 0 and application(" Web  Mail ") == "web mail"


def test_logical_consistency_by_hand_on_a_small_dag() -> None:
    # a(mail) -> b(maps), c(mail) -> d(maps): best order a c b d has CS_max = 2
    task = _task(
        [_sub("a", _clicked("A"), app="mail"), _sub("b", _clicked("B"), app="maps"), _sub("c", _clicked("C"), app="mail"), _sub("d", _clicked("D"), app="maps")],
        [("a", "b"), ("c", "d")],
    )
    zigzag = evaluate_progress(task, _traj([_click(i, s) for i, s in enumerate("ABCD")]))
    assert (zigzag.cs_agent, zigzag.cs_max, zigzag.lc) == (0, 2, 0.0)
    assert coherency_score(zigzag.best_order, {s.id: s.category for s in task.subtasks}) == 2
    grouped = evaluate_progress(task, _traj([_click(i, s) for i, s in enumerate("ACDB")]))  # mail mail maps maps
    assert (grouped.cs_agent, grouped.lc) == (2, 1.0)
    partial = evaluate_progress(task, _traj([_click(0, "A"), _click(1, "C")]))  # incomplete subtasks contribute nothing
    assert (partial.cs_agent, partial.lc) == (1, 0.5)


def test_logical_consistency_when_no_order_can_be_coherent() -> None:
    task = _task([_sub("a", _clicked("A"), app="mail"), _sub("b", _clicked("B"), app="maps"), _sub("c", _clicked("C"))], [])
    assert evaluate_progress(task, _traj([_click(0, "A")])).cs_max == 0
    assert evaluate_progress(task, _traj([_click(0, "A")])).lc == 1.0
    assert evaluate_progress(task, _traj([_noop(0)])).lc == 0.0
    assert logical_consistency(3, 4, 4) == 0.75


def test_max_coherency_returns_a_topological_order_reaching_the_score() -> None:
    dag = Dag(["a", "b", "c", "d", "e"], [("a", "b"), ("b", "c"), ("d", "e")])
    apps = {"a": "x", "b": "y", "c": "x", "d": "x", "e": "y"}
    score, order = max_coherency(dag, apps)
    assert score == 2  # e.g. a d | b e | c: x x y y x
    assert order in list(dag.iter_orders()) and coherency_score(order, apps) == score


def _plain_dp(dag: Dag, apps: dict[str, str]) -> int:
    """The textbook DP over (set placed, last node), no shortcuts: the reference for the fast one."""
    n, full = len(dag.nodes), (1 << len(dag.nodes)) - 1
    names = [application(apps.get(x, "")) for x in dag.nodes]

    @cache
    def best(placed: int, last: int) -> int:
        if placed == full:
            return 0
        return max(
            int(last >= 0 and names[i] != "" and names[i] == names[last]) + best(placed | 1 << i, i)
            for i in range(n) if not placed >> i & 1 and dag.preds[i] & ~placed == 0
        )

    return best(0, -1)


def _random_case(rng: np.random.Generator, n: int, p: float, apps: list[str]) -> tuple[Dag, dict[str, str]]:
    nodes = [f"s{i}" for i in rng.permutation(n)]
    edges = [(nodes[i], nodes[j]) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    return Dag(nodes, edges), {x: str(rng.choice(apps)) for x in nodes}


def test_max_coherency_equals_brute_force_over_all_topological_orders() -> None:
    rng = np.random.default_rng(20240611)
    for case in range(300):
        n = int(rng.integers(1, 9))
        dag, apps = _random_case(rng, n, float(rng.choice([0.0, 0.2, 0.4, 0.7])), ["mail", "maps", "docs", ""][: int(rng.integers(1, 5))])
        brute = max(coherency_score(order, apps) for order in dag.iter_orders())
        score, order = max_coherency(dag, apps)
        assert score == brute, (case, dag.nodes, dag.edges, apps)
        assert coherency_score(order, apps) == score and sorted(order) == sorted(dag.nodes)
        assert all(order.index(a) < order.index(b) for a, b in dag.edges)


def test_max_coherency_equals_the_plain_subset_dp_on_mid_sized_dags() -> None:
    rng = np.random.default_rng(7)
    for case in range(25):
        dag, apps = _random_case(rng, int(rng.integers(10, 15)), 0.15, ["a", "b", "c", "d", "e", ""])
        assert max_coherency(dag, apps)[0] == _plain_dp(dag, apps), case


def test_max_coherency_is_exact_and_fast_on_dags_of_twenty_and_more_subtasks() -> None:
    # four parallel chains of six levels, level t in application t: one run per application -> 24 - 6 = 18
    grid = [f"c{j}l{t}" for j in range(4) for t in range(6)]
    grid_dag = Dag(grid, [(f"c{j}l{t}", f"c{j}l{t + 1}") for j in range(4) for t in range(5)])
    start = time.perf_counter()
    assert max_coherency(grid_dag, {x: f"app{x[-1]}" for x in grid})[0] == 18
    # two chains of 11 alternating x/y, one starting with x and one with y: a run holds at most one node of each
    # chain, and runs of two need equal applications at equal chain positions, which never happens, so the
    # best is 1 + 10 + 1 = 12 runs (first and last alone, ten pairs): CS_max = 22 - 12 = 10
    chains = [f"p{i}" for i in range(11)] + [f"q{i}" for i in range(11)]
    edges = [(f"p{i}", f"p{i + 1}") for i in range(10)] + [(f"q{i}", f"q{i + 1}") for i in range(10)]
    alternating = {f"p{i}": "xy"[i % 2] for i in range(11)} | {f"q{i}": "yx"[i % 2] for i in range(11)}
    score, order = max_coherency(Dag(chains, edges), alternating)
    assert score == 10 and coherency_score(order, alternating) == 10
    # a random sparse 24-subtask DAG in eight applications: a valid order reaching its score
    rng = np.random.default_rng(3)
    dag, apps = _random_case(rng, 24, 0.08, [f"app{k}" for k in range(8)])
    score, order = max_coherency(dag, apps)
    assert coherency_score(order, apps) == score and all(order.index(a) < order.index(b) for a, b in dag.edges)
    assert time.perf_counter() - start < 60.0  # an exhaustive search over orders would not finish at all; the slack is for loaded machines

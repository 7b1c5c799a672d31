"""Consensus-graph analyses on hand-built trajectory sets, with expected values worked out by hand."""

from __future__ import annotations

import math

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.evaluate.consensus.model import TrajectoryReport, from_counts
from taskloom.tools.evaluate.consensus import (
    AgentTrajectory,
    CanonicalAction,
    ConsensusGraph,
    Thresholds,
    build_consensus,
    canonicalize_text,
    entropy,
    group_by_task,
)

NAV, QUERY, SUBMIT, RESULT = "Go to https://lib.example/", 'type "dune" into Search', "clicked the 'Submit' button", "clicked the 'Dune' link"
ADVANCED, SCROLL = "clicked the 'Advanced search' link", "Scroll down"
G = 0.9


def traj(i: int, texts: list[str], ok: bool, agent: str = "a", labels: list[bool | None] | None = None) -> AgentTrajectory:
    actions = [canonicalize_text(t) for t in texts]
    if labels is not None:
        actions = [a.model_copy(update={"necessary": n}) for a, n in zip(actions, labels)]
    return AgentTrajectory(id=f"t{i:02d}", task_id="find-dune", agent=agent, actions=actions, success=ok)


def library() -> list[AgentTrajectory]:
    """4 successes through Submit; 3 failures through Advanced search (agent a); 3 failures that scroll after typing (agent b)."""
    ok = [traj(i, [NAV, QUERY, SUBMIT, RESULT], True, "a" if i % 2 else "b") for i in range(4)]
    trap = [traj(10 + i, [NAV, ADVANCED, SCROLL], False, "a") for i in range(3)]
    lost = [traj(20 + i, [NAV, QUERY, SCROLL], False, "b") for i in range(3)]
    return ok + trap + lost


@pytest.fixture(scope="module")
def graph() -> ConsensusGraph:
    return build_consensus(library())


def nid(g: ConsensusGraph, text: str) -> str:
    return g.node_of(canonicalize_text(text).text).id


def test_nodes_and_edges_are_counted(graph: ConsensusGraph) -> None:
    g = graph
    assert [n.id for n in g.nodes[:3]] == ["start", "success", "failure"]
    assert [(n.visits, n.steps) for n in g.nodes[:3]] == [(10, {-1: 10}), (4, {4: 4}), (6, {3: 6})]
    q = g.node_of("type(text='dune', element='Search')")
    assert (q.visits, q.trajectories, q.steps, q.mean_step, q.agents) == (7, 7, {1: 7}, 1.0, ["a", "b"])
    e = g.edge(nid(g, NAV), nid(g, QUERY))
    assert (e.count, e.successes, e.failures, e.success_rate) == (7, 4, 3, pytest.approx(4 / 7))
    assert (e.coverage, e.success_coverage) == (pytest.approx(0.7), 1.0)
    assert sum(x.count for x in g.edges) == 34 + 10  # one edge per action plus the terminal edges
    assert e.weight == pytest.approx(7 / 44)
    assert g.summary.action_nodes == 6 and g.summary.action_edges == 6 and g.summary.complexity == pytest.approx(3.6)


def twice() -> list[AgentTrajectory]:
    """The library with every run repeated (ids kept apart): 8 successes, 6 Advanced-search failures, 6 scroll failures."""
    return library() + [t.model_copy(update={"id": t.id + "b", "run": 1}) for t in library()]


def test_traps_critical_bottleneck() -> None:
    g = build_consensus(twice())
    cls = {(e.source, e.target): e.edge_class for e in g.edges}
    nav, q, sub, res, adv, scr = (nid(g, t) for t in (NAV, QUERY, SUBMIT, RESULT, ADVANCED, SCROLL))
    assert cls[(nav, adv)] == "trap"  # everyone who clicks Advanced search fails: 0/6 against 8/14, p = 0.042
    assert cls[(adv, scr)] == "trap" and cls[(q, scr)] == "trap"
    assert cls[(q, sub)] == "critical" and cls[(sub, res)] == "critical"  # every success passes here, never a failure
    assert cls[(nav, q)] == "bottleneck" and cls[("start", nav)] == "bottleneck"  # everyone's traffic, mixed success
    assert cls[(res, "success")] == "normal" and cls[(scr, "failure")] == "normal"  # terminal edges are never classified
    assert g.summary.edge_classes == {"trap": 3, "critical": 2, "bottleneck": 2, "normal": 2}
    trap = g.edge(nav, adv)
    assert (trap.runs, trap.run_successes, trap.success_without) == (6, 0, pytest.approx(8 / 14))
    assert trap.p_value == pytest.approx(0.0419, abs=1e-4)
    assert trap.support == "one agent" and trap.attribution == {"a": (6, 0)}  # only agent a clicks Advanced search
    crit = g.edge(q, sub)
    assert crit.support == "agents" and crit.attribution == {"a": (4, 4), "b": (4, 4)} and crit.p_value is not None and crit.p_value < 1e-4
    assert g.edge(nav, q).p_value == pytest.approx(0.0419, abs=1e-4) and g.edge("start", nav).p_value is None  # every run starts there
    # Advanced search → Scroll is taken by exactly the runs that clicked Advanced search: the same finding, pointed at the first
    assert g.edge(adv, scr).same_runs_as == f"{nav}->{adv}" and trap.same_runs_as is None and g.edge(q, scr).same_runs_as is None
    assert g.edge(sub, res).same_runs_as == f"{q}->{sub}" and crit.same_runs_as is None


def test_labels_need_runs_and_a_difference_from_the_base_rate(graph: ConsensusGraph) -> None:
    # 10 runs: 0 of the 3 Advanced-search runs succeed against 4 of the other 7: p = 0.2, too little evidence for a trap
    g = graph
    e = g.edge(nid(g, NAV), nid(g, ADVANCED))
    assert (e.runs, e.p_value, e.edge_class) == (3, pytest.approx(0.2), "normal")
    assert g.summary.edge_classes["trap"] == 0
    # a hard task (1 success in 12) where the correct route succeeds 1 time in 10: no trap, whatever its low success rate
    right = [traj(i, [NAV, QUERY, SUBMIT], i == 0, "a" if i % 2 else "b") for i in range(10)]
    lost = [traj(20 + i, [NAV, ADVANCED], False, "c") for i in range(2)]
    hard = build_consensus(right + lost)
    assert hard.summary.edge_classes["trap"] == 0 and hard.edge(nid(hard, QUERY), nid(hard, SUBMIT)).success_rate == 0.1
    # one looping run traverses an edge many times but is one run: no trap from it
    loop = [traj(0, [NAV, ADVANCED, SCROLL, ADVANCED, SCROLL, ADVANCED, SCROLL], False)] + [traj(i, [NAV, QUERY, SUBMIT], True) for i in range(1, 6)]
    looped = build_consensus(loop)
    e = looped.edge(nid(looped, ADVANCED), nid(looped, SCROLL))
    assert (e.count, e.runs, e.edge_class) == (3, 1, "normal")


def test_thresholds_are_configurable() -> None:
    strict = build_consensus(twice(), thresholds=Thresholds(min_runs=7, critical_min_coverage=1.0))
    cls = {(strict.node(e.source).label, strict.node(e.target).label): e.edge_class for e in strict.edges}
    assert cls[("navigate(url='https://lib.example/')", "click(text='Advanced search', element='link')")] == "normal"  # only 6 runs
    assert cls[("type(text='dune', element='Search')", "click(text='Submit', element='button')")] == "critical"
    assert build_consensus(twice(), thresholds=Thresholds(trap_min_coverage=0.5)).summary.edge_classes["trap"] == 0  # 6 of 20 runs each
    assert build_consensus(twice(), thresholds=Thresholds(alpha=0.01)).summary.edge_classes["trap"] == 0  # p = 0.042


def test_pass_at_k_per_agent(graph: ConsensusGraph) -> None:
    a = next(p for p in graph.agents if p.agent == "a")  # agent a: 2 successes in 5 runs
    assert (a.trajectories, a.successes) == (5, 2)
    assert a.pass_at_k[1] == 0.4 and a.pass_at_k[4] == 1.0 and a.pass_at_k[2] == pytest.approx(0.7)
    assert a.pass_hat_k[1] == 0.4 and a.pass_hat_k[2] == pytest.approx(0.1) and a.pass_hat_k[3] == 0.0


def test_reward_values_by_hand(graph: ConsensusGraph) -> None:
    g = graph
    v = {t: g.node(nid(g, t)).value for t in (NAV, QUERY, SUBMIT, RESULT, ADVANCED, SCROLL)}
    assert v[RESULT] == pytest.approx(G * 1)  # always → SUCCESS
    assert v[SUBMIT] == pytest.approx(G * G)
    assert v[SCROLL] == pytest.approx(-G) and v[ADVANCED] == pytest.approx(-G * G)
    vq = G * (4 / 7 * G * G + 3 / 7 * -G)  # 4 of 7 go on to Submit, 3 scroll
    assert v[QUERY] == pytest.approx(vq)
    vn = G * (7 / 10 * vq + 3 / 10 * -G * G)
    assert v[NAV] == pytest.approx(vn) and g.node("start").value == pytest.approx(G * vn)
    assert g.node("success").value == 1.0 and g.node("failure").value == -1.0
    assert g.edge(nid(g, QUERY), nid(g, SUBMIT)).value == pytest.approx(G * G * G)
    assert g.summary.value_iterations == 2  # a DAG in mean-step order: one exact sweep, one to confirm


def test_reward_values_on_a_cycle() -> None:
    a, b = "clicked the 'Alpha' link", "clicked the 'Omega' link"  # 0.86 similar: two nodes
    g = build_consensus([traj(0, [a, b], True), traj(1, [a, b, a, b], True)])
    # edges: A→B 3, B→SUCCESS 2, B→A 1.  V(B) = γ(2/3 + V(A)/3), V(A) = γ V(B)  ⇒  V(B) = (2γ/3) / (1 − γ²/3)
    vb = (2 * G / 3) / (1 - G * G / 3)
    assert g.summary.action_nodes == 2 and g.edge(nid(g, b), nid(g, a)).count == 1
    assert g.node(nid(g, b)).value == pytest.approx(vb, abs=1e-9)
    assert g.node(nid(g, a)).value == pytest.approx(G * vb, abs=1e-9)
    assert g.summary.value_iterations > 2


def test_node_importance_by_hand(graph: ConsensusGraph) -> None:
    g = graph
    # type: in-edge NAV→Q (4/7); out-edges Q→Submit (1) and Q→Scroll (0); visited by 7 of 10
    assert g.node(nid(g, QUERY)).importance == pytest.approx((4 / 7 + 1 + 0) / 3 * 0.7)
    # navigate: in START→NAV (0.4); out NAV→Q (4/7), NAV→Advanced (0); visited by all
    assert g.node(nid(g, NAV)).importance == pytest.approx((0.4 + 4 / 7 + 0) / 3 * 1.0)
    assert g.node(nid(g, ADVANCED)).importance == 0.0
    assert g.node(nid(g, RESULT)).importance == pytest.approx(1.0 * 0.4)


def test_necessity_and_agent_profiles(graph: ConsensusGraph) -> None:
    g = graph
    assert {t: g.node(nid(g, t)).necessary for t in (NAV, QUERY, SUBMIT, RESULT, ADVANCED, SCROLL)} == {
        NAV: True, QUERY: True, SUBMIT: True, RESULT: True, ADVANCED: False, SCROLL: False,
    }  # fmt: skip
    a, b = g.agents
    assert (a.agent, a.trajectories, a.successes, a.success_rate) == ("a", 5, 2, 0.4)
    assert (a.trap_hits, b.trap_hits) == (0, 0)  # 10 runs: no edge is a significant trap
    big = {p.agent: p for p in build_consensus(twice()).agents}
    assert (big['a'].trap_hits, big['a'].trajectories_with_traps, big['b'].trap_hits, big['b'].trajectories_with_traps) == (12, 6, 6, 6)
    assert a.mean_steps == pytest.approx(17 / 5)
    assert a.necessity_rate == pytest.approx(11 / 17) and b.necessity_rate == pytest.approx(14 / 17)
    assert a.mean_step_inflation == pytest.approx((1 + 1 + 0.75 * 3) / 5)


def test_necessity_labels_override_the_structure() -> None:
    trajs = library()
    trajs[0] = traj(0, [NAV, QUERY, SUBMIT, RESULT], True, "b", labels=[True, True, False, None])
    trajs[1] = traj(1, [NAV, QUERY, SUBMIT, RESULT], True, "a", labels=[None, None, False, None])
    g = build_consensus(trajs)
    sub, q = g.node(nid(g, SUBMIT)), g.node(nid(g, QUERY))
    assert (sub.necessary, sub.necessity_source) == (False, "labels")
    assert (q.necessary, q.necessity_source) == (True, "labels")
    assert g.node(nid(g, RESULT)).necessity_source == "structural"


def test_path_optimality_and_step_inflation_by_hand() -> None:
    s = ["Scroll down", "clicked the 'Search' button", "clicked the 'Next' link", "Press Enter", "Go back", "clicked the 'Checkout' button"]
    trajs = [
        traj(0, s[:1], True, "x"),  # a one-step success: an anomaly, not the reference
        traj(1, s[:2], True, "x"),
        traj(2, s[:6], True, "y"),
        traj(3, s[:3], False, "y"),
        traj(4, [], False, "y"),
    ]
    g = build_consensus(trajs)
    assert g.summary.action_nodes == 6
    r = {t.id: t for t in g.trajectories}
    assert [t.id for t in g.trajectories] == ["t00", "t01", "t02", "t03", "t04"]
    assert g.summary.reference_steps == 2 and all(t.reference_steps == 2 for t in g.trajectories)
    assert (r["t02"].step_inflation, r["t02"].optimality) == (3.0, pytest.approx(1 / 3))
    assert (r["t03"].step_inflation, r["t03"].optimality) == (1.5, pytest.approx(2 / 3))
    assert (r["t00"].step_inflation, r["t00"].optimality) == (0.5, 1.0)
    assert (r["t04"].step_inflation, r["t04"].optimality, r["t04"].necessary_fraction) == (0.0, None, None)
    assert g.summary.mean_step_inflation == pytest.approx((0.5 + 1 + 3 + 1.5 + 0) / 5)
    y = next(p for p in g.agents if p.agent == "y")
    assert y.mean_steps == 3 and y.mean_step_inflation == pytest.approx(1.5)
    assert build_consensus(trajs, thresholds=Thresholds(min_reference_steps=1)).summary.reference_steps == 1
    only_anomalies = build_consensus([traj(0, s[:1], True), traj(1, s[:4], False)])
    assert only_anomalies.summary.reference_steps == 1  # nothing longer succeeded: fall back


def test_strategy_entropy_by_hand() -> None:
    alpha, omega, tail = "clicked the 'Alpha' link", "clicked the 'Omega' link", "Press Enter"
    trajs = [traj(0, [alpha, tail], True, "a"), traj(1, [alpha], True, "a"), traj(2, [omega, tail], True, "a"), traj(3, [omega], True, "a")]
    trajs += [traj(4 + i, [alpha, tail] if i % 2 else [alpha], True, "b") for i in range(4)]
    trajs += [traj(9, [omega], False, "b")]  # failures do not count
    g = build_consensus(trajs, thresholds=Thresholds(strategy_prefix=1))
    st = g.strategies
    h = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))  # pooled: Alpha 6, Omega 2
    assert (st.successful, st.distinct, st.agents) == (8, 2, 2)
    assert st.entropy == pytest.approx(h)
    assert st.mean_agent_entropy == pytest.approx(0.5)  # a: 1 bit, b: 0 bits
    assert st.mixture_entropy == pytest.approx(h)  # mean of (½, ½) and (1, 0) is (¾, ¼)
    assert st.divergence == pytest.approx(h - 0.5)
    assert st.top[0] == (["click(text='Alpha', element='link')"], 6)
    assert [p.strategy_entropy for p in g.agents] == [pytest.approx(1.0), 0.0]
    whole = build_consensus(trajs, thresholds=Thresholds(strategy_prefix=None)).strategies
    assert whole.distinct == 4 and whole.entropy == pytest.approx(entropy([3, 3, 1, 1]))
    assert entropy([1, 1, 1, 1]) == 2.0 and entropy([]) == 0.0


def test_json_round_trip_and_drawing(graph: ConsensusGraph) -> None:
    back = ConsensusGraph.model_validate_json(graph.model_dump_json())
    assert back == graph and back.node("start").steps == {-1: 10}
    d = graph.to_drawing()
    assert set(d) == {"nodes", "edges"}
    assert all(set(n) == {"id", "label", "visits", "importance", "necessary", "mean_step", "kind"} for n in d["nodes"])
    assert all(set(e) == {"source", "target", "count", "successes", "failures", "success_rate", "class", "p_value", "runs"} for e in d["edges"])
    assert [n["kind"] for n in d["nodes"][:3]] == ["start", "success", "failure"] and {n["kind"] for n in d["nodes"][3:]} == {"action"}
    assert sorted(e["class"] for e in d["edges"]) == sorted(e.edge_class for e in graph.edges)
    assert {n["id"] for n in d["nodes"]} >= {e["source"] for e in d["edges"]} | {e["target"] for e in d["edges"]}
    assert isinstance(d["nodes"][0]["mean_step"], float) and d["nodes"][0]["mean_step"] == -1.0


def test_bad_input_is_explained() -> None:
    with pytest.raises(InputError, match="at least one trajectory"):
        build_consensus([])
    with pytest.raises(InputError, match="theta"):
        build_consensus(library(), theta=1.5)
    other = AgentTrajectory(id="z", task_id="another", success=True, actions=[CanonicalAction(text="go_back()", name="go_back")])
    with pytest.raises(InputError, match="group_by_task"):
        build_consensus([*library(), other])
    groups = group_by_task([*library(), other])
    assert list(groups) == ["another", "find-dune"] and len(groups["find-dune"]) == 10


def test_edges_and_reports_built_from_counts_equal_validated_models(graph: ConsensusGraph) -> None:
    """from_counts skips validation for speed; what it builds must be what validation would build."""
    for built in [*graph.edges, *graph.trajectories]:
        again = type(built).model_validate(built.model_dump())
        assert again == built and again.model_fields_set == built.model_fields_set and built.model_dump_json() == again.model_dump_json()
    with pytest.raises(TypeError, match="missing .*'agent'"):
        from_counts(TrajectoryReport, id="x")

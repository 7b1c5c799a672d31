"""The consensus-graph data model (WebGraphEval): canonical actions, trajectories, the graph and its analyses.

A :class:`ConsensusGraph` is built for one task from many :class:`AgentTrajectory` objects.
Its nodes are equivalence classes of canonical actions plus three **virtual nodes**:

* ``start`` (kind ``start``): where every trajectory begins; its step histogram holds ``-1``.
* ``success`` / ``failure`` (kinds ``success`` / ``failure``): where successful / failed
  trajectories end; their step histograms hold the trajectory length (the position the
  terminal would occupy), their rewards are +1 / −1.

Every trajectory therefore contributes the walk ``start → a_0 → … → a_{n-1} → terminal``; a
trajectory without actions is the single edge ``start → terminal``. Everything is plain
pydantic, so ``model_dump_json`` / ``model_validate_json`` round-trip a graph exactly, and
:meth:`ConsensusGraph.to_drawing` gives the shape the HTML report draws.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

__all__ = [
    "from_counts",
    "CONSENSUS_VERSION",
    "START",
    "SUCCESS",
    "FAILURE",
    "NodeKind",
    "EdgeClass",
    "ActionKind",
    "ACTION_KINDS",
    "VerdictSource",
    "ActionTarget",
    "CanonicalAction",
    "AgentTrajectory",
    "Thresholds",
    "ConsensusNode",
    "ConsensusEdge",
    "MergeStats",
    "TrajectoryReport",
    "AgentProfile",
    "StrategyStats",
    "GraphSummary",
    "ConsensusGraph",
]

M = TypeVar("M", bound=BaseModel)


def from_counts(cls: type[M], **values: Any) -> M:
    """An instance of ``cls`` from values computed by the analysis itself: every field given, nothing validated.

    ``model_construct`` without its per-call bookkeeping (defaults, aliases, the fields-set
    computation), for the models a graph holds by the hundred thousand (one report per run, one
    edge per transition). Every field must be given; the result equals ``cls.model_validate(values)``
    for well-typed values (tests/tools/evaluate/test_consensus_analyze.py checks both models).
    """
    if values.keys() != cls.model_fields.keys():
        raise TypeError(f"{cls.__name__} needs exactly its fields; missing {sorted(cls.model_fields.keys() - values.keys())}, unknown {sorted(values.keys() - cls.model_fields.keys())}")
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", {name: values[name] for name in cls.model_fields})  # field order: dumps list fields in it
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


CONSENSUS_VERSION = 1
START, SUCCESS, FAILURE = "start", "success", "failure"
NodeKind = Literal["start", "action", "success", "failure"]
EdgeClass = Literal["trap", "critical", "bottleneck", "normal"]
ActionKind = Literal["click", "type", "select", "scroll", "navigate", "back", "key", "answer", "wait", "other"]
ACTION_KINDS: tuple[ActionKind, ...] = ("click", "type", "select", "scroll", "navigate", "back", "key", "answer", "wait", "other")
#: Who said whether a run succeeded: the agent itself (its own status), a judge (e.g. WebJudge's label), or the benchmark's reference check.
VerdictSource = Literal["agent", "judge", "reference"]


class ActionTarget(BaseModel):
    """The element an action acted on, as far as the log tells: any of these may be missing."""

    role: str | None = Field(None, description="Role or element type, e.g. 'button', 'link', 'textbox'.")
    name: str | None = Field(None, description="Accessible name or visible text.")
    element_id: str | None = Field(None, description="An id the log's harness gave the element: a BrowserGym bid, our snapshot ref, a picker id.")
    selector: str | None = Field(None, description="A CSS or Playwright selector.")
    x: float | None = Field(None, description="Screen x, when the action was made at coordinates.")
    y: float | None = Field(None, description="Screen y.")

    def identity(self) -> tuple[str, ...] | None:
        """What says which element this is, strongest first (id, selector, role + name); None for coordinates or nothing."""
        if self.element_id:
            return ("id", self.element_id)
        if self.selector:
            return ("selector", self.selector)
        if self.name:
            return ("name", (self.role or "").lower(), " ".join(self.name.split()).casefold())
        return None


class CanonicalAction(BaseModel):
    """One action in canonical form, e.g. ``click(text='Submit', element='button')``, with its typed fields.

    ``text`` is the canonical string (the paper's string mode merges on it); ``kind``,
    ``target``, ``value`` and ``url`` are what field-mode merging compares.
    """

    text: str = Field(description="The canonical string; string-mode merging compares these.")
    name: str = Field(description="Action name: click, dblclick, type, select, navigate, scroll, press, hover, go_back, answer, other…")
    args: dict[str, Any] = Field(default_factory=dict, description="The named fields of the canonical form.")
    kind: ActionKind = Field("other", description="The typed kind merging compares (press → key, go_back → back, hover/refresh/drag → other).")
    target: ActionTarget | None = Field(None, description="The element acted on (click, type, select, hover).")
    value: str | None = Field(None, description="Typed text, chosen option, key, scroll direction, navigation URL or answer text.")
    url: str | None = Field(None, description="The page the action was taken on, when the log says.")
    hint: str | None = Field(None, description="What the agent's own reasoning calls the target (display only: merging never reads it).")
    confidence: float = Field(1.0, ge=0.0, le=1.0, description="How sure the canonicaliser is (1.0 for recorded actions).")
    source: str = Field("", description="What the action was made from: the free-text description, or 'recorded'.")
    necessary: bool | None = Field(None, description="Necessity label (e.g. from an LLM annotator); None when unlabelled.")


class AgentTrajectory(BaseModel):
    """One run: one attempt at a task by one agent, as a sequence of canonical actions with an outcome.

    Repeated runs of one agent on one task are normal: they share ``agent`` and ``task_id`` and
    differ in ``run`` (and ``id``).
    """

    id: str
    task_id: str | None = None
    agent: str = "agent"
    run: int | None = Field(None, ge=0, description="Which attempt of this agent at this task (0-based); None when the agent has one run of it.")
    verdict_source: VerdictSource | None = Field(None, description="Who decided the outcome: agent (its own claim), judge, reference; None when unknown.")
    source: str | None = Field(None, description="The file (and line) the run was read from.")
    model: str | None = None
    actions: list[CanonicalAction] = Field(default_factory=list)
    success: bool
    status: str | None = Field(None, description="The outcome as the log wrote it (e.g. 'error_max_turns'), before mapping to success.")
    instruction: str | None = Field(None, description="The task's instruction, when the log or a task file gives it.")
    level: str | None = Field(None, description="The task's difficulty level from a task file (e.g. easy/medium/hard).")
    reference_steps: int | None = Field(None, ge=1, description="An external reference length for the task (e.g. a human demonstration's steps).")


class Thresholds(BaseModel):
    """Parameters of the analyses; every edge-class rule is stated on its field.

    Labels compare **runs**: an edge's runs are the trajectories traversing it (a looping run
    counts once), its success rate among them is set against the success rate of the task's
    other runs by Fisher's exact test (two-sided, :func:`~.stats.fisher_exact`). An edge is
    classified in this order (the first rule that holds wins); edges into ``success``/``failure``
    are always ``normal`` (their success rate *is* the outcome), and edges traversed fewer than
    ``min_count`` times or by fewer than ``min_runs`` runs are ``normal`` (too little evidence):

    * **trap** — the runs taking it succeed less often than the others, p ≤ ``alpha``, at most
      ``trap_max_success`` of them succeed (almost always fails), and it is taken by at least
      ``trap_min_coverage`` of all runs;
    * **critical** — the runs taking it succeed more often than the others, p ≤ ``alpha``, at least
      ``critical_min_success`` of them succeed, and it is taken by at least ``critical_min_coverage``
      of the *successful* runs (shared by the solutions);
    * **bottleneck** — traversed by at least ``bottleneck_min_coverage`` of *all* trajectories
      with a success rate strictly between ``trap_max_success`` and ``critical_min_success`` (high traffic, mixed success);
    * **normal** — everything else.

    Every trap and critical edge names its support: ``agents`` when at least ``min_agents``
    agents took it, else ``one agent``; ``attribution`` gives each agent's runs and successes.
    """

    min_count: int = Field(2, ge=1, description="Edges traversed fewer times are always 'normal'.")
    min_runs: int = Field(3, ge=1, description="Trap and critical edges are taken by at least this many runs.")
    alpha: float = Field(0.05, gt=0.0, le=1.0, description="Fisher's exact test (two-sided) must give p ≤ alpha for a trap or critical edge.")
    min_agents: int = Field(2, ge=1, description="A label is supported by 'agents' with at least this many agents taking the edge, else by 'one agent'.")
    trap_max_success: float = Field(0.2, ge=0.0, le=1.0)
    trap_min_coverage: float = Field(0.05, ge=0.0, le=1.0, description="Fraction of all trajectories traversing the edge ('occurs often').")
    critical_min_success: float = Field(0.8, ge=0.0, le=1.0)
    critical_min_coverage: float = Field(0.5, ge=0.0, le=1.0, description="Fraction of successful trajectories traversing the edge.")
    bottleneck_min_coverage: float = Field(0.3, ge=0.0, le=1.0, description="Fraction of all trajectories traversing the edge.")
    gamma: float = Field(0.9, gt=0.0, lt=1.0, description="Discount of reward back-propagation.")
    value_tolerance: float = Field(1e-10, gt=0.0, description="Value iteration stops when no value moves more than this…")
    value_max_iterations: int = Field(10_000, ge=1, description="…or after this many sweeps.")
    strategy_prefix: int | None = Field(3, ge=1, description="Strategies compare the first k action nodes; None compares whole paths.")
    min_reference_steps: int = Field(
        2, ge=1, description="Successful trajectories shorter than this are anomalies, not the shortest-path reference (unless nothing else succeeded)."
    )


class ConsensusNode(BaseModel):
    """A merged action (or a virtual node) with its statistics."""

    id: str
    kind: NodeKind
    label: str = Field(
        description="Representative canonical text (the most frequent member, ties to the smallest string), followed by "
        "'  “hint”' when the agents' reasoning names the element (the most frequent name)."
    )
    hint: str | None = Field(None, description="The name the agents' reasoning gives the element most often, with how many occurrences gave it.")
    name: str = Field("", description="Action name of the representative; empty for virtual nodes.")
    members: int = Field(0, description="Distinct canonical strings merged into this node.")
    variants: list[str] = Field(default_factory=list, description="Those strings, sorted.")
    visits: int = Field(0, description="Occurrences: actions mapped here, a run of consecutive repeats counted once (virtual nodes: trajectories starting/ending here).")
    repeats: int = Field(0, description="Further actions folded into those visits: consecutive repeats of the same action.")
    trajectories: int = Field(0, description="Distinct trajectories visiting the node.")
    successes: int = Field(0, description="Distinct successful trajectories visiting the node.")
    steps: dict[int, int] = Field(default_factory=dict, description="Step-index histogram (0-based action positions).")
    mean_step: float = 0.0
    value: float = Field(0.0, description="Back-propagated reward V(n) in [−1, 1].")
    importance: float = Field(0.0, description="Mean success ratio of the node's in/out edges × fraction of trajectories visiting it.")
    necessary: bool = False
    necessity_source: Literal["structural", "labels", "virtual"] = "structural"
    agents: list[str] = Field(default_factory=list, description="Agents that visited the node, sorted.")


class ConsensusEdge(BaseModel):
    """An observed transition between two nodes."""

    source: str
    target: str
    count: int = Field(description="Traversals (a trajectory may traverse an edge more than once).")
    successes: int = Field(description="Traversals in successful trajectories.")
    failures: int = Field(description="Traversals in failed trajectories.")
    success_rate: float
    weight: float = Field(0.0, description="count / all traversals in the graph (the paper's w(e)).")
    coverage: float = Field(0.0, description="Fraction of all trajectories that traverse the edge.")
    success_coverage: float = Field(0.0, description="Fraction of successful trajectories that traverse the edge.")
    value: float = Field(0.0, description="γ·V(target): the discounted value of taking this transition.")
    edge_class: EdgeClass = "normal"
    agents: list[str] = Field(default_factory=list, description="Agents whose trajectories traverse the edge, sorted.")
    runs: int = Field(0, description="Trajectories traversing the edge (a looping run counts once).")
    run_successes: int = Field(0, description="Successful trajectories among them.")
    success_without: float | None = Field(None, description="Success rate of the task's runs that do not traverse the edge (None when all do).")
    p_value: float | None = Field(None, description="Fisher's exact test (two-sided) of success with vs without the edge; None when not tested.")
    support: Literal["agents", "one agent"] | None = Field(None, description="For trap and critical edges: taken by several agents, or by one agent only.")
    attribution: dict[str, tuple[int, int]] = Field(default_factory=dict, description="Per agent: (runs traversing the edge, successful ones).")
    same_runs_as: str | None = Field(
        None, description="For a trap or critical edge taken by exactly the runs of an earlier edge of that class: that edge ('n3->n4'). One finding, not two."
    )


class MergeStats(BaseModel):
    """How merging went (all counts are independent of input order)."""

    mode: Literal["fields", "string"] = Field("string", description="fields: typed comparison; string: the paper's Levenshtein on canonical strings.")
    theta: float
    cross_step: bool
    pixel_tolerance: float | None = Field(None, description="fields mode: coordinate clicks on one page merge within this many pixels.")
    actions: int = Field(description="Action occurrences.")
    distinct: int = Field(description="Distinct merge keys (canonical strings, or (step, string) without cross-step merging).")
    blocks: int
    comparisons: int = Field(description="Edit distances actually computed.")
    step_merges: int = Field(description="Unions made by the step-based pass.")
    cross_step_merges: int = Field(description="Further unions made by the cross-step pass.")
    nodes: int = Field(description="Action nodes after merging.")


class TrajectoryReport(BaseModel):
    """Path optimality of one trajectory against the shortest successful one."""

    id: str
    agent: str
    success: bool
    steps: int
    reference_steps: int | None = Field(None, description="Length of the shortest (non-anomalous) successful trajectory of the task.")
    step_inflation: float | None = Field(None, description="steps / reference_steps.")
    optimality: float | None = Field(None, description="min(1, reference_steps / steps).")
    trap_hits: int = Field(0, description="Traversals of trap edges.")
    necessary_fraction: float | None = Field(None, description="Fraction of the actions mapped to necessary nodes.")


class AgentProfile(BaseModel):
    """One agent's behaviour on the task."""

    agent: str
    trajectories: int
    successes: int
    success_rate: float
    mean_steps: float
    mean_step_inflation: float | None = Field(None, description="Over the agent's trajectories (successful and failed) with a reference.")
    trap_hits: int
    trajectories_with_traps: int
    necessity_rate: float | None = Field(None, description="Fraction of the agent's actions mapped to necessary nodes.")
    strategies: int = Field(0, description="Distinct strategies among its successful trajectories.")
    strategy_entropy: float = Field(0.0, description="Shannon entropy (bits) of its own strategy distribution.")
    pass_at_k: dict[int, float] = Field(default_factory=dict, description="k → chance that at least one of k of its runs succeeds (k = 1 … its runs, at most 16).")
    pass_hat_k: dict[int, float] = Field(default_factory=dict, description="k → chance that all k of k of its runs succeed (τ-bench's pass^k).")


class StrategyStats(BaseModel):
    """Cross-agent strategy diversity over the successful trajectories.

    A strategy is the tuple of node ids of a trajectory's first ``prefix`` actions (the whole
    path when ``prefix`` is None). ``entropy`` pools every successful trajectory; the agent
    measures weight each agent equally: ``mixture_entropy`` is H(M) with M the mean of the
    agents' strategy distributions, ``mean_agent_entropy`` the mean H(P_a), and
    ``divergence = mixture_entropy − mean_agent_entropy`` their Jensen–Shannon divergence
    (0 when all agents share one strategy distribution; at most log2 of the number of agents).
    """

    prefix: int | None
    successful: int
    distinct: int
    entropy: float
    agents: int
    mixture_entropy: float
    mean_agent_entropy: float
    divergence: float
    top: list[tuple[list[str], int]] = Field(default_factory=list, description="Up to five most common strategies (as labels) with counts.")


class GraphSummary(BaseModel):
    """Headline numbers of one consensus graph."""

    trajectories: int
    successes: int
    actions: int
    action_nodes: int
    action_edges: int = Field(description="Edges between two action nodes.")
    complexity: float = Field(description="The paper's action_nodes × action_edges / trajectories.")
    reference_steps: int | None
    reference_source: Literal["external", "shortest_success"] | None = Field(
        None, description="external: a reference length given with the task; shortest_success: the shortest successful trajectory here."
    )
    mean_step_inflation: float | None
    edge_classes: dict[str, int]
    value_iterations: int = Field(description="Sweeps value iteration needed (a DAG converges in at most its depth + 1).")


class ConsensusGraph(BaseModel):
    """A consensus graph with its analyses attached."""

    version: int = CONSENSUS_VERSION
    task_id: str | None = None
    instruction: str | None = None
    level: str | None = None
    theta: float
    thresholds: Thresholds
    merge: MergeStats
    nodes: list[ConsensusNode]
    edges: list[ConsensusEdge]
    summary: GraphSummary
    agents: list[AgentProfile] = Field(default_factory=list)
    trajectories: list[TrajectoryReport] = Field(default_factory=list)
    strategies: StrategyStats
    not_computable: dict[str, str] = Field(
        default_factory=dict, description="Analyses left out and why, e.g. {'edge_classes': 'not computable: 1 run'}; their fields hold neutral values."
    )

    def node(self, node_id: str) -> ConsensusNode:
        """The node with this id (``KeyError`` if none)."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def node_of(self, canonical_text: str) -> ConsensusNode:
        """The action node whose variants include ``canonical_text`` (``KeyError`` if none)."""
        for n in self.nodes:
            if canonical_text in n.variants:
                return n
        raise KeyError(canonical_text)

    def edge(self, source: str, target: str) -> ConsensusEdge:
        """The edge ``source → target`` (``KeyError`` if none)."""
        for e in self.edges:
            if e.source == source and e.target == target:
                return e
        raise KeyError((source, target))

    def to_drawing(self) -> dict[str, Any]:
        """The drawing format of the HTML report: ``{"nodes": [...], "edges": [...]}``."""
        return {
            "nodes": [
                {
                    "id": n.id,
                    "label": n.label,
                    "visits": n.visits,
                    "importance": n.importance,
                    "necessary": n.necessary,
                    "mean_step": n.mean_step,
                    "kind": n.kind,
                }
                for n in self.nodes
            ],
            "edges": [
                {
                    "source": e.source,
                    "target": e.target,
                    "count": e.count,
                    "successes": e.successes,
                    "failures": e.failures,
                    "success_rate": e.success_rate,
                    "class": e.edge_class,
                    "p_value": e.p_value,
                    "runs": e.runs,
                }
                for e in self.edges
            ],
        }

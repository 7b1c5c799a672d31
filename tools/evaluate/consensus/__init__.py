"""Consensus graphs (WebGraphEval): import logs, canonicalise into typed actions, merge, analyse, summarise sets.

>>> from taskloom.tools.evaluate.consensus import AgentTrajectory, build_consensus, canonicalize_text
>>> runs = [AgentTrajectory(id=str(i), agent="a", run=i, success=i < 4, actions=[canonicalize_text("Go to example.org"),
...         canonicalize_text("click the 'Buy' button" if i < 4 else "click the 'Help' link")]) for i in range(8)]
>>> graph = build_consensus(runs)
>>> help = graph.edge(graph.node_of("navigate(url='example.org')").id, graph.node_of("click(text='Help', element='link')").id)
>>> help.edge_class, round(help.p_value, 4), help.support, help.attribution
('trap', 0.0286, 'one agent', {'a': (4, 0)})
"""

from __future__ import annotations

from .analyze import build_consensus, classify_edge, compare_runs, entropy, group_by_task, propagate_values
from .canonicalize import OBSERVATIONS, LLMConversion, canonicalize_llm, canonicalize_text, from_trajectory, make_action, parse_canonical
from .fields import normalize_url
from .importers import action_from_object, load_browsergym, load_jsonl, load_labels, load_online_mind2web, load_ours, load_result_folders
from .merge import MergeResult, block_key, levenshtein, max_distance, merge_actions, merge_fields, naive_merge, similarity, sorted_groups
from .parsers import browsergym_history, parse_abp, parse_browsergym, parse_code
from .reports import ImportLog, ImportOptions, ImportReport, ImportResult
from .stats import fisher_exact, pass_at_k, pass_hat_k
from .model import (
    CONSENSUS_VERSION,
    ActionTarget,
    AgentProfile,
    AgentTrajectory,
    CanonicalAction,
    ConsensusEdge,
    ConsensusGraph,
    ConsensusNode,
    GraphSummary,
    MergeStats,
    StrategyStats,
    Thresholds,
    TrajectoryReport,
)

__all__ = [
    "CONSENSUS_VERSION",
    "CanonicalAction",
    "AgentTrajectory",
    "Thresholds",
    "ConsensusNode",
    "ConsensusEdge",
    "ConsensusGraph",
    "ActionTarget",
    "ImportOptions",
    "ImportReport",
    "ImportResult",
    "ImportLog",
    "merge_fields",
    "normalize_url",
    "load_result_folders",
    "load_browsergym",
    "parse_abp",
    "parse_browsergym",
    "parse_code",
    "browsergym_history",
    "MergeStats",
    "TrajectoryReport",
    "AgentProfile",
    "StrategyStats",
    "GraphSummary",
    "build_consensus",
    "classify_edge",
    "compare_runs",
    "fisher_exact",
    "pass_at_k",
    "pass_hat_k",
    "propagate_values",
    "entropy",
    "group_by_task",
    "OBSERVATIONS",
    "parse_canonical",
    "make_action",
    "from_trajectory",
    "canonicalize_text",
    "canonicalize_llm",
    "LLMConversion",
    "levenshtein",
    "similarity",
    "max_distance",
    "block_key",
    "sorted_groups",
    "MergeResult",
    "merge_actions",
    "naive_merge",
    "load_ours",
    "load_online_mind2web",
    "load_labels",
    "load_jsonl",
    "action_from_object",
]

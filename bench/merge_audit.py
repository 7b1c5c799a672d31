"""Merge audit on real agent logs: how often a consensus node joins two different elements, and how often it splits one.

Data: ``tests/data/consensus/real/agentrewardbench`` (290 WebArena runs of BrowserGym's GenericAgent
with four models; 94 tasks). Their actions name elements by BrowserGym id (``click('1606')``);
the agent's own reasoning often names the element too ("the \"Page 2\" link"), which the importer
keeps as the action's ``hint``. Merging never reads hints, so they can judge it.

**The written rule.** Two clicks of one task are on the same element when both have hints and the
words of one hint are among the words of the other, after
:func:`~taskloom.tools.evaluate.consensus.fields.element_name` (case, counts and current values
removed) and with punctuation dropped: "iphone13" and "ftorrez81 iphone13" agree, "members" and
"settings" do not. Over every pair of hinted clicks in one task:

* precision = pairs in one node whose hints agree / pairs in one node;
* recall = pairs whose hints agree that are in one node / pairs whose hints agree.

The rule is a proxy: the same name on two pages can be two elements (two "Next" links), which
counts against recall here, not precision.

Compared: ``string`` (the paper's merge: Levenshtein similarity ≥ 0.9 on the canonical string, the
only merge before typed fields) and ``fields`` (the default: typed fields; a BrowserGym id is the
element's identity). A seeded sample of nodes whose members' hints disagree is printed for each.

The abp logs (``tests/data/consensus/real/abp``) are not audited: they hold one run per task and
click at coordinates with no element name, so nothing in them can judge a merge.

Usage: python bench/merge_audit.py [--sample 6] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

from taskloom.tools.evaluate.consensus import AgentTrajectory, group_by_task
from taskloom.tools.evaluate.consensus.fields import element_name
from taskloom.tools.evaluate.consensus.importers import load_browsergym
from taskloom.tools.evaluate.consensus.merge import MergeResult, merge_actions, merge_fields

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "data" / "consensus" / "real" / "agentrewardbench"


def _words(hint: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", element_name(hint)))


def agree(a: frozenset[str], b: frozenset[str]) -> bool:
    """The written rule: the words of one hint are among the other's.

    >>> agree(_words("iphone13"), _words("ftorrez81 iphone13")), agree(_words("Members"), _words("Settings"))
    (True, False)
    """
    return bool(a and b) and (a <= b or b <= a)


def _merge(trajectories: list[AgentTrajectory], mode: str) -> MergeResult:
    return merge_fields(trajectories) if mode == "fields" else merge_actions(trajectories, 0.9)


def audit(groups: dict[str, list[AgentTrajectory]], mode: str) -> dict[str, Any]:
    """Pair counts of ``mode`` over every task, and each node's hinted members (for the sample)."""
    together = agree_together = agreeing = hinted = 0
    nodes: dict[tuple[str, Any], Counter[str]] = defaultdict(Counter)
    for task, trajectories in sorted(groups.items()):
        merge = _merge(trajectories, mode)
        clicks: list[tuple[Any, frozenset[str]]] = []
        for traj, path in zip(trajectories, merge.paths_of(trajectories)):
            for act, node in zip(traj.actions, path):
                if act.kind == "click" and act.hint:
                    clicks.append((node, _words(act.hint)))
                    nodes[(task, node)][element_name(act.hint)] += 1
        hinted += len(clicks)
        for (n1, h1), (n2, h2) in combinations(clicks, 2):
            same_node, same_hint = n1 == n2, agree(h1, h2)
            together += same_node
            agreeing += same_hint
            agree_together += same_node and same_hint
    return {
        "hinted": hinted, "together": together, "agree": agreeing, "agree_together": agree_together,
        "precision": agree_together / together if together else 1.0, "recall": agree_together / agreeing if agreeing else 1.0,
        "mixed": {k: c for k, c in nodes.items() if not all(agree(_words(a), _words(b)) for a, b in combinations(c, 2))}, "nodes": len(nodes),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=6, help="nodes with disagreeing hints printed per mode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    trajectories = load_browsergym(LOGS)
    groups = group_by_task(trajectories)
    print(f"data: {len(trajectories)} runs, {len(groups)} tasks, {sum(len(t.actions) for t in trajectories)} actions ({LOGS.relative_to(ROOT)})")
    print("| merge | hinted clicks | nodes with hinted clicks | pairs in one node | precision | recall | nodes mixing names | time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    results = {}
    for mode in ("string", "fields"):
        start = time.perf_counter()
        r = results[mode] = audit(groups, mode)
        took = time.perf_counter() - start
        print(
            f"| {mode} | {r['hinted']} | {r['nodes']} | {r['together']} | {r['precision']:.3f} ({r['agree_together']}/{r['together']}) "
            f"| {r['recall']:.3f} ({r['agree_together']}/{r['agree']}) | {len(r['mixed'])} | {took:.2f} s |"
        )
    rng = random.Random(args.seed)
    for mode, r in results.items():
        mixed = sorted(r["mixed"].items(), key=lambda kv: (kv[0][0], repr(kv[0][1])))
        print(f"\n{mode}: {len(mixed)} nodes whose clicks the agents named differently; a sample of {min(args.sample, len(mixed))}:")
        for (task, node), names in rng.sample(mixed, min(args.sample, len(mixed))):
            print(f"  {task} {str(node)[:60]}: " + ", ".join(f"{name!r} ×{n}" for name, n in names.most_common(5)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

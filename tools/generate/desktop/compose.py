"""``taskloom compose desktop:gnumeric``: value-flow chains (levels 1..k) and task graphs on the seeded workbooks, verified by replay.

Chains follow AgentSynth: level k+1 is built only once level k is verified, and a chain stops at
its first level that fails, with the reason. Each level is a task of its own, replayed in a fresh
session (display, bus, Gnumeric, home folder): the replay types one Gnumeric formula for the whole
chain, and the saved file must then hold the value computed here from the seeded data, so each
kept gold was reached by two routes (:mod:`.sheet_chain`). A task graph is two branches ending in
numbers and a last subtask combining them (OmniBench's parallel subtasks), verified the same way.
"""

from __future__ import annotations

import random
from pathlib import Path

from ...environment.desktop_sheet import WORKBOOKS
from ...errors import InputError
from ...tasks.dag import Dag
from ...tasks.model import Task
from ..compose.flowcompose import ChainStop, FlowResult
from ..filter.stages import GenerationReport
from .sheet_chain import GRAPH_ID, Branch, chain_task, graph_task, grow_branch
from .verify import verify_desktop_tasks

__all__ = ["compose_desktop"]


async def _verified(task: Task, root: Path, result: FlowResult) -> bool:
    """Replay ``task`` in a fresh session; a failure is recorded in ``result.dropped`` with the replay's reason."""
    report = GenerationReport()
    if await verify_desktop_tasks([task], root, report):
        return True
    result.dropped.append((task.id, "; ".join(d.reason for d in report.dropped) or "not verified"))
    return False


async def _chain(branch: Branch, name: str, seed: int, root: Path, result: FlowResult) -> None:
    """Levels 1.. of one chain, each verified before the next is tried."""
    reached, stopped = 0, branch.stopped or f"reached the {len(branch.hops)} levels asked for"
    for level in range(1, len(branch.hops) + 1):
        task = chain_task(branch, level, seed)
        if task is None:
            stopped = f"level {level}'s instruction would state an intermediate value"
            break
        if any(t.id == task.id for t in result.tasks):
            stopped = f"level {level} repeats an earlier chain's"
            break
        if not await _verified(task, root, result):
            stopped = f"level {level} failed its replay: {result.dropped[-1][1][:200]}"
            break
        result.tasks.append(task)
        reached = level
    result.chains.append(ChainStop(chain=name, listing=branch.path, reached=reached, stopped=stopped))


async def compose_desktop(graph_id: str, mode: str, count: int, levels: int, seed: int, root: Path) -> FlowResult:
    """``count`` chains of up to ``levels`` levels (``mode='chain'``) or ``count`` task graphs (``'dag'``) on the workbooks, each verified by replay."""
    if graph_id != GRAPH_ID:
        raise InputError(f"desktop composition works on {GRAPH_ID} (values flow between a workbook's cells); {graph_id} has no composer")
    if mode not in ("chain", "dag"):
        raise InputError(f"mode {mode!r} does not apply to a desktop graph; use chain or dag")
    if not 1 <= levels <= 6:
        raise InputError(f"levels={levels} is out of range; use 1 to 6")
    rng = random.Random(seed)
    paths = sorted(WORKBOOKS)
    result = FlowResult()
    for i in range(count):
        path = paths[(seed + i) % len(paths)]
        if mode == "chain":
            await _chain(grow_branch(path, levels, rng), f"chain-{i + 1}", seed, root, result)
            continue
        first, second = grow_branch(path, rng.choice((2, 3)), rng, end="number"), grow_branch(path, 2, rng, end="number")
        numbers = [b for b in (first, second) if len(b.hops) >= 2 and b.hops[-1].value.kind in ("number", "count")]
        task = graph_task(first, second, rng.choice(("sum", "difference")), seed) if len(numbers) == 2 else None
        if task is None:
            result.dropped.append((f"graph-{i + 1}", f"no two branches on {path} end in a number without stating an intermediate value"))
            continue
        if any(t.id == task.id for t in result.tasks):
            continue
        task.orders, task.order_count = Dag([s.id for s in task.subtasks], task.dag).orders(limit=50, seed=seed)
        if await _verified(task, root, result):
            result.tasks.append(task)
    if not result.tasks:
        result.reason = "; ".join(dict.fromkeys([c.stopped for c in result.chains] + [r for _, r in result.dropped]))[:500] or "nothing was composed"
    return result

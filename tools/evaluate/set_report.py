"""The report of an imported trajectory set: one self-contained ``report.html`` for many tasks.

The page opens on the cross-task summary (:class:`~.consensus.sets.SetSummary`: agents, step
inflation, recurring traps and critical steps, shared traps, separating steps), then a task index
sorted by instruction whose rows link to one section per task: its instruction, per-agent
outcomes, its runs (each with its outcome, steps and trap hits), the interactive drawing of its consensus graph and its trap / critical / bottleneck edges, each
with its Fisher p-value (success with vs without the step), its support and each agent's successes over runs.

Everything the run report does is reused from :mod:`.report`: the layout (:func:`layout_drawing`),
the script-safe JSON, the Jinja environment (autoescaping, ``pct`` / ``num`` filters) and the inline
``report.css`` / ``report.js``, so the same script draws every task's graph. The script draws all
graphs when the page loads (it has no lazy mode); a set of 300 tasks stays a few megabytes.
Same inputs give byte-identical output: sections follow the task index, whatever the order of
``graphs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..workspace import atomic_write_text
from .consensus.model import ConsensusGraph
from .consensus.sets import SetSummary, TaskRow
from .report import _asset, _data_text, _environment, _script_json, layout_drawing

__all__ = ["render_set_html", "write_set_report", "note_text", "p_text", "attribution_text"]

CLASS_ORDER = {"trap": 0, "critical": 1, "bottleneck": 2}
INDEX_CLIP = 160


def note_text(key: str, reason: str) -> str:
    """A ``not_computable`` entry as one line of text.

    >>> note_text("edge_classes", "not computable: 1 run")
    'edge classes: not computable: 1 run'
    """
    return f"{key.replace('_', ' ')}: {reason}"


def _notes(not_computable: dict[str, str]) -> list[str]:
    return [note_text(k, not_computable[k]) for k in sorted(not_computable)]


def _clip(text: str, limit: int = INDEX_CLIP) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reference(steps: int | None, source: str | None) -> str:
    if steps is None:
        return "—"
    return f"{steps} ({source.replace('_', ' ')})" if source else str(steps)


def p_text(p: float | None) -> str:
    """A p-value as the report prints it: three significant digits, ``<0.0001`` below that, ``—`` when not tested.

    >>> p_text(1 / 3), p_text(0.0286), p_text(1.0), p_text(2e-7), p_text(None)
    ('0.333', '0.0286', '1', '<0.0001', '—')
    """
    if p is None:
        return "—"
    return "<0.0001" if p < 1e-4 else f"{p:.3g}"


def attribution_text(attribution: dict[str, tuple[int, int]]) -> str:
    """Each agent's successful runs over its runs through a step, e.g. ``a1 0/1, a3 2/2``."""
    return ", ".join(f"{agent} {ok}/{runs}" for agent, (runs, ok) in sorted(attribution.items()))


def _edges(graph: ConsensusGraph) -> list[dict[str, Any]]:
    """The graph's trap, critical and bottleneck edges by label: by class, then most traversed first."""
    label = {n.id: n.label for n in graph.nodes}
    chosen = [e for e in graph.edges if e.edge_class in CLASS_ORDER]
    chosen.sort(key=lambda e: (CLASS_ORDER[e.edge_class], -e.count, label[e.source], label[e.target]))
    return [
        {
            "edge": e,
            "source": label[e.source],
            "target": label[e.target],
            "p": p_text(e.p_value),
            "per_agent": attribution_text(e.attribution),
        }
        for e in chosen
    ]


def _section(anchor: str, number: int, task_id: str, row: TaskRow | None, graph: ConsensusGraph | None) -> dict[str, Any]:
    """The template context of one task's section (its drawing laid out and embedded as safe JSON)."""
    drawing = None
    if graph is not None:
        layout = layout_drawing(graph.to_drawing())
        drawing = {
            "id": f"graph-{number}",
            "json": _script_json(layout.model_dump(mode="json", by_alias=True)),
            "nodes": len(layout.nodes),
            "edges": len(layout.edges),
        }
    instruction = graph.instruction if graph is not None else row.instruction if row is not None else None
    level = graph.level if graph is not None else row.level if row is not None else None
    not_computable = graph.not_computable if graph is not None else row.not_computable if row is not None else {}
    return {
        "anchor": anchor,
        "task_id": task_id,
        "instruction": instruction,
        "level": level,
        "graph": graph,
        "drawing": drawing,
        "edges": _edges(graph) if graph is not None else [],
        "notes": _notes(not_computable),
        "reference": _reference(graph.summary.reference_steps, graph.summary.reference_source) if graph is not None else "—",
    }


def _plan(summary: SetSummary, graphs: Sequence[ConsensusGraph]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """Index rows, sections and the anchor of each task id: index order first, then graphs missing from the index by task id."""
    groups: dict[str, list[ConsensusGraph]] = {}
    for g in graphs:
        groups.setdefault(g.task_id or "", []).append(g)
    by_task = {t: gs[0] if len(gs) == 1 else min(gs, key=lambda g: g.model_dump_json()) for t, gs in groups.items()}
    anchors: dict[str, str] = {}
    index: list[dict[str, Any]] = []
    sections: list[dict[str, Any]] = []
    for row in summary.task_index:
        if row.task_id in anchors:
            continue
        anchor = anchors[row.task_id] = f"task-{len(anchors) + 1}"
        index.append({
            "anchor": anchor, "row": row, "title": _clip(row.instruction) if row.instruction else row.task_id,
            "reference": _reference(row.reference_steps, row.reference_source), "notes": _notes(row.not_computable),
        })  # fmt: skip
        sections.append(_section(anchor, len(anchors), row.task_id, row, by_task.get(row.task_id)))
    for task_id in sorted(set(by_task) - set(anchors)):
        anchor = anchors[task_id] = f"task-{len(anchors) + 1}"
        sections.append(_section(anchor, len(anchors), task_id, None, by_task[task_id]))
    return index, sections, anchors


def _bars(histogram: dict[str, int]) -> list[tuple[str, int, float]]:
    """Histogram buckets with each count relative to the largest (for inline bars)."""
    top = max(histogram.values(), default=0) or 1
    return [(bucket, count, count / top) for bucket, count in histogram.items()]


def render_set_html(summary: SetSummary, graphs: Sequence[ConsensusGraph]) -> str:
    """The self-contained HTML page of an imported set: its summary, task index and one section per task."""
    index, sections, anchors = _plan(summary, graphs)
    template = _environment().from_string(_data_text("set_report.html.j2"))
    return template.render(
        summary=summary,
        index=index,
        sections=sections,
        anchors=anchors,
        bars=_bars,
        p_text=p_text,
        attribution_text=attribution_text,
        css=_asset("report.css", "</style") + _asset("set_report.css", "</style"),
        js=_asset("report.js", "</script"),
    )


def write_set_report(folder: Path, summary: SetSummary, graphs: Sequence[ConsensusGraph]) -> Path:
    """Write ``report.html`` for a set into ``folder`` (atomically) and return its path."""
    path = Path(folder) / "report.html"
    atomic_write_text(path, render_set_html(summary, graphs))
    return path

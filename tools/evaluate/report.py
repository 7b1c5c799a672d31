"""A run's report: a self-contained ``report.html`` and a ``summary.json``.

The HTML has no external reference (inline CSS, JS and SVG; it works offline from ``file://``):
the run header, the per-agent table, success by kind / type / difficulty / level with inline bar
charts, the agent × type matrix, CR/LC per agent; filters (agent, outcome, family, level, in a
little inline JS); one line per episode that opens on why it ended so (every criterion expected
beside observed, the answer beside the gold, the final URL, the steps with thumbnails, links to the
trajectory, HAR and trace: see :mod:`.report_episodes`); a task index by instruction; then one
section per task with its instruction, per-agent outcomes, an interactive drawing of its consensus
graph and its analysis tables. Only episode files (screenshots, trajectories, recordings) are
linked, relative to the report's folder.

Choices made here:

- **Layout in Python, drawing in JS.** Nodes are ranked by (kind: start < action < terminal,
  ``mean_step``, id); an edge going up that rank is *forward*, so forward edges form a DAG whatever
  cycles the agents made. Layers are longest forward paths from START (layer 0; actions at ≥ 1
  even when only back edges reach them), with every terminal on one last layer. Within a layer, nodes are ordered by four down/up barycentre
  sweeps weighted by edge counts (ties: previous position, then id). Edges not going to a later
  layer are drawn as arcs below (``back``) or as self loops (``loop``). Node radius grows with
  √visits, edge width with the runs taking the edge (the count when runs are not given).
- **Escaping.** All text reaches the page either through Jinja autoescaping or as JSON inside
  ``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as ``\\u003c``… so no
  label can close the script; the JS builds the DOM with ``textContent`` only.
- **Determinism.** Same inputs give byte-identical files; a timestamp appears only when passed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from jinja2 import Environment, StrictUndefined
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..workspace import atomic_write_json, atomic_write_text
from .model import EpisodeResult
from .report_episodes import EpisodeView, episode_views
from .summary import OUTCOMES, STATUSES, ReportSummary, TaskInfo, build_summary, num, pct, task_infos

__all__ = [
    "DrawingNode",
    "DrawingEdge",
    "Drawing",
    "PlacedNode",
    "PlacedEdge",
    "Layout",
    "ReportPaths",
    "layout_drawing",
    "analysis_rows",
    "render_html",
    "render_report",
    "task_anchors",
]

NodeKind = Literal["start", "action", "success", "failure"]
EdgeClass = Literal["trap", "critical", "bottleneck", "normal"]
KIND_RANK = {"start": 0, "action": 1, "success": 2, "failure": 2}
DX, DY, MARGIN, R_MIN, R_MAX, W_MIN, W_MAX, SHORT = 190.0, 84.0, 80.0, 7.0, 22.0, 1.5, 9.0, 30
SWEEPS = 4
SAG = 60.0  # room below the lowest node for back-edge arcs (the JS caps their sag to this)


class DrawingNode(BaseModel):
    """A consensus-graph node as the drawing format gives it."""

    model_config = ConfigDict(extra="ignore")

    id: str
    label: str
    visits: int = Field(ge=0)
    importance: float
    necessary: bool
    mean_step: float
    kind: NodeKind


class DrawingEdge(BaseModel):
    """A consensus-graph edge as the drawing format gives it (``class`` is the edge class)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    source: str
    target: str
    count: int = Field(ge=0)
    successes: int = Field(ge=0)
    failures: int = Field(ge=0)
    success_rate: float
    class_: EdgeClass = Field(alias="class")
    p_value: float | None = Field(None, description="Fisher's exact test of success with vs without the edge (consensus graphs); None when not tested.")
    runs: int | None = Field(None, ge=0, description="Runs taking the edge (a looping run counts once); the stroke width follows it when given, else the count.")


class Drawing(BaseModel):
    """A consensus graph to draw: node ids are unique and every edge joins two of them."""

    nodes: list[DrawingNode]
    edges: list[DrawingEdge] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Drawing:
        ids = [n.id for n in self.nodes]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"duplicate node ids {dup}")
        known = set(ids)
        for e in self.edges:
            if e.source not in known or e.target not in known:
                raise ValueError(f"edge {e.source!r} -> {e.target!r} joins a node that is not in 'nodes'")
        return self


class PlacedNode(DrawingNode):
    """A node with its layer, position, radius and shortened label."""

    short: str
    shade: float = Field(description="Importance relative to the drawing's most important node, in [0, 1].")
    layer: int
    x: float
    y: float
    r: float


class PlacedEdge(DrawingEdge):
    """An edge with its stroke width and how it is routed."""

    width: float
    route: Literal["forward", "back", "loop"]


class Layout(BaseModel):
    """Coordinates of a drawing, in a ``width`` × ``height`` box."""

    width: float
    height: float
    layers: int
    nodes: list[PlacedNode]
    edges: list[PlacedEdge]


class ReportPaths(BaseModel):
    """Where the report files were written."""

    html: Path
    summary: Path


def _short(label: str) -> str:
    return label if len(label) <= SHORT else label[: SHORT - 1] + "…"


def _sweep(layer: list[str], nbrs: dict[str, list[tuple[str, int]]], pos: dict[str, float]) -> list[str]:
    def key(v: str) -> tuple[float, float, str]:
        ns = nbrs.get(v, [])
        total = sum(c for _, c in ns)
        bary = math.fsum(pos[u] * c for u, c in ns) / total if total else pos[v]
        return bary, pos[v], v

    return sorted(layer, key=key)


def _weight(e: DrawingEdge) -> int:
    """What an edge's stroke width follows: the runs taking it, else its traversals."""
    return e.runs if e.runs is not None else e.count


def layout_drawing(drawing: Drawing | Mapping[str, Any]) -> Layout:
    """Place a consensus graph's nodes in layers, left to right (see the module notes).

    Examples
    --------
    >>> d = {"nodes": [{"id": "s", "label": "START", "visits": 2, "importance": 0, "necessary": True, "mean_step": 0, "kind": "start"},
    ...                {"id": "a", "label": "click(text='Go')", "visits": 2, "importance": 1, "necessary": True, "mean_step": 1, "kind": "action"},
    ...                {"id": "ok", "label": "SUCCESS", "visits": 2, "importance": 0, "necessary": True, "mean_step": 2, "kind": "success"}],
    ...      "edges": [{"source": "s", "target": "a", "count": 2, "successes": 2, "failures": 0, "success_rate": 1, "class": "normal"},
    ...                {"source": "a", "target": "ok", "count": 2, "successes": 2, "failures": 0, "success_rate": 1, "class": "critical"}]}
    >>> [(n.id, n.layer) for n in layout_drawing(d).nodes]
    [('s', 0), ('a', 1), ('ok', 2)]
    """
    d = drawing if isinstance(drawing, Drawing) else Drawing.model_validate(drawing)
    nodes = {n.id: n for n in d.nodes}
    edges = sorted(d.edges, key=lambda e: (e.source, e.target, e.class_, e.count))
    rank = {n.id: (KIND_RANK[n.kind], n.mean_step, n.id) for n in d.nodes}
    preds: dict[str, list[str]] = {}
    for e in edges:
        if rank[e.source] < rank[e.target]:
            preds.setdefault(e.target, []).append(e.source)
    floor = {"start": 0, "action": 1 if any(n.kind == "start" for n in d.nodes) else 0}
    layer: dict[str, int] = {}
    for v in sorted(nodes, key=rank.__getitem__):
        layer[v] = max([layer[u] + 1 for u in preds.get(v, [])] + [floor.get(nodes[v].kind, 0)])
    last = max((layer[v] for v in nodes if KIND_RANK[nodes[v].kind] < 2), default=-1) + 1
    for v in nodes:
        if KIND_RANK[nodes[v].kind] == 2:
            layer[v] = last
    n_layers = max(layer.values(), default=-1) + 1
    layers: list[list[str]] = [sorted((v for v in nodes if layer[v] == i), key=rank.__getitem__) for i in range(n_layers)]
    up: dict[str, list[tuple[str, int]]] = {}
    down: dict[str, list[tuple[str, int]]] = {}
    for e in edges:
        if layer[e.source] < layer[e.target]:
            up.setdefault(e.target, []).append((e.source, max(e.count, 1)))
            down.setdefault(e.source, []).append((e.target, max(e.count, 1)))
    pos: dict[str, float] = {}

    def place(i: int) -> None:
        for j, v in enumerate(layers[i]):
            pos[v] = j - (len(layers[i]) - 1) / 2

    for i in range(n_layers):
        place(i)
    for _ in range(SWEEPS):
        for i in range(1, n_layers):
            layers[i] = _sweep(layers[i], up, pos)
            place(i)
        for i in range(n_layers - 2, -1, -1):
            layers[i] = _sweep(layers[i], down, pos)
            place(i)
    tallest = max((len(lay) for lay in layers), default=1)
    top_visits = max((n.visits for n in d.nodes), default=0) or 1
    top_count = max((_weight(e) for e in edges), default=0) or 1
    top_importance = max((n.importance for n in d.nodes), default=0.0)
    placed: list[PlacedNode] = []
    for i, lay in enumerate(layers):
        for j, v in enumerate(lay):
            n = nodes[v]
            placed.append(
                PlacedNode(
                    **n.model_dump(),
                    short=_short(n.label),
                    shade=round(max(n.importance, 0.0) / top_importance, 4) if top_importance > 0 else 0.0,
                    layer=i,
                    x=round(MARGIN + i * DX, 2),
                    y=round(MARGIN + (j + (tallest - len(lay)) / 2) * DY, 2),
                    r=round(R_MIN + (R_MAX - R_MIN) * math.sqrt(n.visits / top_visits), 2),
                )
            )
    routed = [
        PlacedEdge(
            **e.model_dump(by_alias=True),
            width=round(W_MIN + (W_MAX - W_MIN) * _weight(e) / top_count, 2),
            route="loop" if e.source == e.target else "forward" if layer[e.source] < layer[e.target] else "back",
        )
        for e in edges
    ]
    return Layout(
        width=round(2 * MARGIN + max(n_layers - 1, 0) * DX, 2),
        height=round(2 * MARGIN + (tallest - 1) * DY + (SAG if any(e.route == "back" for e in routed) else 0), 2),
        layers=n_layers,
        nodes=placed,
        edges=routed,
    )


def _script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` survives (they only occur inside strings)."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def analysis_rows(analysis: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Key/value rows of a free-form analysis dict: nested dicts flattened one level (``a.b``), the rest as JSON."""
    rows: list[tuple[str, str]] = []
    for key in sorted(analysis, key=str):
        value = analysis[key]
        if isinstance(value, Mapping) and value:
            rows += [(f"{key}.{sub}", _cell(value[sub])) for sub in sorted(value, key=str)]
        else:
            rows.append((str(key), _cell(value)))
    return rows


def _data_text(name: str) -> str:
    return files("taskloom.tools.evaluate").joinpath("data", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = pct
    env.filters["num"] = num
    env.globals["rate_hue"] = lambda rate: int(round(rate * 120))
    return env


def _asset(name: str, closing: str) -> str:
    text = _data_text(name)
    if closing in text.lower():
        raise InputError(f"{name} contains {closing!r}, which would end the inline block early; remove it from the asset")
    return text


def task_anchors(report: ReportSummary) -> dict[str, str]:
    """Each task's section anchor in the page (``task-1``, … in the summary's task order)."""
    return {row.task_id: f"task-{i}" for i, row in enumerate(report.tasks, start=1)}


def _level_key(level: str) -> tuple[int, str]:
    return (int(level), "") if level.isdigit() else (1 << 30, level)


def _filters(report: ReportSummary, episodes: Sequence[EpisodeView]) -> dict[str, list[str]]:
    """The choices of each filter: agents, families and levels present (outcomes are fixed)."""
    families = {e.family for e in episodes} | {row.family for row in report.tasks if row.family}
    levels = {str(e.level) for e in episodes if e.level is not None} | {str(row.level) for row in report.tasks if row.level is not None}
    return {"agent": sorted({e.agent for e in episodes}), "family": sorted(families), "level": sorted(levels, key=_level_key)}


def render_html(
    report: ReportSummary,
    consensus: Mapping[str, Drawing | Mapping[str, Any]],
    analyses: Mapping[str, Mapping[str, Any]] | None = None,
    episodes: Sequence[EpisodeView] = (),
) -> str:
    """The self-contained HTML page for a report summary, its consensus drawings and analyses, and its episodes' details.

    Episode details link (relatively) to the run's files: trajectories, screenshots, HAR files and traces.
    """
    by_task: dict[str, list[EpisodeView]] = {}
    for episode in episodes:
        by_task.setdefault(episode.task_id, []).append(episode)
    sections = []
    for i, row in enumerate(report.tasks, start=1):
        graph = None
        if row.task_id in consensus:
            raw = consensus[row.task_id]
            try:
                layout = layout_drawing(raw)
            except ValidationError as exc:
                raise InputError(f"consensus graph of task {row.task_id!r} is not in the drawing format: {exc}") from exc
            graph = {"id": f"graph-{i}", "json": _script_json(layout.model_dump(mode="json", by_alias=True)), "nodes": len(layout.nodes), "edges": len(layout.edges)}
        analysis = (analyses or {}).get(row.task_id)
        mine = by_task.get(row.task_id, [])
        sections.append({
            "anchor": f"task-{i}", "row": row, "graph": graph, "analysis": analysis_rows(analysis) if analysis else [],
            "pairs": json.dumps([[e.agent, e.outcome] for e in mine], ensure_ascii=False),
            "episodes": {a: [e for e in mine if e.agent == a] for a in dict.fromkeys(e.agent for e in mine)},
        })
    summary = report.summary
    score_names = sorted({name for a in summary.per_agent for name in a.scores})
    types = [g.group for g in summary.by_type]
    matrix = {(c.agent, c.group): c for c in summary.by_agent_type}
    template = _environment().from_string(_data_text("report.html.j2"))
    return template.render(
        report=report,
        summary=summary,
        sections=sections,
        statuses=STATUSES,
        outcomes=OUTCOMES,
        score_names=score_names,
        types=types,
        matrix=matrix,
        breakdowns=[("Kind", summary.by_kind), ("Task type", summary.by_type), ("Difficulty", summary.by_difficulty), ("Level (chained)", summary.by_level)],
        episodes=episodes,
        filters=_filters(report, episodes),
        css=_asset("report.css", "</style"),
        js=_asset("report.js", "</script"),
    )


def render_report(
    run_id: str,
    results: Sequence[EpisodeResult],
    tasks: Mapping[str, TaskInfo | Mapping[str, Any]],
    consensus: Mapping[str, Drawing | Mapping[str, Any]],
    analyses: Mapping[str, Mapping[str, Any]] | None,
    out_dir: Path,
    *,
    generated_at: str | None = None,
) -> ReportPaths:
    """Write ``report.html`` and ``summary.json`` for a run into ``out_dir`` (atomically) and return their paths."""
    report = build_summary(run_id, results, tasks, sorted(consensus), generated_at)
    out = Path(out_dir)
    html = render_html(report, consensus, analyses, episode_views(results, task_infos(tasks), task_anchors(report), out))
    paths = ReportPaths(html=out / "report.html", summary=out / "summary.json")
    atomic_write_json(paths.summary, report.model_dump(mode="json"))
    atomic_write_text(paths.html, html)
    return paths


"""The dataset card (``README.md``), written from the tasks and the units' records only.

Every number on it is counted from the rows written to ``tasks.jsonl`` or read from the
generation reports: counts per source, family, kind, type, difficulty and level; replay
pass rates and drops by reason; licence per source (from the manifest); five sample
tasks per family, verbatim; how to run an agent on it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..tasks.harbor import HarborExport
from ..tasks.model import Task
from .manifest import Manifest

if TYPE_CHECKING:
    from .pipeline import Unit, UnitRecord

__all__ = ["CardRow", "dataset_card", "count_table", "SAMPLES_PER_FAMILY"]

SAMPLES_PER_FAMILY = 5


class CardRow(BaseModel):
    """One task of the dataset with the source and family it came from."""

    task: Task
    source: str
    family: str


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def count_table(title: str, counts: Counter[str]) -> list[str]:
    """A two-column markdown table, most frequent first (ties by name).

    >>> count_table("type", Counter({"a": 1, "b": 2}))
    ['| type | tasks |', '|---|---:|', '| b | 2 |', '| a | 1 |']
    """
    lines = [f"| {title} | tasks |", "|---|---:|"]
    lines += [f"| {_cell(k)} | {n} |" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return lines


def _front_matter(manifest: Manifest, total: int) -> list[str]:
    licences = sorted({s.licence for s in manifest.sources})
    licence = licences[0] if len(licences) == 1 else "other"
    size = "n<1K" if total < 1000 else "1K<n<10K" if total < 10000 else "10K<n<100K"
    return ["---", f"license: {licence.lower()}", f"pretty_name: {manifest.dataset.name}", f"size_categories: [{size}]", "tags: [agents, benchmark, taskloom]",
            "configs:", "- config_name: default", "  data_files: tasks.parquet", "---", ""]


def _sources(records: Sequence[tuple[Unit, UnitRecord | None]], per_source: Counter[str]) -> list[str]:
    lines = ["| source | kind | origin | licence | graphs | tasks | status |", "|---|---|---|---|---:|---:|---|"]
    for source, rec in records:
        status = "not built" if rec is None else "built" if rec.status == "done" else f"failed: {rec.reason}"
        graphs = 0 if rec is None or rec.status != "done" else len(rec.graphs)
        lines.append(f"| {source.name} | {source.kind} | `{_cell(source.origin)}` | {_cell(source.licence)} | {graphs} | {per_source[source.name]} | {_cell(status)} |")
    return lines


def _validation(records: Sequence[tuple[Unit, UnitRecord | None]]) -> list[str]:
    lines = ["| source | family | graph | candidates | kept | replayed | replay passed | pass rate | not needed |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    drops: Counter[str] = Counter()
    replayed = passed = 0
    for source, rec in records:
        if rec is None or rec.status != "done":
            continue
        for r in rec.reports:
            replay = r.stages.get("replay")
            if replay:
                replayed += replay["in"]
                passed += replay["kept"]
            rate = f"{replay['kept'] / replay['in']:.0%}" if replay and replay["in"] else "—"
            cells = (replay["in"], replay["kept"]) if replay else ("—", "—")
            lines.append(f"| {source.name} | {r.family} | {r.graph_id} | {r.candidates} | {r.kept} | {cells[0]} | {cells[1]} | {rate} | {r.unverified} |")
            drops.update(r.drops)
    overall = f"{passed}/{replayed} ({passed / replayed:.0%})" if replayed else "no web candidates were replayed"
    lines += ["", f"Replay verification (web candidates replayed in a real browser, gold steps then success criteria): **{overall}**."]
    lines += ["Candidates are verified as the coverage selection reaches them; those it never needed (*not needed*) were not replayed.", ""]
    lines += ["Candidates dropped, by stage and reason:", ""] + (count_table("stage: reason", drops) if drops else ["none"])
    lines += ["", "Truth-bench results: none of these sources has a truth bench (no figures)."]
    return lines


def _sample(task: Task) -> str:
    shown: dict[str, Any] = {k: v for k, v in task.public().items() if v not in (None, [])}
    shown["difficulty"] = task.difficulty
    if task.gold_answer is not None:
        shown["gold_answer"] = task.gold_answer
    if task.success:
        shown["success"] = [c.model_dump(mode="json", exclude_defaults=True) for c in task.success]
    if task.level is not None:
        shown["level"] = task.level
    return json.dumps(shown, ensure_ascii=False, indent=2)


def _samples(rows: Sequence[CardRow]) -> list[str]:
    by_family: dict[str, list[Task]] = {}
    for row in rows:
        by_family.setdefault(row.family, []).append(row.task)
    lines: list[str] = []
    for family in sorted(by_family):
        lines += [f"### {family}", ""]
        for task in by_family[family][:SAMPLES_PER_FAMILY]:
            lines += ["```json", _sample(task), "```", ""]
    return lines or ["No tasks."]


def _running(manifest: Manifest) -> list[str]:
    serve = [s for s in manifest.sources if s.kind == "site"]
    lines = [
        "Every task, with Taskloom's reference (oracle) agent, then your own agent over MCP:",
        "",
        "```sh",
        "taskloom run --tasks tasks.jsonl --agent oracle",
        "taskloom run --tasks tasks.jsonl --agent \"command:cmd='python my_agent.py'\"",
        "taskloom run --tasks tasks.jsonl --kind document --agent oracle   # one kind only",
        "```",
        "",
        "Document tasks are answered from their graph: run in the workspace that built the dataset, or rebuild it there with "
        "`taskloom build manifest.toml` (same seed, same tasks). `harbor/` carries each document task's source file instead.",
    ]
    if serve:
        lines += ["", "Web tasks need their site served at the start URL they were built on:", ""]
        lines += [f"- `{s.name}`: `{s.start_url}`" + (f" — `{' '.join(s.serve)}` (from the manifest's folder)" if s.serve else "") for s in serve]
    lines += ["", "`public.jsonl` is what an agent may see of each task; `tasks.jsonl` and the parquet `gold` column hold the gold, for benchmark builders."]
    return lines


def dataset_card(manifest: Manifest, rows: Sequence[CardRow], records: Iterable[tuple[Unit, UnitRecord | None]], harbor: HarborExport) -> str:
    """The card's markdown for ``rows`` (the dataset's tasks) and the units' ``records``."""
    records = list(records)
    total = len(rows)
    per = {name: Counter[str]() for name in ("source", "family", "kind", "type", "difficulty", "level")}
    for row in rows:
        t = row.task
        per["source"][row.source] += 1
        per["family"][row.family] += 1
        per["kind"][t.kind] += 1
        per["type"][t.type] += 1
        per["difficulty"][t.difficulty] += 1
        per["level"]["—" if t.level is None else str(t.level)] += 1
    failed = [s.name for s, r in records if r is not None and r.status == "failed"]
    d = manifest.dataset
    lines = _front_matter(manifest, total) + [f"# {d.name} {d.version}", ""]
    if d.description:
        lines += [d.description, ""]
    summary = f"**{total} tasks** from {len(records) - len(failed)} of {len(records)} units ({', '.join(f'{k}: {n}' for k, n in sorted(per['kind'].items())) or 'none'})"
    lines += [summary + f", built by `taskloom build` with seed {d.seed}, embedder `{manifest.dataset.embedder or 'default'}`, LLM {'on' if d.use_llm else 'off'}.", ""]
    if failed:
        lines += [f"Units that failed (no tasks in the dataset): {', '.join(failed)}.", ""]
    lines += ["## Sources", "", "Each source is a unit of work; so is each composition over a site (`<site>-<mode>`).", ""] + _sources(records, per["source"]) + [""]
    lines += ["## Counts", ""]
    for name in ("family", "kind", "type", "difficulty", "level"):
        lines += [f"### By {name}", ""] + count_table(name, per[name]) + [""]
    lines += ["## Validation", ""] + _validation(records) + [""]
    lines += ["## Files", "", "| file | what |", "|---|---|",
              f"| `tasks.jsonl` | {total} full tasks, gold included (`taskloom run --tasks`) |",
              f"| `public.jsonl` | {total} tasks as an agent sees them (no gold) |",
              "| `tasks.parquet` | one flat row per task: id, source, family, kind, type, difficulty, level, instruction, start_url, graph_id, answer, gold (JSON), task (JSON) |",
              f"| `harbor/` | {len(harbor.written)} Harbor task directories" + (f" ({len(harbor.skipped)} tasks skipped: {_cell('; '.join(f'{k}: {v}' for k, v in sorted(harbor.skipped.items())))})" if harbor.skipped else "") + " |",
              "| `manifest.toml` | the manifest it was built from |", "| `SHA256SUMS` | checksums of every file (`sha256sum -c SHA256SUMS`) |", ""]
    lines += ["## Running an agent", ""] + _running(manifest) + [""]
    lines += [f"## Samples ({SAMPLES_PER_FAMILY} per family)", ""] + _samples(rows)
    return "\n".join(lines).rstrip() + "\n"

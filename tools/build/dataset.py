"""The publishable dataset folder ``<out>/<name>-<version>/``, written from a build's finished units.

::

    README.md        the dataset card, written from the data (:mod:`.card`)
    tasks.jsonl      full tasks, gold included (what ``taskloom run --tasks`` reads)
    public.jsonl     what an agent under test may see of each task (no gold)
    tasks.parquet    one flat row per task (Hugging Face ``datasets`` loads it)
    harbor/          Harbor task directories (gold only under tests/ and solution/)
    manifest.toml    the manifest it was built from
    SHA256SUMS       every other file's SHA-256 (``sha256sum -c SHA256SUMS``)

The folder is written beside the old one and renamed into place, so a reader (or a
killed build) sees the old dataset or the new one. When the units' records and the
manifest's dataset section are unchanged and the checksums verify, nothing is rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from ..tasks.formats import ExportContext, export_directory
from ..tasks.harbor import HarborExport
from ..workspace import atomic_write_text
from .card import CardRow, dataset_card
from .pipeline import Builder, Unit, UnitRecord, file_sha256

__all__ = ["DATASET_FORMAT", "GOLD_FIELDS", "assemble", "verify_sums", "dataset_stamp", "parquet_rows"]

#: Bumped when the folder's layout or the card change: the next build rewrites the folder.
DATASET_FORMAT = 1
#: What the parquet ``gold`` column holds (JSON): what an agent must never see.
GOLD_FIELDS = {"gold_answer", "answer_kind", "evidence", "reasoning_path", "gold_steps", "success", "subtasks", "dag", "orders"}
_SUMS = "SHA256SUMS"


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p != folder / _SUMS)


def write_sums(folder: Path) -> None:
    """``SHA256SUMS`` over every file of ``folder`` (sorted; the format ``sha256sum -c`` reads)."""
    lines = [f"{file_sha256(folder / name)}  {name}\n" for name in _files(folder)]
    atomic_write_text(folder / _SUMS, "".join(lines))


def verify_sums(folder: Path) -> list[str]:
    """Problems with ``folder`` against its ``SHA256SUMS`` (missing, changed or unlisted files); empty when it verifies."""
    sums = folder / _SUMS
    if not sums.is_file():
        return [f"no {_SUMS} in {folder}"]
    listed: dict[str, str] = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    problems = [f"unlisted file {name}" for name in _files(folder) if name not in listed]
    for name, digest in listed.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"missing file {name}")
        elif file_sha256(path) != digest:
            problems.append(f"changed file {name}")
    return problems


def parquet_rows(rows: list[CardRow]) -> pa.Table:
    """The flat table: id, source, family, kind, type, difficulty, level, instruction, start_url, graph_id, answer, gold (JSON), task (JSON)."""
    columns: dict[str, list[Any]] = {k: [] for k in ("id", "source", "family", "kind", "type", "difficulty", "level", "instruction", "start_url", "graph_id", "answer", "gold", "task")}
    for row in rows:
        t = row.task
        columns["id"].append(t.id)
        columns["source"].append(row.source)
        columns["family"].append(row.family)
        columns["kind"].append(t.kind)
        columns["type"].append(t.type)
        columns["difficulty"].append(t.difficulty)
        columns["level"].append(t.level)
        columns["instruction"].append(t.instruction)
        columns["start_url"].append(t.start_url)
        columns["graph_id"].append(t.provenance.graph_id)
        columns["answer"].append(t.gold_answer)
        columns["gold"].append(json.dumps(t.model_dump(mode="json", include=GOLD_FIELDS), ensure_ascii=False, sort_keys=True))
        columns["task"].append(t.model_dump_json())
    schema = pa.schema([(name, pa.int64() if name == "level" else pa.string()) for name in columns])
    return pa.table(columns, schema=schema)


def dataset_stamp(builder: Builder) -> str:
    """SHA-256 of what the folder is written from: the dataset section, each unit's record and licence."""
    units = [[u.name, u.licence, None if r is None else r.model_dump(mode="json", exclude={"seconds", "finished"})] for u, r in builder.records()]
    data = {"format": DATASET_FORMAT, "dataset": builder.manifest.dataset.model_dump(mode="json"), "units": units, "serve": [s.serve for s in builder.manifest.sources]}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


class Assembled(BaseModel):
    """Where the dataset folder is, whether this run wrote it, and its task count."""

    path: str
    written: bool
    tasks: int


def _rows(builder: Builder) -> tuple[list[CardRow], list[tuple[Unit, UnitRecord | None]]]:
    rows: list[CardRow] = []
    records = list(builder.records())
    for source, rec in records:
        if rec is None or rec.status != "done":
            continue
        for task in builder.unit_tasks(source.name):
            rows.append(CardRow(task=task, source=source.name, family=rec.families.get(task.id, "unknown")))
    return rows, records


def _clear_leftovers(out: Path, folder: str) -> None:
    """Remove half-written folders of earlier runs that were killed (``.<folder>.tmp-*``, ``.<folder>.old-*``)."""
    for left in [*out.glob(f".{folder}.tmp-*"), *out.glob(f".{folder}.old-*")]:
        shutil.rmtree(left, ignore_errors=False)


def assemble(builder: Builder, manifest_file: Path) -> Assembled:
    """Write ``<out>/<name>-<version>/`` from the finished units (nothing when it is up to date)."""
    out, folder = builder.out, builder.manifest.folder_name
    target = out / folder
    stamp = dataset_stamp(builder)
    stamp_file = builder.dir / "dataset.stamp"
    rows, records = _rows(builder)
    if stamp_file.is_file() and stamp_file.read_text(encoding="utf-8") == stamp and target.is_dir() and not verify_sums(target):
        return Assembled(path=str(target), written=False, tasks=len(rows))
    _clear_leftovers(out, folder)
    tmp = out / f".{folder}.tmp-{os.getpid()}"
    tmp.mkdir(parents=True, mode=0o700)
    tasks = [r.task for r in rows]
    (tmp / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    (tmp / "public.jsonl").write_text("".join(json.dumps(t.public(), ensure_ascii=False) + "\n" for t in tasks), encoding="utf-8")
    pq.write_table(parquet_rows(rows), tmp / "tasks.parquet")
    documents = {g.graph_id: Path(g.origin) for _, rec in records if rec is not None for g in rec.graphs if g.kind == "document"}
    harbor = export_directory("harbor", tasks, tmp / "harbor", ExportContext(documents=documents, overwrite=True))
    assert isinstance(harbor, HarborExport)
    shutil.copyfile(manifest_file, tmp / "manifest.toml")
    (tmp / "README.md").write_text(dataset_card(builder.manifest, rows, records, harbor), encoding="utf-8")
    write_sums(tmp)
    old = out / f".{folder}.old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    atomic_write_text(stamp_file, stamp)
    return Assembled(path=str(target), written=True, tasks=len(rows))

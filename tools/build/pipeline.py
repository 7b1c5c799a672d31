"""``taskloom build``: every manifest source as one resumable unit of work, then the dataset folder.

A unit ingests (document) or serves and crawls (site) its source, then generates tasks
with each of its families (replaying web candidates in a real browser); a compose unit
(``<site>-<mode>``, one per ``[[compose]]`` entry and site) serves its site again and
composes over the site unit's verified tasks. Its **stamp** is the SHA-256 of what
decides its output: the files' bytes (documents) or the manifest entry (sites; compose:
the entry and the site unit's stamp and tasks), the generation settings and the
settings that shape graphs and tasks.
Under ``<out>/.taskloom-build/<name>-<version>/``:

- ``units/<source>.tasks.jsonl`` then ``units/<source>.json`` (the unit's record: stamp,
  status, task ids and families, graphs, generation reports), each written to a temporary
  file and renamed, the record last: a unit is finished exactly when its record says so;
- ``log.jsonl``: one line per unit and run (``skipped``, ``started``, ``done``, ``failed``).

A re-run skips units whose record is ``done`` with the same stamp; a failed unit is
retried. A unit that fails is recorded with its reason and the others go on. ``kill -9``
loses only the unit in progress. The dataset folder is then written from the records
(:mod:`.dataset`), and skipped too when nothing changed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from ..errors import InputError, TaskloomError
from ..settings import Settings
from ..tasks.model import Task
from ..workspace import append_jsonl, atomic_write_json, atomic_write_text
from .manifest import ComposeSection, Manifest, Source
from .serve import served

if TYPE_CHECKING:  # imported on first need: an unchanged re-run loads neither Chromium's driver nor Chroma
    from ..generate.web.paths import Verdict
    from ..graph.web.pipeline import CrawlJob, Crawled
    from ..runtime import Runtime

__all__ = ["file_sha256", "BUILD_FORMAT", "Unit", "plan", "drop_reason", "GraphBuilt", "FamilyReport", "UnitRecord", "UnitOutcome", "BuildResult", "Builder", "RemoteWork", "build_dir", "unit_stamp", "STAMP_SETTINGS"]

#: Bumped when a unit's output for the same inputs would change: every unit is then redone.
BUILD_FORMAT = 1
#: Settings that shape graphs or tasks: part of every unit's stamp.
STAMP_SETTINGS = ("embedder", "chunk_chars", "chunk_overlap", "similarity_threshold", "similarity_top_k", "dedup_threshold", "llm_backend", "llm_model", "llm_temperature")

ProgressFn = Callable[[float, "float | None", str], None]
#: ``progress(label, total)`` opens a progress display and yields its ``update(done, total, description)``.
ProgressFactory = Callable[[str, "float | None"], AbstractContextManager[ProgressFn]]


class GraphBuilt(BaseModel):
    """A graph a unit built: from a document file or a crawled site."""

    graph_id: str
    origin: str = Field(description="The document file, or the site's start URL.")
    kind: Literal["document", "web"]
    nodes: int = 0


class FamilyReport(BaseModel):
    """One generation (a graph and a family): what it kept and dropped."""

    graph_id: str
    family: str
    candidates: int
    kept: int
    stages: dict[str, dict[str, int]] = Field(default_factory=dict)
    drops: dict[str, int] = Field(default_factory=dict, description="'stage: reason' → candidates dropped.")
    unverified: int = Field(0, description="Candidates never verified: the selection had its tasks before it reached them.")


class UnitRecord(BaseModel):
    """A unit's record in the build folder (``units/<source>.json``)."""

    name: str
    kind: Literal["document", "site", "compose"]
    stamp: str
    status: Literal["done", "failed"]
    reason: str | None = None
    graphs: list[GraphBuilt] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list)
    families: dict[str, str] = Field(default_factory=dict, description="Task id → the family (generator) that made it.")
    reports: list[FamilyReport] = Field(default_factory=list)
    tasks_sha256: str | None = Field(None, description="SHA-256 of units/<source>.tasks.jsonl.")
    seconds: dict[str, float] = Field(default_factory=dict, description="Time per stage: ingest or crawl, generate.")
    finished: str = ""


class UnitOutcome(BaseModel):
    """What this run did with one unit."""

    name: str
    action: Literal["skipped", "built", "failed"]
    tasks: int = 0
    reason: str | None = None
    seconds: float = 0.0


class BuildResult(BaseModel):
    """What ``taskloom build`` did: per unit, and the dataset folder."""

    dataset: str
    build: str
    executor: dict[str, Any] = Field(default_factory=lambda: {"name": "local"}, description="Where the browser work ran: local, or ray with crawls and replays per node.")
    units: list[UnitOutcome]
    tasks: int
    dataset_written: bool = Field(description="False when the dataset folder was already up to date.")
    seconds: float


class Unit(BaseModel):
    """One unit of work: a document or site source, or a composition over a site (``<site>-<mode>``)."""

    name: str
    kind: Literal["document", "site", "compose"]
    source: Source = Field(description="The source; for a compose unit, the site it composes over.")
    compose: ComposeSection | None = None

    @property
    def licence(self) -> str:
        return self.source.licence

    @property
    def origin(self) -> str:
        """The document path as the manifest gives it, the site's start URL, or ``compose <mode> over <site>``."""
        if self.compose is not None:
            return f"{self.compose.mode} over {self.source.name}"
        return self.source.start_url or str(self.source.path)


def plan(manifest: Manifest) -> list[Unit]:
    """The manifest's units in build order: its sources, then the compositions (which need their sites built)."""
    units = [Unit(name=s.name, kind=s.kind, source=s) for s in manifest.sources]
    return units + [Unit(name=name, kind="compose", source=site, compose=entry) for name, site, entry in manifest.compose_units()]


def build_dir(out: Path, manifest: Manifest) -> Path:
    """The build folder (records, log) of ``manifest`` under ``out``."""
    return out / ".taskloom-build" / manifest.folder_name


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unit_stamp(manifest: Manifest, source: Source, settings: Settings, compose: ComposeSection | None = None, site_record: UnitRecord | None = None) -> str:
    """SHA-256 of what decides a unit's output (the licence, shown only on the card, is left out).

    A compose unit's stamp covers its entry and its site unit's stamp and tasks.
    """
    entry = source.model_dump(mode="json", exclude={"licence"})
    parts: dict[str, Any] = {
        "compose": None if compose is None else compose.model_dump(mode="json"),
        "site": None if compose is None or site_record is None else [site_record.stamp, site_record.status, site_record.tasks_sha256],
        "format": BUILD_FORMAT,
        "entry": entry,
        "seed": source.seed if source.seed is not None else manifest.dataset.seed,
        "use_llm": manifest.dataset.use_llm,
        "settings": {k: str(getattr(settings, k)) for k in STAMP_SETTINGS},
    }
    if source.kind == "document" and compose is None:
        root = manifest.source_path(source)
        parts["files"] = [[str(p.relative_to(root)) if p != root else p.name, file_sha256(p)] for p in manifest.document_files(source)]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


_ID = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)*-[0-9a-f]{8,}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def drop_reason(stage: str, reason: str) -> str:
    """A drop's reason as a category: its text before the details, task ids and numbers generalised.

    >>> drop_reason("dedup", "near-duplicate of doc-0ea848890a6b (cosine 0.951)")
    'dedup: near-duplicate of <task>'
    >>> drop_reason("reachability", "2 target(s) beyond 3 hops: ['a', 'b']")
    'reachability: N target(s) beyond N hops'
    """
    head = reason.split(": ")[0].split(" (")[0]
    return f"{stage}: {_NUMBER.sub('N', _ID.sub('<task>', head)).strip()[:100]}"


def _drops(report: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for dropped in report.dropped:
        key = drop_reason(dropped.stage, dropped.reason)
        counts[key] = counts.get(key, 0) + 1
    return counts


class RemoteWork(Protocol):
    """A build's browser work done elsewhere (``--executor ray``: :class:`taskloom.harness.ray_generation.RayBuildWork`).

    Each site is crawled by ``crawl_all`` and its candidates replayed by ``replay``; this
    process alone ingests documents, stores graphs and selects and writes the tasks, so the
    tasks are those of a local build. A site with ``state`` is replayed here: every replay
    starts from a fresh copy of its seed, which only this process resets.
    """

    def replay(self, tasks: list[Task]) -> Awaitable[list[Verdict]]: ...

    def crawl_all(self, jobs: list[CrawlJob]) -> list[Crawled]: ...

    def summary(self) -> dict[str, Any]: ...


class SiteQueue:
    """Site units shared by two lanes: the main lane takes from the front, the documents' lane (its documents done)
    from the end; with ``stealing`` off, or once closed, the end gives nothing."""

    def __init__(self, units: list[Unit], stealing: bool) -> None:
        self._units = deque(units)
        self._stealing = stealing
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._stealing = False

    def drain(self, from_end: bool) -> Iterator[Unit]:
        while True:
            with self._lock:
                if not self._units or (from_end and not self._stealing):
                    return
                unit = self._units.pop() if from_end else self._units.popleft()
            yield unit


class Builder:
    """Runs a manifest's units in one runtime, recording each; ``progress`` and ``say`` report to the user."""

    def __init__(self, manifest: Manifest, settings: Settings, out: Path, progress: ProgressFactory, say: Callable[[str], None], remote: RemoteWork | None = None) -> None:
        self.manifest, self.settings, self.out, self.remote = manifest, settings, out, remote
        self.progress, self.say = progress, say
        self.dir = build_dir(out, manifest)
        self.units = self.dir / "units"
        self.run_id = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        self._runtime: Runtime | None = None
        self.beside = False
        self.plan = plan(manifest)
        self._check_families()

    def _check_families(self) -> None:
        from ..generate.registry import generators

        known = set(generators.names())
        for i, source in enumerate(self.manifest.sources):
            unknown = [g for g in source.generators if g not in known]
            if unknown:
                raise InputError(f"manifest: source[{i}] ({source.name!r}).generators: unknown {', '.join(map(repr, unknown))}; choose from {', '.join(sorted(known))}")

    @property
    def runtime(self) -> Runtime:
        """The build's runtime, made on first need (an unchanged re-run never loads Chromium or the embedder)."""
        if self._runtime is None:
            from ..runtime import Runtime

            self._runtime = Runtime(self.settings, screenshots=False)
        return self._runtime

    def record_path(self, name: str) -> Path:
        return self.units / f"{name}.json"

    def tasks_path(self, name: str) -> Path:
        return self.units / f"{name}.tasks.jsonl"

    def record(self, name: str) -> UnitRecord | None:
        """The unit's record, or None (none yet, or unreadable: the unit is redone)."""
        path = self.record_path(name)
        try:
            return UnitRecord.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None

    def finished(self, unit: Unit, stamp: str) -> UnitRecord | None:
        """The unit's record when it is done with this stamp and its tasks file is intact."""
        rec = self.record(unit.name)
        if rec is None or rec.status != "done" or rec.stamp != stamp:
            return None
        path = self.tasks_path(unit.name)
        return rec if path.is_file() and file_sha256(path) == rec.tasks_sha256 else None

    def unit_tasks(self, name: str) -> list[Task]:
        """A finished unit's tasks, in its order."""
        lines = self.tasks_path(name).read_text(encoding="utf-8").splitlines()
        return [Task.model_validate_json(line) for line in lines if line.strip()]

    def _log(self, event: str, name: str, **fields: Any) -> None:
        beside = {"beside": True} if self.beside else {}  # built in the documents' thread, beside the sites
        append_jsonl(self.dir / "log.jsonl", {"run": self.run_id, "unit": name, "event": event, **beside, **fields})

    # -- running -----------------------------------------------------------------------------

    def run(self) -> list[UnitOutcome]:
        """Every unit: skipped when finished with the same stamp, else built (or recorded as failed); outcomes in plan order.

        When documents and sites both need building, the documents are built in a thread of
        their own beside the sites (:meth:`_beside`): a site's crawl and replays leave the CPU
        idle half the time, which parsing and embedding fill. With its documents done, that
        thread takes sites from the end of the queue while this one takes them from the front
        (local executor only); compositions come last, once every site is built.
        """
        self.units.mkdir(parents=True, exist_ok=True)
        documents = [u for u in self.plan if u.kind == "document"]
        sites = [u for u in self.plan if u.kind == "site"]
        composes = [u for u in self.plan if u.kind not in ("document", "site")]
        outcomes: dict[str, UnitOutcome] = {}
        lane = self._beside() if self._due(documents) and self._due(sites) else None
        try:
            if lane is None:
                for unit in self.plan:
                    outcomes[unit.name] = self._unit(unit)
            else:
                queue = SiteQueue(sites, stealing=self.remote is None)
                with ThreadPoolExecutor(1, thread_name_prefix="build-documents") as pool:
                    built = pool.submit(lambda: [lane._unit(u) for u in documents] + [lane._unit(u) for u in queue.drain(from_end=True)])
                    try:
                        for unit in queue.drain(from_end=False):
                            outcomes[unit.name] = self._unit(unit)
                    finally:
                        queue.close()  # a failure here leaves the lane its documents only
                        outcomes.update((o.name, o) for o in built.result())
                for unit in composes:
                    outcomes[unit.name] = self._unit(unit)
        finally:
            for runtime in (self._runtime, lane._runtime if lane is not None else None):
                if runtime is not None:
                    runtime.run(self._nothing)  # closes the browser
        return [outcomes[u.name] for u in self.plan]

    def _due(self, units: list[Unit]) -> bool:
        """Whether any of these (document or site) units is not finished with its current stamp."""
        return any(self.finished(u, unit_stamp(self.manifest, u.source, self.settings)) is None for u in units)

    def _beside(self) -> Builder:
        """A builder for the documents, beside this one: a runtime of its own that shares this one's Chroma client (opened
        here, once) and waits for the workspace's graph lock as long as a crawl holds it; its progress as lines."""
        if self._runtime is None:  # a crawl holds the graph lock throughout: each lane waits for the other's
            self.settings = self.settings.model_copy(update={"lock_timeout": 3600.0})
        lane = copy.copy(self)
        lane.beside = True
        lane.settings = self.settings.model_copy(update={"lock_timeout": 3600.0})
        lane._runtime = None
        lane.progress = self._progress_said
        vectors = self.runtime.graphs.vectors
        _ = vectors.client
        lane.runtime.graphs.vectors = vectors
        return lane

    @contextmanager
    def _progress_said(self, label: str, total: float | None) -> Iterator[ProgressFn]:
        """Progress for work beside the main display, as two lines: the label, then ``label: done in N s`` (a second live bar would fight the first)."""
        self.say(label)
        start = time.monotonic()
        yield lambda done, total, description: None
        self.say(f"{label}: done in {time.monotonic() - start:.0f} s")

    @staticmethod
    async def _nothing() -> None:
        return None

    def _unit(self, unit: Unit) -> UnitOutcome:
        site = self.record(unit.source.name) if unit.compose is not None else None
        stamp = unit_stamp(self.manifest, unit.source, self.settings, unit.compose, site)
        done = self.finished(unit, stamp)
        if done is not None:
            self._log("skipped", unit.name, stamp=stamp)
            self.say(f"build {unit.name}: unchanged, {len(done.task_ids)} tasks (skipped)")
            return UnitOutcome(name=unit.name, action="skipped", tasks=len(done.task_ids))
        self._log("started", unit.name, stamp=stamp)
        start = time.monotonic()
        rec = UnitRecord(name=unit.name, kind=unit.kind, stamp=stamp, status="done")
        try:
            tasks = self._compose(unit, site, rec) if unit.compose is not None else self._build(unit.source, rec)
        except Exception as exc:  # any failure of one source is recorded with its reason; the others go on
            reason = str(exc) if isinstance(exc, TaskloomError) and str(exc).strip() else f"{type(exc).__name__}: {exc}"
            rec.status, rec.reason, rec.finished = "failed", " ".join(reason.split())[:2000], datetime.now(UTC).isoformat(timespec="seconds")
            atomic_write_json(self.record_path(unit.name), rec.model_dump(mode="json"))
            self._log("failed", unit.name, stamp=stamp, reason=rec.reason)
            self.say(f"build {unit.name}: failed: {rec.reason}")
            return UnitOutcome(name=unit.name, action="failed", reason=rec.reason, seconds=round(time.monotonic() - start, 2))
        text = "".join(t.model_dump_json() + "\n" for t in tasks)
        atomic_write_text(self.tasks_path(unit.name), text)
        rec.task_ids = [t.id for t in tasks]
        rec.tasks_sha256 = hashlib.sha256(text.encode()).hexdigest()
        rec.finished = datetime.now(UTC).isoformat(timespec="seconds")
        atomic_write_json(self.record_path(unit.name), rec.model_dump(mode="json"))  # the commit point of the unit
        seconds = round(time.monotonic() - start, 2)
        self._log("done", unit.name, stamp=stamp, tasks=len(tasks), seconds=seconds)
        self.say(f"build {unit.name}: done, {len(tasks)} tasks in {seconds:g} s")
        return UnitOutcome(name=unit.name, action="built", tasks=len(tasks), seconds=seconds)

    def _compose(self, unit: Unit, site: UnitRecord | None, rec: UnitRecord) -> list[Task]:
        """Compose over a built site's graph (its site served again); fills ``rec``; returns the composite tasks."""
        source, entry = unit.source, unit.compose
        assert entry is not None and source.start_url is not None
        if site is None or site.status != "done" or not site.graphs:
            raise InputError(f"its site unit {source.name!r} is not built" + (f" ({site.reason})" if site is not None and site.reason else ""))
        graph = site.graphs[0]
        rec.graphs.append(graph)
        seed = source.seed if source.seed is not None else self.manifest.dataset.seed
        start = time.monotonic()
        with self._fresh_state(source), served(source.serve, source.start_url, self.manifest.base, source.ready_timeout), self.progress(f"compose {unit.name}", None):
            service = self.runtime.task_service()

            async def go() -> Any:
                return await service.compose(graph.graph_id, entry.mode, entry.count, entry.levels, 3, None, seed, self.manifest.dataset.use_llm)

            result = self.runtime.run(go)
        family = f"compose-{entry.mode}"
        drops: dict[str, int] = {}
        for _, why in result.dropped:
            key = drop_reason("compose", why)
            drops[key] = drops.get(key, 0) + 1
        for failed in result.failed_proposals:  # walk: proposed subtasks that did not verify
            key = drop_reason("compose", f"level {failed.level} proposal did not verify")
            drops[key] = drops.get(key, 0) + 1
        if not result.task_ids and result.reason:
            drops[drop_reason("compose", result.reason)] = drops.get(drop_reason("compose", result.reason), 0) + 1
        kept = len(result.task_ids)
        rec.reports.append(FamilyReport(graph_id=graph.graph_id, family=family, candidates=kept + len(result.dropped) + len(result.failed_proposals), kept=kept, drops=drops))
        tasks = [self.runtime.tasks.load(task_id) for task_id in result.task_ids]
        rec.families = {t.id: family for t in tasks}
        rec.seconds["compose"] = round(time.monotonic() - start, 2)
        return tasks

    @contextmanager
    def _fresh_state(self, source: Source) -> Iterator[None]:
        """A site with ``state``: a fresh copy of its seed, and again before every episode (replays) while the unit runs."""
        if source.state is None or source.state_seed is None:
            yield
            return
        from ..environment.appstate import StateFolder

        seed = (self.manifest.base / source.state_seed).resolve()
        if not seed.is_dir():
            raise InputError(f"state_seed {seed} is not a folder")
        folder = StateFolder.copy_of(seed, (self.manifest.base / source.state).resolve())
        self.runtime.episodes.state_reset = folder.reset
        try:
            yield
        finally:
            self.runtime.episodes.state_reset = None

    def _build(self, source: Source, rec: UnitRecord) -> list[Task]:
        """Ingest or crawl the source, then generate from its graphs; fills ``rec``; returns the tasks."""
        if source.kind == "document":
            start = time.monotonic()
            for path in self.manifest.document_files(source):
                with self.progress(f"ingest {source.name}: {path.name}", None) as update:

                    def on_progress(done: float, total: float, message: str, update: ProgressFn = update) -> None:
                        update(done, total, message.split(" ")[0])

                    report = self.runtime.graphs.ingest_document(path, None, on_progress)
                rec.graphs.append(GraphBuilt(graph_id=report.graph_id, origin=str(path), kind="document", nodes=report.nodes))
            rec.seconds["ingest"] = round(time.monotonic() - start, 2)
            return self._generate(source, rec)
        assert source.start_url is not None
        with self._fresh_state(source), served(source.serve, source.start_url, self.manifest.base, source.ready_timeout):
            start = time.monotonic()
            with self.progress(f"crawl {source.name}", source.max_pages) as update:

                def crawl_progress(done: float, total: float, message: str) -> None:
                    update(done, total, message.split(" ")[0])

                async def crawl() -> Any:
                    assert source.start_url is not None
                    graphs = self.runtime.graphs
                    if self.remote is None:
                        return await graphs.ingest_website(source.start_url, source.max_pages, source.max_depth, source.allowed_domains, 2, None, crawl_progress)
                    options = graphs.crawl_options(source.start_url, source.max_pages, source.max_depth, source.allowed_domains, 2)
                    (site,) = await graphs.ingest_websites([options], self.remote.crawl_all, crawl_progress)
                    if site.report is None:
                        raise TaskloomError(f"crawling {source.start_url} failed: {site.error}")
                    return site.report

                report = self.runtime.run(crawl)
            rec.graphs.append(GraphBuilt(graph_id=report.graph_id, origin=source.start_url, kind="web", nodes=report.nodes))
            rec.seconds["crawl"] = round(time.monotonic() - start, 2)
            return self._generate(source, rec)

    def _generate(self, source: Source, rec: UnitRecord) -> list[Task]:
        start = time.monotonic()
        seed = source.seed if source.seed is not None else self.manifest.dataset.seed
        service = self.runtime.task_service()
        replay = self.remote.replay if self.remote is not None and source.state is None else None  # a stateful site replays here
        tasks: dict[str, Task] = {}
        for graph in rec.graphs:
            families: list[str | None] = [*source.generators] or [None]
            for family in families:
                label = f"generate {source.name}: {graph.graph_id}" + (f" ({family})" if family else "")
                with self.progress(label, None):

                    async def go(graph_id: str = graph.graph_id, family: str | None = family) -> Any:
                        return await service.generate(graph_id, source.count, seed=seed, use_llm=self.manifest.dataset.use_llm, generator=family, replay=replay)

                    result = self.runtime.run(go)
                name = result.generator.name if result.generator is not None else (family or "default")
                report = result.report
                rec.reports.append(FamilyReport(graph_id=graph.graph_id, family=name, candidates=report.candidates, kept=report.kept, stages=report.stages, drops=_drops(report), unverified=report.unverified))
                for task_id in result.task_ids:
                    if task_id not in tasks:
                        tasks[task_id] = self.runtime.tasks.load(task_id)
                        rec.families[task_id] = name
        rec.seconds["generate"] = round(time.monotonic() - start, 2)
        return list(tasks.values())

    def records(self) -> Iterator[tuple[Unit, UnitRecord | None]]:
        """Each unit with its current record (None when it has none)."""
        for unit in self.plan:
            yield unit, self.record(unit.name)

"""The workspace write lock, cleanup after a failed ingest, graph delete without a graph file, and gc."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from taskloom.tools.errors import NotFoundError
from taskloom.tools.graph.gc import TMP_MIN_AGE, collect_garbage
from taskloom.tools.graph.service import GraphService
from taskloom.tools.security.disk import DiskFullError, disk_full
from taskloom.tools.security.lock import WorkspaceBusyError, WorkspaceLock, read_holder
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

DOC = """# Field notes

## Rivers

The northern river floods every spring after the snow melts in the high valleys, and the
survey team measures its depth at three stations along the lower course each morning.

## Birds

Herons nest in the reed beds near the second station; the team counts nests in May and
records how many chicks leave them before the first week of July.
"""


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "field-notes.md"
    path.write_text(DOC, encoding="utf-8")
    return path


def test_a_second_writer_waits_then_gets_a_clear_busy_error(tmp_path: Path) -> None:
    first = WorkspaceLock(tmp_path, "graphs", 0.0, "ingest a.pdf").acquire()
    holder = read_holder(first.path)
    assert holder is not None and holder.pid == os.getpid() and holder.what == "ingest a.pdf"
    clock = time.monotonic()
    with pytest.raises(WorkspaceBusyError) as err:
        WorkspaceLock(tmp_path, "graphs", 0.5, "crawl b").acquire()
    assert time.monotonic() - clock >= 0.5, "it waited for the lock before giving up"
    message = str(err.value)
    assert message.startswith("workspace busy: ingest a.pdf") and f"pid {os.getpid()}" in message and "retry" in message
    with WorkspaceLock(tmp_path, "tasks", 0.0):  # another lock of the same workspace is independent
        pass
    first.release()
    assert read_holder(first.path) is None, "a released lock keeps no holder record"
    with WorkspaceLock(tmp_path, "graphs", 0.0) as again:
        assert again.stale is None


def test_a_waiting_writer_gets_the_lock_when_it_is_released(tmp_path: Path) -> None:
    first = WorkspaceLock(tmp_path, "graphs", 0.0).acquire()
    threading.Timer(0.3, first.release).start()
    with WorkspaceLock(tmp_path, "graphs", 5.0) as second:
        assert second.held


def test_a_record_left_by_a_dead_holder_is_reported_as_stale(tmp_path: Path) -> None:
    path = tmp_path / ".locks" / "graphs.lock"
    path.parent.mkdir()
    path.write_text('{"pid": 999999, "command": "taskloom ingest x.pdf", "what": "ingest x.pdf", "since": "2024-01-01T00:00:00+00:00"}')
    with WorkspaceLock(tmp_path, "graphs", 0.0) as lock:  # not held by anyone: flock is free
        assert lock.stale is not None and lock.stale.pid == 999999


def test_task_writes_take_the_tasks_lock(tmp_path: Path) -> None:
    store = TaskStore(Workspace(tmp_path), lock_timeout=0.2)
    (tmp_path / "tasks" / "t1.json").write_text("{}")
    with WorkspaceLock(tmp_path, "tasks", 0.0, "gc"):
        with pytest.raises(WorkspaceBusyError, match="workspace busy: gc"):
            store.delete("t1")
    store.delete("t1")
    assert not (tmp_path / "tasks" / "t1.json").exists()


def test_concurrent_ingests_in_one_process_both_succeed(settings: Settings, doc: Path) -> None:
    service = GraphService(settings)
    results: list[str] = []
    failures: list[BaseException] = []

    def ingest() -> None:
        try:
            results.append(service.ingest_document(doc).graph_id)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=ingest) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and len(set(results)) == 1
    assert [c.graph_id for c in service.vectors.collections()] == results[:1]
    assert collect_garbage(settings, dry_run=True).found == 0


def test_five_concurrent_ingests_parse_and_embed_side_by_side_and_all_finish(settings: Settings, tmp_path: Path) -> None:
    """Each ingest waits, in its first progress report (after parsing), until all five are there: only
    possible when none holds the workspace lock while it parses and embeds."""
    docs = []
    for i in range(5):
        doc = tmp_path / f"notes-{i}.md"
        doc.write_text(DOC.replace("Field notes", f"Field notes {i}"), encoding="utf-8")
        docs.append(doc)
    everyone = threading.Barrier(5, timeout=30)
    service = GraphService(settings.model_copy(update={"lock_timeout": 10.0}))
    results: list[str] = []
    failures: list[BaseException] = []

    def ingest(doc: Path) -> None:
        met = False

        def progress(done: float, total: float, message: str) -> None:
            nonlocal met
            if not met:
                met = True
                assert read_holder(service.workspace.root / ".locks" / "graphs.lock") is None, "nobody writes yet"
                everyone.wait()

        try:
            results.append(service.ingest_document(doc, progress=progress).graph_id)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=ingest, args=(d,)) for d in docs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    assert len(set(results)) == 5 and sorted(m.id for m in service.list_graphs()) == sorted(results)
    assert sorted(c.graph_id or "" for c in service.vectors.collections()) == sorted(results)
    assert collect_garbage(settings, dry_run=True).found == 0


def test_a_failed_ingest_leaves_no_vectors_behind(settings: Settings, doc: Path) -> None:
    service = GraphService(settings)
    graph_id = service.ingest_document(doc).graph_id
    service.delete(graph_id)
    service.store.path(graph_id).mkdir()  # the graph file cannot be written: a real OSError at the very end
    with pytest.raises(OSError):
        service.ingest_document(doc)
    assert service.vectors.collections() == [], "the vectors written before the failure were removed"
    assert service.vectors.orphan_segment_dirs() == []
    service.store.path(graph_id).rmdir()
    assert service.ingest_document(doc).graph_id == graph_id


def test_graph_delete_removes_vectors_and_screenshots_without_the_graph_file(settings: Settings, doc: Path) -> None:
    service = GraphService(settings)
    graph_id = service.ingest_document(doc).graph_id
    (service.store.assets_dir(graph_id) / "pages").mkdir(parents=True)
    service.store.path(graph_id).unlink()  # as after a crash between the vectors and the graph file
    service.delete(graph_id)
    assert not service.vectors.has(graph_id) and not service.store.assets_dir(graph_id).exists()
    assert service.vectors.orphan_segment_dirs() == [], "chroma's index folder went with the collection"
    with pytest.raises(NotFoundError, match="no graph with id"):
        service.delete(graph_id)


def test_gc_lists_then_removes_debris_and_keeps_what_is_in_use(settings: Settings, doc: Path) -> None:
    service = GraphService(settings)
    kept = service.ingest_document(doc).graph_id
    orphan = service.ingest_document(doc, name="orphan").graph_id
    service.store.path(orphan).unlink()  # vectors without a graph
    shots = service.store.assets_dir("site-0000aaaa") / "pages"
    shots.mkdir(parents=True)
    (shots / "p1.png").write_bytes(b"\x89PNG" + b"0" * 100)
    (service.store.assets_dir(kept) / "pages").mkdir(parents=True)  # belongs to a stored graph: kept
    tmp_graph = service.workspace.graphs / ".x.json.abc123.tmp"
    tmp_graph.write_text("{")
    old_run_tmp = service.workspace.runs / "r1" / ".results.jsonl.q.tmp"
    old_run_tmp.parent.mkdir()
    old_run_tmp.write_text("{")
    past = time.time() - TMP_MIN_AGE - 5
    os.utime(old_run_tmp, (past, past))
    fresh_run_tmp = service.workspace.runs / "r1" / ".summary.json.w.tmp"
    fresh_run_tmp.write_text("{")  # a run may be writing it right now: not debris yet

    listed = collect_garbage(settings, dry_run=True)
    kinds = sorted(d.kind for d in listed.debris)
    assert kinds == ["collection", "screenshots", "tmp", "tmp"], listed.debris
    assert listed.removed == 0 and tmp_graph.exists() and shots.exists() and service.vectors.has(orphan)
    assert str(fresh_run_tmp) not in {d.target for d in listed.debris}

    done = collect_garbage(settings)
    assert done.found == done.removed == 4 and not done.errors and done.freed_bytes > 100
    assert not service.vectors.has(orphan) and not shots.parent.exists() and not tmp_graph.exists() and not old_run_tmp.exists()
    assert fresh_run_tmp.exists() and service.vectors.has(kept) and service.store.assets_dir(kept).exists()
    assert [m.id for m in service.list_graphs()] == [kept]
    assert service.search(kept, "heron nests", k=1)[0].node_id
    assert collect_garbage(settings, dry_run=True).found == 0


def test_deleting_a_graph_gives_its_space_back_and_gc_compacts_an_older_store(settings: Settings, doc: Path, tmp_path: Path) -> None:
    big = tmp_path / "long-notes.md"
    big.write_text("\n\n".join(f"## Part {i}\n\n" + DOC.split("## Rivers")[1] * 3 for i in range(60)), encoding="utf-8")
    service = GraphService(settings)
    db = service.vectors.path / "chroma.sqlite3"
    service.ingest_document(doc)
    graph_id = service.ingest_document(big).graph_id
    full = db.stat().st_size
    service.delete(graph_id)
    assert db.stat().st_size < full // 2, "a delete gives the vectors' space back to the disk"
    assert service.vectors.free_bytes() == 0

    older = Settings(workspace=tmp_path / "older", embedder="hashing", allow_roots=settings.allow_roots)
    legacy = Workspace(older.workspace).chroma / "chroma.sqlite3"  # a store made before: SQLite's default, no auto-vacuum
    with sqlite3.connect(legacy) as con:
        con.execute("CREATE TABLE made_before (x)")
        con.execute("DROP TABLE made_before")
    old = GraphService(older)
    old.ingest_document(doc)
    old.delete(old.ingest_document(big).graph_id)
    left = old.vectors.free_bytes()
    assert left > 0, "an older store keeps the deleted vectors' pages"
    before = legacy.stat().st_size
    report = collect_garbage(older)
    assert report.vector_free_bytes == left and report.compacted_bytes == before - legacy.stat().st_size > left // 2, report
    assert report.found == 0 and not report.errors and old.vectors.free_bytes() == 0
    assert old.search(old.list_graphs()[0].id, "heron nests", k=1), "the store still answers after compacting"
    with sqlite3.connect(legacy) as con:
        assert con.execute("PRAGMA auto_vacuum").fetchone()[0] == 2, "converted: later deletes give space back themselves"


def test_gc_waits_for_a_writer_and_reports_busy(settings: Settings) -> None:
    Workspace(settings.workspace)
    with WorkspaceLock(settings.workspace.resolve(), "graphs", 0.0, "crawl http://x/"):
        with pytest.raises(WorkspaceBusyError, match="crawl http://x/"):
            collect_garbage(settings.model_copy(update={"lock_timeout": 0.2}), dry_run=True)


def test_a_full_disk_is_named_with_what_was_being_written() -> None:
    err = disk_full(OSError(28, "No space left on device", "/ws/graphs/g.json"))
    assert isinstance(err, DiskFullError)
    assert str(err) == "disk full while writing /ws/graphs/g.json; free space and rerun; `taskloom gc` removes partial results"
    wrapped = RuntimeError("outer")
    wrapped.__cause__ = OSError(28, "No space left on device")
    assert disk_full(wrapped, "the graph of a.pdf") is not None
    assert disk_full(OSError(13, "Permission denied")) is None

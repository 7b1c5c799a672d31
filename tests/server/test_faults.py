"""Faults with real processes: kill -9 mid-ingest and mid-crawl, concurrent writers, a full disk.

Each scenario checks that nothing is lost or duplicated after a rerun, that the CLI
prints no traceback, and that ``taskloom gc`` leaves no debris. (kill -9 mid-run and
resume is tested in tests/harness/test_run.py::test_a_killed_run_resumes_to_the_same_results.)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskloom.tools.security.lock import WorkspaceLock, read_holder

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
LMER = ROOT / "tests" / "data" / "cache" / "lmer.pdf"
SITE = ROOT / "examples" / "site"
# Small documents where the scenario does not depend on a long parse (the lock tests): the same code paths, seconds less.
GUIDE_PDF = ROOT / "examples" / "documents" / "field-guide.pdf"
GUIDE_MD = ROOT / "examples" / "documents" / "field-guide.md"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off", TASKLOOM_EMBEDDER="hashing", **extra)
    return env


def _cmd(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "taskloom.server.cli", "-w", str(ws), "--allow-root", str(ROOT), *args]


def _taskloom(ws: Path, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cmd(ws, *args), env=_env(**env), cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _json(proc: subprocess.CompletedProcess[str]) -> object:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def _gc(ws: Path, dry_run: bool = False) -> dict[str, object]:
    report = _json(_taskloom(ws, "gc", *(["--dry-run"] if dry_run else [])))
    assert isinstance(report, dict)
    return report


def _graph_ids(ws: Path) -> list[str]:
    listed = _json(_taskloom(ws, "graph", "list"))
    assert isinstance(listed, list)
    return [g["id"] for g in listed]


def _kill_when(proc: subprocess.Popen[str], ready: object, delay: float, limit: float = 120) -> None:
    """SIGKILL the whole process group ``delay`` seconds after ``ready()`` holds."""
    deadline = time.monotonic() + limit
    while not ready() and proc.poll() is None:  # type: ignore[operator]
        assert time.monotonic() < deadline, "the command never started its work"
        time.sleep(0.05)
    time.sleep(delay)
    assert proc.poll() is None, "the command finished before it could be killed; the scenario did not happen"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture(scope="module", autouse=True)
def _pdfs() -> None:
    if not LMER.is_file():
        pytest.skip("test PDF missing; run tests/data/fetch-pdfs.sh")


@pytest.mark.parametrize("phase", ["parse", "write"])
def test_kill_mid_ingest_then_rerun_stores_the_graph_once_and_leaves_no_debris(tmp_path: Path, phase: str) -> None:
    ws = tmp_path / "ws"
    lock = ws / ".locks" / "graphs.lock"
    proc = subprocess.Popen(_cmd(ws, "ingest", str(LMER)), env=_env(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, text=True)
    if phase == "parse":  # parsing the PDF takes seconds, before any write
        _kill_when(proc, lambda: (ws / "graphs").is_dir(), 1.5)
    else:  # the lock is held only while the vectors and the graph file are written: kill in the middle of that
        _kill_when(proc, lambda: (h := read_holder(lock)) is not None and h.what.startswith("ingest"), 0.05)
    assert _graph_ids(ws) == [], "a killed ingest stores no graph"
    _gc(ws)  # whatever the kill left (vectors without a graph, a stale lock record) goes now
    assert _gc(ws, dry_run=True)["found"] == 0
    report = _json(_taskloom(ws, "ingest", str(LMER)))
    assert isinstance(report, dict) and report["embedded"] > 100
    assert _graph_ids(ws) == [report["graph_id"]], "the graph is stored exactly once"
    assert _gc(ws, dry_run=True)["found"] == 0


def test_rerun_after_a_kill_without_gc_also_leaves_no_debris(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    lock = ws / ".locks" / "graphs.lock"
    proc = subprocess.Popen(_cmd(ws, "ingest", str(LMER)), env=_env(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, text=True)
    _kill_when(proc, lambda: (ws / "chroma" / "chroma.sqlite3").is_file() and read_holder(lock) is not None, 0.1)
    report = _json(_taskloom(ws, "ingest", str(LMER)))
    assert isinstance(report, dict) and _graph_ids(ws) == [report["graph_id"]]
    assert _gc(ws, dry_run=True)["found"] == 0, "the rerun replaced the killed ingest's vectors and lock record"


def test_five_concurrent_ingests_all_finish(tmp_path: Path) -> None:
    """Five processes ingest into one workspace at once; each holds the lock only while it writes, so none is busy."""
    ws = tmp_path / "ws"
    docs = [(GUIDE_PDF, "pdf-a"), (GUIDE_MD, "md-a"), (GUIDE_PDF, "pdf-b"), (GUIDE_MD, "md-b"), (GUIDE_PDF, "pdf-a")]  # the last one again: same graph
    procs = [subprocess.Popen(_cmd(ws, "ingest", str(d), "--name", n), env=_env(), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for d, n in docs]
    results = [(p.wait(timeout=600), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    ids = []
    for code, out, err in results:
        assert code == 0 and "Traceback" not in err, err
        ids.append(json.loads(out)["graph_id"])
    assert len(set(ids)) == 4 and sorted(_graph_ids(ws)) == sorted(set(ids)), "every ingest is stored, once"
    assert _gc(ws, dry_run=True)["found"] == 0


def test_a_writer_that_cannot_wait_is_told_who_holds_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys,time; from pathlib import Path; from taskloom.tools.security.lock import WorkspaceLock\n"
         "lock = WorkspaceLock(Path(sys.argv[1]), 'graphs', 0, 'crawl http://127.0.0.1:1/').acquire(); print('held', flush=True); time.sleep(60)", str(ws)],
        stdout=subprocess.PIPE, text=True, env=_env(), cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        proc = _taskloom(ws, "ingest", str(GUIDE_PDF), TASKLOOM_LOCK_TIMEOUT="1")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "workspace busy: crawl http://127.0.0.1:1/" in proc.stderr and f"pid {holder.pid}" in proc.stderr, proc.stderr
    finally:
        holder.kill()
        holder.wait()
    with WorkspaceLock(ws, "graphs", 5.0) as lock:  # released by the kernel when its holder died
        assert lock.stale is not None and lock.stale.pid == holder.pid
    assert _json(_taskloom(ws, "ingest", str(GUIDE_PDF)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def site() -> Iterator[str]:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", "-d", str(SITE), "-b", "127.0.0.1", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "http.server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.kill()
        server.wait()


def test_kill_mid_crawl_then_gc_leaves_no_orphan_screenshots(tmp_path: Path, site: str) -> None:
    ws = tmp_path / "ws"
    graphs = ws / "graphs"
    proc = subprocess.Popen(_cmd(ws, "crawl", site, "--max-pages", "30"), env=_env(TASKLOOM_CRAWL_DELAY="0.3"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, text=True)
    _kill_when(proc, lambda: any(graphs.glob("*.assets/pages/*.jpg")), 0.3)
    assert _graph_ids(ws) == []
    listed = _gc(ws, dry_run=True)
    assert [d["kind"] for d in listed["debris"] if d["kind"] == "screenshots"] == ["screenshots"], listed  # type: ignore[union-attr]
    removed = _gc(ws)
    assert removed["errors"] == [] and removed["removed"] == removed["found"]
    assert list(graphs.glob("*.assets")) == [], "no orphan screenshots after gc"
    assert _gc(ws, dry_run=True)["found"] == 0
    report = _json(_taskloom(ws, "crawl", site, "--max-pages", "4", timeout=300, TASKLOOM_CRAWL_DELAY="0"))
    assert isinstance(report, dict) and _graph_ids(ws) == [report["graph_id"]]
    assert [p.name for p in graphs.glob("*.assets")] == [f"{report['graph_id']}.assets"]
    assert _gc(ws, dry_run=True)["found"] == 0


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (root only)."""
    if os.geteuid() != 0:
        pytest.skip("a full disk needs a tmpfs mount, which needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("size", ["2m", "2500k"])  # the whole lmer workspace takes about 4.2 MB (3 MB of it without the embedding cache)
def test_a_full_disk_is_a_clear_error_and_gc_cleans_up(tiny_disk: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(tiny_disk)], check=True)
    ws = tiny_disk / "ws"
    proc = _taskloom(ws, "ingest", str(LMER))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "disk full while writing" in proc.stderr and "taskloom gc" in proc.stderr, proc.stderr
    assert _graph_ids(ws) == [], "graph list still works, and lists no half-written graph"
    _gc(ws, dry_run=True)  # works on the full disk
    on_full = _gc(ws)  # and removes on it: the failed ingest's vectors and their space are given back
    assert on_full["errors"] == [] and _gc(ws, dry_run=True)["found"] == 0, on_full
    assert shutil.disk_usage(tiny_disk).free > 1024 * 1024, "the space the failed ingest took is free again"
    subprocess.run(["mount", "-o", "remount,size=32m", str(tiny_disk)], check=True)  # room for the whole graph
    cleaned = _gc(ws)
    assert cleaned["errors"] == []
    assert _gc(ws, dry_run=True)["found"] == 0
    report = _json(_taskloom(ws, "ingest", str(LMER)))
    assert isinstance(report, dict) and _graph_ids(ws) == [report["graph_id"]]

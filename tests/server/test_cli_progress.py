"""Progress without a terminal: plain lines on stderr every few seconds, and none with ``--quiet``."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from taskloom.server.cli.progress import PlainProgress
from taskloom.tools.environment.site import serve_static

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "examples" / "documents" / "field-guide.pdf"
TASKLOOM = Path(sys.executable).parent / "taskloom"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_prints_the_first_update_then_at_most_one_line_per_interval_then_a_final_line() -> None:
    out, clock = io.StringIO(), Clock()
    plain = PlainProgress("ingest lmer.pdf", None, out, interval=3.0, clock=clock)
    plain.beat()
    assert out.getvalue() == "ingest lmer.pdf: working, 0 s\n"
    clock.now += 3.0
    plain.update(1, 236, "pages parsed")
    clock.now += 1.0
    plain.update(2, 236, "pages parsed")  # within the interval: kept, not printed
    plain.beat()
    clock.now += 2.5
    plain.update(120, 236, "pages parsed")
    clock.now += 40
    plain.beat()  # a silent phase still shows it is alive
    clock.now += 243.4
    plain.finish()
    assert out.getvalue().splitlines() == [
        "ingest lmer.pdf: working, 0 s",
        "ingest lmer.pdf: 1/236 (0%) pages parsed, 3 s",
        "ingest lmer.pdf: 120/236 (51%) pages parsed, 6 s",
        "ingest lmer.pdf: 120/236 (51%) pages parsed, 46 s",
        "ingest lmer.pdf: done in 4 min 50 s, 120/236 (51%) pages parsed",
    ]


def test_counts_without_a_total_and_a_final_line_without_updates() -> None:
    out, clock = io.StringIO(), Clock()
    plain = PlainProgress("generate g", None, out, clock=clock)
    plain.update(4, None, "tasks")
    clock.now += 61
    plain.finish()
    assert out.getvalue().splitlines() == ["generate g: 4 tasks, 0 s", "generate g: done in 1 min 1 s, 4 tasks"]
    quiet = io.StringIO()
    PlainProgress("compose g (dag)", None, quiet, clock=Clock()).finish()
    assert quiet.getvalue() == "compose g (dag): done in 0 s\n"


def _env(workspace: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off", **extra)
    return env


def _taskloom(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script with stdout and stderr as pipes (no terminal), as in CI or ``2> log``."""
    return subprocess.run([str(TASKLOOM), *args], env=_env(cwd / "ws", **env), cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copyfile(PDF, tmp_path / PDF.name)
    return tmp_path


@pytest.mark.integration
def test_ingest_prints_plain_progress_lines_when_stderr_is_a_pipe(folder: Path) -> None:
    done = _taskloom(folder, "ingest", PDF.name)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"ingest {PDF.name}: ")]
    # on a busy machine the heartbeat may print "working, 3 s" before the first count: only such lines may precede it
    beats = [line for line in lines if re.fullmatch(rf"ingest {PDF.name}: working, \d+ s", line)]
    assert lines[: len(beats)] == beats, lines
    assert re.fullmatch(rf"ingest {PDF.name}: \d+/\d+ \(\d+%\) (pages parsed|nodes embedded|parsed), \d+ s", lines[len(beats)]), lines
    assert re.fullmatch(rf"ingest {PDF.name}: done in \d+ s, (\d+)/\1 \(100%\) nodes embedded", lines[-1]), lines
    assert "\x1b[" not in done.stderr, "no terminal control codes in a log"
    assert json.loads(done.stdout)["graph_id"], "stdout holds the report only"


@pytest.mark.integration
def test_quiet_silences_progress_as_an_option_and_through_the_environment(folder: Path) -> None:
    for result in (_taskloom(folder, "--quiet", "ingest", PDF.name), _taskloom(folder, "ingest", PDF.name, "--name", "again", TASKLOOM_QUIET="1")):
        assert result.returncode == 0, result.stderr
        assert "ingest " not in result.stderr and "done in" not in result.stderr, result.stderr
        assert json.loads(result.stdout)["graph_id"]


@pytest.mark.integration
def test_generate_and_run_print_progress_lines_too(folder: Path) -> None:
    graph_id = json.loads(_taskloom(folder, "-q", "ingest", PDF.name).stdout)["graph_id"]
    generated = _taskloom(folder, "generate", graph_id, "--count", "2")
    assert generated.returncode == 0, generated.stderr
    assert re.search(rf"^generate {graph_id}: done in \d+ s$", generated.stderr, re.M), generated.stderr
    ran = _taskloom(folder, "run", "--agent", "oracle", "--kind", "document")
    assert ran.returncode == 0, ran.stderr
    assert re.search(r"^run: (working|[12]/2 \(\d+%\) episodes, last: oracle on doc-\w+ ok), \d+ s$", ran.stderr, re.M), ran.stderr
    assert re.search(r"^run: done in \d+ s, 2/2 \(100%\) episodes", ran.stderr, re.M), ran.stderr
    quiet = _taskloom(folder, "--quiet", "run", "--agent", "oracle", "--kind", "document", "--run-id", "quiet-run")
    assert quiet.returncode == 0 and "run: " not in quiet.stderr, quiet.stderr


@pytest.mark.integration
def test_crawl_prints_progress_lines(folder: Path) -> None:
    with serve_static() as site:
        done = _taskloom(folder, "crawl", site.url, "--max-pages", "3", "--contexts", "1")
    assert done.returncode == 0, done.stderr
    assert re.search(rf"^crawl {re.escape(site.url)}: done in \d+ s, \d+/\d+ \(\d+%\) (pages crawled|nodes embedded)$", done.stderr, re.M), done.stderr

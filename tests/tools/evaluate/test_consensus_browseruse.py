"""browser-use run histories, written by browser-use itself (tests/data/build-browser-use-logs.sh), imported into a consensus graph.

The three runs (two agents, one task; the second run of "direct" fails) were made by browser-use
0.13.14 driving Debian's chromium with a scripted TEST DOUBLE model; nothing in them is written
by hand. Their ports differ from run to run of the build, so URLs are compared by path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from taskloom.tools.evaluate.consensus import build_consensus
from taskloom.tools.evaluate.consensus.browseruse import history_actions
from taskloom.tools.evaluate.consensus.reports import ImportLog, ImportOptions
from taskloom.tools.evaluate.service import EvaluationService
from taskloom.tools.workspace import Workspace

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "data" / "cache" / "browser-use-logs" / "runs"


@pytest.fixture(scope="module")
def logs() -> Path:
    if not (LOGS.parent / "VERSION").is_file():
        subprocess.run(["bash", str(ROOT / "tests" / "data" / "build-browser-use-logs.sh")], check=True)
    return LOGS


def _path(url: str | None) -> str:
    parts = urlsplit(url or "")
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_real_browser_use_histories_import_by_role_and_name(logs: Path, tmp_path: Path) -> None:
    service = EvaluationService(Workspace(tmp_path / "ws"))
    imported = service.import_trajectories("browser-use", [logs], ImportOptions(unknown="error"))
    report, runs = imported.report, {t.id: t for t in imported.trajectories}
    assert report.layouts == {"<root>/<agent>/<task>/<run>/history.json": 3} and report.verdict_sources == {"agent": 3}
    assert {k: t.success for k, t in runs.items()} == {"detour/find-dune#0": True, "direct/find-dune#0": True, "direct/find-dune#1": False}
    direct = runs["direct/find-dune#0"].actions
    assert [a.text for a in direct][1:] == [
        "type(text='Dune', element='Search')", "click(text='Go', element='button')", "select(option='Year', element='Sort')", "answer(text='Sorted by year.')",
    ]  # the element's tag and accessible name as browser-use saw them, not its per-state index
    assert [_path(a.url) for a in direct] == ["/index.html", "/index.html", "/index.html", "/books.html?q=Dune", "/books.html?q=Dune"]
    assert [a.kind for a in runs["detour/find-dune#0"].actions] == ["navigate", "click", "back", "type", "click", "answer"]
    graph = build_consensus(imported.trajectories)
    go = next(n for n in graph.nodes if n.label.startswith("click(text='Go', element='button')"))
    assert go.trajectories == 2 and go.agents == ["detour", "direct"]  # browser-use gave the button index 4 in one run, 57 in the other

    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"direct/find-dune#0": 0}), encoding="utf-8")
    judged = service.import_trajectories("browser-use", [logs], ImportOptions(unknown="error", labels=labels)).report
    assert judged.verdict_sources == {"agent": 2, "judge": 1} and judged.outcomes == {"success": 1, "failure": 2}


def test_read_only_actions_are_observations_and_indices_never_identify() -> None:
    log = ImportLog(ImportOptions())
    steps = [
        {"model_output": {"action": [{"extract": {"query": "prices"}}, {"click": {"index": 7}}]},
         "state": {"url": "http://shop.test/a", "interacted_element": [None, {"node_name": "A", "attributes": {"href": "/b"}, "ax_name": "Next"}]}},
        {"model_output": None, "state": {"url": "http://shop.test/b"}},  # the model failed to answer: no action
        {"model_output": {"action": [{"click": {"index": 7}}, {"scroll": {"down": False, "pages": 1}}]},
         "state": {"url": "http://shop.test/b", "interacted_element": [{"node_name": "INPUT", "attributes": {"type": "checkbox", "aria-label": "In stock"}}]}},
    ]  # fmt: skip
    acts = history_actions(steps, log, "history.json")
    assert [(a.text, a.url) for a in acts] == [
        ("click(text='Next', element='link')", "http://shop.test/a"), ("click(text='In stock', element='checkbox')", "http://shop.test/b"),
        ("scroll(direction='up')", "http://shop.test/b"),
    ]
    assert log.observations == 1

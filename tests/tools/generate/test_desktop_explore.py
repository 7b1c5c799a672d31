"""`taskloom explore-app`: a real application's menus and dialogs explored into a stored, searchable graph, its files untouched.

Needs Xvfb, dbus, openbox, mousepad and Debian's python3 with gir1.2-atspi-2.0 (the Makefile's `system` target installs them).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.errors import InputError
from taskloom.tools.generate.desktop.explore import ExploreReport, explore_and_store, seeded_files
from taskloom.tools.graph.model import EdgeType, KnowledgeGraph, NodeType
from taskloom.tools.graph.service import GraphService
from taskloom.tools.generate.service import TaskService
from taskloom.tools.settings import Settings

ATSPI = os.path.exists(DEBIAN_PYTHON) and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "xprop", "mousepad")) or not ATSPI, reason="needs Xvfb, dbus, openbox, mousepad, gir1.2-atspi-2.0"),
]


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> tuple[GraphService, ExploreReport, KnowledgeGraph]:
    service = GraphService(Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing"))
    report = explore_and_store(service, "mousepad", max_dialogs=2)
    return service, report, service.load("app-mousepad")


def test_menus_entries_and_dialogs_become_a_graph_without_touching_the_files(explored: tuple[GraphService, ExploreReport, KnowledgeGraph]) -> None:
    _, report, kg = explored
    assert report.files_unchanged and report.menus >= 10 and report.entries >= 60 and report.dialogs == 2, report
    assert any("budget of 2 dialogs" in why for _, why in report.not_opened)  # the other dialog entries are listed, not silently skipped
    assert kg.meta.kind == "desktop" and kg.meta.stats["embedded"] == report.embedded == len(kg)
    assert kg.node("entry:File > Save As...").attrs["path"] == ["File", "Save As..."] and "opens a dialog" in kg.node("entry:File > Save As...").text
    assert "not run while exploring" in kg.node("entry:File > Quit").text  # an action: recorded, never activated
    opened = [(e.source, e.target) for e in kg.edges() if e.type == EdgeType.OPENS]
    assert ("entry:File > Open...", "dialog:Open File") in opened and len(opened) == 2
    controls = [n for n in kg.nodes() if n.id.startswith("dialog:Open File/")]
    assert any(n.attrs["role"] == "button" and n.id.endswith(":Cancel") for n in controls) and kg.node("dialog:Open File").type == NodeType.MODAL
    assert not [n.id for n in kg.nodes() if "/tmp/" in n.text or "\n" in n.text]  # the session's home reads as ~, names on one line


def test_the_graph_is_searchable_and_the_exploration_recorded(explored: tuple[GraphService, ExploreReport, KnowledgeGraph]) -> None:
    service, report, _ = explored
    hits = [h.node_id for h in service.search("app-mousepad", "save the file under another name", k=3)]
    assert hits[0] in ("entry:File > Save As...", "dialog:Save As"), hits
    trajectory = load_trajectory(Path(report.trajectory))
    menus = [a for a in trajectory.actions if a.name == "select_menu"]
    assert len(menus) >= report.menus + report.dialogs and trajectory.closed and trajectory.episode.agent == "explorer"
    with pytest.raises(InputError, match="gnumeric, mousepad, pcmanfm"):
        seeded_files("libreoffice")
    tasks = TaskService(service)
    with pytest.raises(InputError, match="generated with desktop:mousepad"):
        asyncio.run(tasks.generate("app-mousepad", count=1, use_llm=False))

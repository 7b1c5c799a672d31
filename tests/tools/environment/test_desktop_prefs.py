"""The "change an application preference" family (Mousepad): check boxes probed in a real session, settings named by the schema,
checks read on the keyfile the application saves, gold replayed in a fresh session.

The live test needs Xvfb, dbus, openbox, mousepad and Debian's python3 with gir1.2-atspi-2.0 (the Makefile's `system` target).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.desktop_checks import SETTINGS_KEYFILE, app_setting, file_checks, holds_at_start
from taskloom.tools.environment.desktop_prefs import SCHEMAS, Preference, Skipped, preference_tasks, probe_preferences, schema_settings
from taskloom.tools.generate.desktop.verify import verify_desktop_tasks
from taskloom.tools.generate.filter.stages import GenerationReport

ATSPI = os.path.exists(DEBIAN_PYTHON) and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
pytestmark = pytest.mark.skipif(not (SCHEMAS / "org.xfce.mousepad.gschema.xml").is_file(), reason="needs mousepad's GSettings schema (make system)")
LIVE = pytest.mark.skipif(not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "xprop", "mousepad")) or not ATSPI, reason="needs Xvfb, dbus, openbox, mousepad")

PREFS = [
    Preference(tab="View", label="Show line numbers", checked=False, enabled=True),
    Preference(tab="Window", label="Remember window size", checked=True, enabled=True),
    Preference(tab="View", label="Highlight current line", checked=False, enabled=False),
    Preference(tab="View", label="A box no setting describes", checked=False, enabled=True),
]


def test_the_schema_names_each_boxs_setting_and_tasks_ask_for_the_opposite_of_what_is_shown() -> None:
    assert schema_settings("org.xfce.mousepad")["show line numbers"] == ["org/xfce/mousepad/preferences/view/show-line-numbers"]
    skipped: list[Skipped] = []
    tasks = preference_tasks(0, 10, PREFS, skipped)
    wanted = {json.loads(t.success[0].value)["setting"]: json.loads(t.success[0].value)["value"] for t in tasks}
    assert wanted == {"org/xfce/mousepad/preferences/view/show-line-numbers": "true", "org/xfce/mousepad/preferences/window/remember-size": "false"}
    assert {s.label: s.reason for s in skipped} == {"Highlight current line": "disabled in the dialog", "A box no setting describes": "no boolean setting's summary names it"}
    on = next(t for t in tasks if "line numbers" in t.instruction)
    assert "'Show line numbers'" in on.instruction and " on" in on.instruction and on.type == "change_preference" and not holds_at_start(on)
    assert preference_tasks(0, 10, PREFS) == tasks  # the same probe and seed, the same tasks


def test_the_check_reads_the_saved_keyfile(tmp_path: Path) -> None:
    home, keyfile = tmp_path / "home", tmp_path / "config" / SETTINGS_KEYFILE
    home.mkdir()
    criterion = app_setting("org/xfce/mousepad/preferences/view/show-line-numbers", "true")
    assert not file_checks([criterion], home)[0].ok and "not set" in file_checks([criterion], home)[0].observed
    keyfile.parent.mkdir(parents=True)
    keyfile.write_text("[org/xfce/mousepad/preferences/view]\nshow-line-numbers=false\n")
    assert not file_checks([criterion], home)[0].ok
    keyfile.write_text("[org/xfce/mousepad/state/window]\nwidth=640\n\n[org/xfce/mousepad/preferences/view]\nshow-line-numbers=true\n")
    assert file_checks([criterion], home)[0].ok


@LIVE
@pytest.mark.integration
def test_the_probe_reads_every_tab_and_the_gold_replay_saves_the_setting(tmp_path: Path) -> None:
    prefs = probe_preferences("mousepad")
    tabs = {p.tab for p in prefs}
    assert {"View", "Editor", "Window", "File"} <= tabs and len(prefs) >= 15
    assert next(p for p in prefs if p.label == "Show line numbers").checked is False
    task = next(t for t in preference_tasks(0, 10, prefs) if "Show line numbers" in t.instruction)
    report = GenerationReport()
    kept = asyncio.run(verify_desktop_tasks([task], tmp_path, report))
    assert kept == [task], report.dropped

"""The "change an application preference" desktop task family (Mousepad), checked on the settings the application saved.

Which preferences there are, and where: a probe session opens the application's preferences
dialog and reads every tab's check boxes with the state they show. Which setting each one writes:
the application's GSettings schema, whose key summaries name the check boxes ("Show line numbers"
is ``org/xfce/mousepad/preferences/view/show-line-numbers``). A check box that no boolean key's
summary names, or that several do, is dropped with the reason. A task asks for the opposite of
the state shown; its check (``app_setting``) reads the keyfile the session's settings backend
writes, so it never passes on the start state (:func:`.desktop_checks.holds_at_start`), and the
gold replay at generation proves that turning the box writes that value.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import BaseModel

from ..tasks.model import DesktopSetup, GoldStep, Provenance, Task
from .desktop import DesktopEpisodes
from .desktop_a11y import A11yNode
from .desktop_checks import app_setting, holds_at_start
from .desktop_refs import AppDesktopEnv
from .desktop_tasks import SEED_FILES

__all__ = ["Preference", "Skipped", "PREFERENCE_APPS", "schema_settings", "probe_preferences", "preference_tasks"]

SCHEMAS = Path("/usr/share/glib-2.0/schemas")
#: Per application: its schema id prefix, the menu path of its preferences dialog, and the file it opens.
PREFERENCE_APPS = {"mousepad": ("org.xfce.mousepad", ["Edit", "Preferences..."], "shopping.txt")}
OPEN_WAIT = 5.0


class Preference(BaseModel):
    """One check box of a preferences dialog as the probe saw it."""

    tab: str
    label: str
    checked: bool
    enabled: bool


class Skipped(BaseModel):
    """A check box no task is made for, and why."""

    label: str
    reason: str


def _norm(text: str) -> str:
    return " ".join(text.lower().rstrip(":").replace("_", "").split())


def schema_settings(prefix: str, schemas: Path = SCHEMAS) -> dict[str, list[str]]:
    """Boolean settings of the schemas ``prefix*`` by their normalised summary: summary -> [``group/key``, ...]."""
    found: dict[str, list[str]] = {}
    for file in sorted(schemas.glob(f"{prefix}*.gschema.xml")):
        for schema in ET.parse(file).getroot().iter("schema"):
            path = (schema.get("path") or "").strip("/")
            for key in schema.iter("key"):
                summary = key.findtext("summary")
                if path and summary and key.get("type") == "b":
                    found.setdefault(_norm(summary), []).append(f"{path}/{key.get('name')}")
    return found


def _walk(nodes: list[A11yNode]) -> list[A11yNode]:
    return [d for n in nodes for d in (n, *_walk(n.children))]


def probe_preferences(app: str) -> list[Preference]:
    """Every check box of ``app``'s preferences dialog, tab by tab, read in a fresh session (nothing is changed)."""
    _, menu, opened = PREFERENCE_APPS[app]
    with tempfile.TemporaryDirectory(prefix="taskloom-prefs-") as root:
        episodes = DesktopEpisodes(Path(root), screenshot_after=False)
        env = episodes.start("probe", agent="probe", app=app, files={opened: "\n".join(SEED_FILES[opened]) + "\n"}, open_files=[opened])
        assert isinstance(env, AppDesktopEnv)
        try:
            before = {w.ref for w in env.tree.snapshot()[1]}
            env.select_menu(menu)
            deadline, dialog = time.monotonic() + OPEN_WAIT, None
            while dialog is None and time.monotonic() < deadline:
                dialog = next((w for w in env.tree.snapshot()[1] if w.ref not in before), None)
                time.sleep(0.1)
            if dialog is None:
                return []
            found: dict[str, Preference] = {}
            for tab in [n for n in _walk([dialog]) if n.aria_role == "tab" and n.name]:
                env.click_element(tab.ref)
                env.tree.settle()
                shown = next((w for w in env.tree.snapshot()[1] if w.ref == dialog.ref), dialog)
                for box in _walk([shown]):
                    if box.aria_role == "checkbox" and box.name and "showing" in box.states and box.name not in found:
                        found[box.name] = Preference(tab=tab.name, label=box.name, checked="checked" in box.states, enabled=bool({"enabled", "sensitive"} & set(box.states)))
            return list(found.values())
        finally:
            episodes.close("probe", "closed", "probe done")


def _instruction(label: str, on: bool, rng: random.Random) -> str:
    state = "on" if on else "off"
    return rng.choice([
        f"In Mousepad's preferences, turn {state} '{label}'; the setting must stay {state} after Mousepad closes.",
        f"Set Mousepad up so that its option '{label}' is {state} from now on.",
    ])


def preference_tasks(seed: int = 0, count: int = 10, prefs: list[Preference] | None = None, skipped: list[Skipped] | None = None) -> list[Task]:
    """``count`` preference tasks on Mousepad (the same for the same ``seed`` and probe); ``skipped`` collects the boxes left out."""
    prefix, menu, opened = PREFERENCE_APPS["mousepad"]
    settings = schema_settings(prefix)
    skipped = skipped if skipped is not None else []
    rng = random.Random(seed)
    tasks: list[Task] = []
    for pref in sorted(prefs if prefs is not None else probe_preferences("mousepad"), key=lambda p: (p.tab, p.label)):
        keys = settings.get(_norm(pref.label), [])
        if not pref.enabled or len(keys) != 1:
            reason = "disabled in the dialog" if not pref.enabled else "no boolean setting's summary names it" if not keys else f"several settings' summaries name it: {', '.join(keys)}"
            skipped.append(Skipped(label=pref.label, reason=reason))
            continue
        on = not pref.checked
        instruction = _instruction(pref.label, on, rng)
        steps = [
            GoldStep(action="click", selector=f"role=menu text={menu[0]}"), GoldStep(action="click", selector=f"role=menuitem text={menu[1]}"),
            GoldStep(action="click", selector=f"role=tab text={pref.tab}"), GoldStep(action="click", selector=f"role=checkbox text={pref.label}"),
            GoldStep(action="press_key", text="escape"),
        ]
        task = Task(
            id=f"desktop-pref-{hashlib.sha1(instruction.encode()).hexdigest()[:10]}", kind="desktop", type="change_preference", difficulty="easy", instruction=instruction,
            desktop=DesktopSetup(app="mousepad", files={opened: "\n".join(SEED_FILES[opened]) + "\n"}, open_files=[opened]),
            gold_steps=steps, success=[app_setting(keys[0], "true" if on else "false")], capabilities=["desktop", "settings"], evidence=["app:mousepad", f"file:{opened}"],
            provenance=Provenance(graph_id="desktop:mousepad", template=f"change_preference/{'on' if on else 'off'}", generator="desktop-tasks", seed=seed),
        )
        if holds_at_start(task):
            skipped.append(Skipped(label=pref.label, reason=f"{keys[0]} already holds that value in a fresh session"))
            continue
        tasks.append(task)
    rng.shuffle(tasks)
    return tasks[:count]


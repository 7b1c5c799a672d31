"""The "organise files" desktop task family (pcmanfm): rename a file, move it into a folder, make a folder.

Checked on the episode's home folder only (:mod:`.desktop_checks`): the file under its new name or
in its new folder with its content unchanged, the old path gone, the new folder there; never on
the controls used. The gold uses pcmanfm the way its keyboard does (F2, Ctrl+X / Ctrl+V,
Ctrl+Shift+N) on items found in the accessibility tree.
"""

from __future__ import annotations

import hashlib
import random

from ..tasks.model import DesktopSetup, GoldStep, Provenance, SuccessCriterion, Task
from .desktop_checks import file_content, holds_at_start, path_state

__all__ = ["HOME_FILES", "FOLDERS", "organise_tasks"]

#: The seeded home folder: files (path -> content) and empty folders (path ending in '/').
HOME_FILES: dict[str, str] = {
    "notes.txt": "Call the landlord about the boiler.\nBuy stamps.\n",
    "budget.csv": "month,rent,food\nJanuary,950,310\nFebruary,950,287\n",
    "draft-letter.md": "# Dear Ms Okafor\n\nThank you for your letter of 3 March.\n",
    "recipe.txt": "Lentil soup: lentils, carrots, onion, cumin, stock.\n",
    "readme.txt": "Files for the spring move.\n",
    "train-tickets.txt": "Berlin to Prague, 14 May, coach 7 seat 42.\n",
    "garden-plan.txt": "Tomatoes by the south wall; beans along the fence.\n",
    "archive/": "",
    "receipts/": "",
    "documents/": "",
    "projects/": "",
}
FOLDERS = [p.rstrip("/") for p in HOME_FILES if p.endswith("/")]
FILES = [p for p in HOME_FILES if not p.endswith("/")]
#: New names a rename may give, per file.
NEW_NAMES: dict[str, list[str]] = {
    "notes.txt": ["landlord-notes.txt", "todo-boiler.txt"],
    "budget.csv": ["budget-2026.csv", "spending.csv"],
    "draft-letter.md": ["letter-okafor.md", "reply-march.md"],
    "recipe.txt": ["lentil-soup.txt", "soup-recipe.txt"],
    "readme.txt": ["about-the-move.txt", "moving-notes.txt"],
    "train-tickets.txt": ["prague-tickets.txt", "tickets-may.txt"],
    "garden-plan.txt": ["vegetable-beds.txt", "allotment-plan.txt"],
}
NEW_FOLDERS = ["invoices", "travel", "tax-2026", "old-photos", "school", "recipes", "letters", "music", "warranty", "garden"]
OPS = ("rename", "move", "make_folder")


def _img(name: str) -> str:
    return f"role=cell text={name}"  # a row of the folder's list view


def _rename(path: str, rng: random.Random) -> tuple[str, list[SuccessCriterion], list[GoldStep]]:
    new = rng.choice(NEW_NAMES[path])
    checks = [file_content(new, HOME_FILES[path]), path_state(path, "absent")]
    steps = [
        GoldStep(action="click", selector=_img(path), canonical=f"select {path}"),
        GoldStep(action="press_key", text="f2"),
        GoldStep(action="type", selector=f"role=textbox text={path}", text=new, submit=True, canonical="the rename dialog's name field"),
        GoldStep(action="wait_for", selector=_img(new)),
    ]
    return f"In the file manager, rename the file {path} in your home folder to {new}.", checks, steps


def _move(path: str, rng: random.Random) -> tuple[str, list[SuccessCriterion], list[GoldStep]]:
    folder = rng.choice(FOLDERS)
    checks = [file_content(f"{folder}/{path}", HOME_FILES[path]), path_state(path, "absent")]
    steps = [
        GoldStep(action="click", selector=_img(path), canonical=f"select {path}"),
        GoldStep(action="press_key", text="ctrl+x"),
        GoldStep(action="click", selector=_img(folder), canonical=f"select {folder}"),
        GoldStep(action="press_key", text="enter"),
        GoldStep(action="wait_for", selector=f"role=window text={folder}"),
        GoldStep(action="press_key", text="ctrl+v"),
        GoldStep(action="wait_for", selector=_img(path)),
    ]
    return f"In the file manager, move the file {path} from your home folder into the folder {folder}.", checks, steps


def _make_folder(rng: random.Random) -> tuple[str, list[SuccessCriterion], list[GoldStep]]:
    name = rng.choice(NEW_FOLDERS)
    steps = [
        GoldStep(action="press_key", text="ctrl+shift+n"),
        GoldStep(action="type", selector="role=textbox text=New", text=name, submit=True, canonical="the new folder's name field"),
        GoldStep(action="wait_for", selector=_img(name)),
    ]
    return f"In the file manager, make a new folder called {name} in your home folder.", [path_state(name, "folder")], steps


def organise_tasks(seed: int = 0, count: int = 10) -> list[Task]:
    """``count`` tasks of the family, the same for the same ``seed``; none already holds at the start."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    attempts = 0
    while len(tasks) < count and attempts < count * 20:
        attempts += 1
        op = OPS[attempts % len(OPS)]  # in turn, so an op that has run out of new tasks does not stall the others
        path = rng.choice(FILES)
        instruction, checks, steps = _rename(path, rng) if op == "rename" else _move(path, rng) if op == "move" else _make_folder(rng)
        digest = hashlib.sha1(instruction.encode()).hexdigest()[:10]
        task = Task(
            id=f"desktop-organise-{digest}", kind="desktop", type="organise_files", difficulty="medium" if op == "move" else "easy", instruction=instruction,
            desktop=DesktopSetup(app="pcmanfm", files=dict(HOME_FILES), open_files=["."]),
            gold_steps=steps, success=checks, capabilities=["desktop", "file_management"], evidence=["app:pcmanfm", f"file:{path}" if op != "make_folder" else "folder:."],
            provenance=Provenance(graph_id="desktop:pcmanfm", template=f"organise_files/{op}", generator="desktop-tasks", seed=seed),
        )
        if any(t.id == task.id for t in tasks) or holds_at_start(task):
            continue  # a repeat, or a no-op
        tasks.append(task)
    return tasks

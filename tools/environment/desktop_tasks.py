"""The first desktop task family, "edit a file to have given content" (mousepad), its end-state check and its gold replay.

Tasks are generated from a few small text files shipped here; each asks for one edit (replace,
add or delete a line, or rewrite the file) and is checked only on the saved file's content, never
on the controls used. A task whose check already holds on the seeded files (a no-op) is never made.
The check and the replay read the task's gold; the desktop tools an agent uses never do.
"""

from __future__ import annotations

import hashlib
import random

from ..errors import InputError
from ..tasks.model import DesktopSetup, GoldStep, Provenance, Task
from .desktop import DesktopEpisodes
from .desktop_a11y import format_tree
from .desktop_checks import file_checks, file_content, holds_at_start
from .desktop_gold import run_gold
from .desktop_refs import AppDesktopEnv
from .trajectory import CloseRecord

__all__ = ["SEED_FILES", "EpisodeDriver", "edit_file_tasks", "file_checks", "holds_at_start", "replay_gold"]

#: The files the family edits: path in the home folder -> lines (each line unique within its file).
SEED_FILES: dict[str, list[str]] = {
    "shopping.txt": ["eggs", "milk", "bread", "apples", "coffee beans", "rice"],
    "todo.txt": ["book dentist appointment", "renew passport", "water the plants", "pay electricity bill", "return library books"],
    "server.ini": ["[server]", "host = 127.0.0.1", "port = 8080", "workers = 4", "[log]", "level = info"],
    "hope.txt": ["Hope is the thing with feathers", "That perches in the soul,", "And sings the tune without the words,", "And never stops at all,"],
    "pancakes.md": ["# Pancakes", "2 eggs", "250 ml milk", "120 g flour", "a pinch of salt"],
}
#: New lines an edit may bring in, per file.
NEW_LINES: dict[str, list[str]] = {
    "shopping.txt": ["oat milk", "free-range eggs", "sourdough bread", "green tea", "olive oil"],
    "todo.txt": ["call the plumber", "renew car insurance", "clean the gutters", "send birthday card"],
    "server.ini": ["port = 9090", "workers = 8", "host = 0.0.0.0", "level = debug", "timeout = 30"],
    "hope.txt": ["And sweetest in the gale is heard;", "And sore must be the storm", "That could abash the little bird"],
    "pancakes.md": ["1 tbsp sugar", "300 ml milk", "150 g flour", "butter for the pan"],
}
OPS = ("replace_line", "append_line", "delete_line", "rewrite")


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _edit(path: str, op: str, rng: random.Random) -> tuple[str, list[str]]:
    """An instruction for one edit of ``path`` and the lines the file must then hold."""
    lines, fresh = SEED_FILES[path], [n for n in NEW_LINES[path] if n not in SEED_FILES[path]]
    if op == "replace_line":
        i, new = rng.randrange(len(lines)), rng.choice(fresh)
        return f"In {path}, replace the line '{lines[i]}' with '{new}', then save the file.", lines[:i] + [new] + lines[i + 1 :]
    if op == "append_line":
        new = rng.choice(fresh)
        return f"Add the line '{new}' at the end of {path}, then save the file.", lines + [new]
    if op == "delete_line":
        i = rng.randrange(len(lines))
        return f"Delete the line '{lines[i]}' from {path} (keep the other lines in order), then save the file.", lines[:i] + lines[i + 1 :]
    target = rng.sample(fresh, min(3, len(fresh)))
    shown = "\n".join(f"  {line}" for line in target)
    return f"Replace the whole content of {path} with these {len(target)} lines (without the indentation), then save the file:\n{shown}", target


def edit_file_tasks(seed: int = 0, count: int = 10) -> list[Task]:
    """``count`` tasks of the family, the same for the same ``seed``; every one changes its file."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    paths = sorted(SEED_FILES)
    attempts = 0
    while len(tasks) < count and attempts < count * 10:
        attempts += 1
        path, op = paths[len(tasks) % len(paths)], rng.choice(OPS)
        instruction, lines = _edit(path, op, rng)
        criterion = file_content(path, _text(lines))
        digest = hashlib.sha1(f"{path}|{instruction}".encode()).hexdigest()[:10]
        task = Task(
            id=f"desktop-edit-{digest}", kind="desktop", type="edit_file", difficulty="medium" if op == "rewrite" else "easy", instruction=instruction,
            desktop=DesktopSetup(app="mousepad", files={path: _text(SEED_FILES[path])}, open_files=[path]),
            gold_steps=[GoldStep(action="type", selector="role=textbox", text=_text(lines).rstrip("\n")), GoldStep(action="press_key", text="ctrl+s")],
            success=[criterion], capabilities=["desktop", "text_editing"], evidence=["app:mousepad", f"file:{path}"],
            provenance=Provenance(graph_id="desktop:mousepad", template=f"edit_file/{op}", generator="desktop-tasks", seed=seed),
        )
        if holds_at_start(task) or any(t.id == task.id for t in tasks):
            continue  # a no-op or a repeat
        tasks.append(task)
    return tasks


class EpisodeDriver:
    """A :mod:`.desktop_gold` driver on a local episode (generation's replay): the same actions the ``desktop_*`` tools run."""

    def __init__(self, env: AppDesktopEnv) -> None:
        self.env = env

    async def snapshot(self) -> str:
        return "\n".join(format_tree(self.env.tree.snapshot()[1]))

    async def click(self, ref: str, double: bool) -> None:
        self.env.click_element(ref, double=double)

    async def type(self, ref: str, text: str, submit: bool) -> None:
        self.env.type(ref, text, submit)

    async def hotkey(self, keys: list[str]) -> None:
        self.env.hotkey(*keys)


async def replay_gold(task: Task, episodes: DesktopEpisodes, episode_id: str, answer: str | None = None) -> tuple[CloseRecord, AppDesktopEnv]:
    """Replay the task's gold steps in a fresh session (then give ``answer``, if any); closing checks the home folder and records the verdicts."""
    if task.desktop is None:
        raise InputError(f"task {task.id!r} is not a desktop task")
    setup = task.desktop
    env = episodes.start(episode_id, task_id=task.id, agent="gold-replay", app=setup.app, files=setup.files, open_files=setup.open_files)
    assert isinstance(env, AppDesktopEnv)
    env.task = task
    try:
        await run_gold(EpisodeDriver(env), task.gold_steps)
        if answer is not None:
            env.recorder.answer(answer)
    except BaseException as exc:
        episodes.close(episode_id, "error", f"the gold replay failed: {exc}")
        raise
    return episodes.close(episode_id), env

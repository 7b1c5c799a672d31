"""The "find information in a file and answer" desktop task family (Gnumeric workbooks, Mousepad text files).

The agent opens nothing new: the seeded file is already open in its application. It reads or
computes one thing and answers with ``env_answer``; the task holds a ``gold_answer`` (and its
``answer_kind``) and no file criterion, since answering never changes a file. The answer is scored
by the harness's answer metrics (:mod:`taskloom.tools.evaluate.metrics`: exact match, token F1, a
number within 1 %). Questions come from the files the other desktop families seed
(:data:`.desktop_sheet.WORKBOOKS`, :data:`.desktop_tasks.SEED_FILES`):

* workbooks: which row has the smallest / largest value of a column (a tie is dropped, with the
  reason); a column's total; one cell's value by row label and column;
* text files: the line right after / right before a given line; the number of lines.

A question whose answer already shows in its instruction is dropped too. The gold steps make
the application show the answer, so the replay checks the gold against the application's own
reading: Gnumeric's edit line shows the cell's value, its status bar ``Sum = …`` a selected
range's total; in Mousepad the text is read from its text box.
"""

from __future__ import annotations

import hashlib
import random
import re

from pydantic import BaseModel

from ..tasks.model import DesktopSetup, GoldStep, Provenance, Task
from .desktop_sheet import NUMERIC, WORKBOOKS, workbook_xml
from .desktop_tasks import SEED_FILES
from .sheet_cells import cell_name

__all__ = ["Question", "Dropped", "sheet_questions", "text_questions", "answer_tasks", "number_text", "answer_shown"]

TEMPLATE = "file_answer"


class Question(BaseModel):
    """One question about a seeded file, with its gold answer and the gold steps that show it in the application."""

    app: str
    path: str
    op: str
    instruction: str
    gold: str
    kind: str  # "text" or "number"
    steps: list[GoldStep]


class Dropped(BaseModel):
    """A question not asked, and why."""

    path: str
    op: str
    about: str
    reason: str


def number_text(value: float) -> str:
    """A number as Gnumeric's general format shows it, to two decimals at most.

    >>> number_text(1849.6999999999998), number_text(465.0), number_text(4.99)
    ('1849.7', '465', '4.99')
    """
    return f"{round(value, 2):.2f}".rstrip("0").rstrip(".")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower())


def answer_shown(instruction: str, gold: str) -> bool:
    """Whether the gold answer can be read off the instruction (its words in a row, or its number).

    >>> answer_shown("Which line comes after 'eggs'?", "milk"), answer_shown("rows 2 to 7", "7")
    (False, True)
    """
    said, wanted = _words(instruction), _words(gold)
    return bool(wanted) and any(said[i : i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1))


def _goto(start: str, target: str) -> GoldStep:
    return GoldStep(action="type", selector=f"role=textbox text={start}", text=target, submit=True, canonical="the name box")


def _extreme(path: str, col: int, op: str) -> Question | Dropped:
    _, header, rows = WORKBOOKS[path]
    values = [float(r[col]) for r in rows]
    best = min(values) if op == "min" else max(values)
    at = [i for i, v in enumerate(values) if v == best]
    word = "smallest" if op == "min" else "largest"
    if len(at) > 1:
        names = ", ".join(str(rows[i][0]) for i in at)
        return Dropped(path=path, op=op, about=header[col], reason=f"a tie: {names} share the {word} {header[col]} ({number_text(best)})")
    label = str(rows[at[0]][0])
    instruction = f"In the spreadsheet {path}, which {header[0].lower()} has the {word} value in the {header[col]} column? Answer with the {header[0].lower()} as written in the sheet."
    steps = [_goto("A1", cell_name(at[0] + 1, 0)), GoldStep(action="wait_for", selector=f"role=textbox value={label}", canonical="the cell's edit line")]
    return Question(app="gnumeric", path=path, op=f"{op}_row", instruction=instruction, gold=label, kind="text", steps=steps)


def _total(path: str, col: int) -> Question:
    _, header, rows = WORKBOOKS[path]
    letter = cell_name(0, col)[:-1]
    total = number_text(sum(float(r[col]) for r in rows))
    instruction = f"What is the total of the {header[col]} column of the spreadsheet {path}, over all its rows? Answer with the number."
    shown = GoldStep(action="wait_for", selector=f"role=label text=Sum = {total}", canonical="the status bar's sum")
    steps = [_goto("A1", f"{letter}2:{letter}{len(rows) + 1}"), shown]
    return Question(app="gnumeric", path=path, op="total", instruction=instruction, gold=total, kind="number", steps=steps)


def _lookup(path: str, row: int, col: int) -> Question:
    _, header, rows = WORKBOOKS[path]
    value = number_text(float(rows[row][col]))
    instruction = f"In the spreadsheet {path}, what is the {header[col]} value of the row for {rows[row][0]}? Answer with the number."
    shown = GoldStep(action="wait_for", selector=f"role=textbox value={value}", canonical="the cell's edit line")
    steps = [_goto("A1", cell_name(row + 1, col)), shown]
    return Question(app="gnumeric", path=path, op="lookup", instruction=instruction, gold=value, kind="number", steps=steps)


def _keep(made: list[Question | Dropped]) -> tuple[list[Question], list[Dropped]]:
    kept, dropped = [], []
    for q in made:
        if isinstance(q, Dropped):
            dropped.append(q)
        elif answer_shown(q.instruction, q.gold):
            dropped.append(Dropped(path=q.path, op=q.op, about=q.instruction, reason=f"the answer {q.gold!r} shows in the instruction"))
        else:
            kept.append(q)
    return kept, dropped


def sheet_questions() -> tuple[list[Question], list[Dropped]]:
    """Every workbook question, and the ones dropped with their reason (ties, answers shown in the instruction)."""
    made: list[Question | Dropped] = []
    for path in sorted(WORKBOOKS):
        _, header, rows = WORKBOOKS[path]
        for name in NUMERIC[path]:
            col = header.index(name)
            made += [_extreme(path, col, "min"), _extreme(path, col, "max"), _total(path, col)]
            made += [_lookup(path, r, col) for r in range(len(rows))]
    return _keep(made)


def text_questions() -> tuple[list[Question], list[Dropped]]:
    """Every text-file question (the line after / before a line, the number of lines), and the ones dropped."""
    made: list[Question | Dropped] = []
    for path in sorted(SEED_FILES):
        lines = SEED_FILES[path]
        read = [GoldStep(action="click", selector="role=textbox", canonical="the text")]  # the text box's value is the file's text
        if len(set(lines)) != len(lines):
            made.append(Dropped(path=path, op="neighbour", about=path, reason="a line repeats, so 'the line after' is ambiguous"))
            continue
        for i, line in enumerate(lines):
            if i + 1 < len(lines):
                text = f"In the text file {path}, open in the editor, which line comes right after the line '{line}'? Answer with that line's text."
                made.append(Question(app="mousepad", path=path, op="line_after", instruction=text, gold=lines[i + 1], kind="text", steps=read))
            if i > 0:
                text = f"In the text file {path}, open in the editor, which line comes right before the line '{line}'? Answer with that line's text."
                made.append(Question(app="mousepad", path=path, op="line_before", instruction=text, gold=lines[i - 1], kind="text", steps=read))
        text = f"How many lines of text does the file {path}, open in the editor, have? Answer with the number."
        made.append(Question(app="mousepad", path=path, op="line_count", instruction=text, gold=str(len(lines)), kind="number", steps=read))
    return _keep(made)


def _content(question: Question) -> str:
    if question.app == "gnumeric":
        return workbook_xml(question.path)
    return "\n".join(SEED_FILES[question.path]) + "\n"


def _task(question: Question, seed: int) -> Task:
    digest = hashlib.sha1(f"{question.path}|{question.instruction}".encode()).hexdigest()[:10]
    return Task(
        id=f"desktop-answer-{digest}", kind="desktop", type=TEMPLATE, difficulty="easy" if question.op in ("lookup", "line_after", "line_before") else "medium",
        instruction=question.instruction, gold_answer=question.gold, answer_kind="number" if question.kind == "number" else "text",
        desktop=DesktopSetup(app=question.app, files={question.path: _content(question)}, open_files=[question.path]),
        gold_steps=question.steps, success=[], capabilities=["desktop", "information_seeking"], evidence=[f"app:{question.app}", f"file:{question.path}"],
        provenance=Provenance(graph_id=f"desktop:{question.app}", template=f"{TEMPLATE}/{question.op}", generator="desktop-tasks", seed=seed),
    )


def answer_tasks(app: str, seed: int = 0, count: int = 10) -> list[Task]:
    """``count`` question tasks on ``app``'s seeded files, the same for the same ``seed``; the kinds of question in turn."""
    questions = sheet_questions()[0] if app == "gnumeric" else text_questions()[0] if app == "mousepad" else []
    rng = random.Random(seed)
    by_op: dict[str, list[Question]] = {}
    for q in questions:
        by_op.setdefault(q.op, []).append(q)
    for group in by_op.values():
        rng.shuffle(group)
    ops = sorted(by_op)
    order = [by_op[op][i] for i in range(max((len(g) for g in by_op.values()), default=0)) for op in ops if i < len(by_op[op])]
    return [_task(q, seed) for q in order[:count]]

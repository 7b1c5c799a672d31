"""Value-flow chains and task graphs over a Gnumeric workbook: each subtask consumes the value the one before produced.

A chain starts from a row picked by a column's extreme ("the student with the highest Maths
mark") and hops on: a picked row gives one of its numbers (*lookup*), a number gives a count of
rows above it (*count above*) or the row whose value comes next above it (*next above*), a count
gives the row ranked at that position (*ranked*). Level k is the first k hops; the last value is
written into an empty cell and the workbook saved, so the task is checked on the saved file. The
instruction names the hops only: every intermediate value stays hidden, and a chain whose
instruction would state one is cut there.

A task graph runs two such branches, each ending in a number, and a last subtask that combines
them (their sum or difference): the branches are independent, so the graph has several orders.

Every hop must give one value: an extreme, a next value above or a rank shared by two rows
stops the chain there with the reason, as does a count of none or of every row. Gold comes two
ways: computed here from the seeded data, and by Gnumeric itself from one formula the gold
replay types (``INDEX``/``MATCH``, ``COUNTIF``, ``SMALL``, ``LARGE``); the task is kept only
when Gnumeric's value, read back from the saved file, equals ours (:func:`.compose.verify`).
The check also requires the data cells the hops read to be unchanged.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Literal

from ...environment.desktop_answers import number_text
from ...environment.desktop_sheet import NUMERIC, WORKBOOKS, workbook_xml
from ...environment.sheet_cells import cell_name, sheet_cells
from ...tasks.model import DesktopSetup, Difficulty, GoldStep, Provenance, Resource, Subtask, Task
from ..compose.flowtasks import leaks

__all__ = ["Hop", "Value", "Branch", "grow_branch", "chain_task", "graph_task", "GRAPH_ID"]

GRAPH_ID = "desktop:gnumeric"
Kind = Literal["row", "number", "count"]


@dataclass(frozen=True)
class Value:
    """What a hop produced: a row (its label), a number read from the sheet, or a count of rows."""

    kind: Kind
    row: int = -1
    number: float = 0.0

    def text(self, path: str) -> str:
        return str(WORKBOOKS[path][2][self.row][0]) if self.kind == "row" else number_text(self.number)


@dataclass(frozen=True)
class Hop:
    """One subtask of a chain: an operation on one column, the value it produced, its clause and its Gnumeric formula."""

    op: str
    column: str
    value: Value
    clause: str
    formula: str


def _noun(path: str, plural: bool = False) -> str:
    noun = WORKBOOKS[path][1][0].lower()
    return (noun[:-1] + "ies" if noun.endswith("y") else noun + "s") if plural else noun


def _col(path: str, name: str) -> tuple[str, list[float]]:
    """The data range of column ``name`` (``C2:C9``) and its values."""
    _, header, rows = WORKBOOKS[path]
    i = header.index(name)
    letter = cell_name(0, i)[:-1]
    return f"{letter}2:{letter}{len(rows) + 1}", [float(r[i]) for r in rows]


def _labels(path: str) -> str:
    return f"A2:A{len(WORKBOOKS[path][2]) + 1}"


def _row_of(path: str, values: list[float], wanted: float) -> int | None:
    """The one row holding ``wanted`` in ``values``; None if several do."""
    at = [i for i, v in enumerate(values) if v == wanted]
    return at[0] if len(at) == 1 else None


def _extreme(path: str, name: str, op: str) -> Hop | str:
    span, values = _col(path, name)
    best = max(values) if op == "max" else min(values)
    row = _row_of(path, values, best)
    if row is None:
        return f"two {_noun(path, True)} share the {'highest' if op == 'max' else 'lowest'} {name} value"
    word, fn = ("highest", "MAX") if op == "max" else ("lowest", "MIN")
    clause = f"find the {_noun(path)} with the {word} {name} value"
    return Hop(op, name, Value("row", row=row), clause, f"INDEX({_labels(path)},MATCH({fn}({span}),{span},0))")


def _lookup(path: str, name: str, given: Value, formula: str) -> Hop | str:
    span, values = _col(path, name)
    clause = f"take that {_noun(path)}'s {name} value"
    return Hop("lookup", name, Value("number", number=values[given.row]), clause, f"INDEX({span},MATCH({formula},{_labels(path)},0))")


def _count_above(path: str, name: str, given: Value, formula: str) -> Hop | str:
    span, values = _col(path, name)
    count = sum(v > given.number for v in values)
    if not 0 < count < len(values):
        return f"{'no' if count == 0 else 'every'} {_noun(path)} has a {name} value above {number_text(given.number)}"
    clause = f"count the {_noun(path, True)} whose {name} value is greater than that number"
    return Hop("count_above", name, Value("count", number=float(count)), clause, f'COUNTIF({span},">"&{formula})')


def _next_above(path: str, name: str, given: Value, formula: str) -> Hop | str:
    span, values = _col(path, name)
    above = [v for v in values if v > given.number]
    if not above:
        return f"no {name} value is above {number_text(given.number)}"
    row = _row_of(path, values, min(above))
    if row is None:
        return f"two {_noun(path, True)} share the next {name} value above {number_text(given.number)}"
    clause = f"find the {_noun(path)} whose {name} value is the smallest one greater than that number"
    return Hop("next_above", name, Value("row", row=row), clause, f'INDEX({_labels(path)},MATCH(SMALL({span},COUNTIF({span},"<="&{formula})+1),{span},0))')


def _ranked(path: str, name: str, given: Value, formula: str) -> Hop | str:
    span, values = _col(path, name)
    rank = int(given.number)
    ordered = sorted(values, reverse=True)
    row = _row_of(path, values, ordered[rank - 1]) if 1 <= rank <= len(values) else None
    if row is None:
        return f"no single {_noun(path)} is ranked {rank} by {name} value"
    clause = f"taking that count as a position, find the {_noun(path)} ranked there by {name} value (the highest first)"
    return Hop("ranked", name, Value("row", row=row), clause, f"INDEX({_labels(path)},MATCH(LARGE({span},{formula}),{span},0))")


#: The hops each kind of value allows.
NEXT = {"row": (_lookup,), "number": (_count_above, _next_above), "count": (_ranked, _count_above)}


@dataclass
class Branch:
    """A chain of hops on one workbook, and why it could not go further (when it stopped early)."""

    path: str
    hops: list[Hop]
    stopped: str = ""


def grow_branch(path: str, levels: int, rng: random.Random, end: Kind | None = None) -> Branch:
    """A chain of up to ``levels`` hops, each picked at random among those giving one value (``end``: the last must give that kind)."""
    columns = NUMERIC[path]
    starts = [_extreme(path, c, op) for c in columns for op in ("max", "min")]
    hops = [h for h in starts if isinstance(h, Hop)]
    if not hops:
        return Branch(path, [], f"every column of {path} has a tied extreme")
    branch = Branch(path, [rng.choice(hops)])
    formula = branch.hops[0].formula
    while len(branch.hops) < levels:
        last = branch.hops[-1]
        options: list[Hop] = []
        reasons: list[str] = []
        for make in NEXT[last.value.kind]:
            for column in columns:
                if column == last.column and (make is not _count_above or last.op == "count_above"):
                    continue  # the same column again says nothing new (but "how many are above this one's value" does)
                made = make(path, column, last.value, formula)
                if isinstance(made, Hop):
                    options.append(made)
                else:
                    reasons.append(made)
        if len(branch.hops) == levels - 1 and end is not None:
            options = [h for h in options if h.value.kind == end or (end == "number" and h.value.kind == "count")]
        if not options:
            branch.stopped = f"after level {len(branch.hops)}, no next hop gives one value ({'; '.join(sorted(set(reasons))[:3]) or 'none fits'})"
            break
        branch.hops.append(rng.choice(options))
        formula = branch.hops[-1].formula
    return branch


def _difficulty(level: int) -> Difficulty:
    return "easy" if level <= 1 else "medium" if level <= 3 else "hard" if level <= 5 else "expert"


def _target(path: str) -> str:
    """The cell the result goes in: right of the table, one empty column between."""
    return cell_name(1, len(WORKBOOKS[path][1]) + 1)


def _save(path: str) -> list[GoldStep]:
    return [GoldStep(action="press_key", text="ctrl+s"), GoldStep(action="wait_for", selector=f"role=window text={path} - Gnumeric", canonical="saved")]


def _write_gold(path: str, formula: str) -> list[GoldStep]:
    """Go to the target cell by the name box, type the one formula, save in place."""
    target = _target(path)
    return [
        GoldStep(action="type", selector="role=textbox text=A1", text=target, submit=True, canonical="the name box"),
        GoldStep(action="type", selector="role=textbox value=", text=f"={formula}", submit=True, canonical="the cell's edit line"),
        *_save(path),
    ]


def _data_cells(path: str, hops: list[Hop]) -> dict[str, float | str]:
    """The label column and every column the hops read, as seeded: the check requires them unchanged."""
    _, header, rows = WORKBOOKS[path]
    used = {0} | {header.index(h.column) for h in hops}
    return {cell_name(r + 1, c): rows[r][c] for r in range(len(rows)) for c in sorted(used)}


def _ending(path: str, value: Value) -> str:
    target = _target(path)
    what = f"that {_noun(path)}'s name, as the sheet writes it," if value.kind == "row" else "that number"
    return f"Write {what} in cell {target}, then save the file in place."


def _subtasks(path: str, hops: list[Hop], ids: list[str], feeds: list[list[str]]) -> list[Subtask]:
    out = []
    for hop, sid, fed in zip(hops, ids, feeds):
        inputs = [Resource(kind="field_value", name=f"{f}") for f in fed]
        out.append(Subtask(id=sid, instruction=hop.clause[0].upper() + hop.clause[1:] + ".", category=f"gnumeric:{path}", inputs=inputs,
                           outputs=[Resource(kind="field_value", name=f"{sid}:{hop.op}({hop.column})")]))
    return out


def _task(path: str, kind: str, instruction: str, hops: list[Hop], result: Value, formula: str, subtasks: list[Subtask], seed: int) -> Task | None:
    target = _target(path)
    gold: float | str = result.text(path) if result.kind == "row" else round(result.number, 6)
    hidden = [h.value.text(path) for h in hops]
    if leaks(instruction, hidden + [str(gold) if isinstance(gold, str) else number_text(gold)]):
        return None
    digest = hashlib.sha1(f"{path}|{instruction}".encode()).hexdigest()[:10]
    cells = {**_data_cells(path, hops), target: gold}
    return Task(
        id=f"desktop-{kind}-{digest}", kind="desktop", type="value_chain" if kind == "chain" else "value_graph", difficulty=_difficulty(len(subtasks)),
        instruction=instruction, desktop=DesktopSetup(app="gnumeric", files={path: workbook_xml(path)}, open_files=[path]),
        gold_steps=_write_gold(path, formula), success=[sheet_cells(path, cells)], subtasks=subtasks,
        capabilities=["desktop", "spreadsheet", "multi_step_reasoning"], evidence=["app:gnumeric", f"file:{path}"],
        provenance=Provenance(graph_id=GRAPH_ID, template=f"{'value_chain' if kind == 'chain' else 'value_graph'}/{'-'.join(h.op for h in hops)}", generator="desktop-compose", seed=seed),
        quality={"flow": {"hidden": hidden, "hops": [{"op": h.op, "column": h.column, "value": h.value.text(path)} for h in hops]}},
    )


def chain_task(branch: Branch, level: int, seed: int) -> Task | None:
    """The level-``level`` task of a chain: its first ``level`` hops, the last value written and saved; None if the instruction would leak a value."""
    path, hops = branch.path, branch.hops[:level]
    steps = "; then ".join(h.clause for h in hops)
    instruction = f"In the spreadsheet {path}: {steps}. {_ending(path, hops[-1].value)}"
    ids = [f"s{i + 1}" for i in range(level)]
    subtasks = _subtasks(path, hops, ids, [[]] + [[f"{ids[i]}:{hops[i].op}({hops[i].column})"] for i in range(level - 1)])
    task = _task(path, "chain", instruction, hops, hops[-1].value, hops[-1].formula, subtasks, seed)
    if task is not None:
        task.level = level
        task.dag = [(ids[i], ids[i + 1]) for i in range(level - 1)]
    return task


def graph_task(first: Branch, second: Branch, combine: str, seed: int) -> Task | None:
    """Two independent branches ending in numbers, then their sum or difference written and saved; None if it would leak a value."""
    path = first.path
    a, b = first.hops[-1].value.number, second.hops[-1].value.number
    total = a + b if combine == "sum" else a - b
    result = Value("number", number=total)
    one, two = "; then ".join(h.clause for h in first.hops), "; then ".join(h.clause for h in second.hops)
    word = "add the two numbers" if combine == "sum" else "subtract the second number from the first"
    instruction = f"In the spreadsheet {path}, work out two numbers. First: {one}. Second: {two}. Then {word}. {_ending(path, result)}"
    n, m = len(first.hops), len(second.hops)
    ids = [f"a{i + 1}" for i in range(n)] + [f"b{i + 1}" for i in range(m)] + ["c"]
    hops = first.hops + second.hops
    feeds: list[list[str]] = [[]] + [[f"a{i}:{first.hops[i - 1].op}({first.hops[i - 1].column})"] for i in range(1, n)]
    feeds += [[]] + [[f"b{i}:{second.hops[i - 1].op}({second.hops[i - 1].column})"] for i in range(1, m)]
    subtasks = _subtasks(path, hops, ids[:-1], feeds)
    subtasks.append(Subtask(id="c", instruction=word[0].upper() + word[1:] + ".", category=f"gnumeric:{path}",
                            inputs=[Resource(kind="field_value", name=f"a{n}"), Resource(kind="field_value", name=f"b{m}")],
                            outputs=[Resource(kind="field_value", name=f"c:{combine}")]))
    formula = f"({first.hops[-1].formula}){'+' if combine == 'sum' else '-'}({second.hops[-1].formula})"
    task = _task(path, "graph", instruction, hops, result, formula, subtasks, seed)
    if task is not None:
        task.dag = [(f"a{i}", f"a{i + 1}") for i in range(1, n)] + [(f"b{i}", f"b{i + 1}") for i in range(1, m)] + [(f"a{n}", "c"), (f"b{m}", "c")]
    return task

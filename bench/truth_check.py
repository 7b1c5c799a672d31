"""The truth bench's checks: a site's data source, and each generated gold recomputed from it (see ``truth.py``).

Field labels map to source columns by name (:func:`label_key`); values compare by type
(:func:`same`: numbers within the rounding the site shows, booleans as yes/no, text ignoring
case and a trailing parenthetical). :func:`check` gives a task's :class:`Verdict`: right, wrong
(with the source's answer and why) or unchecked (with why).
"""

from __future__ import annotations

import csv
import datetime as dt
import importlib.resources
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent

_MISSING_TEXT = frozenset({"", "na", "n/a", "none", "null", "-", "—", "–"})
_TRUE = frozenset({"yes", "true", "1", "y", "on", "available"})
_FALSE = frozenset({"no", "false", "0", "n", "off"})
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?|[-−]?\.\d+")
_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_DATE_FORMATS = ("%Y-%m-%d", "%d %B %Y", "%B %d, %Y", "%d %b %Y", "%b %d, %Y", "%m/%d/%Y", "%Y/%m/%d")


# --- the data sources ---------------------------------------------------------------------------


def label_key(label: str) -> str:
    """A field label or column name as compared: case folded, a unit in brackets dropped, punctuation as spaces.

    >>> label_key("Culmen Length (mm)"), label_key("ISBN"), label_key("studyName")
    ('culmen length', 'isbn', 'studyname')
    """
    return " ".join(re.sub(r"[^\w]+", " ", re.sub(r"\s*[(\[][^)\]]*[)\]]", "", label)).casefold().split())


@dataclass
class Source:
    """A site's data: its rows (column → value; None when missing), and which columns hold numbers."""

    name: str
    rows: list[dict[str, Any]]
    numeric: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        columns = list(dict.fromkeys(c for row in self.rows for c in row))
        self._columns: dict[str, str] = {}
        for column in columns:
            self._columns.setdefault(label_key(column), column)

    def column(self, label: str) -> str | None:
        """The source column a site's field label names, if any."""
        return self._columns.get(label_key(label))


def _csv_value(raw: str) -> Any:
    if raw.strip().casefold() in ("", "na"):
        return None
    try:
        return float(raw)
    except ValueError:
        return raw


def penguins_source() -> Source:
    """palmerpenguins' penguins-raw.csv, numbers as floats, ``NA`` as None; ``id`` is the CSV row number (from 1)."""
    text = (importlib.resources.files("palmerpenguins") / "data" / "penguins-raw.csv").read_text(encoding="utf-8")
    rows = [
        {"id": float(i), **{k: _csv_value(v) for k, v in row.items()}} for i, row in enumerate(csv.DictReader(io.StringIO(text)), start=1)
    ]
    numeric = {c for c in rows[0] if all(row[c] is None or isinstance(row[c], float) for row in rows)}
    return Source("penguins-raw.csv", rows, numeric)


def books_source() -> Source:
    """The example site's catalogue (``examples/site/data/books.json``); lists (reviews) are left out."""
    books = json.loads((_ROOT / "examples" / "site" / "data" / "books.json").read_text(encoding="utf-8"))
    rows = [{k: v for k, v in book.items() if not isinstance(v, (list, dict))} for book in books]
    numeric = {c for c in rows[0] if all(isinstance(row.get(c), (int, float)) and not isinstance(row.get(c), bool) for row in rows)}
    return Source("examples/site/data/books.json", rows, numeric)


#: The sites with a data source, and how to load it.
SOURCES: dict[str, Callable[[], Source]] = {"example": books_source, "penguins": penguins_source}


# --- values ---------------------------------------------------------------------------------------


def number_of(text: Any) -> float | None:
    """The first number in a text ("5,100 g" → 5100.0), or the number itself."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    found = _NUMBER.search(str(text))
    return float(found.group().replace(",", "").replace("−", "-")) if found else None


def _tolerance(text: Any, value: float) -> float:
    """Half a unit of the last digit the text shows: the rounding the site may have done."""
    found = _NUMBER.search(str(text))
    decimals = len(found.group().split(".")[1]) if found and "." in found.group() else 0
    return 0.5 * 10**-decimals + 1e-9 * max(1.0, abs(value))


def _text(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def same(source_value: Any, shown: Any, numeric: bool) -> bool:
    """Whether a value the site shows (or a gold) is the source's value: numbers within the shown rounding, booleans as yes/no, text case-insensitively (a trailing parenthetical may be dropped).

    >>> same(-26.695430000000002, "-26.69543", True), same(5100.0, "5,100 g", True), same(5100.0, "5,150 g", True)
    (True, True, False)
    >>> same("Adelie Penguin (Pygoscelis adeliae)", "Adelie Penguin", False), same(True, "Yes", False)
    (True, True)
    """
    if source_value is None:
        return shown is None or _text(shown) in _MISSING_TEXT
    if shown is None:
        return False
    if isinstance(source_value, bool):
        word = _text(shown)
        return word in _TRUE if source_value else word in _FALSE
    if numeric:
        number = number_of(shown)
        return number is not None and abs(number - float(source_value)) <= _tolerance(shown, number)
    a, b = _text(source_value), _text(shown)
    return a == b or _text(_PAREN.sub("", str(source_value))) == b or a == _text(_PAREN.sub("", str(shown)))


def _slug(value: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "-", _text(value)).strip("-")


def same_param(source_value: Any, param_value: str, numeric: bool) -> bool:
    """Whether a URL parameter's value ("science-fiction", "1") selects the source value ("Science Fiction", True)."""
    if source_value is None:
        return False
    if isinstance(source_value, bool) or numeric:
        return same(source_value, param_value, numeric)
    return _slug(source_value) == _slug(param_value) or _text(source_value) == _text(param_value)


def sort_key(value: Any) -> tuple[int, Any] | None:
    """How a value orders: (0, number), (1, date) or (2, text); None when missing."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return (0, float(value)) if not math.isnan(float(value)) else None
    text = str(value).strip()
    for fmt in _DATE_FORMATS:
        try:
            return (1, dt.datetime.strptime(text, fmt).date())
        except ValueError:
            continue
    number = number_of(text)
    if number is not None and _NUMBER.fullmatch(text.replace(" ", "")):
        return (0, number)
    return (2, text.casefold()) if text else None


# --- records and rows -------------------------------------------------------------------------------


def _fields(record: Any) -> dict[str, dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = record.attrs.get("fields") or {}
    return fields


def rows_with(source: Source, values: dict[str, Any]) -> list[int] | str:
    """Indices of the source rows holding every ``label: shown value``; the first label not in the source when one is not."""
    columns: list[tuple[str, Any]] = []
    for label, shown in values.items():
        column = source.column(label)
        if column is None:
            return label
        columns.append((column, shown))
    return [i for i, row in enumerate(source.rows) if all(same(row.get(c), v, c in source.numeric) for c, v in columns)]


def record_rows(source: Source, record: Any) -> list[int] | None:
    """The source rows agreeing with every field of a record the source has a column for; None when it has none."""
    shown = {lb: f.get("raw") for lb, f in _fields(record).items() if f.get("type") != "missing" and source.column(lb) is not None}
    if not shown:
        return None
    found = rows_with(source, shown)
    return found if isinstance(found, list) else None


class Graph:
    """What the checks read from a crawled graph: records by id, listings by id and by URL, and which listings hold source rows."""

    def __init__(self, kg: Any, source: Source) -> None:
        self.kg, self.source = kg, source
        self.records = {r.id: r for r in kg.nodes("record")}
        self.listings = {n.id: n for n in kg.nodes("listing")}
        self.by_url = {str(n.attrs.get("url")): n for n in self.listings.values()}
        self._backed: dict[str, bool] = {}

    def members(self, listing_id: str) -> list[Any]:
        return [r for r in self.records.values() if listing_id in (r.attrs.get("listings") or []) or r.attrs.get("listing") == listing_id]

    def backed(self, listing_id: str) -> bool:
        """Whether the listing lists source rows: at least half its records agree with a source row on every field the source has."""
        if listing_id not in self._backed:
            matched = [record_rows(self.source, r) for r in self.members(listing_id)]
            judged = [m for m in matched if m is not None]
            self._backed[listing_id] = bool(judged) and sum(1 for m in judged if m) >= 0.5 * len(judged)
        return self._backed[listing_id]


# --- verdicts -----------------------------------------------------------------------------------------


@dataclass
class Verdict:
    """``right``, ``wrong`` or ``unchecked``; the source's answer; why (for wrong and unchecked)."""

    status: str
    truth: str = ""
    why: str = ""


def _unchecked(why: str) -> Verdict:
    return Verdict("unchecked", why=why)


def _judge(ok: bool, truth: str, why: str) -> Verdict:
    return Verdict("right", truth) if ok else Verdict("wrong", truth, why)


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def check_lookup(task: Any, graph: Graph) -> Verdict:
    goal, source = task.quality["lookup"], graph.source
    if not graph.backed(str(goal.get("listing"))):
        return _unchecked("the listing's records are not source rows")
    column = source.column(str(goal["field"]))
    if column is None:
        return _unchecked(f"field {goal['field']!r} is not in the source")
    rows = rows_with(source, dict(goal["identify"]))
    if isinstance(rows, str):
        return _unchecked(f"identifying field {rows!r} is not in the source")
    named = ", ".join(f"{k} = {v!r}" for k, v in goal["identify"].items())
    if len(rows) != 1:
        return Verdict("wrong", f"{len(rows)} source rows have {named}", "the identifying values do not name exactly one source row")
    truth = source.rows[rows[0]].get(column)
    return _judge(
        same(truth, task.gold_answer, column in source.numeric),
        _shown(truth),
        f"the source row with {named} has {column} = {_shown(truth)!r}",
    )


def _holds(row: dict[str, Any], column: str, op: str, value: Any, numeric: bool) -> bool:
    """Whether a source row meets one condition (a missing value meets none)."""
    if op == "eq":
        return same(row.get(column), value, numeric)
    number = row.get(column)
    if not isinstance(number, (int, float)) or isinstance(number, bool):
        return False
    return number > float(value) if op == "gt" else number < float(value)


def _matching(source: Source, conditions: Iterable[list[Any]]) -> list[dict[str, Any]] | str:
    """The source rows meeting every ``[label, eq|gt|lt, value]``; the first label not in the source when one is not."""
    tests: list[tuple[str, str, Any, bool]] = []
    for label, op, value in conditions:
        column = source.column(str(label))
        if column is None:
            return str(label)
        tests.append((column, str(op), value, column in source.numeric))
    return [row for row in source.rows if all(_holds(row, *test) for test in tests)]


def check_compare(task: Any, graph: Graph) -> Verdict:
    goal, source = task.quality["compare"], graph.source
    if not graph.backed(str(goal.get("listing"))):
        return _unchecked("the listing's records are not source rows")
    rows = _matching(source, goal.get("conditions") or [])
    if isinstance(rows, str):
        return _unchecked(f"condition field {rows!r} is not in the source")
    op, gold = goal["op"], task.gold_answer
    where = (
        f" among {len(rows)} source rows meeting {goal.get('conditions')}"
        if goal.get("conditions")
        else f" over all {len(rows)} source rows"
    )
    if op == "count":
        return _judge(number_of(gold) == len(rows), str(len(rows)), f"{len(rows)} source rows meet {goal['conditions']}")
    if op in ("which", "count_difference"):
        column = source.column(str(goal["field"]))
        if column is None:
            return _unchecked(f"field {goal['field']!r} is not in the source")
        counts = [sum(1 for row in rows if same(row.get(column), option, column in source.numeric)) for option in goal["options"]]
        told = ", ".join(f"{o!r}: {n}" for o, n in zip(goal["options"], counts))
        if op == "count_difference":
            diff = counts[0] - counts[1]
            return _judge(number_of(gold) == diff, str(diff), f"{column} counts{where}: {told}")
        if counts[0] == counts[1]:
            return Verdict("wrong", f"a tie ({told})", f"{column} counts{where} are equal")
        winner = goal["options"][0 if counts[0] > counts[1] else 1]
        return _judge(same(winner, gold, False), str(winner), f"{column} counts{where}: {told}")
    measure = source.column(str(goal.get("measure")))
    if measure is None:
        return _unchecked(f"measure {goal.get('measure')!r} is not in the source")
    valued = [row for row in rows if isinstance(row.get(measure), (int, float)) and not isinstance(row.get(measure), bool)]
    if not valued:
        return Verdict("wrong", "no value", f"no source row{where} has a {measure}")
    values = [float(row[measure]) for row in valued]
    if op == "range":
        spread = max(values) - min(values)
        ok = (n := number_of(gold)) is not None and abs(n - spread) <= _tolerance(gold, spread)
        return _judge(ok, _shown(round(spread, 10)), f"{measure}{where}: {_shown(max(values))} − {_shown(min(values))}")
    if op not in ("max", "min"):
        return _unchecked(f"compare op {op!r} has no check")
    column = source.column(str(goal["field"]))
    if column is None:
        return _unchecked(f"answer field {goal['field']!r} is not in the source")
    best = max(values) if op == "max" else min(values)
    top = [row for row in valued if float(row[measure]) == best]
    answers = {_shown(row.get(column)) for row in top}
    if len(answers) > 1:
        return Verdict("wrong", f"a tie: {sorted(answers)}", f"{len(top)} source rows share the {op} {measure} {_shown(best)}{where}")
    truth = top[0].get(column)
    return _judge(
        same(truth, gold, column in source.numeric),
        _shown(truth),
        f"the {op} {measure}{where} is {_shown(best)}, on the row with {column} = {_shown(truth)!r}",
    )


def _view_url(task: Any) -> str:
    return str(task.gold_steps[-1].text) if task.gold_steps else ""


def check_sort(task: Any, graph: Graph) -> Verdict:
    target, source = task.quality["target"], graph.source
    column = source.column(str(target.get("field")))
    if column is None:
        return _unchecked(f"sort field {target.get('field')!r} is not in the source")
    if target.get("first") is None:
        return _unchecked("the task states no first value to check")
    keyed = [(k, row[column]) for row in source.rows if (k := sort_key(row.get(column))) is not None]
    kind = Counter(k[0] for k, _ in keyed).most_common(1)[0][0]
    same_kind = [(k, v) for k, v in keyed if k[0] == kind]
    first = (max if target.get("direction") == "desc" else min)(same_kind, key=lambda kv: kv[0])[1]
    word = "largest" if target.get("direction") == "desc" else "smallest"
    return _judge(
        same(first, target["first"], column in source.numeric),
        _shown(first),
        f"the {word} {column} of all {len(source.rows)} source rows is {_shown(first)!r}",
    )


def check_filter(task: Any, graph: Graph) -> Verdict:
    target, source = task.quality["target"], graph.source
    column = source.column(str(target.get("param")))
    if column is None:
        return _unchecked(f"filter parameter {target.get('param')!r} is not a source column")
    chosen = {i for i, row in enumerate(source.rows) if same_param(row.get(column), str(target.get("value")), column in source.numeric)}
    truth = f"{len(chosen)} source rows with {column} = {target.get('value')!r}"
    listing = graph.by_url.get(_view_url(task))
    if listing is None or not graph.backed(listing.id):
        return _unchecked("the view's listing was not crawled or its records are not source rows")
    shown = [(r, record_rows(source, r)) for r in graph.members(listing.id)]
    stray = [r.text or r.id for r, rows in shown if rows and not set(rows) & chosen]
    if stray:
        return Verdict("wrong", truth, f"the view shows records outside the restriction: {stray[:3]}")
    stated = listing.attrs.get("total_stated")
    if stated is not None and int(stated) != len(chosen):
        return Verdict("wrong", truth, f"the view states {stated} records")
    if listing.attrs.get("complete") and len(shown) != len(chosen):
        return Verdict("wrong", truth, f"the complete view lists {len(shown)} records")
    return Verdict("right", truth)


def check_find_record(task: Any, graph: Graph) -> Verdict:
    target, source = task.quality["target"], graph.source
    record = graph.records.get(task.evidence[0]) if task.evidence else None
    if record is None:
        return _unchecked("the target record is not in the graph")
    if not any(graph.backed(str(lst)) for lst in (record.attrs.get("listings") or [record.attrs.get("listing")])):
        return _unchecked("the record's listing does not list source rows")
    values = {lb: _fields(record).get(lb, {}).get("raw") for lb in target.get("fields") or []}
    rows = rows_with(source, values)
    if isinstance(rows, str):
        return _unchecked(f"identifying field {rows!r} is not in the source")
    named = ", ".join(f"{k} = {v!r}" for k, v in values.items())
    return _judge(len(rows) == 1, f"{len(rows)} source rows", f"{len(rows)} source rows have {named}")


def check_query(task: Any, graph: Graph) -> Verdict:
    """A query-console goal ("make the site show exactly the records meeting …"): its records are exactly the source rows meeting the conditions."""
    goal, source = task.quality["change"], graph.source
    if not task.evidence or not graph.backed(str(task.evidence[0])):
        return _unchecked("the queried listing's records are not source rows")
    rows = _matching(source, goal.get("conditions") or [])
    if isinstance(rows, str):
        return _unchecked(f"condition field {rows!r} is not in the source")
    matched = {id(row) for row in rows}
    shown = [record_rows(source, graph.records[r]) if r in graph.records else None for r in goal.get("records") or []]
    if any(not m or len(m) != 1 for m in shown):
        return _unchecked("a goal record does not match exactly one source row")
    named = {id(source.rows[m[0]]) for m in shown if m}
    truth = f"{len(rows)} source rows meet {goal.get('conditions')}"
    return _judge(named == matched, truth, f"the goal names {len(named)} records, {len(named & matched)} of them among the source's")


def _flow_pick(step: dict[str, Any], pool: list[dict[str, Any]], graph: Graph) -> dict[str, Any] | str:
    """The source row a pick names, re-derived over ``pool``; why not when the source disagrees."""
    measure = graph.source.column(str(step["pick"]))
    if measure is None:
        return f"measure {step['pick']!r} is not in the source"
    valued = [row for row in pool if isinstance(row.get(measure), (int, float)) and not isinstance(row.get(measure), bool)]
    if not valued:
        return f"no source row of the {len(pool)} has a {measure}"
    best = (max if step["op"] == "max" else min)(float(row[measure]) for row in valued)
    top = [row for row in valued if float(row[measure]) == best]
    if len(top) != 1:
        return f"{len(top)} source rows share the {step['op']} {measure} {_shown(best)}"
    record = graph.records.get(str(step["record"]))
    rows = record_rows(graph.source, record) if record is not None else None
    if not rows or graph.source.rows[rows[0]] is not top[0]:
        return f"the {step['op']} {measure} of the {len(pool)} rows is on another row than the picked record's"
    return top[0]


def _flow_count(step: dict[str, Any], picked: dict[str, Any], graph: Graph) -> list[dict[str, Any]] | str:
    """The source rows a count covers (related to the picked row, meeting its condition); why not when a field is not in the source."""
    source = graph.source
    column = source.column(str(step["shared"]))
    if column is None:
        return f"field {step['shared']!r} is not in the source"
    relation = step.get("relation", "eq")
    rows = _matching(source, [step["extra"]])
    if isinstance(rows, str):
        return f"condition field {rows!r} is not in the source"
    if relation == "eq":
        return [row for row in rows if same(row.get(column), picked.get(column), column in source.numeric)]
    return [row for row in rows if _holds(row, column, relation, picked.get(column), True)]


def check_flow(task: Any, graph: Graph) -> Verdict:
    """A value-flow chain or task graph: every pick and count re-derived from the source, then the deliverable."""
    flow = task.quality["flow"]
    if not graph.backed(str(flow.get("listing"))):
        return _unchecked("the listing's records are not source rows")
    steps = flow["steps"]
    if task.type == "task_graph":
        a, b, count_a, count_b = steps
        sets = []
        for pick, count in ((a, count_a), (b, count_b)):
            pool = _matching(graph.source, pick["conditions"])
            row = pool if isinstance(pool, str) else _flow_pick(pick, pool, graph)
            members = row if isinstance(row, str) else _flow_count(count, row, graph)
            if isinstance(members, str):
                return Verdict("wrong", "", members)
            if len(members) != count["count"]:
                return Verdict("wrong", str(len(members)), f"the source has {len(members)} rows for a count the task made {count['count']}")
            sets.append((row, members))
        if task.answer_kind == "number":
            diff = len(sets[0][1]) - len(sets[1][1])
            return _judge(number_of(task.gold_answer) == diff, str(diff), f"counts {len(sets[0][1])} and {len(sets[1][1])}")
        column = graph.source.column(str(count_a["shared"])) or ""
        winner = sets[0][0] if len(sets[0][1]) > len(sets[1][1]) else sets[1][0]
        return _judge(same(winner.get(column), task.gold_answer, False), _shown(winner.get(column)), f"the {column} with more rows")
    pool: list[dict[str, Any]] | str = []
    picked: dict[str, Any] | None = None
    for step in steps:
        if "pick" in step:
            if step["conditions"]:
                pool = _matching(graph.source, step["conditions"])
            found = pool if isinstance(pool, str) else _flow_pick(step, pool, graph)
            if isinstance(found, str):
                return Verdict("wrong", "", found)
            picked = found
        else:
            assert picked is not None
            pool = _flow_count(step, picked, graph)
            if isinstance(pool, str):
                return Verdict("wrong", "", pool)
            if len(pool) != step["count"]:
                return Verdict("wrong", str(len(pool)), f"the source has {len(pool)} rows for a count the task made {step['count']}")
    if "count" in steps[-1]:
        return _judge(number_of(task.gold_answer) == steps[-1]["count"], str(steps[-1]["count"]), "the last count")
    if task.gold_answer is not None and picked is not None:
        return _judge(any(same(v, task.gold_answer, False) for v in picked.values()), "", "the picked row shows the answer")
    return Verdict("right", "the picked record's page")


def check(task: Any, graph: Graph) -> Verdict:
    """The verdict on one task's gold, by its structured goal."""
    quality = task.quality
    if isinstance(quality.get("flow"), dict) and task.type in ("chained", "task_graph") and quality["flow"].get("steps"):
        return check_flow(task, graph)
    target = quality.get("target") if isinstance(quality.get("target"), dict) else {}
    if isinstance(quality.get("lookup"), dict):
        return check_lookup(task, graph)
    if isinstance(quality.get("compare"), dict):
        return check_compare(task, graph)
    if target.get("kind") == "sort":
        return check_sort(task, graph)
    if target.get("kind") == "filter":
        return check_filter(task, graph)
    if target.get("kind") == "record":
        return check_find_record(task, graph)
    if target.get("kind") == "content":
        return _unchecked("a content page: its sentence is not source data")
    if isinstance(quality.get("change"), dict) and quality["change"].get("kind") == "query":
        return check_query(task, graph)
    if isinstance(quality.get("change"), dict):
        return _unchecked("a change of state (a form): no value to recompute")
    return _unchecked(f"no structured goal ({task.type})")

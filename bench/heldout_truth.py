"""Interim gold checks for ``bench/heldout.py``: answers recomputed from a SQLite file, find targets from a site's files.

Used only until ``bench/truth.py`` offers a per-task checker (``heldout._truth_checker`` prefers that
one). A task's population is the SQL behind the listing its gold came from, without any row cap:
a table page (``/db/table?col=value`` filters kept, ``_``-parameters dropped), a canned query (its
SQL from the Datasette metadata), or an ad-hoc ``?sql=`` query (its SQL): the rows the listing
stands for, not the 1,000 a result page shows or the 100 of a table page. Lookups
are checked for a unique record and its value; compare goals (count, which, max/min, range, count
difference) are recomputed over the population. A static site's find targets are checked against
every HTML file of its folder (:class:`FolderTruth`). Verdicts: ``ok``, ``WRONG`` (with the true
answer or why), ``unchecked`` (with why).
"""

from __future__ import annotations

import json
import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["SqliteTruth", "FolderTruth"]

_OPS = {"eq": "=", "gt": ">", "lt": "<"}


class SqliteTruth:
    """Recomputes web-task golds over a Datasette database (see the module docstring)."""

    def __init__(self, db: Path, metadata: Path, root: str) -> None:
        self.db = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        meta = json.loads(metadata.read_text())
        self.queries = {name: q["sql"] for d in meta.get("databases", {}).values() for name, q in d.get("queries", {}).items()}
        self.tables = {r[0] for r in self.db.execute("select name from sqlite_master where type = 'table'")}
        self.root = root

    def population(self, url: str) -> tuple[str, list[Any]] | None:
        """``(sql, args)`` selecting every row the listing at ``url`` stands for, or None when unknown."""
        parts = urlsplit(url if "://" in url else self.root + url)
        segments = [unquote(s) for s in parts.path.strip("/").split("/") if s]
        query = parse_qsl(parts.query)
        sql = dict(query).get("sql")
        if sql and len(segments) == 1:
            return f"select * from ({sql})", []
        if len(segments) != 2:
            return None
        name = segments[1]
        if name in self.queries:
            return f"select * from ({self.queries[name]})", []
        if name not in self.tables:
            return None
        filters = [(k, v) for k, v in query if not k.startswith("_") and "__" not in k]
        where = " and ".join(f'"{k}" = ?' for k, _ in filters) or "1"
        return f"select * from {name} where {where}", [v for _, v in filters]

    def check(self, task: Any, kg: Any) -> dict[str, Any]:
        """The verdict on ``task``'s gold (see the module docstring)."""
        if "lookup" in task.quality:
            goal = task.quality["lookup"]
            pop = self.population(str(goal.get("answer_page") or ""))
            return self._lookup(goal, pop) if pop else {"verdict": "unchecked", "why": f"no population for {goal.get('answer_page')}"}
        if "compare" in task.quality:
            goal = task.quality["compare"]
            url = str(kg.node(goal["listing"]).attrs.get("url")) if goal.get("listing") in kg else ""
            pop = self.population(url)
            return self._compare(goal, pop) if pop else {"verdict": "unchecked", "why": f"no population for listing {url}"}
        return {"verdict": "unchecked", "why": "no structured goal to recompute (judge by hand)"}

    def _rows(self, pop: tuple[str, list[Any]], conds: list[list[Any]], select: str = "*", tail: str = "") -> list[tuple[Any, ...]]:
        sql, args = pop
        where = " and ".join(f'"{label}" {_OPS[op]} ?' for label, op, _ in conds) or "1"
        return self.db.execute(f"select {select} from ({sql}) where {where} {tail}", args + [v for _, _, v in conds]).fetchall()

    def _lookup(self, goal: dict[str, Any], pop: tuple[str, list[Any]]) -> dict[str, Any]:
        conds = [[k, "eq", v] for k, v in goal["identify"].items()]
        rows = self._rows(pop, conds, f'"{goal["field"]}"')
        found = sorted({str(r[0]) for r in rows})
        base = {"population": pop[0], "matches": len(rows)}
        if len(rows) != 1:
            return base | {"verdict": "WRONG", "why": f"{len(rows)} records match {goal['identify']} (values {found[:5]}): not one record"}
        ok = str(rows[0][0]) == str(goal["raw"])
        return base | {"verdict": "ok" if ok else "WRONG", "true": found[0]}

    def _compare(self, goal: dict[str, Any], pop: tuple[str, list[Any]]) -> dict[str, Any]:
        conds, op = goal["conditions"], goal["op"]
        base: dict[str, Any] = {"population": pop[0]}
        if op == "count":
            true: Any = self._rows(pop, conds, "count(*)")[0][0]
            return base | {"verdict": "ok" if str(true) == str(goal["answer"]) else "WRONG", "true": true}
        if op in ("max", "min"):
            m = goal["measure"]
            rows = self._rows(
                pop, conds, f'"{goal["field"]}", "{m}"', f'and "{m}" is not null order by "{m}" {"desc" if op == "max" else "asc"} limit 2'
            )
            if not rows:
                return base | {"verdict": "WRONG", "why": "no record has the measure"}
            tie = len(rows) == 2 and rows[0][1] == rows[1][1]
            ok = str(rows[0][0]) == str(goal["answer"]) and not tie
            return (
                base
                | {"verdict": "ok" if ok else "WRONG", "true": rows[0][0], "top two": rows}
                | ({"why": "a tie at the top"} if tie else {})
            )
        if op == "range":
            lo, hi = self._rows(pop, conds, f'min("{goal["measure"]}"), max("{goal["measure"]}")')[0]
            true = round(float(hi) - float(lo), 8)
            return base | {"verdict": "ok" if abs(true - float(goal["value"])) < 1e-6 else "WRONG", "true": true}
        if op in ("which", "count_difference"):
            label = goal["field"]
            counts = [self._rows(pop, [*conds, [label, "eq", option]], "count(*)")[0][0] for option in goal["options"]]
            if op == "count_difference":
                true = counts[0] - counts[1]
                return base | {"verdict": "ok" if str(true) == str(goal["answer"]) else "WRONG", "true": true, "counts": counts}
            winner = goal["options"][0] if counts[0] > counts[1] else goal["options"][1]
            ok = counts[0] != counts[1] and str(goal["answer"]) in str(winner)
            return base | {"verdict": "ok" if ok else "WRONG", "true": winner, "counts": counts}
        return base | {"verdict": "unchecked", "why": f"unknown compare op {op!r}"}


class _Text(HTMLParser):
    """The visible text of an HTML document (scripts and styles left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _norm(text: str) -> str:
    """Words only, lower case, one space apart: markup splitting a sentence ("<b>ROWS</b>: The …") does not matter."""
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def _path(url: str) -> str:
    """A page's file path: ``/`` and ``/dir/`` read as their ``index.html``."""
    path = urlsplit(url).path or "/"
    return path + "index.html" if path.endswith("/") else path


class FolderTruth:
    """Checks find targets of a static site against every HTML file of its folder, crawled or not.

    A content target (a sentence the task quotes or paraphrases) is right when exactly one page of
    the whole site holds it and that page is the task's ``page_is`` target; a sentence on several
    pages makes the task ambiguous (the agent's natural answer may be rejected).
    """

    def __init__(self, folder: Path, root: str) -> None:
        self.root = root
        self.pages: dict[str, str] = {}
        for path in sorted(folder.rglob("*.html")):
            parser = _Text()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            self.pages["/" + path.relative_to(folder).as_posix()] = _norm(" ".join(parser.parts))

    def check(self, task: Any, kg: Any) -> dict[str, Any]:
        """The verdict on ``task``'s target (see the class docstring)."""
        target = task.quality.get("target") or {}
        sentence = target.get("sentence")
        if target.get("kind") != "content" or not sentence:
            return {"verdict": "unchecked", "why": "not a content target (judge by hand)"}
        wanted = _norm(sentence)
        holders = [url for url, text in self.pages.items() if wanted in text]
        gold = next((c.value for c in task.success if c.kind == "page_is"), "")
        gold_path = _path(gold)
        crawled = {_path(str(p.attrs.get("url"))) for p in kg.nodes("page")} if kg is not None else set()
        others = [h for h in holders if h != gold_path]
        base = {"pages holding it": holders[:8], "holders": len(holders), "crawled holders": [h for h in holders if h in crawled][:8]}
        if not holders:
            return base | {"verdict": "unchecked", "why": "the sentence is not found in the files (rephrased or joined text)"}
        if not others:
            return base | {"verdict": "ok"}
        seen = [h for h in others if h in crawled]
        where = (
            f"also on {len(seen)} crawled page(s) {seen[:3]}"
            if seen
            else f"also on {len(others)} page(s) the crawl did not open {others[:3]}"
        )
        return base | {
            "verdict": "WRONG",
            "why": f"not unique: {where}" if gold_path in holders else f"not on {gold_path} but on {others[:3]}",
        }

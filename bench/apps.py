"""Change tasks on stateful applications (issue 33): kinds, truth against the application's database, wrong states, oracle, reset cost.

Per application (Trac and Roundup, served on 127.0.0.1 from the seeded state ``make test-data`` builds; reset to it
before every episode): crawl once, generate change goals (``web-change``) and the default families
(``web-goals``) with seed 0, then

* **truth**: every change gold is replayed in a fresh state and the application's *database* is
  compared with the state before, read directly (never through the application): exactly the
  record the goal names was created / changed / commented, with exactly the asked values, and
  nothing else changed, beyond the application's own rules (Roundup moves a commented issue to
  "chatting"; Trac hands a ticket owned by its component's default owner to the new component's).
  A gold whose database diff says otherwise is *wrong*;
* **wrong states**: each change check is tried on a wrong end state made from its own gold: the
  same steps on another record (edit, comment), or the gold done twice (create, comment). Each
  must fail;
* **oracle**: the harness's ``oracle`` agent over every kept task (two episodes at once: the
  episode manager gives the application to one at a time);
* **reset**: the median and the longest of 20 resets of the state folder, beside the floor of
  copying the database file once (a ratio);
* **composites**: three chains (levels 1-6) and two task graphs composed over the crawl and
  its change goals (state chains: create, comment, change, quote; task graphs: create and edit in
  either order, then a comment quoting the new number, each order replayed), how far each chain
  got and why it stopped, why a task graph was dropped, run by the oracle with the rest.

Run from the repository root (``make test-data`` first)::

    .venv/bin/python bench/apps.py
    .venv/bin/python bench/apps.py --app trac --count 12

The last line printed is ``RESULT {json}``. The exit code is 1 when any gold is wrong or a wrong
state passes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
_DATA = _ROOT / "tests" / "data"
_CACHE = _DATA / "cache"

#: A database snapshot: records by id (every column; multi-valued links as sorted ";"-joined names), the comments
#: as (record id, text), and the wiki pages' latest text by name (none on an application without a wiki).
Snapshot = tuple[dict[int, dict[str, Any]], list[tuple[int, str]], dict[str, str]]


def _trac_snapshot(db: Path) -> Snapshot:
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        owners = dict(con.execute("SELECT name, owner FROM component").fetchall())
        rows = {r["id"]: dict(r) | {"component_owner": owners.get(r["component"])} for r in con.execute("SELECT * FROM ticket")}
        comments = [(r[0], r[1]) for r in con.execute("SELECT ticket, newvalue FROM ticket_change WHERE field = 'comment' AND newvalue != '' ORDER BY time")]
        pages = {r[0]: r[1] for r in con.execute("SELECT name, text FROM wiki w WHERE version = (SELECT max(version) FROM wiki WHERE name = w.name)")}
    con.close()
    return rows, comments, pages


def _roundup_snapshot(db: Path) -> Snapshot:
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        rows = {r["id"]: dict(r) for r in con.execute(
            "SELECT i.id, i._title AS title, s._name AS status, p._name AS priority, i._assignedto AS assignedto, i._activity AS activity, i._actor AS actor"
            " FROM _issue i LEFT JOIN _status s ON s.id = i._status LEFT JOIN _priority p ON p.id = i._priority")}
        keywords: dict[int, list[str]] = {}
        for issue, name in con.execute("SELECT l.nodeid, k._name FROM issue_keyword l JOIN _keyword k ON k.id = l.linkid"):
            keywords.setdefault(int(issue), []).append(name)
        for issue, row in rows.items():
            row["keyword"] = ";".join(sorted(keywords.get(int(issue), [])))
        comments = [(r[0], r[1]) for r in con.execute("SELECT l.nodeid, m._summary FROM issue_messages l JOIN _msg m ON m.id = l.linkid ORDER BY m.id")]
    con.close()
    return rows, comments, {}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _trac(folder: Path, port: int) -> tuple[list[str], Any, str]:
    from taskloom.tools.environment.appstate import StateFolder

    state = StateFolder.copy_of(_CACHE / "trac-env", folder / "live")
    return [str(_CACHE / "trac-venv" / "bin" / "python"), str(_CACHE.parent / "tracd.py"), "-s", "-b", "127.0.0.1", "-p", str(port), str(state.live)], state, f"http://127.0.0.1:{port}/"


def _roundup(folder: Path, port: int) -> tuple[list[str], Any, str]:
    """The tracker's home copied with its ``web`` URL on ``port``; its state is the ``db`` folder (as the tests' fixture serves it)."""
    import os

    from taskloom.tools.environment.appstate import StateFolder

    home = folder / "tracker"
    shutil.copytree(_CACHE / "roundup-env", home, ignore=shutil.ignore_patterns("db"))
    state = StateFolder.copy_of(_CACHE / "roundup-env" / "db", home / "db")
    url = f"http://127.0.0.1:{port}/tracker"
    config = home / "config.ini"
    config.write_text("".join(f"web = {url}/\n" if line.startswith("web = ") else line for line in config.read_text().splitlines(keepends=True)))
    command = [str(_CACHE / "roundup-venv" / "bin" / "roundup-server"), "-u", str(os.getuid()), "-n", "127.0.0.1", "-p", str(port), f"tracker={home}"]
    return command, state, url + "/"


@dataclass
class App:
    """How to build, serve and read one application."""

    name: str
    build: list[str]
    db: str  # the database file, inside the state folder
    serve: Callable[[Path, int], tuple[list[str], Any, str]]  # (folder, port) -> (command, state folder, base URL)
    crawl: dict[str, Any]
    snapshot: Callable[[Path], Snapshot]
    key: str  # the database column the goals' key (title) is
    stamps: tuple[str, ...]  # columns the application stamps on every change
    comment_effects: tuple[str, ...] = ()  # columns the application itself may change when a comment is added (its own rules)
    follows: Callable[[dict[str, Any], dict[str, Any]], set[str]] = lambda before, after: set()  # columns the application's own rules changed along (before, after: one record)


def _trac_follows(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """Trac's rule: a ticket owned by its old component's default owner follows the component to the new one's."""
    moved = before["component"] != after["component"] and before["owner"] == before["component_owner"] and after["owner"] == after["component_owner"]
    return {"owner"} if moved and before["owner"] != after["owner"] else set()


APPS = {
    "trac": App("trac", ["bash", str(_DATA / "build-trac.sh")], "db/trac.db", _trac, {"max_pages": 50, "max_depth": 2, "max_states": 0, "click_budget": 0},
                _trac_snapshot, "summary", ("changetime", "component_owner"), follows=_trac_follows),
    # Roundup's classic status auditor moves an issue to "chatting" when a message is added
    "roundup": App("roundup", ["bash", str(_DATA / "build-roundup.sh")], "db", _roundup, {"max_pages": 30, "max_depth": 2, "max_states": 0, "click_budget": 0},
                   _roundup_snapshot, "title", ("activity", "actor"), ("status",)),
}


@contextlib.contextmanager
def _served(app: App, folder: Path) -> Iterator[tuple[str, Any]]:
    subprocess.run(app.build, check=True)
    command, state, url = app.serve(folder, _free_port())
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url, timeout=2).close()
                break
            time.sleep(0.1)
        yield url, state
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def diff_verdict(app: App, task: Any, before: Snapshot, after: Snapshot) -> str | None:
    """None when the database changed exactly as the goal says; else why not."""
    goal = task.quality["change"]
    rows0, notes0, pages0 = before
    rows1, notes1, pages1 = after
    added = [rows1[i] for i in rows1.keys() - rows0.keys()]
    removed = rows0.keys() - rows1.keys()
    changed = {i: {k for k in rows1[i] if rows1[i][k] != rows0[i][k] and k not in app.stamps} for i in rows0.keys() & rows1.keys()}
    changed = {i: cols - app.follows(rows0[i], rows1[i]) for i, cols in changed.items()}
    changed = {i: cols for i, cols in changed.items() if cols}
    new_notes = notes1[len(notes0):] if notes1[: len(notes0)] == notes0 else None
    if removed or new_notes is None:
        return f"records removed {sorted(removed)} or comments rewritten"
    values = {k: str(v) for k, v in goal.get("values", {}).items()}
    if goal["kind"] == "wiki":
        return _wiki_verdict(goal, pages0, pages1) or (f"{len(added)} records added, {len(changed)} changed" if added or changed or new_notes else None)
    if pages1 != pages0:
        return f"wiki pages changed: {sorted(n for n in pages1 if pages1[n] != pages0.get(n))}"
    if goal["kind"] == "bulk":
        return _bulk_verdict(goal, rows0, changed, rows1, values) or (f"{len(added)} records added, {len(new_notes)} comments" if added or new_notes else None)
    title = " ".join(next(iter(goal["key"].values())).split()).lower()
    if goal["kind"] == "create":
        if len(added) != 1 or changed or new_notes:
            return f"{len(added)} records added, {len(changed)} changed, {len(new_notes)} comments"
        row = added[0]
        wrong = {k: row.get(k) for k, v in values.items() if str(row.get(k)) != v}
        return None if " ".join(str(row[app.key]).split()).lower() == title and not wrong else f"the new record has {row[app.key]!r} {wrong}"
    target = [i for i, r in rows0.items() if " ".join(str(r[app.key]).split()).lower() == title]
    if len(target) != 1 or added:
        return f"{len(target)} records titled {title!r}, {len(added)} added"
    if goal["kind"] == "edit":
        wrong = {k: rows1[target[0]].get(k) for k, v in values.items() if str(rows1[target[0]].get(k)) != v}
        if set(changed) != {target[0]} or changed[target[0]] != set(values) or wrong or new_notes:
            return f"changed {changed}, wrong {wrong}, comments {new_notes}"
        return None
    if {i: c for i, c in changed.items() if i != target[0] or c - set(app.comment_effects)} or new_notes != [(target[0], goal["text"])]:
        return f"changed {changed}, new comments {new_notes}"
    return None


def _bulk_verdict(goal: dict[str, Any], rows0: dict[int, dict[str, Any]], changed: dict[int, set[str]], rows1: dict[int, dict[str, Any]], values: dict[str, str]) -> str | None:
    """The condition read from the database matches exactly the goal's records, and exactly they changed, in the target column only, to the value."""
    def holds(row: dict[str, Any], field: str, value: str) -> bool:
        return set(str(row.get(field) or "").split(";")) == set(value.split(";")) if field == "keyword" else str(row.get(field)) == value

    matched = {i for i, row in rows0.items() if all(holds(row, k, v) for k, v in goal["condition"].items())}
    ids = {int(i) for i in goal["ids"]}
    if matched != ids:
        return f"the condition matches {sorted(matched)} in the database, the goal names {sorted(ids)}"
    wrong = {i: rows1[i].get(k) for i in ids for k, v in values.items() if str(rows1[i].get(k)) != v}
    if set(changed) != {i for i in ids if any(str(rows0[i].get(k)) != v for k, v in values.items())} or any(c != set(values) for c in changed.values()) or wrong:
        return f"changed {changed}, wrong {wrong}"
    return None


def _wiki_verdict(goal: dict[str, Any], pages0: dict[str, str], pages1: dict[str, str]) -> str | None:
    """Only the named page changed, by exactly the sentence, added once, at the end of the named section."""
    name, sentence = goal["name"], goal["text"]
    others = sorted(n for n in pages1.keys() | pages0.keys() if n != name and pages1.get(n) != pages0.get(n))
    old, new = pages0.get(name, ""), pages1.get(name, "")
    if others or new.count(sentence) != 1 or old.count(sentence):
        return f"other pages changed {others} or the sentence is there {new.count(sentence)} times"
    lines0, lines1 = old.rstrip().splitlines(), new.rstrip().splitlines()
    at = next((n for n, line in enumerate(lines1) if sentence in line), -1)
    rest = lines1[:at] + ([lines1[at].replace(sentence, "").rstrip()] if lines1[at].replace(sentence, "").strip() else []) + lines1[at + 1:]
    if [x for x in rest if x.strip()] != [x for x in lines0 if x.strip()]:
        return "the page's other text changed"
    heading = next((line for line in reversed(lines1[:at]) if line.lstrip().startswith(("=", "#"))), "")
    if goal["section"] not in heading:
        return f"the sentence is under {heading!r}, not the section {goal['section']!r}"
    return None


def _wrong_state(task: Any, others: list[Any]) -> tuple[str, Any] | None:
    """A wrong end state made from the task's own gold: on another record, or done twice."""
    goal = task.quality["change"]
    if goal["kind"] == "bulk":
        return "one record missed", task.model_copy(update={"gold_steps": _drop_last_record(task.gold_steps)})
    if goal["kind"] in ("edit", "comment"):
        other = next((t for t in others if t.quality["change"].get("record") not in (None, goal["record"])), None)
        if other is not None:
            steps = [s.model_copy(update={"text": other.quality["change"]["record"]}) if s.action == "navigate" else s for s in task.gold_steps]
            return "on another record", task.model_copy(update={"gold_steps": steps})
    if goal["kind"] == "wiki":  # the gold types the whole page: done twice it types the same page; the sentence twice is the wrong state
        steps = [s.model_copy(update={"text": s.text.replace(goal["text"], f"{goal['text']} {goal['text']}")}) if s.action == "type" else s for s in task.gold_steps]
        return "the sentence added twice", task.model_copy(update={"gold_steps": steps})
    if goal["kind"] in ("create", "comment"):
        return "done twice", task.model_copy(update={"gold_steps": task.gold_steps + task.gold_steps})
    return None


def _drop_last_record(steps: list[Any]) -> list[Any]:
    """The gold steps without the last record's (from its last ``navigate`` on)."""
    last = max(n for n, s in enumerate(steps) if s.action == "navigate")
    return steps[:last]


async def _app(app: App, count: int, folder: Path) -> dict[str, Any]:
    from taskloom.harness.finish import family_of
    from taskloom.harness.service import Harness
    from taskloom.harness.store import RunStore
    from taskloom.server.app import build_server
    from taskloom.tools.generate.web.paths import replay_web_task
    from taskloom.tools.runtime import Runtime
    from taskloom.tools.settings import Settings

    with _served(app, folder) as (url, state):
        settings = Settings(workspace=folder / "ws", embedder="hashing", crawl_delay=0, record_screenshots=False)
        async with Runtime(settings) as rt:
            rt.episodes.state_reset = state.reset
            began = time.perf_counter()
            graph_id = (await rt.graphs.ingest_website(url, **app.crawl)).graph_id
            crawl_s = time.perf_counter() - began
            changes = await rt.task_service().generate(graph_id, count=count, seed=0, use_llm=False, generator="web-change")
            others = await rt.task_service().generate(graph_id, count=count, seed=0, use_llm=False)
            change_tasks = [rt.tasks.load(i) for i in changes.task_ids]
            default_tasks = [rt.tasks.load(i) for i in others.task_ids]
            truth: Counter[str] = Counter()
            wrong_golds: list[dict[str, Any]] = []
            wrong_states: list[dict[str, Any]] = []
            for task in change_tasks:
                state.reset()
                before = app.snapshot(state.live / app.db)
                _, dropped = await replay_web_task(task.model_copy(deep=True), rt.episodes)
                why = dropped.reason if dropped is not None else diff_verdict(app, task, before, app.snapshot(state.live / app.db))
                truth["right" if why is None else "wrong"] += 1
                if why is not None:
                    wrong_golds.append({"instruction": task.instruction, "why": why})
                made = _wrong_state(task, change_tasks)
                if made is not None:
                    _, refused = await replay_web_task(made[1], rt.episodes)
                    wrong_states.append({"kind": task.quality["change"]["kind"], "state": made[0], "failed": refused is not None, "instruction": task.instruction})
            kept = change_tasks + [t for t in default_tasks if t.id not in {c.id for c in change_tasks}]
            chains = await rt.task_service().compose(graph_id, "chain", count=3, levels=6, seed=0)
            graphs = await rt.task_service().compose(graph_id, "dag", count=2, seed=0)
            composites = [rt.tasks.load(i) for i in chains.task_ids + graphs.task_ids]
            kept += composites
            harness = Harness(settings, server_factory=build_server, runtime=rt)
            run = await harness.run(kept, ["oracle"], concurrency=2, max_steps=30, timeout_s=180.0, seed=0)
            results = RunStore(rt.workspace, run.run_id).results()
    by_id = {t.id: t for t in kept}
    resets = [state.reset() for _ in range(20)]
    floor = []
    for _ in range(5):
        began = time.perf_counter()
        shutil.copyfile(state.pristine / app.db, folder / "copy.db")
        floor.append(time.perf_counter() - began)
    kinds = Counter(t.quality["change"]["kind"] for t in change_tasks)
    families = Counter(family_of(t).removeprefix("web-") for t in kept)
    return {
        "app": app.name,
        "crawl s": round(crawl_s, 1),
        "change kinds": dict(kinds),
        "families": dict(families),
        "no-ops dropped": sum(r.stages.get("no_op", {}).get("in", 0) - r.stages.get("no_op", {}).get("kept", 0) for r in (changes.report, others.report)),
        "gold right": truth["right"],
        "gold wrong": truth["wrong"],
        "wrong states failed": f"{sum(w['failed'] for w in wrong_states)}/{len(wrong_states)}",
        "oracle": f"{sum(bool(r.success) for r in results)}/{len(results)}",
        "reset ms (median, max)": [round(statistics.median(resets) * 1000), round(max(resets) * 1000)],
        "reset / db copy": round(statistics.median(resets) / max(statistics.median(floor), 1e-6), 1),
        "wrong golds": wrong_golds,
        "wrong states passed": [w for w in wrong_states if not w["failed"]],
        "oracle failures": [
            {"family": family_of(by_id[r.task_id]), "status": r.status, "reason": r.reason, "instruction": by_id[r.task_id].instruction,
             "failed": [f"{c.kind}: {c.observed}" for c in r.criteria if not c.ok]}
            for r in results if not r.success
        ],
        "verbatim": [{"kind": t.quality["change"]["kind"], "instruction": t.instruction, "checks": [c.value for c in t.success]} for t in _one_per_kind(change_tasks)],
        "chains": [{"reached": c.reached, "stopped": c.stopped} for c in chains.chains] or chains.reason,
        "task graphs": len(graphs.task_ids) or graphs.reason,
        "task graphs dropped": [why for _, why in graphs.dropped],
        "composites verbatim": [{"level": t.level, "instruction": t.instruction} for t in composites if t.level in (2, 4)][:4]
        + [{"level": "graph", "instruction": t.instruction} for t in composites if t.type == "task_graph"][:1],
    }


def _one_per_kind(tasks: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for task in tasks:
        seen.setdefault(task.quality["change"]["kind"], task)
    return list(seen.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=sorted(APPS), action="append", help="Only these applications (repeatable; default all).")
    parser.add_argument("--count", type=int, default=12)
    args = parser.parse_args(argv)
    rows = []
    for name in args.app or sorted(APPS):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(asyncio.run(_app(APPS[name], args.count, Path(tmp))))
        print(f"{name}: " + json.dumps(rows[-1], ensure_ascii=False), flush=True)  # each application's figures as soon as they are known
    columns = ("app", "crawl s", "change kinds", "families", "no-ops dropped", "gold right", "gold wrong", "wrong states failed", "oracle", "reset ms (median, max)", "reset / db copy")
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    for row in rows:
        for item in row["wrong golds"] + row["wrong states passed"] + row["oracle failures"]:
            print(f"{row['app']}: {json.dumps(item, ensure_ascii=False)}")
        for item in row["verbatim"]:
            print(f"\n{row['app']} {item['kind']}: {item['instruction']}\n  " + "\n  ".join(item["checks"]))
        print(f"\n{row['app']} chains: {row['chains']}; task graphs: {row['task graphs']}; dropped: {row['task graphs dropped'] or 'none'}")
        for item in row["composites verbatim"]:
            print(f"{row['app']} level {item['level']}: {item['instruction']}")
    print("RESULT " + json.dumps({"apps": rows}, ensure_ascii=False))
    return 1 if any(r["gold wrong"] or r["wrong states passed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Change-state tasks on Trac (issue 33): crawl without changing it; create, edit and comment goals checked on Trac's own exports and pages.

One crawl and one generation per module (the pipeline's replay stage resets Trac's state
before every episode); every kept gold is replayed once more in a fresh state and checked
against ``trac.db`` itself; other correct routes pass and wrong end states fail.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.async_api import Page

from taskloom.tools.evaluate.appstate import RecordCheck, column_key
from taskloom.tools.generate.web.create import create_forms
from taskloom.tools.generate.web.paths import replay_web_task
from taskloom.tools.runtime import Runtime
from taskloom.tools.tasks.model import Task

from .conftest import TracRun, route_passes, trac_counts

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # one Trac crawl (~30 s) and its replays: about 3.5 min for the file

def _kind(run: TracRun, kind: str) -> list[Task]:
    return [t for t in run.tasks if t.quality.get("change", {}).get("kind") == kind]


def _creates(run: TracRun) -> list[Task]:
    return _kind(run, "create")


def test_crawl_submits_no_form_and_finds_the_create_form(trac: TracRun) -> None:
    assert trac.before == trac.after, f"the crawl changed Trac: (tickets, changes) {trac.before} -> {trac.after}"
    forms = create_forms(trac.kg)
    assert [f.page_url.rsplit("/", 1)[-1] for f in forms] == ["newticket"]
    assert column_key(str(forms[0].key.attrs["name"])) == "summary" and forms[0].noun == "ticket"


def test_create_goals_state_the_outcome_and_replay_in_a_fresh_state(trac: TracRun) -> None:
    creates = _creates(trac)
    print(f"crawl {trac.crawl_s:.1f} s; generator {trac.report.generator}; stages {trac.report.stages}")
    for task in creates:
        print(task.instruction, "|", task.start_url, "|", [(c.kind, c.value) for c in task.success])
    assert len(creates) >= 3, trac.report.model_dump_json()[:2000]
    for task in creates:
        assert task.quality["replay"]["ok"] is True and task.gold_trajectory
        assert all(c.kind == "record" for c in task.success)
        assert "click" not in task.instruction.lower() and "select" not in task.instruction.lower()
        goal = task.quality["change"]
        assert next(iter(goal["key"].values())) in task.instruction
        assert all(f"“{v}”" in task.instruction for v in goal["values"].values())


def _truth(db: Path, task: Task) -> tuple[int, dict[str, str]]:
    goal = task.quality["change"]
    title = next(iter(goal["key"].values()))
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        rows = con.execute("SELECT * FROM ticket WHERE summary = ?", (title,)).fetchall()
        total = con.execute("SELECT count(*) FROM ticket").fetchone()[0]
    assert total == 301, f"{total} tickets after one create"
    return len(rows), {k: str(rows[0][k]) for k in goal["values"]} if rows else {}


def test_every_gold_is_true_in_tracs_database(trac: TracRun, trac_site: Any) -> None:
    async def go() -> None:
        async with Runtime(trac.settings) as rt:
            rt.episodes.state_reset = trac_site.state.reset
            for task in _creates(trac):
                _, dropped = await replay_web_task(task.model_copy(deep=True), rt.episodes)
                assert dropped is None, dropped
                found, fields = _truth(trac_site.db, task)
                assert found == 1 and fields == task.quality["change"]["values"], (task.instruction, fields)

    asyncio.run(go())


def _fill(task: Task, reverse: bool) -> Callable[[Page], Any]:
    """Trac's own form filled by label, in the other order."""
    goal = task.quality["change"]

    async def route(page: Page) -> None:
        await page.goto(goal["form"])
        items = list(goal["values"].items())
        for label, value in reversed(items) if reverse else items:
            await page.get_by_label(label.capitalize() + ":", exact=True).select_option(label=value)
        await page.get_by_label("Summary:", exact=True).fill(next(iter(goal["key"].values())))
        await page.get_by_role("button", name="Create ticket").click()
        await page.wait_for_load_state("load")

    return route


def _by_url(task: Task, values: dict[str, str], times: int = 1) -> Callable[[Page], Any]:
    """The new-ticket URL with its fields as parameters (Trac pre-fills the form from them), committed ``times`` times."""
    goal = task.quality["change"]

    async def route(page: Page) -> None:
        for _ in range(times):
            await page.goto(goal["form"] + "?" + urlencode({"summary": next(iter(goal["key"].values())), **values}))
            await page.get_by_role("button", name="Create ticket").click()
            await page.wait_for_load_state("load")

    return route


def test_other_routes_pass_and_wrong_end_states_fail(trac: TracRun, trac_site: Any) -> None:
    task = max(_creates(trac), key=lambda t: len(t.quality["change"]["values"]))
    values = task.quality["change"]["values"]
    label, value = next(iter(values.items()))
    options = next(c for c in create_forms(trac.kg)[0].choices if column_key(str(c.attrs["name"])) == label).attrs["options"]
    wrong = {**values, label: next(o for o in options if o != value and not o.startswith("("))}

    def passes(route: Callable[[Page], Any]) -> bool:
        trac_site.state.reset()
        return asyncio.run(route_passes(task, route))

    assert passes(_fill(task, reverse=True)), "the form filled in another order"
    assert passes(_by_url(task, values)), "a URL with parameters"
    assert not passes(_by_url(task, wrong)), f"a wrong {label}"
    assert not passes(_by_url(task, values, times=2)), "the ticket created twice"
    assert not passes(lambda page: page.wait_for_timeout(10)), "nothing done"
    first = RecordCheck.parse(task.success[0].value)
    trac_site.state.reset()
    with sqlite3.connect(trac_site.db) as con:
        listed = con.execute("SELECT count(*) FROM ticket WHERE status != 'closed'").fetchone()[0]  # the broadest export lists the open tickets
    assert first.count == 1 and first.total == listed + 1


def test_reset_restores_the_seeded_state(trac_site: Any) -> None:
    """A reset brings back the seeded tickets (its cost is measured in bench/apps.py, not here: no test depends on an idle machine)."""
    trac_site.state.reset()
    with sqlite3.connect(trac_site.db) as con:
        con.execute("DELETE FROM ticket WHERE id > 250")
    con.close()
    assert trac_counts(trac_site.db)[0] == 250
    trac_site.state.reset()
    assert trac_counts(trac_site.db)[0] == 300


def test_create_goals_are_deterministic(trac: TracRun, trac_site: Any) -> None:
    from taskloom.tools.generate.web.change import _task
    from taskloom.tools.generate.web.create import Export, create_tasks

    exports = [Export(url=trac_site.url + "/report/1?format=csv", columns=["ticket", "summary", "component", "milestone", "type"], rows=[{"summary": "x"}, {"summary": "y"}])]
    one, _ = create_tasks(trac.kg, exports, 7, 3, trac_site.url + "/", _task)
    two, _ = create_tasks(trac.kg, exports, 7, 3, trac_site.url + "/", _task)
    assert [t.model_dump() for t in one] == [t.model_dump() for t in two] and len(one) == 3


# --------------------------------------------------------------------------- edit and comment


_CONTROL_WORDS = ("click", "select", "button", "modify", "submit", "menu")


def test_edit_and_comment_goals_state_the_outcome(trac: TracRun) -> None:
    edits, comments = _kind(trac, "edit"), _kind(trac, "comment")
    for task in edits + comments:
        print(task.instruction, "|", [(c.kind, c.value[:120]) for c in task.success])
    print("dropped:", [d.model_dump() for d in trac.report.dropped])
    assert len(edits) >= 2 and len(comments) >= 1, trac.report.model_dump_json()[:2000]
    for task in edits + comments:
        goal = task.quality["change"]
        assert task.quality["replay"]["ok"] is True and all(c.kind == "record" for c in task.success)
        words = re.sub(r"“[^”]*”", "", task.instruction).lower()  # the quoted title and values are the record's, not controls
        assert not any(re.search(rf"\b{w}", words) for w in _CONTROL_WORDS), task.instruction
        assert f"“{goal['key']['summary']}”" in task.instruction
        assert goal["record"] not in task.instruction and task.start_url != goal["record"], "the record is found from the start page, by its title"
    for task in edits:
        goal = task.quality["change"]
        assert all(f"“{v}”" in task.instruction for v in goal["values"].values())
        assert all(goal["before"][k] != v for k, v in goal["values"].items()), "an edit that changes nothing"
    for task in comments:
        assert f"“{task.quality['change']['text']}”" in task.instruction


def _ticket(db: Path, title: str) -> dict[str, Any]:
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        rows = con.execute("SELECT * FROM ticket WHERE summary = ?", (title,)).fetchall()
    assert len(rows) == 1, f"{len(rows)} tickets titled {title!r}"
    return dict(rows[0])


def _changed_tickets(db: Path, since: int) -> set[int]:
    with sqlite3.connect(db) as con:
        return {r[0] for r in con.execute("SELECT DISTINCT ticket FROM ticket_change WHERE time > ?", (since,))}


def test_edit_and_comment_golds_are_true_in_tracs_database(trac: TracRun, trac_site: Any) -> None:
    """Each gold, replayed in a fresh state, changes exactly what the goal says in trac.db: those fields of that ticket, one comment."""
    async def go() -> None:
        async with Runtime(trac.settings) as rt:
            rt.episodes.state_reset = trac_site.state.reset
            for task in _kind(trac, "edit") + _kind(trac, "comment"):
                goal = task.quality["change"]
                title = goal["key"]["summary"]
                trac_site.state.reset()
                before = _ticket(trac_site.db, title)
                with sqlite3.connect(trac_site.db) as con:
                    last = con.execute("SELECT max(time) FROM ticket_change").fetchone()[0]
                _, dropped = await replay_web_task(task.model_copy(deep=True), rt.episodes)
                assert dropped is None, dropped
                after = _ticket(trac_site.db, title)
                wanted = {**before, **goal.get("values", {})}
                assert {k: v for k, v in after.items() if k != "changetime"} == {k: v for k, v in wanted.items() if k != "changetime"}, task.instruction
                assert _changed_tickets(trac_site.db, last) == {before["id"]}, "another ticket changed"
                if goal["kind"] == "comment":
                    with sqlite3.connect(trac_site.db) as con:
                        said = [r[0] for r in con.execute("SELECT newvalue FROM ticket_change WHERE ticket = ? AND field = 'comment' AND time > ?", (before["id"], last))]
                    assert said == [goal["text"]], said

    asyncio.run(go())


def _on_ticket(url: str, fields: dict[str, str], comment: str = "", times: int = 1, fold: bool = False) -> Callable[[Page], Any]:
    """Trac's ticket editor: opened by its folded heading (``fold``) or its top link, fields chosen by label, in reverse order."""
    async def route(page: Page) -> None:
        for _ in range(times):
            await page.goto(url)
            await (page.get_by_role("link", name="Modify Ticket") if fold else page.get_by_title("Go to the ticket editor")).click()
            for label, value in reversed(list(fields.items())):
                await page.get_by_label(label.capitalize() + ":", exact=True).select_option(label=value)
            if comment:
                await page.locator("#comment").fill(comment)
            async with page.expect_navigation(wait_until="load", timeout=60_000):  # the save's answer
                await page.get_by_role("button", name="Submit changes").click()

    return route


def _reply(url: str, comment: str) -> Callable[[Page], Any]:
    """A reply to the ticket's description: Trac pre-fills the comment box with a quote, the text goes after it."""
    async def route(page: Page) -> None:
        await page.goto(url + "?replyto=description#comment")
        box = page.locator("#comment")
        await box.fill((await box.input_value()) + "\n" + comment)
        async with page.expect_navigation(wait_until="load", timeout=60_000):  # the save's answer
            await page.get_by_role("button", name="Submit changes").click()

    return route


def test_edit_and_comment_other_routes_pass_and_wrong_end_states_fail(trac: TracRun, trac_site: Any) -> None:
    edit = max(_kind(trac, "edit"), key=lambda t: len(t.quality["change"]["values"]))
    comment = _kind(trac, "comment")[0]
    goal, said = edit.quality["change"], comment.quality["change"]
    other = next(t for t in _kind(trac, "edit") + _kind(trac, "comment") if t.quality["change"]["record"] not in (goal["record"], said["record"]))
    label, value = next(iter(goal["values"].items()))
    options = next(c for c in create_forms(trac.kg)[0].choices if column_key(str(c.attrs["name"])) == label).attrs["options"]
    wrong_value = next(o for o in options if o not in (value, goal["before"][label]) and not o.startswith("("))
    extra = next(f for f in ("priority", "type", "milestone") if f not in goal["values"])  # a field the goal leaves alone
    current = _ticket(trac_site.db, goal["key"]["summary"])[extra]
    extra_options = next(c for c in create_forms(trac.kg)[0].choices if column_key(str(c.attrs["name"])) == extra).attrs["options"]
    extra_value = next(o for o in extra_options if o != current and not o.startswith("("))

    def passes(task: Task, route: Callable[[Page], Any]) -> bool:
        trac_site.state.reset()
        return asyncio.run(route_passes(task, route))

    assert passes(edit, _on_ticket(goal["record"], goal["values"], fold=True)), "the editor opened by its heading, fields in another order"
    assert not passes(edit, _on_ticket(goal["record"], {**goal["values"], label: wrong_value})), f"a wrong {label}"
    assert not passes(edit, _on_ticket(other.quality["change"]["record"], goal["values"])), "the right change on another ticket"
    assert not passes(edit, _on_ticket(goal["record"], {**goal["values"], extra: extra_value})), f"the {extra} changed too"
    assert not passes(edit, lambda page: page.wait_for_timeout(10)), "nothing done"
    assert passes(comment, _reply(said["record"], said["text"])), "a reply to the description"
    assert not passes(comment, _on_ticket(said["record"], {}, said["text"], times=2)), "the comment added twice"
    assert not passes(comment, _on_ticket(other.quality["change"]["record"], {}, said["text"])), "the comment on another ticket"
    commented = _ticket(trac_site.db, said["key"]["summary"])[extra]  # that ticket's own value, before any route
    other_value = next(o for o in extra_options if o != commented and not o.startswith("("))
    assert not passes(comment, _on_ticket(said["record"], {extra: other_value}, said["text"])), f"the comment with the {extra} changed"


# --------------------------------------------------------------------------- chains over state


def test_a_chain_over_state_flows_the_new_tickets_number_and_is_true(trac: TracRun, trac_site: Any) -> None:
    """Level k acts on what level 1 made: its comment, its field, and its number quoted on another ticket; each level verified; level 4 true in trac.db.

    Level 4's verifying replay is the last episode of the composition, so trac.db holds its end state when the composition returns.
    """
    async def go() -> tuple[list[Task], Any]:
        async with Runtime(trac.settings) as rt:
            rt.episodes.state_reset = trac_site.state.reset
            made = await rt.task_service().compose(trac.kg.id, "chain", count=1, levels=4, seed=0)
            return [rt.tasks.load(i) for i in made.task_ids if rt.tasks.load(i).provenance.template == "state-chain"], made

    chained, made = asyncio.run(go())
    for task in chained:
        print(task.level, task.instruction)
    goals = [(t.quality["change"]["kind"], t.quality["change"].get("values"), sorted(t.quality["change"].get("fields", {}))) for t in trac.tasks]
    assert [t.level for t in chained] == [1, 2, 3, 4], (made.chains, goals)
    top = chained[-1]
    url, number = top.quality["flow"]["hidden"]
    assert number not in re.sub(r"“[^”]*”", "", top.instruction) and url not in top.instruction, "the new ticket's number and page are never stated"
    create = json.loads(top.success[0].value)
    title = create["key"]["summary"]
    ((field, value),) = json.loads(top.success[2].value)["fields"].items()
    assert field in ("type", "priority", "milestone", "component")
    with sqlite3.connect(trac_site.db) as con:
        new = con.execute(f"SELECT id, {field} FROM ticket WHERE summary = ?", (title,)).fetchall()
        notes = con.execute("SELECT ticket, newvalue FROM ticket_change WHERE field = 'comment' AND newvalue LIKE ?", (f"%#{number}%",)).fetchall()
    assert [str(i) for i, _ in new] == [number] and new[0][1] == value
    other = json.loads(top.success[3].value)["source"].rsplit("/", 1)[-1]
    assert notes == [(int(other), f"Same problem as #{number}.")]


def test_a_task_graph_over_state_joins_a_new_ticket_and_an_edit_and_holds_in_every_order(trac: TracRun, trac_site: Any) -> None:
    """Create ∥ edit → a comment on the edited ticket quoting the new number: 2 orders, each replayed; the last replay's end state true in trac.db."""
    async def go() -> tuple[list[Task], Any]:
        async with Runtime(trac.settings) as rt:
            rt.episodes.state_reset = trac_site.state.reset
            made = await rt.task_service().compose(trac.kg.id, "dag", count=1, seed=0)
            return [rt.tasks.load(i) for i in made.task_ids if rt.tasks.load(i).provenance.template == "state-graph"], made

    graphs, made = asyncio.run(go())
    assert len(graphs) == 1, (made.reason, made.dropped)
    task = graphs[0]
    print(task.instruction)
    assert sorted(task.dag) == [("s1", "s3"), ("s2", "s3")] and task.order_count == 2 and task.quality["replay"]["orders"] == 2
    url, number = task.quality["flow"]["hidden"]
    assert number not in re.sub(r"“[^”]*”", "", task.instruction) and url not in task.instruction, "the new ticket's number and page are never stated"
    title = json.loads(task.success[0].value)["key"]["summary"]
    edit = json.loads(task.subtasks[1].checks[0].value)
    edited = task.subtasks[2].checks[0]
    other = int(json.loads(edited.value)["source"].rsplit("/", 1)[-1])
    with sqlite3.connect(trac_site.db) as con:  # the last verifying replay (order s2 → s1 → s3) left its end state
        new = con.execute("SELECT id FROM ticket WHERE summary = ?", (title,)).fetchall()
        notes = con.execute("SELECT ticket, newvalue FROM ticket_change WHERE field = 'comment' AND newvalue LIKE ?", (f"%#{number}%",)).fetchall()
        row = dict(zip(("id", *edit["fields"]), con.execute(f"SELECT id, {', '.join(edit['fields'])} FROM ticket WHERE id = ?", (other,)).fetchone(), strict=True))
    assert [str(i) for (i,) in new] == [number]
    assert notes == [(other, f"Same problem as #{number}.")]
    assert all(row[f] == v for f, v in edit["fields"].items()), (row, edit)

"""Wiki section goals (issue 33): a sentence added at the end of a named section of a wiki page, on Trac 1.6's guide pages.

The section parsing and the check run on small strings; the Trac tests use the session's one
crawl and ``web-change`` generation (``trac``): each kept wiki gold is replayed once more in a
fresh state and compared with ``trac.db``'s ``wiki`` table; other routes (the edit form POSTed
over HTTP, the sentence typed at the section's end in the editor) pass; wrong end states fail.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, async_playwright

from taskloom.tools.browser.pool import CHROMIUM_ARGS, find_chromium
from taskloom.tools.evaluate.checks import check_criteria
from taskloom.tools.evaluate.sections import flat, sections, sentence_ends_section, split_section, text_digest
from taskloom.tools.generate.web.paths import replay_web_task
from taskloom.tools.generate.web.wikiedit import _usable, wiki_pages, with_sentence
from taskloom.tools.runtime import Runtime
from taskloom.tools.tasks.model import Task

from .conftest import TracRun

# --------------------------------------------------------------------------- sections on small strings

TRAC = """= Guide
[[PageOutline]]
Intro text.

== Install == #install
Run the installer and follow the steps it shows.
{{{#!sh
= not a heading
}}}

== Upgrade
Back up the environment first.
=== Details
Keep the old folder.
== Upgrade
"""


def test_headings_of_each_wiki_family_and_code_blocks() -> None:
    assert [(s.title, s.level, s.leaf) for s in sections(TRAC)] == [("Guide", 1, False), ("Install", 2, True), ("Upgrade", 2, False), ("Details", 3, True), ("Upgrade", 2, True)]
    media = "Lead.\n==History==\nOld days.\n=== Early years ===\nFew.\n==See also==\n* [[Other]]\n<pre>\n== inside pre ==\n</pre>\n"
    assert [(s.title, s.level) for s in sections(media)] == [("History", 2), ("Early years", 3), ("See also", 2)]
    moin = "#format wiki\n## a comment, not a heading\n= Welcome =\nHello.\n"
    assert [s.title for s in sections(moin)] == ["Welcome"]
    markdown = "# Title\nText.\n## Setup ##\n```\n# a shell comment\n```\n## Use\n"
    assert [(s.title, s.level) for s in sections(markdown)] == [("Title", 1), ("Setup", 2), ("Use", 2)]
    assert split_section(TRAC, "Upgrade") is None, "a heading the page has twice is not one section"
    assert _usable(TRAC) == [], "Guide has subsections, Install a code block, Upgrade is twice, Details has few words"
    assert [s.title for s in _usable("= Alpha\n" + "Plain words make a prose section right here today.\n" + "= Beta\n{{{\ncode block words here and here\n}}}\n")] == ["Alpha"]


def test_the_check_accepts_the_sentence_at_the_sections_end_only() -> None:
    page = "= Guide\nIntro text for the guide.\n\n== Install\nRun the installer.\n   * then restart\n\n== Use\nOpen the start page.\n"
    install = sections(page)[1]
    body, rest = split_section(page, "Install") or ("", "")
    said = "This part was checked."

    def check(text: str) -> tuple[bool, str]:
        return sentence_ends_section(text, "Install", said, text_digest(body), text_digest(rest))

    good = with_sentence(page, install, said)
    assert good == page.replace("   * then restart\n", "   * then restart\n\nThis part was checked.\n")
    assert check(good)[0]
    assert check(good.replace("\n", "\r\n"))[0], "a browser's CRLF lines"
    assert check(page.replace("* then restart", "* then restart This part was checked."))[0], "on the last line itself"
    assert check(page.replace("* then restart", "* then restart\n   * This part was checked."))[0], "as a last bullet"
    assert check(page) == (False, "the sentence appears 0 times on the page, not once")
    assert not check(with_sentence(good, sections(good)[1], said))[0], "added twice"
    assert "does not end" in check(with_sentence(page, sections(page)[2], said))[1], "in another section"
    assert "does not end" in check(page.replace("Run the installer.", "Run the installer. " + said))[1], "inside the section, not at its end"
    assert "earlier text" in check(good.replace("Run the installer.", "Run it."))[1]
    assert "another part" in check(good.replace("Open the start page.", "Open it."))[1]
    assert "no single section" in check(said)[1], "the page replaced by the sentence"


# --------------------------------------------------------------------------- Trac

_CONTROL_WORDS = ("click", "button", "edit this", "textarea", "text box", "submit", "save")


def _wiki(run: TracRun) -> list[Task]:
    return [t for t in run.tasks if t.quality.get("change", {}).get("kind") == "wiki"]


def _export(url: str) -> str:
    response = httpx.get(url, timeout=15)
    assert response.status_code == 200, url
    return response.text


def _versions(db: Path, name: str) -> list[str]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT text FROM wiki WHERE name = ? ORDER BY version", (name,)).fetchall()
    con.close()
    return [r[0] for r in rows]


@pytest.mark.integration
@pytest.mark.slow
def test_the_crawl_sees_wiki_pages_and_wiki_goals_are_kept(trac: TracRun) -> None:
    pages = wiki_pages(trac.kg)
    print("wiki pages:", [(p.name, p.export, p.opener.attrs["selector"], p.textarea.attrs["selector"], p.commit.attrs.get("name")) for p in pages])
    for task in _wiki(trac):
        print(task.instruction, "|", [(c.kind, c.value) for c in task.success])
    print("generator report:", {k: v for k, v in trac.report.generator.items() if "wiki" in k})
    assert len(pages) >= 2 and all(p.export.endswith("?format=txt") for p in pages)
    tasks = _wiki(trac)
    assert 1 <= len(tasks) <= 2, trac.report.model_dump_json()[:2000]
    assert len({t.quality["change"]["page"] for t in tasks}) == len(tasks), "one goal per page"
    for task in tasks:
        goal = task.quality["change"]
        assert task.quality["replay"]["ok"] is True and task.gold_trajectory
        assert [c.kind for c in task.success] == ["record"] and '"heading"' in task.success[0].value
        assert all(f"“{goal[k]}”" in task.instruction for k in ("name", "section", "text"))
        words = re.sub(r"“[^”]*”", "", task.instruction).lower()
        assert not any(w in words for w in _CONTROL_WORDS), task.instruction
        assert task.start_url != goal["page"] and goal["page"] not in task.instruction
        assert goal["section"] in [s.title for s in _usable(_export(goal["export"]))]


@pytest.mark.integration
@pytest.mark.slow
def test_wiki_golds_are_true_in_tracs_database(trac: TracRun, trac_site: Any) -> None:
    """Each gold, replayed in a fresh state, adds one version of that page: the sentence ends the section, every other line as it was."""
    async def go() -> None:
        async with Runtime(trac.settings) as rt:
            rt.episodes.state_reset = trac_site.state.reset
            for task in _wiki(trac):
                goal = task.quality["change"]
                trac_site.state.reset()
                old = _versions(trac_site.db, goal["name"])
                _, dropped = await replay_web_task(task.model_copy(deep=True), rt.episodes)
                assert dropped is None, dropped
                new = _versions(trac_site.db, goal["name"])
                assert len(new) == len(old) + 1, "one new version of the page"
                body, rest = split_section(new[-1], goal["section"]) or ("", "")
                old_body, old_rest = split_section(old[-1], goal["section"]) or ("", "")
                assert flat(body).endswith(flat(goal["text"])) and flat(new[-1]).count(flat(goal["text"])) == 1
                assert flat(body)[: -len(flat(goal["text"]))].strip() == flat(old_body)
                assert [line.rstrip() for line in rest.splitlines()] == [line.rstrip() for line in old_rest.splitlines()], "another section changed"

    asyncio.run(go())


def _post(page_url: str, make: Callable[[str], str]) -> Callable[[Page], Any]:
    """Trac's edit form POSTed over HTTP (its form token from the editor page), with the text ``make`` gives for the current markup."""
    async def route(page: Page) -> None:
        async with httpx.AsyncClient(timeout=15) as client:
            editor = await client.get(page_url, params={"action": "edit"})
            token = re.search(r'name="__FORM_TOKEN" value="([^"]+)"', editor.text)
            version = re.search(r'name="version" value="(\d+)"', editor.text)
            assert token and version, "Trac's editor form"
            current = (await client.get(page_url, params={"format": "txt"})).text
            data = {"__FORM_TOKEN": token.group(1), "action": "edit", "version": version.group(1), "text": make(current), "author": "anonymous", "save": "Submit changes"}
            done = await client.post(page_url, data=data)
            assert done.status_code in (200, 303), done.status_code

    return route


def _typed(page_url: str, section: str, sentence: str) -> Callable[[Page], Any]:
    """The editor opened by its button, the caret put after the section's last line, the sentence typed as a new paragraph."""
    async def route(page: Page) -> None:
        await page.goto(page_url)
        await page.get_by_role("button", name="Edit this page").click()
        box = page.locator("textarea#text")
        text = await box.input_value()
        found = next(s for s in sections(text) if s.title == section)
        lines = text.split("\n")
        last = max(i for i in range(found.line, found.end) if lines[i].strip())
        at = sum(len(line) + 1 for line in lines[: last + 1]) - 1
        await box.evaluate("(e, at) => { e.focus(); e.setSelectionRange(at, at); }", at)
        await page.keyboard.type("\n\n" + sentence)
        async with page.expect_navigation(wait_until="load", timeout=60_000):  # the save's answer, not the editor's own load state
            await page.get_by_role("button", name="Submit changes").click()

    return route


def _twice(text: str, section: str, sentence: str) -> str:
    once = with_sentence(text, next(s for s in sections(text) if s.title == section), sentence)
    return with_sentence(once, next(s for s in sections(once) if s.title == section), sentence)


async def _outcomes(task: Task, routes: list[Callable[[Page], Any]], reset: Callable[[], Any]) -> list[bool]:
    """Whether the task's criteria hold after each route, each from a fresh state in a fresh context of one browser (as ``route_passes``)."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            outcomes = []
            for route in routes:
                reset()
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(task.start_url or "")
                await route(page)
                await page.wait_for_load_state("load")
                outcomes.append(all(r.ok for r in await check_criteria(page, task.success, [], grace_s=0.5)))
                await context.close()
            return outcomes
        finally:
            await browser.close()


@pytest.mark.integration
@pytest.mark.slow
def test_wiki_other_routes_pass_and_wrong_end_states_fail(trac: TracRun, trac_site: Any) -> None:
    task = _wiki(trac)[0]
    goal = task.quality["change"]
    trac_site.state.reset()
    text = _export(goal["export"])
    own = next(s for s in sections(text) if s.title == goal["section"])
    other = next(s for s in sections(text) if s.title != goal["section"] and split_section(text, s.title) is not None)  # any other section of the page
    said = goal["text"]

    routes: dict[str, tuple[bool, Callable[[Page], Any]]] = {
        "the edit form POSTed over HTTP": (True, _post(goal["page"], lambda t: with_sentence(t, own, said))),
        "the sentence typed at the section's end": (True, _typed(goal["page"], goal["section"], said)),
        f"the sentence in another section ({other.title})": (False, _post(goal["page"], lambda t: with_sentence(t, other, said))),
        "added twice": (False, _post(goal["page"], lambda t: _twice(t, goal["section"], said))),
        "the page replaced by the section alone": (False, _post(goal["page"], lambda t: f"= {goal['section']}\n{said}\n")),
        "the page emptied": (False, _post(goal["page"], lambda t: "")),
        "nothing done": (False, lambda page: page.wait_for_timeout(10)),
    }
    outcomes = asyncio.run(_outcomes(task, [route for _, route in routes.values()], trac_site.state.reset))
    assert {name: ok for name, ok in zip(routes, outcomes)} == {name: wanted for name, (wanted, _) in routes.items()}

"""Change state (issue 15, family 4): goals whose outcome is a new app state or a form's result.

Two sources, both read from what the crawl observed, never from a site's names:

- **List apps.** A page whose app states (``transitions`` edges) show that a standalone
  input adds a list item when Enter is pressed (the typed text appears), that each item
  then carries its own checkbox (a checkbox seen only once an item exists), and that some
  routes hide items: a route that hides a just-added item shows only *done* items; a route
  that hides it after a checkbox was clicked shows only *open* items. Goals add seeded
  items from a neutral vocabulary, mark some done and, when such a route exists, ask for
  one view. Checked by ``items`` (the exact visible items with their checked state) and,
  when the goal names a view, the route's URL; never by which controls were used.
- **Forms.** A form (not a search or filter form) with text inputs whose values can be
  made from their labels (a name, an N-digit number, an e-mail address), on a record's
  detail page. Each subject record whose detail URL has the form page's URL template gets
  a goal. The outcome is probed in a fresh browser (:func:`probe_form`): the task is kept
  only when submitting changes what the main content says (a new line, not naming a typed
  or chosen value) or the URL's query. ``quality["change"]["validates"]`` records whether
  an invalid value (a too-short number) leaves the criterion unmet.
- **Create forms** (:mod:`.create`). A form that creates a record in an application:
  goals to add one with given field values, checked on the application's own export.
- **Bulk changes** (:mod:`.bulk`). On a record form's listing, proven whole (ids 1…N): goals to
  set one field of every record that meets a condition (2 to 4 records), checked on the export.
- **Wiki sections** (:mod:`.wikiedit`). A wiki page with a text export and an editor: goals
  to end a named section with a sentence, checked on the export (at most 2 per site).
- **Query consoles** (:mod:`.query`). A form the site pre-fills with a statement selecting
  a whole table: goals to show exactly the records meeting some conditions, checked on the
  records the page then shows.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

import numpy as np
from playwright.async_api import Error as PlaywrightError

from ...browser.pool import BrowserPool
from ...browser.settle import settle, track_requests
from ...errors import TaskloomError
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import Difficulty, GoldStep, Provenance, SuccessCriterion, Task
from ..registry import Candidates, GenerationRequest, generator
from .bulk import bulk_tasks
from .create import create_forms, create_tasks, read_exports
from .edit import edit_forms, edit_tasks, probe_reveal
from .phrasing import field_phrase
from .query import query_consoles, query_tasks
from .wikiedit import wiki_tasks

__all__ = ["ListApp", "list_apps", "list_tasks", "FormPlan", "form_plans", "probe_form", "web_change", "ITEM_TEXTS", "PEOPLE", "CHANGE_TEMPLATE"]

CHANGE_TEMPLATE = "web-change"
HOPS = 12
#: Neutral sample item texts (none is a substring of another).
ITEM_TEXTS = (
    "Buy milk", "Call Anna", "Water the plants", "Renew passport", "Pay the gas bill", "Book a haircut",
    "Return library books", "Fix the bike light", "Email the landlord", "Pick up the parcel", "Defrost the freezer", "Send the invoice",
)
#: Sample people for name fields.
PEOPLE = ("Ada Finch", "Tomas Reyes", "Lena Marsh", "Ravi Patel", "June Harlow", "Omar Haddad")
_SKIP_FORM_INPUTS = ("search_box", "filter", "checkbox")
_DIGITS_HINT = re.compile(r"(\d{1,2})\s+(?:digits?|numbers?|characters?)\b", re.I)
_NAME_LABEL = re.compile(r"\bname\b", re.I)
_EMAIL_LABEL = re.compile(r"\be-?mail\b", re.I)
_NUMBER_LABEL = re.compile(r"\b(?:number|no\.?|card|code|pin|id|digits?|phone|telephone)\b", re.I)
_TITLE_LABEL = re.compile(r"^(?:title|name)$", re.I)


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, int(hashlib.sha1("|".join(parts).encode()).hexdigest()[:8], 16)])


def _digest(*parts: str) -> str:
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def _difficulty(steps: int) -> Difficulty:
    return "easy" if steps <= 1 else "medium" if steps <= 3 else "hard" if steps <= 6 else "expert"


def _listing(names: list[str]) -> str:
    quoted = [f"“{n}”" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _task(kg: KnowledgeGraph, seed: int, key: str, instruction: str, start: str, steps: list[GoldStep], success: list[SuccessCriterion], goal: dict[str, Any]) -> Task:
    return Task(
        id=f"web-{_digest(kg.id, CHANGE_TEMPLATE, key)}",
        kind="web",
        type="change",
        difficulty=_difficulty(len(steps)),
        instruction=instruction,
        start_url=start,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start).hostname or ""]),
        gold_steps=steps,
        success=success,
        provenance=Provenance(graph_id=kg.id, template=CHANGE_TEMPLATE, generator=CHANGE_TEMPLATE, model="none", seed=seed),
        quality={"change": goal},
    )


# --------------------------------------------------------------------------- list apps


@dataclass
class ListApp:
    """What the app states of one page show about its list: how to add, toggle, and which views filter."""

    base: Node
    adder: dict[str, Any]  # the fill_enter action
    toggle: str  # selector of the per-item checkbox
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # "done" / "open" -> {route, selector, node_id}


def _item_checkbox(kg: KnowledgeGraph, base_url: str, state_url: str) -> str | None:
    """A checkbox seen in the state with an item but not on the fresh page: the item's own toggle."""
    before = {str(n.attrs.get("selector")) for n in kg.nodes("checkbox") if base_url in (n.attrs.get("pages") or [])}
    for node in kg.nodes("checkbox"):
        selector = str(node.attrs.get("selector") or "")
        if selector and state_url in (node.attrs.get("pages") or []) and selector not in before:
            return selector
    return None


def _route_link(kg: KnowledgeGraph, base_url: str, name: str) -> Node | None:
    return next((n for n in kg.nodes("link") if n.attrs.get("name") == name and base_url in (n.attrs.get("pages") or []) and n.attrs.get("selector")), None)


def list_apps(kg: KnowledgeGraph) -> list[ListApp]:
    """The list apps the graph's app states reveal (see the module notes), in page order."""
    apps: list[ListApp] = []
    for base in kg.nodes("page"):
        edges = kg.edges_from(base.id, "transitions")
        if not edges:
            continue
        base_url = str(base.attrs["url"])
        states = [(list(e.attrs.get("via") or []), kg.node(e.target)) for e in edges]
        adder: dict[str, Any] | None = None
        toggle: str | None = None
        for via, state in states:
            if len(via) == 1 and via[0]["kind"] == "fill_enter" and via[0].get("value") and via[0]["value"] in state.text and via[0]["value"] not in base.text:
                toggle = _item_checkbox(kg, base_url, str(state.attrs["url"]))
                if toggle:
                    adder = via[0]
                    break
        if adder is None or toggle is None:
            continue
        app = ListApp(base=base, adder=adder, toggle=toggle)
        checkboxes = {str(n.attrs.get("selector")) for n in kg.nodes("checkbox")}
        for via, state in states:
            if not via or via[0] != adder or via[-1]["kind"] != "route" or adder["value"] in state.text:
                continue
            middle = via[1:-1]
            if not middle:
                view = "done"  # hides an item nobody marked: shows only done items
            elif all(a["kind"] == "click" and a.get("selector") in checkboxes for a in middle):
                view = "open"  # hides the item once a checkbox marked it: shows only open items
            else:
                continue
            link = _route_link(kg, base_url, str(via[-1].get("name") or ""))
            if link is not None and view not in app.views:
                app.views[view] = {"route": via[-1]["value"], "selector": link.attrs["selector"], "node_id": link.id}
        apps.append(app)
    return apps


def _item_toggle(selector: str, text: str) -> str:
    """The toggle selector narrowed to the list item showing ``text`` (its last ``li`` step gets ``:has-text``)."""
    steps = re.split(r"(\s*>\s*|\s+)", selector)
    literal = json.dumps(text)
    for i in range(len(steps) - 1, -1, -1):
        if re.fullmatch(r"li(?:[.:#\[].*)?", steps[i]):
            steps[i] = f"{steps[i]}:has-text({literal})"
            return "".join(steps)
    return f":is(li, [role=listitem]):has-text({literal}) input[type=checkbox]"


def _view_url(base_url: str, route: str) -> str:
    parts = urlparse(base_url)
    path = parts.path or "/"
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    body = re.escape(path) + "(?:index\\.html)?" if path.endswith("/") else re.escape(path)
    query = re.escape("?" + parts.query) if parts.query else ""
    return f"^{re.escape(f'{parts.scheme}://{parts.netloc}')}{body}{query}#{re.escape(route.lstrip('#'))}$"


# (items, done indices, view): the goal shapes, tried in order
_SHAPES: list[tuple[int, tuple[int, ...], str | None]] = [(2, (0,), "open"), (3, (1,), None), (2, (0, 1), "done"), (3, (0, 2), "open"), (2, (1,), "done"), (3, (2,), None)]

_PLAIN = [
    "Add {items} to the list and mark {done} done, leaving {rest} unfinished.",
    "Put {items} on the list; {done} should end up done and {rest} still open.",
    "The list should hold {items}, with {done} completed and {rest} not yet.",
]
_OPEN = [
    "Add {items}, mark {done} done, and leave only the unfinished items on screen.",
    "Put {items} on the list, complete {done}, then have the list show just what is still open.",
    "Add {items} to the list and tick off {done}; the view should end up showing only unfinished items.",
]
_DONE = [
    "Add {items}, mark {done} done, and have the list show only the completed items.",
    "Put {items} on the list, complete {done}, and leave only finished items in view.",
    "Add {items} to the list, tick off {done}, and end on a view of completed items only.",
]


def list_tasks(kg: KnowledgeGraph, app: ListApp, seed: int, count: int) -> list[Task]:
    """Up to ``count`` goals on one list app (one per shape whose view the app has)."""
    tasks: list[Task] = []
    base_url = str(app.base.attrs["url"])
    for shape_no, (n_items, done_at, view) in enumerate(_SHAPES):
        if len(tasks) >= count:
            break
        if view is not None and view not in app.views:
            continue
        rng = _rng(seed, kg.id, base_url, str(shape_no))
        items = [ITEM_TEXTS[int(i)] for i in rng.choice(len(ITEM_TEXTS), size=n_items, replace=False)]
        done = [items[i] for i in done_at]
        rest = [t for t in items if t not in done]
        steps = [GoldStep(action="type", selector=app.adder["selector"], text=t, submit=True) for t in items]
        steps += [GoldStep(action="click", selector=_item_toggle(app.toggle, t)) for t in done]
        shown = {t: ("checked" if t in done else "unchecked") for t in items}
        success: list[SuccessCriterion] = []
        if view is not None:
            target = app.views[view]
            steps.append(GoldStep(action="click", selector=target["selector"], node_id=target["node_id"]))
            shown = {t: s for t, s in shown.items() if (s == "checked") == (view == "done")}
            success.append(SuccessCriterion(kind="url_matches", value=_view_url(base_url, str(target["route"]))))
            # the view hides some items: they must exist all the same (an app that does not store them fails replay, and the task is dropped)
            success += [SuccessCriterion(kind="stored", value=t) for t in items if t not in shown]
        success.insert(0, SuccessCriterion(kind="items", value=json.dumps(shown, ensure_ascii=False)))
        phrasings = _PLAIN if view is None else _OPEN if view == "open" else _DONE
        if not rest and view is None:
            continue
        instruction = phrasings[int(rng.integers(len(phrasings)))].format(items=_listing(items), done=_listing(done), rest=_listing(rest) if rest else "none")
        goal = {"kind": "list", "items": items, "done": done, "view": view}
        tasks.append(_task(kg, seed, json.dumps(goal), instruction, base_url, steps, success, goal))
    return tasks


# --------------------------------------------------------------------------- forms


@dataclass
class FormField:
    selector: str
    label: str
    kind: str  # name | digits | email | choice
    digits: int = 0
    options: list[str] = field(default_factory=list)
    node_id: str = ""


@dataclass
class FormPlan:
    """One fillable form on a detail-page template, and how to reach and submit it."""

    form: Node
    page_url: str
    action: str  # what submitting does, in words ("Request a loan")
    fields: list[FormField]
    submit: Node
    opener: Node | None = None


def _template(url: str) -> tuple[str, str, tuple[str, ...]]:
    parts = urlparse(url)
    return parts.netloc, parts.path, tuple(sorted(k for k, _ in parse_qsl(parts.query)))


def _field(node: Node, form_text: str) -> FormField | None:
    label = str(node.attrs.get("name") or "").strip()
    selector = str(node.attrs.get("selector") or "")
    if not label or not selector:
        return None
    if node.type.value == "select":
        options = [str(o) for o in node.attrs.get("options") or []]
        return FormField(selector, label, "choice", options=options, node_id=node.id) if options else None
    kind = str(node.attrs.get("input_type") or "text")
    hint = re.search(re.escape(label) + r"\s+(.{0,40})", form_text)
    digits = _DIGITS_HINT.search(hint.group(1)) if hint else None
    if kind == "email" or _EMAIL_LABEL.search(label):
        return FormField(selector, label, "email", node_id=node.id)
    if _NAME_LABEL.search(label) and not _NUMBER_LABEL.search(label) and kind == "text":
        return FormField(selector, label, "name", node_id=node.id)
    if digits or kind in ("number", "tel") or _NUMBER_LABEL.search(label):
        return FormField(selector, label, "digits", digits=int(digits.group(1)) if digits else 8, node_id=node.id)
    return None


def form_plans(kg: KnowledgeGraph) -> list[FormPlan]:
    """Forms worth a change goal: every filling control understood, a submit button, reachable on their page; one per page template."""
    plans: list[FormPlan] = []
    seen: set[tuple[Any, ...]] = set()
    for form in kg.nodes("form"):
        fillers = [kg.node(e.source) for e in kg.edges_into(form.id, "fills")]
        if not fillers or any(f.type.value in _SKIP_FORM_INPUTS for f in fillers) or not any(f.type.value == "input" for f in fillers):
            continue
        fields = [_field(f, form.text) for f in fillers]
        buttons = [kg.node(e.source) for e in kg.edges_into(form.id, "controls")]
        submit = next((b for b in buttons if b.attrs.get("input_type") == "submit" and b.attrs.get("selector")), None)
        if any(f is None for f in fields) or submit is None:
            continue
        page_url = str(form.attrs.get("page_url") or "")
        same = (_template(page_url), tuple(f.selector for f in fields if f is not None))
        if same in seen:  # the same form on another record's page: its subjects are found from the template
            continue
        opener: Node | None = None
        action = ""
        if form.attrs.get("visible") is False:
            head = " ".join(form.text.split())[:40]
            for edge in kg.edges("opens"):
                modal = kg.node(edge.target)
                button = kg.node(edge.source)
                if page_url in (modal.attrs.get("pages") or []) and head and head in " ".join(modal.text.split()) and button.attrs.get("selector"):
                    opener, action = button, str(modal.attrs.get("name") or button.attrs.get("name") or "")
                    break
            if opener is None:
                continue
        action = action or re.sub(r"^(?:submit|send|save)\s+", "", str(submit.attrs.get("name") or ""), flags=re.I)
        if not action.strip():
            continue
        seen.add(same)
        plans.append(FormPlan(form=form, page_url=page_url, action=action.strip(), fields=[f for f in fields if f is not None], submit=submit, opener=opener))
    return plans


def _subjects(kg: KnowledgeGraph, plan: FormPlan) -> list[tuple[Node, str]]:
    """Records whose detail page has the form page's URL template, with the text that names each."""
    found: list[tuple[Node, str]] = []
    for record in kg.nodes("record"):
        url = str(record.attrs.get("detail_url") or "")
        if not url or _template(url) != _template(plan.page_url):
            continue
        fields = record.attrs.get("fields") or {}
        label = next((k for k in fields if _TITLE_LABEL.match(k)), None) or next((k for k, v in fields.items() if v.get("type") == "text"), None)
        name = str((fields.get(label) or {}).get("raw") or "") if label else ""
        if name:
            found.append((record, name))
    return found


def _values(plan: FormPlan, rng: np.random.Generator) -> dict[str, str]:
    values: dict[str, str] = {}
    for f in plan.fields:
        if f.kind == "name":
            values[f.selector] = PEOPLE[int(rng.integers(len(PEOPLE)))]
        elif f.kind == "digits":
            values[f.selector] = "".join(str(int(d)) for d in rng.integers(1, 10, size=f.digits))
        elif f.kind == "email":
            values[f.selector] = "reader" + "".join(str(int(d)) for d in rng.integers(0, 10, size=3)) + "@example.org"
    return values


def _steps(plan: FormPlan, url: str, values: dict[str, str]) -> list[GoldStep]:
    steps = [GoldStep(action="navigate", text=url)]
    if plan.opener is not None:
        steps.append(GoldStep(action="click", selector=plan.opener.attrs["selector"], node_id=plan.opener.id))
    steps += [GoldStep(action="type", selector=f.selector, text=values[f.selector], node_id=f.node_id) for f in plan.fields if f.selector in values]
    steps.append(GoldStep(action="click", selector=plan.submit.attrs["selector"], node_id=plan.submit.id))
    return steps


_MAIN_TEXT_JS = "() => (document.querySelector('main, [role=main]') || document.body).innerText"


async def _run(pool: BrowserPool, steps: list[GoldStep]) -> tuple[str, str, str]:
    """Main text before the first non-navigate step, and main text and URL after all steps, in a fresh context."""
    guarded = await pool.new_context()
    try:
        page = await guarded.context.new_page()
        track_requests(page)
        before = ""
        for step in steps:
            if step.action == "navigate":
                await page.goto(step.text or "", wait_until="load")
                await settle(page, quiet=0.25)  # what the page fetches after its load event is shown by now
                before = await page.evaluate(_MAIN_TEXT_JS)
            elif step.action == "click":
                await page.locator(step.selector or "").first.click(timeout=3_000)
            elif step.action == "type":
                await page.locator(step.selector or "").first.fill(step.text or "", timeout=3_000)
        await settle(page, quiet=0.3)  # the submission's requests (a navigation, a fetch) have all come back
        await page.wait_for_load_state("load")
        return before, await page.evaluate(_MAIN_TEXT_JS), page.url
    finally:
        await guarded.context.close()


def _has_words(text: str, words: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(" ".join(words.split())) + r"(?!\w)", " ".join(text.split()), re.I) is not None


async def probe_form(pool: BrowserPool, plan: FormPlan, url: str, values: dict[str, str]) -> tuple[list[SuccessCriterion], bool] | None:
    """What submitting the form on ``url`` changes: criteria for it, and whether invalid input leaves them unmet (None: no visible outcome)."""
    try:
        before, after, final = await _run(pool, _steps(plan, url, values))
    except PlaywrightError:
        return None
    chosen = set(values.values()) | {o for f in plan.fields for o in f.options}
    criteria: list[SuccessCriterion] = []
    start, end = urlparse(url), urlparse(final)
    typed = {k: v for k, v in parse_qsl(end.query) if v in values.values()}
    if (end.path, end.query) != (start.path, start.query) and typed:
        criteria.append(SuccessCriterion(kind="query_has", value=urlunparse(end._replace(query=urlencode(typed), fragment=""))))
    else:
        old = {" ".join(line.split()) for line in before.splitlines()}
        new = [" ".join(line.split()) for line in after.splitlines()]
        fresh = [line for line in new if line and line not in old and len(line) <= 60 and not _has_words(before, line) and not any(c and c in line for c in chosen)]
        if not fresh:
            return None
        criteria += [SuccessCriterion(kind="page_is", value=url), SuccessCriterion(kind="text_present", value=min(fresh, key=len), scope="main", whole_words=True)]
    shortened = {s: (v[: max(1, len(v) // 2)] if any(f.selector == s and f.kind == "digits" for f in plan.fields) else v) for s, v in values.items()}
    if shortened == values:
        return criteria, False
    try:
        _, bad_after, bad_url = await _run(pool, _steps(plan, url, shortened))
    except PlaywrightError:
        return criteria, False
    if criteria[0].kind == "query_has":
        return criteria, urlparse(bad_url).path == start.path and urlparse(bad_url).query == start.query
    return criteria, not _has_words(bad_after, criteria[-1].value)


#: Phrasings of a form goal; ``verb`` is the first word of what the form does (its dialog's or submit button's name),
#: never the whole control text, so a goal quotes no more than one gold-path name (a field label).
_FORM_PHRASES = [
    "{Verb} {subject} {fields}{choice}.",
    "I'd like to {verb} {subject} {fields}{choice}.",
    "Please {verb} {subject} {fields}{choice}.",
]


def _field_words(plan: FormPlan, values: dict[str, str]) -> tuple[str, str]:
    parts: list[str] = []
    choice = ""
    for f in plan.fields:
        if f.kind == "name":
            parts.append(f"in the name of {values[f.selector]}")
        elif f.kind in ("digits", "email"):
            parts.append(f"with {re.sub(r'^your ', '', field_phrase(f.label))} {values[f.selector]}")
        elif f.kind == "choice":
            choice = f"; any {re.sub(r'^your ', '', field_phrase(f.label))} will do"
    return " ".join(parts), choice


def _home_url(kg: KnowledgeGraph) -> str:
    """The crawl's shallowest page (not an app state): where a goal starts."""
    pages = [n for n in kg.nodes("page") if not n.attrs.get("state")]
    return str(min(pages, key=lambda n: (int(n.attrs.get("depth") or 0), str(n.attrs["url"]))).attrs["url"]) if pages else ""


async def form_tasks(kg: KnowledgeGraph, seed: int, count: int, pool: BrowserPool, report: dict[str, Any]) -> list[Task]:
    """Up to ``count`` form goals, each probed (see :func:`probe_form`)."""
    tasks: list[Task] = []
    pages = [n for n in kg.nodes("page") if not n.attrs.get("state")]
    if not pages:
        return []
    home = min(pages, key=lambda n: (int(n.attrs.get("depth") or 0), str(n.attrs["url"])))
    for plan in form_plans(kg):
        subjects = _subjects(kg, plan)
        rng = _rng(seed, kg.id, plan.form.id)
        order = rng.permutation(len(subjects))
        for index in order[: max(1, count)]:
            record, name = subjects[int(index)]
            url = str(record.attrs["detail_url"])
            if url == home.attrs["url"]:
                continue
            values = _values(plan, rng)
            probed = await probe_form(pool, plan, url, values)
            if probed is None:
                report.setdefault("forms_without_outcome", []).append(url)
                continue
            criteria, validates = probed
            words, choice = _field_words(plan, values)
            phrase = _FORM_PHRASES[int(rng.integers(len(_FORM_PHRASES)))]
            verb = plan.action.split()[0].lower()
            instruction = phrase.format(Verb=verb.capitalize(), verb=verb, subject=f"“{name}”", fields=words, choice=choice)
            goal = {"kind": "form", "subject": name, "record": record.id, "action": plan.action, "values": values, "validates": validates}
            tasks.append(_task(kg, seed, json.dumps(goal, sort_keys=True), instruction, str(home.attrs["url"]), _steps(plan, url, values), criteria, goal))
    return tasks


@generator(CHANGE_TEMPLATE, graph="web")
async def web_change(request: GenerationRequest) -> Candidates:
    """Change-state goals: items added, marked and filtered in list apps; forms filled and submitted; query consoles run (outcomes probed)."""
    kg, seed, count = request.kg, request.seed, request.count
    report: dict[str, Any] = {}
    tasks: list[Task] = []
    apps = list_apps(kg)
    for app in apps:
        tasks += list_tasks(kg, app, seed, max(count, 3))
    plans = form_plans(kg)
    consoles = query_consoles(kg)
    exports = await read_exports(kg, report) if create_forms(kg) or any(f.attrs.get("method") == "post" for f in kg.nodes("form")) else []
    if create_forms(kg):  # forms that create records in an application: checked on its exports after the episode
        created, created_report = create_tasks(kg, exports, seed, max(3, count // 2), _home_url(kg), _task)
        tasks += created
        report.update(created_report)
    editors = edit_forms(kg, exports)
    tasks += await wiki_tasks(kg, seed, 2, _home_url(kg), _task, report)  # a sentence added to a wiki page's section, checked on its text export
    if plans or consoles or editors:
        pool = BrowserPool(request.settings.chromium)
        try:
            for editor in editors:  # forms that edit a record: checked on its own export, its page and the list export
                if await probe_reveal(pool, kg, editor):
                    tasks += await edit_tasks(kg, editor, seed, max(3, count // 2), _home_url(kg), _task, report)
                    tasks += await bulk_tasks(kg, editor, seed, 2, _home_url(kg), _task, report)  # one field of every record meeting a condition
                else:
                    report.setdefault("edit_forms_hidden", []).append(editor.page_url)
            tasks += await form_tasks(kg, seed, max(1, count // 2), pool, report)
            tasks += await query_tasks(kg, seed, max(3, count // 3), pool, report)
        except TaskloomError as exc:
            report["form_probe_error"] = str(exc)
        finally:
            await pool.close()
    report.update(list_apps=len(apps), forms=len(plans), edit_forms=len(editors), tasks=len(tasks))
    request.report.generator = report
    return Candidates(tasks, {CHANGE_TEMPLATE: HOPS})

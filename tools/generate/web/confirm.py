"""Second routes to the gold of lookup, compare and find-by-sentence tasks: a gold is kept only when a route other than the crawl's read re-derives it.

The crawl read each page once; a gold computed from that read is re-derived here, before replay:

- **a recount:** the goal (``task.quality["compare"]``) is evaluated again over the crawled
  records by :func:`recompute`, code apart from the generator's; another answer drops the task
  as ``routes_disagree``.
- **a fresh read with the clock moved on:** the pages the gold came from (a listing's pages,
  and its records' detail pages when a field is shown only there; a lookup's answer page) are
  loaded again in a new browser context whose clock is set :data:`CLOCK_SHIFT` ahead, their
  records read as the crawl reads them, and the answer recomputed. A value that changes
  between loads or with the date (a calendar, "3 days ago", a counter, rotating content) gives
  another answer: the task is dropped as ``volatile``.
- **the site's own sort:** for a highest or lowest value, the listing sorted by that field (a
  sort the crawl saw) is read afresh; its first record meeting the conditions must be the
  gold's. A different record drops the task as ``routes_disagree``.

- **a find target's sentence** must still stand on its page read again (rotating content does not),
  and no page the site's search finds for it (:mod:`.sitesearch`; the best few read in the browser,
  the rest over HTTP) or, on a site without search, no page the crawl linked to but never loaded
  (:mod:`.unseen`, over HTTP) may show it too; one that does, or more such pages than can be
  read, drops the task as ``not_unique``.

A task whose pages cannot be read again is dropped as ``unconfirmed``. Each kept task records
its routes under ``task.quality["confirmed"]``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlparse

from playwright.async_api import Error as PlaywrightError

from ...browser import BrowserPool, OriginFence
from ...browser.settle import settle, track_requests
from ...graph.model import GraphMeta, KnowledgeGraph, Node
from ...graph.web.capture import CrawlResult, PageCapture, normalize_url
from ...graph.web.listings import RecordGraph
from ...graph.web.parts import named_fields
from ...graph.web.records import RecordBlock, read_records
from ...graph.web.values import typed_value
from ...tasks.model import Task
from ..filter.stages import Dropped, GenerationReport
from .compare import ListingGroups, holds
from .lookup import listing_data
from .phrasing import number_text
from .sitesearch import MAX_RESULT_PAGES, NO_MATCH_QUERY, SiteSearch, result_url, site_search
from .unseen import MAX_UNSEEN_PAGES, UnseenPages

__all__ = ["Rereader", "confirm_gold", "recompute", "reread_graph", "CLOCK_SHIFT", "MAX_REREAD_PAGES"]

#: How far ahead the second read's clock is set: a month boundary and a weekday change apart.
CLOCK_SHIFT = timedelta(days=45)
#: Pages one task's second read may load; a gold that needs more is dropped as unconfirmed.
MAX_REREAD_PAGES = 80
#: Seconds one page of the second read may take (load and read); a slower page leaves its task unconfirmed.
PAGE_SECONDS = 60
#: Tabs of the second read loading pages side by side.
READERS = 4


@dataclass
class Outcome:
    """One task's confirmation: ``stage`` None when confirmed, else why it is dropped."""

    stage: str | None
    detail: str
    routes: list[str]


class Rereader:
    """Pages read again, each once, in one fresh fenced context whose clock runs :data:`CLOCK_SHIFT` ahead (up to :data:`READERS` tabs at a time)."""

    def __init__(self, pool: BrowserPool, kg: KnowledgeGraph) -> None:
        self.pool, self.kg = pool, kg
        self.reads: dict[str, list[RecordBlock] | str] = {}
        self.texts: dict[str, str] = {}
        self.links: dict[str, list[str]] = {}
        self.unseen = UnseenPages(kg)
        self._guarded: Any = None
        self._idle: asyncio.Queue[Any] = asyncio.Queue()
        self._tabs = 0
        self._pending: dict[str, asyncio.Future[list[RecordBlock] | str]] = {}
        self._opening = asyncio.Lock()

    async def read_all(self, urls: list[str]) -> None:
        """Read ``urls`` (those not read yet) side by side, :data:`READERS` at a time."""
        await asyncio.gather(*(self.read(u) for u in dict.fromkeys(urls)))

    async def read(self, url: str, settle: bool = False) -> list[RecordBlock] | str:
        """The page's record blocks, or why it could not be read; ``settle``: wait for its links to stop changing (search results)."""
        if url in self.reads:
            return self.reads[url]
        if url in self._pending:  # another caller is reading it right now
            return await self._pending[url]
        pending: asyncio.Future[list[RecordBlock] | str] = asyncio.get_running_loop().create_future()
        self._pending[url] = pending
        page = await self._tab(url)
        try:
            got = await self._read(page, url, settle)
        finally:
            self._idle.put_nowait(page)
            del self._pending[url]
        self.reads[url] = got
        pending.set_result(got)
        return got

    async def _tab(self, url: str) -> Any:
        """An idle tab of the shifted-clock context (a new one while fewer than :data:`READERS` exist)."""
        async with self._opening:
            if self._guarded is None:
                start = str(self.kg.meta.sources[0]) if self.kg.meta.sources else url
                fence = OriginFence.for_site(start, list(self.kg.meta.stats.get("allowed_domains") or []))
                guarded = await self.pool.new_context(fence=fence)
                await guarded.context.clock.install(time=datetime.now(UTC) + CLOCK_SHIFT)
                self._guarded = guarded
        if self._idle.empty() and self._tabs < READERS:
            self._tabs += 1
            page = await self._guarded.context.new_page()
            track_requests(page)
            return page
        return await self._idle.get()

    async def _read(self, page: Any, url: str, settle_links: bool) -> list[RecordBlock] | str:
        try:
            async with asyncio.timeout(PAGE_SECONDS):
                await page.goto(url, wait_until="load")
                await settle(page)  # data fetched after the load event is shown by now (a page that keeps polling: read after 3 s)
                got: list[RecordBlock] | str = await read_records(page)
                self.texts[url] = str(await page.evaluate("() => document.body ? document.body.innerText : ''"))
                self.links[url] = await _settled_links(page) if settle_links else []
        except PlaywrightError as exc:
            got = (str(exc).splitlines() or ["error"])[0][:200]
        except TimeoutError:
            got = f"loading and reading it took over {PAGE_SECONDS} s"
        return got

    async def close(self) -> None:
        if self._guarded is not None:
            await self._guarded.context.close()


async def _settled_links(page: Any) -> list[str]:
    """The page's link targets once their number stops changing (results a script adds one by one), at most ten seconds."""
    links: list[str] = []
    for _ in range(20):
        now = [str(h) for h in await page.evaluate("() => Array.from(document.querySelectorAll('a[href]'), a => a.href)")]
        if now and len(now) == len(links):
            return now
        links = now
        await asyncio.sleep(0.5)
    return links


async def reread_graph(reader: Rereader, urls: list[str]) -> KnowledgeGraph | str:
    """A graph of the records ``urls`` show now (built as a crawl builds it), or why a page could not be read."""
    pages: list[PageCapture] = []
    await reader.read_all(urls)
    for i, url in enumerate(urls):
        blocks = await reader.read(url)
        if isinstance(blocks, str):
            return f"{url} could not be read again: {blocks}"
        pages.append(PageCapture(url=url, final_url=url, title="", text="", depth=0, order=i, dom_hash=str(i), elements=[], records=blocks))
    kg = KnowledgeGraph(meta=GraphMeta(id="second-read", kind="web"))
    RecordGraph(kg, CrawlResult(start_url=urls[0], allowed_domains=[], pages=pages), {}, part_labels=dict(reader.kg.meta.stats.get("part_labels") or {})).build()
    return kg


def recompute(goal: dict[str, Any], groups: ListingGroups) -> str | None:
    """The answer of a compare goal (``task.quality["compare"]``) over ``groups``' records; None when it has none (a tie, no records)."""
    conds = [(str(c[0]), str(c[1]), c[2]) for c in goal.get("conditions", [])]
    group = groups.matching(conds)
    op = goal["op"]
    if op in ("which", "count_difference"):
        label = goal["field"]
        na, nb = (sum(1 for r in group if holds(r, (label, "eq", v))) for v in goal["options"])
        if op == "count_difference":
            return str(abs(na - nb))
        return None if na == nb else groups.data.short(label, goal["options"][0] if na > nb else goal["options"][1])
    if op == "count":
        return str(len(group))
    measure = goal["measure"]
    values = [(float(_field(r, measure)["value"]), r) for r in group if _field(r, measure).get("type") == "number"]
    if not values:
        return None
    if op in ("max", "min"):
        values.sort(key=lambda v: v[0], reverse=op == "max")
        if len(values) > 1 and values[0][0] == values[1][0]:
            return None
        best = _field(values[0][1], goal["field"])
        return groups.data.short(goal["field"], str(best.get("raw"))) if best else None
    if op == "range":
        numbers = [v for v, _ in values]
        places = max((len(repr(float(v)).split(".")[1].rstrip("0")) for v in numbers), default=0)
        diff = round(max(numbers) - min(numbers), places)
        unit = next((_field(r, measure).get("unit") for _, r in values if _field(r, measure).get("unit")), None)
        return number_text(int(diff) if float(diff).is_integer() else diff, unit)
    return None


def _field(record: Node, label: str) -> dict[str, Any]:
    field: dict[str, Any] = record.attrs.get("fields", {}).get(label, {})
    return field


def _same(a: str, b: str) -> bool:
    ta, tb = typed_value(a), typed_value(b)
    if ta["type"] == tb["type"] == "number":
        return abs(float(ta["value"]) - float(tb["value"])) <= 1e-9 * max(1.0, abs(float(ta["value"])))
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _listing_urls(kg: KnowledgeGraph, listing: Node, labels: set[str]) -> list[str]:
    """The pages to read again: the listing's pages, plus its records' detail pages when a needed field is not a column."""
    urls = [normalize_url(str(u)) for u in listing.attrs.get("pages") or []]
    if not labels <= set(listing.attrs.get("columns") or []):
        records = [r for r in kg.nodes("record") if listing.id in (r.attrs.get("listings") or [])]
        urls += sorted({str(r.attrs["detail_url"]) for r in records if r.attrs.get("detail_url")})
    return list(dict.fromkeys(urls))


async def _confirm_compare(reader: Rereader, kg: KnowledgeGraph, task: Task) -> Outcome:
    goal = task.quality["compare"]
    listing = kg.node(goal["listing"])
    own = next((d for d in listing_data(kg) if d.node.id == listing.id), None)
    first = None if own is None else recompute(goal, ListingGroups(own))
    if first is None or not _same(first, str(task.gold_answer)):
        return Outcome("routes_disagree", f"recounted from the crawled records, the answer is {first!r}, not {task.gold_answer!r}", [])
    labels = {str(c[0]) for c in goal.get("conditions", [])} | {goal[k] for k in ("field", "measure") if goal.get(k)}
    urls = _listing_urls(kg, listing, labels)
    if len(urls) > MAX_REREAD_PAGES:
        return Outcome("unconfirmed", f"a second read needs {len(urls)} pages (over {MAX_REREAD_PAGES})", [])
    fresh = await reread_graph(reader, urls)
    if isinstance(fresh, str):
        return Outcome("unconfirmed", fresh, [])
    key = listing.attrs.get("key")
    data = next((d for d in listing_data(fresh) if d.node.attrs.get("key") == key), None)
    if data is None or not data.node.attrs.get("complete"):
        return Outcome("volatile", f"read again with the clock {CLOCK_SHIFT.days} days on, the listing {key} is not the same complete listing", [])
    again = recompute(goal, ListingGroups(data))
    if again is None or not _same(again, str(task.gold_answer)):
        return Outcome("volatile", f"read again with the clock {CLOCK_SHIFT.days} days on, the answer is {again!r}, not {task.gold_answer!r}", [])
    routes = [f"recounted from the crawled records: {first!r}", f"second read of {len(urls)} pages, clock +{CLOCK_SHIFT.days} days: {again!r}"]
    if goal["op"] in ("max", "min"):
        sort = next((s for s in listing.attrs.get("sorts") or [] if s.get("field") == goal["measure"] and s.get("direction") == ("desc" if goal["op"] == "max" else "asc")), None)
        if sort is not None:
            by_sort = await _first_by_sort(reader, str(sort["url"]), goal, ListingGroups(data))
            if by_sort is not None and not _same(by_sort, str(task.gold_answer)):
                return Outcome("routes_disagree", f"the site's own sort by {goal['measure']!r} ({sort['url']}) puts {by_sort!r} first, the gold says {task.gold_answer!r}", routes)
            if by_sort is not None:
                routes.append(f"the site's sort by {goal['measure']!r}: {by_sort!r} first")
    return Outcome(None, "", routes)


async def _first_by_sort(reader: Rereader, url: str, goal: dict[str, Any], groups: ListingGroups) -> str | None:
    """The asked field of the first record meeting the goal's conditions on the sorted page (None when none is on it)."""
    fresh = await reread_graph(reader, [normalize_url(url)])
    if isinstance(fresh, str):
        return None
    conds = [(str(c[0]), str(c[1]), c[2]) for c in goal.get("conditions", [])]
    rows = [b for blocks in [reader.reads.get(normalize_url(url))] if isinstance(blocks, list) for b in blocks if b.kind in ("table", "cards")]
    labels = dict(reader.kg.meta.stats.get("part_labels") or {})
    for block in rows:
        for row in block.rows:
            fields = named_fields(block, row.fields, labels)
            record = Node(id="row", type="record", text="", attrs={"fields": {k: typed_value(v, k) for k, v in fields.items()}})
            if _field(record, goal["measure"]).get("type") != "number" or not all(holds(record, c) for c in conds):
                continue  # a missing value sorts first on some sites; it is no extreme
            value = fields.get(goal["field"])
            return None if value is None else groups.data.short(goal["field"], value)
    return None


async def _confirm_lookup(reader: Rereader, task: Task) -> Outcome:
    goal = task.quality["lookup"]
    url = normalize_url(str(goal["answer_page"]))
    fresh = await reread_graph(reader, [url])
    if isinstance(fresh, str):
        return Outcome("unconfirmed", fresh, [])
    wanted: dict[str, str] = goal.get("identify") or {}
    shown = [r for r in fresh.nodes("record") if goal["field"] in r.attrs.get("fields", {})]
    match = [r for r in shown if all(_same(str(_field(r, lb).get("raw", v)), str(v)) for lb, v in wanted.items())]
    named = [r for r in match if all(lb in r.attrs.get("fields", {}) for lb in wanted)]
    found = named or (match if len(shown) == 1 else [])  # a detail page shows one record, not always with every naming field
    if len(found) != 1:
        return Outcome("unconfirmed", f"read again, {url} shows {len(found)} records named by {wanted}", [])
    value = str(_field(found[0], goal["field"]).get("raw"))
    if not _same(value, str(goal["raw"])):
        return Outcome("volatile", f"read again with the clock {CLOCK_SHIFT.days} days on, {goal['field']!r} is {value!r}, not {goal['raw']!r}", [])
    return Outcome(None, "", [f"second read of {url}, clock +{CLOCK_SHIFT.days} days: {value!r}"])


async def _confirm_sentence(reader: Rereader, kg: KnowledgeGraph, task: Task) -> Outcome:
    """A find target named by a sentence of its page: the page read again must still show it (rotating content does not)."""
    sentence = str(task.quality["target"]["sentence"])
    url = next((normalize_url(c.value) for c in task.success if c.kind == "page_is"), None)
    if url is None:
        return Outcome(None, "", [])
    blocks = await reader.read(url)
    if isinstance(blocks, str):
        return Outcome("unconfirmed", f"{url} could not be read again: {blocks}", [])
    if _norm(sentence) not in _norm(reader.texts.get(url, "")):
        return Outcome("volatile", f"read again with the clock {CLOCK_SHIFT.days} days on, {url} no longer shows the sentence {sentence[:80]!r}", [])
    routes = [f"second read of {url}, clock +{CLOCK_SHIFT.days} days: the sentence is there"]
    search = site_search(kg)
    if search is not None:
        searched = await _search_route(reader, kg, search, sentence, url, routes)
        if searched is not None:
            return searched
        routes.append("the site's search does not find the page itself (no proof either way): not used")
    unseen = reader.unseen
    if holders := await unseen.holders(sentence):
        return Outcome("not_unique", f"the sentence also stands on {len(holders)} page(s) the crawl did not open: {', '.join(holders[:3])}", routes)
    if not unseen.complete:
        return Outcome("not_unique", f"uniqueness unproven: the site has over {MAX_UNSEEN_PAGES} pages the crawl did not open and no search that finds the page", routes)
    return Outcome(None, "", [*routes, f"none of the {unseen.read_count} pages of the site the crawl did not open shows it (read over HTTP)"])


async def _search_route(reader: Rereader, kg: KnowledgeGraph, search: SiteSearch, sentence: str, url: str, routes: list[str]) -> Outcome | None:
    """The site's search for the sentence: a result page other than ``url`` that shows it too makes the target ambiguous.

    None when the search does not find ``url`` itself: a search that misses the one page known to hold the sentence
    (it searches titles only, or it does not work here) proves nothing about the others.
    """
    crawled = {normalize_url(str(p.attrs["url"])) for p in kg.nodes("page")}
    chrome, found = (await reader.read(search.url(NO_MATCH_QUERY), settle=True)), (await reader.read(search.url(sentence), settle=True))
    if isinstance(chrome, str) or isinstance(found, str):
        return None  # an unreadable search proves nothing
    # a result is a link the answer shows more often than a search for nothing does (the site's navigation shows both)
    chrome_links = Counter(result_url(h, crawled) for h in reader.links.get(search.url(NO_MATCH_QUERY), []))
    answer_links = Counter(result_url(h, crawled) for h in reader.links.get(search.url(sentence), []))  # in the site's order: best first
    ranked = [r for r, n in answer_links.items() if n > chrome_links[r] and urlparse(r).netloc == urlparse(url).netloc]
    if url not in ranked:
        return None  # the search did not find the page: no proof
    results = [r for r in ranked if r != url]
    for other in results[:MAX_RESULT_PAGES]:  # the best results in the browser, as an agent sees them
        if not isinstance(await reader.read(other), str) and _norm(sentence) in _norm(reader.texts.get(other, "")):
            return Outcome("not_unique", f"the site's search ({search.url(sentence)}) finds the sentence also on {other}", routes)
    rest = results[MAX_RESULT_PAGES:MAX_UNSEEN_PAGES]  # the others over HTTP
    if holders := await reader.unseen.holders(sentence, rest):
        return Outcome("not_unique", f"the site's search ({search.url(sentence)}) finds the sentence also on {holders[0]}", routes)
    if len(results) > MAX_UNSEEN_PAGES:
        return Outcome("not_unique", f"uniqueness unproven: the site's search finds {len(results)} pages (over {MAX_UNSEEN_PAGES})", routes)
    return Outcome(None, "", [*routes, f"the site's search finds {len(results)} other pages, none shows the sentence"])


def _norm(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").split()).casefold()


def _checked(task: Task) -> bool:
    target = task.quality.get("target")
    return "compare" in task.quality or "lookup" in task.quality or (isinstance(target, dict) and target.get("kind") == "content" and bool(target.get("sentence")))


async def _confirm(reader: Rereader, kg: KnowledgeGraph, task: Task) -> Outcome:
    if "compare" in task.quality:
        return await _confirm_compare(reader, kg, task)
    if "lookup" in task.quality:
        return await _confirm_lookup(reader, task)
    return await _confirm_sentence(reader, kg, task)


async def confirm_gold(kg: KnowledgeGraph, tasks: list[Task], pool: BrowserPool | None, report: GenerationReport, reader: Rereader | None = None) -> list[Task]:
    """Keep the tasks whose gold a second route re-derives (see the module docstring); the rest are dropped with their reason.

    ``reader``, when given, is used (and left open) instead of a new one, so that tasks
    confirmed a few at a time read each page once.
    """
    checked = [t for t in tasks if _checked(t)]
    if (pool is None and reader is None) or not checked:
        return tasks
    own = reader is None
    if reader is None:
        assert pool is not None
        reader = Rereader(pool, kg)
    kept: list[Task] = []
    try:
        for task in tasks:
            if task not in checked:
                kept.append(task)
                continue
            outcome = await _confirm(reader, kg, task)
            if outcome.stage is None:
                task.quality["confirmed"] = outcome.routes
                kept.append(task)
            else:
                report.dropped.append(Dropped(task_id=task.id, stage=outcome.stage, reason=outcome.detail))
    finally:
        if own:
            await reader.close()
    report.stage("confirm", len(tasks), len(kept))
    return kept

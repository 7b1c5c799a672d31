"""Browser benchmark: crawl throughput with 1 vs N contexts, and the cost of recording an action.

The crawl runs on two sites this script serves itself on ``127.0.0.1`` (free ports, with
``serve_static``): the bundled example site (``examples/site``) and the Python 3.11 docs
(Debian's python3.11-doc, ``--docs``, started at ``library/index.html``; skipped with a note
when missing); nothing leaves the machine. One Chromium (Debian's) is launched and warmed up
first (a one-page ingestion, which also loads the embedder and Chroma), then:

1. **Crawl.** ``GraphService.ingest_website`` on each site (``--max-pages`` 30 / ``--docs-pages``
   40, ``--max-depth`` 3, crawl delay 0 via ``Settings(crawl_delay=0)``, the hashing embedder)
   with 1 context and with ``--contexts`` (default 2), each in a fresh workspace, in the same
   run. Prints pages, seconds, pages/s and the speed-up, the skip reasons, and where the crawl's
   time went (page loads, settling, extraction, records, screenshots, click simulation, app
   states), measured by wrapping the crawler's steps.
2. **Actions.** Alternate clicks on the two tabs ``#tab-summary`` / ``#tab-details`` of a book
   page, ``--actions`` (default 40) per mode: *raw* (``page.locator("aria-ref=eN").click()`` on
   a plain page of the same pool) and *recorded* through ``BrowserEpisode.click(element, ref)``
   with screenshots off and on. The modes run in interleaved blocks so machine load hits all
   of them alike. Also timed alone: one ``aria_snapshot`` and one viewport screenshot, which
   every recorded action adds.

Run from the repository root::

    .venv/bin/python bench/crawl.py
    .venv/bin/python bench/crawl.py --contexts 2 --actions 80

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import functools
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

_ROOT = Path(__file__).resolve().parent.parent
_SITE = _ROOT / "examples" / "site"
_DOCS = Path("/usr/share/doc/python3.11/html")
_BOOK = "book.html?id=b07"
_TABS = ("Summary", "Details")
_BLOCK = 10  # actions per block in the interleaved action benchmark


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Crawl pages/s with 1 vs N browser contexts, and ms per recorded vs raw browser action.")
    parser.add_argument("--max-pages", type=int, default=30, help="pages per crawl (default: 30)")
    parser.add_argument("--max-depth", type=int, default=3, help="crawl depth (default: 3)")
    parser.add_argument("--contexts", type=int, default=2, help="parallel contexts of the second crawl (default: 2)")
    parser.add_argument("--docs", type=Path, default=_DOCS, help=f"Python docs folder to serve (default: {_DOCS})")
    parser.add_argument("--docs-pages", type=int, default=40, help="pages per crawl of the Python docs (default: 40; 0 skips them)")
    parser.add_argument("--actions", type=int, default=40, help="timed clicks per action mode (default: 40)")
    parser.add_argument(
        "--workspace", type=Path, default=None, help="parent of the workspaces, kept afterwards (default: a temporary directory, deleted)"
    )
    args = parser.parse_args(argv)
    if args.contexts < 2:
        parser.error("--contexts must be at least 2 (the first crawl always uses 1)")
    if args.actions < 2:
        parser.error("--actions must be at least 2")
    return args


# -- the example site ---------------------------------------------------------------------



@contextmanager
def _serve(folder: Path) -> Iterator[str]:
    from taskloom.tools.environment.site import serve_static

    with serve_static(folder) as site:
        yield site.url + "/"


# -- where the crawl's time goes ----------------------------------------------------------


class _CrawlProfile:
    """Seconds per crawl step, summed over workers (with N contexts they overlap in wall time).

    Wraps ``_Crawl._capture`` / ``_load`` / ``_screenshots`` / ``_clicks`` and the module's
    ``_settle`` and ``draw_marks`` while active (private names: update them here if the
    crawler changes). ``extract`` is what ``_capture`` spends outside the others
    (the EXTRACT_JS evaluate, link collection, model validation).
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._in_clicks: contextvars.ContextVar[bool] = contextvars.ContextVar("in_clicks", default=False)
        self._in_load: contextvars.ContextVar[bool] = contextvars.ContextVar("in_load", default=False)

    @contextmanager
    def active(self) -> Iterator[None]:
        from taskloom.tools.graph.web import crawl as crawl_mod

        cls = crawl_mod._Crawl
        saved = {name: getattr(cls, name) for name in ("_capture", "_load", "_screenshots", "_clicks", "_read", "_states", "_extract")}
        saved_settle, saved_marks, saved_records = crawl_mod._settle, crawl_mod.draw_marks, crawl_mod.read_records
        profile = self

        def timed(key: str | Callable[[Any], str], fn: Any) -> Any:
            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                name = key(args) if callable(key) else key
                clock = time.perf_counter()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    profile.seconds[name] += time.perf_counter() - clock
                    profile.counts[name] += 1

            return wrapper

        def flagged(var: contextvars.ContextVar[bool], fn: Any) -> Any:
            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                token = var.set(True)
                try:
                    return await fn(*args, **kwargs)
                finally:
                    var.reset(token)

            return wrapper

        def settle_key(_: Any) -> str:
            if not profile._in_load.get():
                return "settle after a click"
            return "settle in reloads" if profile._in_clicks.get() else "settle in loads"

        cls._capture = timed("capture", saved["_capture"])
        cls._load = flagged(self._in_load, timed(lambda _: "click reloads" if profile._in_clicks.get() else "loads", saved["_load"]))
        cls._screenshots = timed("screenshots", saved["_screenshots"])
        cls._clicks = flagged(self._in_clicks, timed("clicks", saved["_clicks"]))
        cls._read = timed("read", saved["_read"])
        cls._extract = timed("extract", saved["_extract"])
        cls._states = timed("states", saved["_states"])
        crawl_mod._settle = timed(settle_key, saved_settle)
        crawl_mod.read_records = timed("records", saved_records)

        def marks(*args: Any, **kwargs: Any) -> Any:  # synchronous: runs on the event loop
            clock = time.perf_counter()
            try:
                return saved_marks(*args, **kwargs)
            finally:
                profile.seconds["draw_marks"] += time.perf_counter() - clock
                profile.counts["draw_marks"] += 1

        crawl_mod.draw_marks = marks
        try:
            yield
        finally:
            for name, fn in saved.items():
                setattr(cls, name, fn)
            crawl_mod._settle, crawl_mod.draw_marks, crawl_mod.read_records = saved_settle, saved_marks, saved_records

    def table(self) -> dict[str, Any]:
        s, n = self.seconds, self.counts
        rows = {
            "page loads (goto + settle)": (s["loads"], n["loads"]),
            "  of which settle": (s["settle in loads"], n["settle in loads"]),
            "EXTRACT_JS (all calls)": (s["extract"], n["extract"]),
            "records (RECORDS_JS, all calls)": (s["records"], n["records"]),
            "read (model + records [+ EXTRACT_JS in states])": (s["read"], n["read"]),
            "screenshots (viewport + marks)": (s["screenshots"], n["screenshots"]),
            "  of which draw_marks (PIL, sync)": (s["draw_marks"], n["draw_marks"]),
            "click simulation": (s["clicks"], n["clicks"]),
            "  of which reloads (with settle)": (s["click reloads"], n["click reloads"]),
            "  of which settle after a click": (s["settle after a click"], n["settle after a click"]),
            "app states (reloads + reads)": (s["states"], n["states"]),
        }
        return {"capture_seconds": round(s["capture"], 3), "rows": {k: {"seconds": round(v, 3), "count": c} for k, (v, c) in rows.items()}}


# -- part 1: crawl ------------------------------------------------------------------------


async def _crawl(pool: Any, base: str, workspace: Path, contexts: int, args: argparse.Namespace, max_pages: int) -> dict[str, Any]:
    from taskloom.tools.graph.service import GraphService
    from taskloom.tools.settings import Settings

    service = GraphService(Settings(workspace=workspace, embedder="hashing", crawl_delay=0), browsers=pool)
    service.embedder.embed(["warm-up"])
    profile = _CrawlProfile()
    with profile.active():
        clock = time.perf_counter()
        report = await service.ingest_website(base, max_pages=max_pages, max_depth=args.max_depth, contexts=contexts)
        total = time.perf_counter() - clock
    crawl = report.seconds.get("crawl", total)
    kg = service.load(report.graph_id)
    pages = [d["attrs"] for _, d in kg.g.nodes(data=True) if d["type"] == "page"]
    depths = [sum(1 for p in pages if p["depth"] == depth) for depth in range(args.max_depth + 1)]
    return {
        "contexts": contexts,
        "pages": report.pages,
        "nodes": report.nodes,
        "edges": report.edges,
        "seconds": round(total, 3),
        "phases": report.seconds,
        "pages_per_s": round(report.pages / crawl, 3) if crawl else 0.0,
        "pages_per_s_total": round(report.pages / total, 3) if total else 0.0,
        "skipped": len(report.skipped),
        "skip_counts": report.skip_counts,
        "screenshot_errors": report.screenshot_errors,
        "blocked": report.blocked,
        "profile": profile.table(),
        "busy": round(profile.seconds["capture"] / (contexts * crawl), 3) if crawl else 0.0,
        "pages_per_depth": depths,
        "_urls": sorted(p["url"] for p in pages),
    }


# -- part 2: actions ----------------------------------------------------------------------


def _tab_refs(snapshot: str | None) -> dict[str, str]:
    refs = {name: re.search(rf'- tab "{name}"[^\n]*\[ref=(e\d+)\]', snapshot or "") for name in _TABS}
    missing = [name for name, m in refs.items() if m is None]
    if missing:
        raise RuntimeError(f"tabs {missing} not in the snapshot of {_BOOK}")
    return {name: m.group(1) for name, m in refs.items() if m}


async def _selected(page: Any) -> str:
    return "Summary" if await page.get_attribute("#tab-summary", "aria-selected") == "true" else "Details"


async def _actions(pool: Any, base: str, workspace: Path, n: int) -> dict[str, Any]:
    from taskloom.tools.environment.manager import EpisodeManager
    from taskloom.tools.evaluate.checks import Checker

    url = base + _BOOK
    ready = 'body[data-ready="true"]'

    # raw: a plain page of the same pool
    from taskloom.tools.security.origin import OriginFence

    guarded = await pool.new_context(fence=OriginFence.for_site(base))
    raw_page = await guarded.context.new_page()
    raw_page.set_default_timeout(5_000)
    await raw_page.goto(url, wait_until="domcontentloaded")
    await raw_page.wait_for_selector(ready)
    raw_refs = _tab_refs(await raw_page.locator("body").aria_snapshot(mode="ai"))

    # recorded: one episode with screenshots off, one with them on
    managers = {
        shots: EpisodeManager(pool, workspace / f"runs-shots-{shots}", workspace / "tasks", checker=Checker(), screenshots=shots) for shots in (False, True)
    }
    episodes: dict[bool, Any] = {}
    refs: dict[bool, dict[str, str]] = {}
    for shots, manager in managers.items():
        episode, _ = await manager.start(url=url)
        await episode.page.wait_for_selector(ready)
        episodes[shots] = episode
        refs[shots] = _tab_refs((await episode.observe()).snapshot)

    async def raw_click(tab: str) -> None:
        await raw_page.locator(f"aria-ref={raw_refs[tab]}").click()

    async def recorded_click(shots: bool, tab: str) -> None:
        observation = await episodes[shots].click(f"{tab} tab", refs[shots][tab])
        refs[shots] = _tab_refs(observation.snapshot)  # as an agent would: refs from the latest snapshot

    modes: dict[str, tuple[Callable[[str], Awaitable[None]], Any]] = {
        "raw": (raw_click, raw_page),
        "recorded (screenshots off)": (functools.partial(recorded_click, False), episodes[False].page),
        "recorded (screenshots on)": (functools.partial(recorded_click, True), episodes[True].page),
    }
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    counters = {mode: 0 for mode in modes}

    async def block(mode: str, count: int, record: bool) -> None:
        click, page = modes[mode]
        for _ in range(count):
            tab = _TABS[(counters[mode] + 1) % 2]  # Summary starts selected: Details, Summary, …
            clock = time.perf_counter()
            await click(tab)
            elapsed = time.perf_counter() - clock
            counters[mode] += 1
            if record:
                times[mode].append(elapsed)
        if await _selected(page) != _TABS[counters[mode] % 2]:
            raise RuntimeError(f"{mode}: the clicks did not switch the tabs")

    for mode in modes:  # warm-up, not timed
        await block(mode, 4, record=False)
    done = 0
    while done < n:  # interleaved blocks: load on the machine hits every mode alike
        size = min(_BLOCK, n - done)
        for mode in modes:
            await block(mode, size, record=True)
        done += size

    # What a recorded action adds on top of the click: one aria snapshot, one viewport screenshot.
    floors: dict[str, list[float]] = {"aria_snapshot": [], "screenshot": []}
    for _ in range(max(5, n // 4)):
        clock = time.perf_counter()
        await raw_page.locator("body").aria_snapshot(mode="ai")
        floors["aria_snapshot"].append(time.perf_counter() - clock)
        clock = time.perf_counter()
        await raw_page.screenshot()
        floors["screenshot"].append(time.perf_counter() - clock)

    recorded = {}
    for shots, manager in managers.items():
        episode = episodes[shots]
        recorded[shots] = {"actions": episode.recorder.count, "screenshots": len(list(episode.recorder.screenshots.glob("*.png")))}
        await manager.close_all()
    await guarded.context.close()

    ms = {mode: 1000 * statistics.mean(t) for mode, t in times.items()}
    median = {mode: 1000 * statistics.median(t) for mode, t in times.items()}
    raw = ms["raw"]
    return {
        "actions_per_mode": n,
        "ms": {k: round(v, 2) for k, v in ms.items()},
        "ms_median": {k: round(v, 2) for k, v in median.items()},
        "ratio": {k: round(v / raw, 2) for k, v in ms.items() if k != "raw"},
        "ratio_median": {k: round(v / median["raw"], 2) for k, v in median.items() if k != "raw"},
        "floor_ms": {k: round(1000 * statistics.mean(v), 2) for k, v in floors.items()},
        "recorded": {"screenshots off": recorded[False], "screenshots on": recorded[True]},
    }


# -- run ----------------------------------------------------------------------------------


async def _run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    from taskloom.tools.browser import BrowserPool
    from taskloom.tools.graph.service import GraphService
    from taskloom.tools.settings import Settings

    pool = BrowserPool()
    try:
        with _serve(_SITE) as base:
            clock = time.perf_counter()
            browser = await pool.browser()
            warm = GraphService(Settings(workspace=root / "warm-up", embedder="hashing", crawl_delay=0), browsers=pool)
            await warm.ingest_website(base, max_pages=1, max_depth=0)
            warm_up = time.perf_counter() - clock
            print(f"browser launch + warm-up: {warm_up:.2f} s  (Chromium {browser.version}, site at {base})", flush=True)

            sites: dict[str, list[dict[str, Any]]] = {}
            for contexts in (1, args.contexts):
                run = await _crawl(pool, base, root / f"crawl-site-{contexts}", contexts, args, args.max_pages)
                print(f"  example site, {contexts} context(s): {run['pages']} pages in {run['seconds']:.2f} s", flush=True)
                sites.setdefault("examples/site", []).append(run)
            if args.docs_pages and (args.docs / "library" / "index.html").is_file():
                with _serve(args.docs) as docs:
                    for contexts in (1, args.contexts):
                        run = await _crawl(pool, docs + "library/index.html", root / f"crawl-docs-{contexts}", contexts, args, args.docs_pages)
                        print(f"  python docs, {contexts} context(s): {run['pages']} pages in {run['seconds']:.2f} s", flush=True)
                        sites.setdefault("python docs", []).append(run)
            elif args.docs_pages:
                print(f"  no Python docs at {args.docs} (apt-get install python3.11-doc): skipped", flush=True)
            actions = await _actions(pool, base, root / "actions", args.actions)
            return {"warm_up": round(warm_up, 3), "chromium": browser.version, "sites": sites, "actions": actions}
    finally:
        await pool.close()


def _print(args: argparse.Namespace, out: dict[str, Any]) -> None:
    out["speedup"] = {}
    for site, runs in out["sites"].items():
        out["speedup"][site] = _print_site(args, site, runs)
    _print_actions(out)


def _print_site(args: argparse.Namespace, site: str, runs: list[dict[str, Any]]) -> dict[str, float]:
    one, many = runs
    crawl_speedup = one["phases"]["crawl"] / many["phases"]["crawl"] if many["phases"]["crawl"] else 0.0
    total_speedup = one["seconds"] / many["seconds"] if many["seconds"] else 0.0
    print()
    print(f"== crawl: {site}, max_pages {one['pages']}, max_depth {args.max_depth}, delay 0, hashing embedder ==")
    print(
        f"{'contexts':>8} {'pages':>6} {'seconds':>8} {'crawl s':>8} {'build s':>8} {'embed s':>8} {'pages/s (crawl)':>16} {'pages/s (total)':>16}"
    )
    for r in (one, many):
        p = r["phases"]
        print(
            f"{r['contexts']:>8} {r['pages']:>6} {r['seconds']:>8.2f} {p['crawl']:>8.2f} {p['build']:>8.2f} {p['embed']:>8.2f} {r['pages_per_s']:>16.2f} {r['pages_per_s_total']:>16.2f}"
        )
    print(f"speed-up {many['contexts']} vs 1 context: {crawl_speedup:.2f}x (crawl phase), {total_speedup:.2f}x (whole ingestion)")
    if one["_urls"] != many["_urls"]:
        print("note: the two crawls did not capture the same set of pages")
    print(f"skipped by reason: {many['skip_counts']}; pages kept without a screenshot: {many['screenshot_errors']}")
    for r in (one, many):
        prof = r["profile"]
        cap = prof["capture_seconds"] or 1.0
        label = "" if r["contexts"] == 1 else " (summed over contexts; they overlap in wall time)"
        print(f"-- where crawl time went, {r['contexts']} context(s){label}: {prof['capture_seconds']:.2f} s in page captures")
        print(
            f"   contexts busy capturing {100 * r['busy']:.0f} % of {r['contexts']} x {r['phases']['crawl']:.2f} s;"
            f" pages per depth {r['pages_per_depth']}"
        )
        for name, row in prof["rows"].items():
            print(f"   {name:<48} {row['seconds']:>7.2f} s {100 * row['seconds'] / cap:>5.1f} %   ({row['count']} calls)")
    return {"crawl": round(crawl_speedup, 3), "total": round(total_speedup, 3)}


def _print_actions(out: dict[str, Any]) -> None:
    a = out["actions"]
    print()
    print(f"== actions: {a['actions_per_mode']} alternating clicks on #tab-summary / #tab-details per mode ({_BOOK}) ==")
    print(f"{'mode':<28} {'ms/action':>10} {'median':>8} {'x raw':>7}")
    for mode, value in a["ms"].items():
        ratio = a["ratio"].get(mode, 1.0)
        print(f"{mode:<28} {value:>10.2f} {a['ms_median'][mode]:>8.2f} {ratio:>7.2f}")
    f = a["floor_ms"]
    print(
        f"alone: aria_snapshot {f['aria_snapshot']:.2f} ms, viewport screenshot {f['screenshot']:.2f} ms (each recorded action takes one snapshot; one screenshot when on)"
    )
    rec = a["recorded"]
    print(
        f"recorded: {rec['screenshots off']['actions']} actions / {rec['screenshots off']['screenshots']} screenshots (off), {rec['screenshots on']['actions']} / {rec['screenshots on']['screenshots']} (on), warm-up included"
    )


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if not _SITE.is_dir():
        print(f"no example site at {_SITE}", file=sys.stderr)
        return 1
    root = args.workspace or Path(tempfile.mkdtemp(prefix="bench-crawl-"))
    root.mkdir(parents=True, exist_ok=True)
    from importlib.metadata import version

    versions = {"python": platform.python_version(), "playwright": version("playwright")}
    load = os.getloadavg()
    print(
        f"cpus {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, python {versions['python']}, playwright {versions['playwright']}",
        flush=True,
    )
    try:
        out = asyncio.run(_run(args, root))
    finally:
        if args.workspace is None:
            shutil.rmtree(root, ignore_errors=True)
    versions["chromium"] = out.pop("chromium")
    _print(args, out)
    for runs in out["sites"].values():
        for r in runs:
            r.pop("_urls")
    result = {
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "cpus": os.cpu_count(),
        "loadavg": list(load),
        "versions": versions,
        **out,
    }
    print("RESULT " + json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

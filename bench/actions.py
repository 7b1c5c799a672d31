"""Browser-action benchmark: a recorded action against a raw Playwright click, in one run.

Serves the bundled example site (``examples/site``) on ``127.0.0.1`` (a free port), launches
Debian's Chromium once through the ``BrowserPool``, opens ``book.html?id=b07`` and clicks its
two tabs (*Summary* / *Details*) in turn, found by their ``[ref=eN]`` in an accessibility
snapshot, ``--actions`` times per mode:

* ``raw``: ``page.locator("aria-ref=eN").click()`` on a page of a context of the same pool
  (fenced the same way as an episode's);
* ``raw + snapshot`` (for reference, no target): the raw click followed by the
  ``aria_snapshot`` an agent needs to go on, which is what Playwright MCP's ``browser_click``
  returns too;
* ``recorded``: the function an MCP ``browser_click`` call runs, in-process:
  ``EpisodeManager.get(episode_id, "process").click(element, ref)`` with screenshots off;
  it clicks while describing the element (ref checked), appends an fsynced trajectory line
  and returns the new snapshot, whose refs the next click uses (as an agent would);
* ``recorded + screenshots``: the same with per-step screenshots on (``record_screenshots``).

Four untimed clicks per mode first, then the modes run in interleaved blocks of 10, so load
from other processes hits all of them alike. Then the single calls a recorded action is made
of are timed alone on the raw page. Prints mean and median ms per action, each mode's ratio
to ``raw`` (target: recorded ≤ 1.2×, printed as PASS/FAIL), and the trajectory each recorded
mode wrote. The last line is ``RESULT {json}``. No test asserts on these timings.

    .venv/bin/python bench/actions.py
    .venv/bin/python bench/actions.py --actions 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
_BOOK = "book.html?id=b07"
_TABS = ("Summary", "Details")
_READY = 'body[data-ready="true"]'
_BLOCK = 10
# Seconds of untimed pause before each click: "paced" starts it at a random point of the browser's
# frame while the page may still be drawing; "idle" lets the browser go quiet first, as it is
# between an agent's steps (which take seconds of thinking).
_PAUSES = {"paced": (0.02, 0.037), "idle": (0.15, 0.3)}
PACINGS = ("back-to-back", "paced", "idle")
TARGET = 1.2
# The episode managers timed: snapshot answers (the default), without them (``snapshot_mode="none"``), and with screenshots.
_KINDS = {"full": "recorded", "bare": "recorded, no snapshot", "shots": "recorded + screenshots"}
# Each recorded mode is held to the target against the raw action that hands the agent the same.
_PAIRS = (("recorded, no snapshot", "raw, handled"), ("recorded", "raw + snapshot"))


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--actions", type=int, default=60, help="timed clicks per mode (default 60)")
    parser.add_argument("--chromium", default=None, help="Chromium binary (default: chromium on PATH)")
    parser.add_argument("--workspace", type=Path, default=None, help="where the trajectories go (default: a temp dir, deleted)")
    return parser.parse_args(argv)


def _tab_refs(snapshot: str | None) -> dict[str, str]:
    """The refs of the two tabs in an ``aria_snapshot(mode="ai")``."""
    refs = dict(re.findall(r'- tab "(Summary|Details)".*?\[ref=((?:f\d+)?e\d+)\]', snapshot or ""))
    if set(refs) != set(_TABS):
        raise RuntimeError(f"the tabs are not in the snapshot: {snapshot!r:.300}")
    return refs


async def _selected(page: Any) -> str:
    return "Summary" if await page.get_attribute("#tab-summary", "aria-selected") == "true" else "Details"


async def _measure(base: str, workspace: Path, n: int, chromium: str | None) -> dict[str, Any]:
    """Time every mode on one browser; returns the numbers for printing and RESULT."""
    from taskloom.tools.browser import DESCRIBE_JS, BrowserPool
    from taskloom.tools.environment.manager import EpisodeManager
    from taskloom.tools.evaluate.checks import Checker
    from taskloom.tools.security.origin import OriginFence
    from taskloom.tools.workspace import append_jsonl

    url = base + _BOOK
    pool = BrowserPool(chromium)
    try:
        guarded = await pool.new_context(fence=OriginFence.for_site(base))
        raw_page = await guarded.context.new_page()
        raw_page.set_default_timeout(5_000)
        await raw_page.goto(url, wait_until="domcontentloaded")
        await raw_page.wait_for_selector(_READY)
        raw_refs = _tab_refs(await raw_page.locator("body").aria_snapshot(mode="ai"))

        managers = {
            kind: EpisodeManager(pool, workspace / f"episodes-{kind}", workspace / "tasks", checker=Checker(), screenshots=kind == "shots", snapshots=kind != "bare")
            for kind in _KINDS
        }
        ids: dict[str, str] = {}
        refs: dict[str, dict[str, str]] = {}
        for kind, manager in managers.items():
            episode, started = await manager.start(url=url, session="process")
            await episode.page.wait_for_selector(_READY)
            ids[kind] = started.episode_id
            refs[kind] = _tab_refs((await episode.observe()).snapshot)

        async def raw_click(tab: str) -> None:
            await raw_page.locator(f"aria-ref={raw_refs[tab]}").click()

        async def raw_click_handled(tab: str) -> None:  # a click returns before the page has run its handlers; the next call waits for that
            await raw_page.locator(f"aria-ref={raw_refs[tab]}").click()
            await raw_page.evaluate("() => location.href")

        async def raw_click_snapshot(tab: str) -> None:
            await raw_page.locator(f"aria-ref={raw_refs[tab]}").click()
            raw_refs.update(_tab_refs(await raw_page.locator("body").aria_snapshot(mode="ai")))

        def recorded(kind: str) -> Callable[[str], Awaitable[None]]:
            async def click(tab: str) -> None:  # what the MCP tool browser_click runs: episodes.get(episode_id, binding(ctx)).click(...)
                observation = await managers[kind].get(ids[kind], "process").click(f"{tab} tab", refs[kind][tab])
                if observation.snapshot is not None:  # without one, the refs of the last snapshot stay valid
                    refs[kind] = _tab_refs(observation.snapshot)

            return click

        modes: dict[str, tuple[Callable[[str], Awaitable[None]], Any]] = {
            "raw": (raw_click, raw_page),
            "raw, handled": (raw_click_handled, raw_page),
            "raw + snapshot": (raw_click_snapshot, raw_page),
        }
        modes.update({_KINDS[kind]: (recorded(kind), managers[kind].get(ids[kind], "process").page) for kind in _KINDS})
        times: dict[str, dict[str, list[float]]] = {pacing: {mode: [] for mode in modes} for pacing in PACINGS}
        clicks = dict.fromkeys(modes, 0)
        rng = random.Random(0)

        async def block(mode: str, count: int, pacing: str | None) -> None:
            click, page = modes[mode]
            for _ in range(count):
                tab = _TABS[(clicks[mode] + 1) % 2]  # Summary starts selected: Details, Summary, ...
                if pacing in _PAUSES:
                    await asyncio.sleep(rng.uniform(*_PAUSES[pacing]))
                clock = time.perf_counter()
                await click(tab)
                elapsed = time.perf_counter() - clock
                clicks[mode] += 1
                if pacing is not None:
                    times[pacing][mode].append(elapsed)
            if await _selected(page) != _TABS[clicks[mode] % 2]:
                raise RuntimeError(f"{mode}: the clicks did not switch the tabs")

        for mode in modes:
            await block(mode, 4, None)
        done = 0
        while done < n:
            size = min(_BLOCK, n - done)
            for pacing in PACINGS:
                for mode in modes:
                    await block(mode, size, pacing)
            done += size

        # The single calls a recorded action is made of, each alone on the raw page.
        locator = raw_page.locator(f"aria-ref={raw_refs['Summary']}")
        parts: dict[str, Callable[[], Awaitable[Any]]] = {
            "ref check + describe (eval_on_selector)": lambda: raw_page.eval_on_selector(f"aria-ref={raw_refs['Summary']}", DESCRIBE_JS),
            "locator count": locator.count,
            "locator.evaluate": lambda: locator.evaluate(DESCRIBE_JS),
            "page evaluate": lambda: raw_page.evaluate("() => false"),
            "page title": raw_page.title,
            "aria_snapshot": lambda: raw_page.locator("body").aria_snapshot(mode="ai"),
            "viewport screenshot": raw_page.screenshot,
            "fsynced JSONL append": lambda: asyncio.to_thread(append_jsonl, workspace / "alone.jsonl", {"kind": "action", "n": 1}),
        }
        alone: dict[str, float] = {}
        for name, call in parts.items():
            samples = []
            for _ in range(max(10, n // 3)):
                clock = time.perf_counter()
                await call()
                samples.append(time.perf_counter() - clock)
            alone[name] = 1000 * statistics.median(samples)

        written = {}
        for kind, manager in managers.items():
            episode = manager.get(ids[kind], "process")
            written[_KINDS[kind]] = {"actions": episode.recorder.count, "screenshots": len(list(episode.recorder.screenshots.glob("*.png")))}
            await manager.close_all()
        await guarded.context.close()
    finally:
        await pool.close()

    out: dict[str, Any] = {"actions_per_mode": n, "alone_ms_median": {k: round(v, 2) for k, v in alone.items()}}
    for pacing, by_mode in times.items():
        mean = {mode: 1000 * statistics.mean(t) for mode, t in by_mode.items()}
        median = {mode: 1000 * statistics.median(t) for mode, t in by_mode.items()}
        out[pacing] = {
            "ms_mean": {k: round(v, 2) for k, v in mean.items()},
            "ms_median": {k: round(v, 2) for k, v in median.items()},
            "ratio_mean": {k: round(v / mean["raw"], 3) for k, v in mean.items() if k != "raw"},
            "ratio_median": {k: round(v / median["raw"], 3) for k, v in median.items() if k != "raw"},
            "added_ms_mean": {k: round(v - mean["raw"], 2) for k, v in mean.items() if k != "raw"},
        }
    out["written"] = written
    return out


def _print(out: dict[str, Any]) -> None:
    print(f"{out['actions_per_mode']} timed clicks per mode and pacing (interleaved blocks of {_BLOCK}); shared machine, load {out['load']}")
    for pacing in PACINGS:
        rows = out[pacing]
        low, high = _PAUSES.get(pacing, (0.0, 0.0))
        what = "back to back" if pacing == "back-to-back" else f"each after a random {low * 1000:.0f}-{high * 1000:.0f} ms pause (untimed)"
        print(f"\n{pacing}: {what}")
        print(f"{'mode':<25} {'mean ms':>9} {'median ms':>10} {'x raw (mean)':>13} {'x raw (median)':>15} {'+ms (mean)':>11}")
        for mode in rows["ms_mean"]:
            ratio = "" if mode == "raw" else f"{rows['ratio_mean'][mode]:.2f}"
            ratio_med = "" if mode == "raw" else f"{rows['ratio_median'][mode]:.2f}"
            added = "" if mode == "raw" else f"{rows['added_ms_mean'][mode]:.1f}"
            print(f"{mode:<25} {rows['ms_mean'][mode]:>9.2f} {rows['ms_median'][mode]:>10.2f} {ratio:>13} {ratio_med:>15} {added:>11}")
    print("\nalone (median ms): " + ", ".join(f"{k} {v:.2f}" for k, v in out["alone_ms_median"].items()))
    for mode, w in out["written"].items():
        print(f"{mode}: {w['actions']} actions recorded, {w['screenshots']} screenshots")
    for pacing in PACINGS:
        for recorded, raw, ratio in _verdicts(out[pacing]):
            print(f"{'PASS' if ratio <= TARGET else 'FAIL'} ({pacing}): {recorded} {ratio:.2f}x {raw} (medians), target <= {TARGET}x")
        print(f"     ({pacing}): with screenshots (opt-in) {out[pacing]['ratio_median']['recorded + screenshots']:.2f}x a raw click")


def _verdicts(rows: dict[str, Any]) -> list[tuple[str, str, float]]:
    """Each recorded mode against the raw action that gives the agent the same: (recorded, raw, ratio of medians)."""
    median = rows["ms_median"]
    return [(recorded, raw, round(median[recorded] / median[raw], 3)) for recorded, raw in _PAIRS]


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    from taskloom.tools.environment.site import EXAMPLE_SITE, serve_static

    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-actions-") as tmp:
        workspace = args.workspace or Path(tmp)
        with serve_static(EXAMPLE_SITE) as site:
            out = asyncio.run(_measure(site.url + "/", workspace, args.actions, args.chromium))
    import playwright

    out.update(
        load=[round(x, 2) for x in load],
        cpus=os.cpu_count(),
        python=platform.python_version(),
        playwright=getattr(playwright, "__version__", "?"),
        target=TARGET,
        **{"pass": all(ratio <= TARGET for pacing in PACINGS for *_, ratio in _verdicts(out[pacing]))},
    )
    _print(out)
    print("RESULT " + json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Truth of generated web tasks: every gold answer recomputed from the site's own data source.

For each site with a data source (served on 127.0.0.1 and crawled once as in ``bench/sites.py``
and ``bench/quality.py``), web tasks are generated with the default generator for every seed,
and each gold is re-derived from the source by a route of its own, never from the graph:

* **penguins** (``sqlite-web -r`` over ``tests/data/build-penguins.py``'s SQLite file): the
  source is palmerpenguins' ``penguins-raw.csv`` (``id`` is the row's place in the CSV, from 1,
  as the build script numbers it);
* **example** (``examples/site``): the source is ``examples/site/data/books.json``.

Site field labels are mapped to source columns by name (case-insensitive, a unit in brackets
dropped). Lookups: the identifying values must match exactly one source row, whose asked field
is the truth. Compares (which / count / max / min / range / count_difference): the conditions
are evaluated over all source rows. Sort views: the first value shown is the source's maximum or
minimum of the field. Filter views: the records shown satisfy the restriction in the source, and
a complete listing or a stated total holds exactly the source's matching rows. Record finds: the
identifying values match exactly one source row. Query-console changes: the records the goal
names are exactly the source rows meeting its conditions. Value-flow chains and task graphs
(``compose``, per seed, unless ``--no-compose``): every pick re-derived as the one extreme row of
its set, every count recounted (the relation to the picked row and the condition), then the
deliverable. A gold the source cannot check (a field
not in the source, a listing whose records are not source rows, a content page, a form change)
is counted *unchecked*, never right. The checks are in ``truth_check.py``.

Run from the repository root (``make test-data`` first)::

    .venv/bin/python bench/truth.py
    .venv/bin/python bench/truth.py --site penguins --seed 0 --seed 1 --strict

The table gives per site and seed: tasks, checked, right, wrong, unchecked; then every wrong gold
verbatim (instruction, gold, the source's answer, why). The exit code is 0 even with wrong golds
(a measurement); ``--strict`` exits 1 when any gold is wrong. The last line is ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sites import _SITES, _serve  # noqa: E402  (the same sites, served the same way)
from truth_check import SOURCES, Graph, check  # noqa: E402


def _family(task: Any) -> str:
    from taskloom.harness.finish import family_of

    return family_of(task).removeprefix("web-")


def judge(site: str, seed: int, tasks: list[Any], graph: Graph, verbose: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One seed's table row (counts per status, per family, unchecked reasons) and its wrong golds."""
    row: dict[str, Any] = {"site": site, "seed": seed, "tasks": len(tasks), "checked": 0, "right": 0, "wrong": 0, "unchecked": 0}
    families: dict[str, Counter[str]] = defaultdict(Counter)
    why: Counter[str] = Counter()
    wrong: list[dict[str, Any]] = []
    for task in tasks:
        verdict = check(task, graph)
        row[verdict.status] += 1
        row["checked"] += verdict.status != "unchecked"
        families[_family(task)][verdict.status] += 1
        if verdict.status == "unchecked":
            why[verdict.why] += 1
        elif verdict.status == "wrong":
            wrong.append(
                {
                    "site": site,
                    "seed": seed,
                    "id": task.id,
                    "family": _family(task),
                    "instruction": task.instruction,
                    "gold": task.gold_answer,
                    "truth": verdict.truth,
                    "why": verdict.why,
                }
            )
        if verbose:
            print(
                f"[{site} seed {seed}] {verdict.status:9s} {_family(task)}: {task.instruction} | gold {task.gold_answer!r} | source {verdict.truth!r} | {verdict.why}",
                file=sys.stderr,
            )
    row["families"] = {name: dict(c) for name, c in sorted(families.items())}
    row["unchecked why"] = dict(why.most_common())
    return row, wrong


async def _site(
    site: str, url: str, seeds: list[int], count: int, max_pages: int, verbose: bool, compose: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Crawl once, generate per seed, judge every task: the table rows and the wrong golds."""
    from taskloom.tools.runtime import Runtime
    from taskloom.tools.settings import Settings

    source = SOURCES[site]()
    rows: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(workspace=Path(tmp) / "ws", embedder="hashing", crawl_delay=0)
        async with Runtime(settings) as rt:
            began = time.perf_counter()
            crawled = await rt.graphs.ingest_website(url, max_pages=max_pages, max_depth=4)
            graph = Graph(rt.graphs.load(crawled.graph_id), source)
            print(f"{site}: crawled {crawled.pages} pages in {time.perf_counter() - began:.0f} s", file=sys.stderr)
            for seed in seeds:
                began = time.perf_counter()
                try:
                    made = await rt.task_service().generate(crawled.graph_id, count=count, seed=seed)
                    ids = list(made.task_ids)
                    if compose:  # value-flow chains (to level 6) and task graphs over the same graph
                        ids += (await rt.task_service().compose(crawled.graph_id, "chain", count=3, levels=6, seed=seed)).task_ids
                        ids += (await rt.task_service().compose(crawled.graph_id, "dag", count=2, seed=seed)).task_ids
                except Exception as exc:  # a measurement goes on: the failure is printed and counted, not hidden
                    traceback.print_exc()
                    rows.append(
                        {
                            "site": site,
                            "seed": seed,
                            **dict.fromkeys(("tasks", "checked", "right", "wrong", "unchecked"), 0),
                            "families": {},
                            "unchecked why": {},
                        }
                    )
                    rows[-1]["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                    continue
                row, found = judge(site, seed, [rt.tasks.load(i) for i in ids], graph, verbose)
                row["seconds"] = round(time.perf_counter() - began, 1)
                rows.append(row)
                wrong += found
                print(
                    f"{site} seed {seed}: {row['tasks']} tasks, {row['wrong']} wrong of {row['checked']} checked ({row['seconds']} s)",
                    file=sys.stderr,
                )
    return rows, wrong


def _print(rows: list[dict[str, Any]], wrong: list[dict[str, Any]]) -> None:
    print("site | seed | tasks | checked | right | wrong | unchecked")
    print("-|-|-|-|-|-|-")
    for r in rows:
        print(
            f"{r['site']} | {r['seed']} | {r['tasks']} | {r['checked']} | {r['right']} | {r['wrong']} | {r['unchecked']}"
            + (f" (generation failed: {r['error']})" if r.get("error") else "")
        )
    print("\nsite | family | right | wrong | unchecked (all seeds)")
    print("-|-|-|-|-")
    for site in dict.fromkeys(r["site"] for r in rows):
        total: dict[str, Counter[str]] = defaultdict(Counter)
        for r in rows:
            if r["site"] == site:
                for name, c in r["families"].items():
                    total[name].update(c)
        for name, c in sorted(total.items()):
            print(f"{site} | {name} | {c['right']} | {c['wrong']} | {c['unchecked']}")
    for site in dict.fromkeys(r["site"] for r in rows):
        why: Counter[str] = Counter()
        for r in rows:
            if r["site"] == site:
                why.update(r["unchecked why"])
        if why:
            print(f"\n{site}: unchecked, by reason (all seeds)")
            for reason, n in why.most_common():
                print(f"  {n:3d}  {reason}")
    seeds_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    for w in wrong:
        seeds_of[(w["site"], w["id"])].append(w["seed"])
    printed: set[tuple[str, str]] = set()
    print(f"\nwrong golds: {len(wrong)} ({len(seeds_of)} distinct tasks)")
    for w in wrong:
        key = (w["site"], w["id"])
        if key in printed:
            continue
        printed.add(key)
        print(
            f"- {w['site']} [{w['family']}] seeds {', '.join(map(str, seeds_of[key]))}: {w['instruction']}\n    gold: {w['gold']!r}   source: {w['truth']!r}\n    why: {w['why']}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Recompute every generated web task's gold from the site's data source.")
    parser.add_argument(
        "--site",
        choices=[s for s in _SITES if s in SOURCES],
        action="append",
        help="Only these sites (repeatable; default every site with a source).",
    )
    parser.add_argument("--seed", type=int, action="append", help="Generation seeds (repeatable; default 0 to 4).")
    parser.add_argument("--count", type=int, default=15, help="Tasks generated per seed.")
    parser.add_argument("--max-pages", type=int, default=40)
    parser.add_argument("--no-compose", action="store_true", help="Leave out value-flow chains and task graphs (composed per seed by default).")
    parser.add_argument("--strict", action="store_true", help="Exit 1 when any gold is wrong.")
    parser.add_argument("--verbose", action="store_true", help="Print every task's verdict (to stderr) as it is judged.")
    args = parser.parse_args(argv)
    seeds = args.seed if args.seed is not None else list(range(5))
    rows: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for site in args.site or [s for s in _SITES if s in SOURCES]:
        with _serve(site) as url:
            site_rows, site_wrong = asyncio.run(_site(site, url, seeds, args.count, args.max_pages, args.verbose, not args.no_compose))
        rows += site_rows
        wrong += site_wrong
        print(f"{site}: {sum(r['wrong'] for r in site_rows)} wrong of {sum(r['checked'] for r in site_rows)} checked", file=sys.stderr)
    _print(rows, wrong)
    total = {k: sum(r[k] for r in rows) for k in ("tasks", "checked", "right", "wrong", "unchecked")}
    print("RESULT " + json.dumps({"total": total, "rows": rows, "wrong": wrong}, ensure_ascii=False, default=str))
    if args.strict and total["wrong"]:
        sys.exit(1)


if __name__ == "__main__":
    main()

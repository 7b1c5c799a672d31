"""Held-out check of generated web tasks on real sites the project was never tuned on.

Sites, served on 127.0.0.1 by this script from registry packages the project does not use
otherwise (``pip install -e '.[heldout]'``, ``apt-get install sqlite3-doc``):

* ``datasette``: Datasette (PyPI ``datasette``) over ``tests/data/cache/heldout-vega.sqlite``, built by
  ``tests/data/build-heldout-vega.py`` from CSVs that PyPI ``vega_datasets`` ships (airports 3,376 rows,
  Seattle weather 1,461, LA riots 63), with facets and two canned queries
  (``bench/heldout_data/datasette-metadata.json``): paginated tables, sort links, facets, and a result page
  that says "returning more than 1,000 rows". Its data source is the SQLite file.
* ``sqlite-docs``: the SQLite documentation (Debian ``sqlite3-doc``, ``/usr/share/doc/sqlite3``), a large
  static documentation set; its "data source" is its folder: a find target's sentence is looked for in
  every file, crawled or not.

Each site is crawled with the library path of ``taskloom crawl`` (hashing embedder, crawl delay 0),
then web tasks are generated as ``taskloom generate --count 15 --seed 0`` does (no LLM). Every
candidate is kept in view: the kept tasks, and every dropped one with its stage and reason (a
candidate that the coverage selection left out says so). Where a site has a data source, every
gold (kept and dropped) is checked against it: by ``bench/truth.py``'s checker once that module
provides one (the hook is :func:`_truth_checker`), until then by ``bench/heldout_truth.py``.

Written to ``--out`` (default ``.taskloom/heldout``): ``heldout.json`` (everything) and
``heldout.md`` (per site: the crawl's listings with their ``complete`` flag and stated total, then
each kept and dropped task with instruction, gold answer, success criteria and start URL, for a
person to judge). URLs are written relative to the site's root, so two runs compare line by line.

Run from the repository root::

    .venv/bin/python bench/heldout.py
    .venv/bin/python bench/heldout.py --site datasette --max-pages 40 --count 15

The last line printed is ``RESULT {json}`` for machines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))

_ROOT = Path(__file__).resolve().parent.parent
_DATA = _ROOT / "tests" / "data"
_HERE = Path(__file__).resolve().parent / "heldout_data"
_VEGA_DB = _DATA / "cache" / "heldout-vega.sqlite"
_SQLITE_DOCS = Path("/usr/share/doc/sqlite3")
#: The generator whose candidates are recorded: the default web generator, called through a registered wrapper.
_CAPTURE = "heldout-capture"


@dataclass(frozen=True)
class Source:
    """A site's data source: what its golds are checked against."""

    kind: str  # "sqlite": a SQLite file served by Datasette; "folder": the files of a static site
    path: str
    metadata: str = ""  # sqlite: the Datasette metadata (canned queries)


@dataclass(frozen=True)
class Site:
    """A held-out site: how to serve it, the page to start from, and its data source (if any)."""

    name: str
    serve: Callable[[], contextlib.AbstractContextManager[str]]  # yields the site's root URL
    start: str  # path below the root
    source: Source | None
    about: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_up(url: str, server: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server for {url} exited with code {server.returncode}")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(url, timeout=2).close()
            return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


@contextlib.contextmanager
def _datasette() -> Iterator[str]:
    subprocess.run([sys.executable, str(_DATA / "build-heldout-vega.py")], check=True)
    binary = Path(sys.executable).with_name("datasette")
    if not binary.exists():
        raise SystemExit("datasette is not installed: .venv/bin/pip install -e '.[heldout]'")
    port = _free_port()
    command = [str(binary), "serve", "-h", "127.0.0.1", "-p", str(port), "-i", str(_VEGA_DB), "-m", str(_HERE / "datasette-metadata.json")]
    command += ["--setting", "sql_time_limit_ms", "5000", "--setting", "facet_time_limit_ms", "1000"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url + "/", server)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextlib.contextmanager
def _sqlite_docs() -> Iterator[str]:
    from taskloom.tools.environment.site import serve_static

    if not (_SQLITE_DOCS / "index.html").exists():
        raise SystemExit(f"no SQLite documentation at {_SQLITE_DOCS}: apt-get install sqlite3-doc")
    with serve_static(_SQLITE_DOCS) as site:
        yield site.url


SITES: dict[str, Site] = {
    "datasette": Site(
        "datasette",
        _datasette,
        "/",
        Source("sqlite", str(_VEGA_DB), str(_HERE / "datasette-metadata.json")),
        "Datasette 0.65 over three vega_datasets CSVs (airports 3,376 rows, seattle_weather 1,461, la_riots 63)",
    ),
    "sqlite-docs": Site(
        "sqlite-docs",
        _sqlite_docs,
        "/index.html",
        Source("folder", str(_SQLITE_DOCS)),
        "the SQLite 3.40 documentation (Debian sqlite3-doc)",
    ),
}


# -- candidates -------------------------------------------------------------------------------------

_captured: list[Any] = []


def _register_capture() -> None:
    """Register a generator that runs the default web generator and keeps a copy of every candidate."""
    from taskloom.tools.generate.registry import Candidates, GenerationRequest, generator, generators, pick_generator

    if _CAPTURE in generators.names():
        return

    @generator(_CAPTURE, graph="web")
    async def capture(request: GenerationRequest) -> Candidates:
        """The default web generator's candidates, recorded for the held-out listing."""
        found = await generators.get(pick_generator("web", llm_on=False)).factory(request)
        _captured.extend(t.model_copy(deep=True) for t in found.tasks)
        return found


# -- truth ------------------------------------------------------------------------------------------


def _truth_checker() -> Callable[..., Any] | None:
    """``bench/truth.py``'s per-task checker ``check_task(task, kg, source) -> dict``, once that module provides one.

    TODO(issue 31): bind to truth.py's API when it lands; until then the interim checker of
    ``bench/heldout_truth.py`` recomputes lookups and compare goals from the SQLite file.
    """
    try:
        import truth  # type: ignore[import-not-found]
    except ImportError:
        return None
    checker: Callable[..., Any] | None = getattr(truth, "check_task", None)
    return checker


Checker = Callable[[Any, Any], dict[str, Any]]


def _checker(site: Site, root: str) -> tuple[str, Checker] | None:
    """The gold checker for ``site`` and its name, or None when the site has no data source."""
    source = site.source
    if source is None:
        return None
    shared = _truth_checker()
    if shared is not None:
        return "bench/truth.py", lambda task, kg: dict(shared(task, kg, source))
    from heldout_truth import FolderTruth, SqliteTruth

    if source.kind == "folder":
        return "bench/heldout_truth.py (interim: find targets against every file)", FolderTruth(Path(source.path), root).check
    return "bench/heldout_truth.py (interim)", SqliteTruth(Path(source.path), Path(source.metadata), root).check


def _truth(checker: tuple[str, Checker] | None, task: Any, kg: Any) -> dict[str, Any]:
    return checker[1](task, kg) if checker else {"verdict": "no data source"}


# -- one site ---------------------------------------------------------------------------------------


def _rel(url: str | None, root: str) -> str | None:
    return url.replace(root, "", 1) if isinstance(url, str) and url.startswith(root) else url


def _crawl_summary(report: Any, kg: Any, root: str) -> dict[str, Any]:
    skipped = Counter(getattr(s, "reason", str(s)) for s in report.skipped.values())
    listings = [
        {
            "id": n.id,
            "url": _rel(n.attrs.get("url"), root),
            "records": n.attrs.get("records"),
            "complete": n.attrs.get("complete"),
            "total_stated": n.attrs.get("total_stated"),
            "pages_seen": n.attrs.get("pages_seen"),
            "pages_total": n.attrs.get("pages_total"),
            "columns": n.attrs.get("columns"),
            "sorts": len(n.attrs.get("sorts") or []),
        }
        for n in kg.nodes("listing")
    ]
    pages = sorted(_rel(p.attrs.get("url"), root) or "" for p in kg.nodes("page") if not p.attrs.get("state"))
    return {
        "pages": report.pages,
        "app states": sum(1 for p in kg.nodes("page") if p.attrs.get("state")),
        "page urls": pages,
        "not crawled": dict(sorted(skipped.items())),
        "records": sum(1 for _ in kg.nodes("record")),
        "listings": sorted(listings, key=lambda x: (-(x["records"] or 0), str(x["url"]))),
    }


def _criterion(c: Any, root: str) -> str:
    value = c.value.replace(root, "") if c.kind in ("page_is", "query_has", "url_matches") else c.value
    extra = [f"state={c.state}"] if c.state else []
    extra += [f"scope={c.scope}"] if c.scope != "page" else []
    extra += ["whole words"] if c.whole_words else []
    return f"{c.kind}: {value}" + (f" ({', '.join(extra)})" if extra else "")


def _task_row(task: Any, root: str, status: str, stage: str | None = None, reason: str | None = None) -> dict[str, Any]:
    from taskloom.harness.finish import family_of

    structured = {k: v for k, v in task.quality.items() if isinstance(v, dict) and k not in ("score",)}
    return {
        "id": task.id,
        "status": status,
        "stage": stage,
        "reason": reason,
        "family": family_of(task).removeprefix("web-"),
        "type": task.type,
        "instruction": task.instruction,
        "gold_answer": task.gold_answer,
        "answer_kind": task.answer_kind if task.gold_answer else None,
        "metrics": task.metrics,
        "success": [_criterion(c, root) for c in task.success],
        "start_url": _rel(task.start_url, root),
        "gold_steps": [(s.canonical or f"{s.action}({s.text or ''})").replace(root, "") for s in task.gold_steps],
        "evidence": task.evidence,
        "structured": structured,
    }


async def _run_site(site: Site, root: str, max_pages: int, count: int, seed: int) -> dict[str, Any]:
    from taskloom.tools.runtime import Runtime
    from taskloom.tools.settings import Settings

    _captured.clear()
    checker = _checker(site, root)
    out: dict[str, Any] = {
        "site": site.name,
        "about": site.about,
        "start": site.start,
        "source": site.source.__dict__ if site.source else None,
    }
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(workspace=Path(tmp) / "ws", embedder="hashing", crawl_delay=0)
        async with Runtime(settings) as rt:
            started = time.monotonic()
            crawled = await rt.graphs.ingest_website(root + site.start, max_pages=max_pages, max_depth=4)
            out["crawl seconds"] = round(time.monotonic() - started, 1)
            kg = rt.graphs.load(crawled.graph_id)
            out["crawl"] = _crawl_summary(crawled, kg, root)
            started = time.monotonic()
            try:
                made = await rt.task_service().generate(crawled.graph_id, count=count, seed=seed, use_llm=False, generator=_CAPTURE)
            except Exception as exc:  # the bench reports an aborted generation instead of dying with it (issue 31, rule 6)
                out["generation aborted"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                out["traceback"] = traceback.format_exc()
                made = None
            out["generate seconds"] = round(time.monotonic() - started, 1)
            kept = [rt.tasks.load(i) for i in made.task_ids] if made else []
    report = made.report if made else None
    out["families"] = report.generator.get("families", {}) if report else {}
    out["stages"] = report.stages if report else {}
    out["candidates"] = len(_captured)
    kept_ids = {t.id for t in kept}
    why = {d.task_id: d for d in report.dropped} if report else {}
    out["truth checker"] = checker[0] if checker else None
    tasks = [_task_row(t, root, "kept") for t in kept]
    for cand in _captured:
        if cand.id in kept_ids:
            continue
        drop = why.get(cand.id)
        if drop is not None:
            tasks.append(_task_row(cand, root, "dropped", drop.stage, drop.reason))
        elif report is not None:
            tasks.append(
                _task_row(
                    cand, root, "dropped", "coverage", f"not chosen: the coverage selection kept {len(kept)} of the candidates that passed"
                )
            )
        else:
            tasks.append(_task_row(cand, root, "not judged", None, "generation aborted before this candidate was judged"))
    by_id = {t.id: t for t in [*kept, *_captured]}
    for row in tasks:
        row["truth"] = _truth(checker, by_id[row["id"]], kg)
    out["tasks"] = tasks
    out["kept"] = len(kept)
    out["truth"] = {
        status: dict(Counter(t["truth"]["verdict"] for t in tasks if t["status"] == status)) for status in ("kept", "dropped", "not judged")
    }
    out["kept per family"] = dict(sorted(Counter(t["family"] for t in tasks if t["status"] == "kept").items()))
    out["dropped by stage"] = dict(sorted(Counter(t["stage"] for t in tasks if t["status"] == "dropped").items()))
    return out


# -- output -----------------------------------------------------------------------------------------


def _md_task(n: int, t: dict[str, Any]) -> list[str]:
    lines = [f"{n}. **[{t['family']}/{t['type']}]** {t['instruction']}"]
    if t["gold_answer"] is not None:
        lines.append(f"   - gold answer: `{t['gold_answer']}` ({t['answer_kind']}; {', '.join(t['metrics'])})")
    if t["success"]:
        lines.append("   - success: " + "; ".join(f"`{c}`" for c in t["success"]))
    lines.append(f"   - start: `{t['start_url']}`; gold steps: " + " → ".join(f"`{s}`" for s in t["gold_steps"]))
    if t.get("structured"):
        lines.append(f"   - structured: `{json.dumps(t['structured'], ensure_ascii=False, default=str)[:400]}`")
    if t["status"] != "kept":
        lines.append(f"   - dropped at **{t['stage']}**: {t['reason']}")
    if t.get("truth"):
        truth = t["truth"]
        extra = [f"true answer `{truth['true']}`"] if "true" in truth and truth.get("verdict") != "ok" else []
        extra += [truth["why"]] if truth.get("why") else []
        lines.append(f"   - truth: **{truth.get('verdict')}**" + (f" ({'; '.join(extra)})" if extra else ""))
    lines.append("   - judgement: ")
    return lines


def _markdown(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = ["# Held-out web tasks", "", f"`bench/heldout.py --max-pages {args.max_pages} --count {args.count} --seed {args.seed}`", ""]
    for r in rows:
        lines += [f"## {r['site']}: {r['about']}", ""]
        if "crawl" not in r:
            lines += [f"Not run: {r.get('error')}", ""]
            continue
        c = r["crawl"]
        lines += [
            f"Crawl from `{r['start']}`: {c['pages']} pages, {c['app states']} app states, {c['records']} records in {r['crawl seconds']} s; not crawled: {c['not crawled']}.",
            "",
        ]
        several = [x for x in c["listings"] if (x["records"] or 0) > 1]
        if several:
            lines += ["| listing | id | records | complete | total stated | pages seen / total | sorts |", "|-|-|-|-|-|-|-|"]
            lines += [
                f"| `{x['url']}` | {x['id']} | {x['records']} | {x['complete']} | {x['total_stated']} | {x['pages_seen']} / {x['pages_total']} | {x['sorts']} |"
                for x in several
            ]
        singles = [x for x in c["listings"] if (x["records"] or 0) <= 1]
        if singles:
            complete = sum(1 for x in singles if x["complete"])
            lines.append(f"\nAnd {len(singles)} listings of one record or none ({complete} complete), e.g. `{singles[0]['url']}`.")
        lines.append("")
        if r.get("generation aborted"):
            lines += [f"**Generation aborted:** `{r['generation aborted']}`", ""]
        if r.get("truth checker"):
            lines += [f"Golds checked against the data source by {r['truth checker']}: {r['truth']}.", ""]
        lines += [
            f"Candidates {r['candidates']}, kept {r['kept']} in {r['generate seconds']} s; kept per family {r['kept per family']}; dropped by stage {r['dropped by stage']}.",
            "",
        ]
        for name, info in r["families"].items():
            lines.append(f"- {name}: {json.dumps(info, ensure_ascii=False, default=str)[:600]}")
        lines += ["", "### Kept", ""]
        kept = [t for t in r["tasks"] if t["status"] == "kept"]
        for i, t in enumerate(kept, 1):
            lines += _md_task(i, t)
        lines += ["", "### Dropped", ""]
        for i, t in enumerate((t for t in r["tasks"] if t["status"] != "kept"), 1):
            lines += _md_task(i, t)
        lines.append("")
    return "\n".join(lines) + "\n"


def _print_table(rows: list[dict[str, Any]]) -> None:
    print("site | pages | records | listings (complete) | candidates | kept | kept per family | dropped by stage")
    print("-|-|-|-|-|-|-|-")
    for r in rows:
        if "crawl" not in r:
            print(f"{r['site']} | not run: {r.get('error')}")
            continue
        c = r["crawl"]
        complete = sum(1 for x in c["listings"] if x["complete"])
        print(
            f"{r['site']} | {c['pages']} | {c['records']} | {len(c['listings'])} ({complete}) | {r['candidates']} | {r['kept']} | {r['kept per family']} | {r['dropped by stage']}"
        )
        for x in (x for x in c["listings"] if (x["records"] or 0) > 1):
            print(
                f"    listing {x['url']}: {x['records']} records, complete={x['complete']}, total_stated={x['total_stated']}, pages {x['pages_seen']}/{x['pages_total']}"
            )
        if r.get("truth checker"):
            print(f"    truth ({r['truth checker']}): {r['truth']}")
        if r.get("generation aborted"):
            print(f"    GENERATION ABORTED: {r['generation aborted']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Generate web tasks on held-out real sites and list them, kept and dropped, for a person to judge."
    )
    parser.add_argument("--site", choices=sorted(SITES), action="append", help="Only these sites (repeatable; default all).")
    parser.add_argument("--max-pages", type=int, default=40)
    parser.add_argument("--count", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=_ROOT / ".taskloom" / "heldout", help="Folder for heldout.json and heldout.md.")
    args = parser.parse_args(argv)
    _register_capture()
    rows: list[dict[str, Any]] = []
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.site or list(SITES):
        site = SITES[name]
        with site.serve() as root:
            row = asyncio.run(_run_site(site, root, args.max_pages, args.count, args.seed))
        rows.append(row)
        print(f"{name}: {row['crawl']['pages']} pages, {row['candidates']} candidates, {row['kept']} kept", file=sys.stderr)
        everything = {"args": {k: str(v) for k, v in vars(args).items()}, "sites": rows}
        (args.out / "heldout.json").write_text(json.dumps(everything, indent=1, ensure_ascii=False, default=str))  # after each site
        (args.out / "heldout.md").write_text(_markdown(rows, args))
    _print_table(rows)
    print(f"\nwritten: {args.out / 'heldout.json'} and {args.out / 'heldout.md'}")
    summary = [
        {k: r.get(k) for k in ("site", "candidates", "kept", "kept per family", "dropped by stage", "truth", "generation aborted")}
        | {"pages": r["crawl"]["pages"], "records": r["crawl"]["records"]}
        for r in rows
    ]
    print("RESULT " + json.dumps({"sites": summary}, ensure_ascii=False))


if __name__ == "__main__":
    main()

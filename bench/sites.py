"""Web graphs on four real sites: what the crawl kept, lost and understood, one table row per site.

Sites, all served on 127.0.0.1 by this script: the bundled example site, TodoMVC (npm
``todomvc@0.1.1``, ``tests/data/fetch-todomvc.sh``), the Python 3.11 docs (Debian ``python3.11-doc``)
and ``sqlite-web -r`` over the palmerpenguins records (``tests/data/build-penguins.py``). Each is
ingested once with the hashing embedder and crawl delay 0; the table gives pages kept, URLs not
crawled by reason, records and distinct fields, listings (complete ones in brackets), pagination
links, sort orders, filters, forms, modals, tabs, app states, and pages per second of crawl time.
Two records are printed verbatim at the end.

Run from the repository root (``make test-data`` first)::

    .venv/bin/python bench/sites.py
    .venv/bin/python bench/sites.py --max-pages 60 --site penguins

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
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")

_ROOT = Path(__file__).resolve().parent.parent
_DATA = _ROOT / "tests" / "data"
_DOCS = Path("/usr/share/doc/python3.11/html")
_SITES = ("example", "todomvc", "python-docs", "penguins")


@contextlib.contextmanager
def _static(folder: Path) -> Iterator[str]:
    from taskloom.tools.environment.site import serve_static

    with serve_static(folder) as site:
        yield site.url


@contextlib.contextmanager
def _sqlite_web(db: Path) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).with_name("sqlite_web")), "-r", "-x", "-q", "-H", "127.0.0.1", "-p", str(port), str(db)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url + "/", timeout=1).close()
                break
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextlib.contextmanager
def _serve(site: str, docs_page: str = "index.html") -> Iterator[str]:
    if site == "example":
        with _static(_ROOT / "examples" / "site") as url:
            yield url + "/index.html"
    elif site == "todomvc":
        subprocess.run(["bash", str(_DATA / "fetch-todomvc.sh")], check=True)
        with _static(_DATA / "cache" / "todomvc-vanillajs") as url:
            yield url + "/index.html"
    elif site == "python-docs":
        with _static(_DOCS) as url:
            yield url + "/" + docs_page
    else:
        subprocess.run([sys.executable, str(_DATA / "build-penguins.py")], check=True)
        with _sqlite_web(_DATA / "cache" / "penguins.sqlite") as url:
            yield url + "/"


def _row(site: str, report: Any, kg: Any) -> dict[str, Any]:
    nodes = Counter(n.type.value for n in kg.nodes())
    edges = Counter(e.type.value for e in kg.edges())
    reasons = Counter(getattr(s, "reason", str(s)) for s in report.skipped.values())
    records = list(kg.nodes("record"))
    listings = list(kg.nodes("listing"))
    fields = {label for r in records for label in (r.attrs.get("fields") or {})}
    states = sum(1 for p in kg.nodes("page") if p.attrs.get("state"))
    crawl_s = report.seconds.get("crawl", 0.0)
    return {
        "site": site,
        "pages": report.pages,
        "not crawled": dict(sorted(reasons.items())),
        "lost": sum(n for r, n in reasons.items() if r in ("timeout", "error")),
        "screenshot failures": sum(1 for p in kg.nodes("page") if p.attrs.get("screenshot_error")),
        "records": len(records),
        "fields": len(fields),
        "listings": f"{len(listings)} ({sum(1 for listing in listings if listing.attrs.get('complete'))})",
        "pagination": edges.get("paginates", 0),
        "sorts": edges.get("sorts", 0),
        "filters": nodes.get("filter", 0),
        "forms": nodes.get("form", 0),
        "modals": nodes.get("modal", 0),
        "tabs": nodes.get("tab", 0),
        "states": states,
        "pages/s": round(report.pages / crawl_s, 2) if crawl_s else None,
    }


async def _ingest(site: str, url: str, max_pages: int, contexts: int | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from taskloom.tools.runtime import Runtime
    from taskloom.tools.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(workspace=Path(tmp) / "ws", embedder="hashing", crawl_delay=0)
        async with Runtime(settings) as rt:
            extra = {"contexts": contexts} if contexts else {}
            report = await rt.graphs.ingest_website(url, max_pages=max_pages, max_depth=4, **extra)
            kg = rt.graphs.load(report.graph_id)
            records = list(kg.nodes("record"))
            richest = max(records, key=lambda r: (bool(r.attrs.get("listing")), len(r.attrs.get("fields") or {})), default=None)
            sample = [richest.model_dump(include={"text", "attrs"})] if richest else []
            return _row(site, report, kg), sample


def _print_table(rows: list[dict[str, Any]]) -> None:
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    print(" | ".join(c.ljust(widths[c]) for c in columns))
    print("-|-".join("-" * widths[c] for c in columns))
    for r in rows:
        print(" | ".join(str(r[c]).ljust(widths[c]) for c in columns))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Crawl four real sites and tabulate what their web graphs hold.")
    parser.add_argument("--site", choices=_SITES, action="append", help="Only these sites (repeatable; default all).")
    parser.add_argument("--max-pages", type=int, default=40)
    parser.add_argument("--contexts", type=int, default=None, help="Browser contexts (default: the crawl's own default).")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    samples: dict[str, list[dict[str, Any]]] = {}
    for site in args.site or _SITES:
        with _serve(site) as url:
            row, sample = asyncio.run(_ingest(site, url, args.max_pages, args.contexts))
        rows.append(row)
        samples[site] = sample
        print(f"{site}: {row['pages']} pages, {row['records']} records in {row['pages/s']} pages/s", file=sys.stderr)
    _print_table(rows)
    for site, sample in samples.items():
        for record in sample:
            print(f"\nrecord from {site}:\n{json.dumps(record, indent=1, ensure_ascii=False)[:1500]}")
    print("RESULT " + json.dumps({"sites": rows}))


if __name__ == "__main__":
    main()

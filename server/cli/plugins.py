"""``taskloom plugins``: what is registered at each extension point, and where each entry comes from."""

from __future__ import annotations

from typing import Any

import typer

from ...harness.agents.registry import agents
from ...harness.executors import executors
from ...tools.evaluate.consensus.importers import importers
from ...tools.generate.registry import generators
from ...tools.graph.ingest.registry import parsers
from ...tools.registry import Registry, RegistryEntry
from ...tools.tasks.formats import exporters
from .common import echo_json, run

__all__ = ["plugins", "registries"]


def registries() -> dict[str, Registry[Any]]:
    """Every registry by kind, in the order the listing shows them."""
    return {"agent": agents, "generator": generators, "parser": parsers, "importer": importers, "exporter": exporters, "executor": executors}


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _row(entry: RegistryEntry) -> dict[str, Any]:
    details = {k: _plain(v) for k, v in entry.meta.items() if v not in (None, (), [], False)}
    return {"name": entry.name, "origin": entry.origin, "summary": entry.summary, "details": details}


def listing() -> dict[str, list[dict[str, Any]]]:
    """Each kind's entries: name, origin (``builtin`` or the distribution), one-line summary, details."""
    return {kind: [_row(e) for e in sorted(registry.entries(), key=lambda e: e.name)] for kind, registry in registries().items()}


def plugins(as_json: bool = typer.Option(False, "--json", help="Print JSON: {kind: [{name, origin, summary, details}]}.")) -> None:
    """List the registered agents, task generators, document parsers, trajectory importers, export formats and executors."""
    found = run(listing)
    if as_json:
        echo_json(found)
        return
    for kind, rows in found.items():
        typer.echo(f"{kind}s ({registries()[kind].group}):")
        width = max((len(r["name"]) for r in rows), default=0)
        origins = max((len(r["origin"]) for r in rows), default=0)
        for r in rows:
            typer.echo(f"  {r['name']:<{width}}  {r['origin']:<{origins}}  {r['summary']}")

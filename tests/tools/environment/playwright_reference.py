"""The real Playwright MCP server (npm ``@playwright/mcp``, pinned by tests/data/fetch-playwright-mcp.sh) as a test reference.

:func:`reference_client` starts it over stdio with Debian's chromium; :func:`problems`
says how one of our tool schemas fails to accept what the package's schema allows;
:func:`parity_table` is the table the parity test writes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

ROOT = Path(__file__).resolve().parents[3]
FETCH = ROOT / "tests" / "data" / "fetch-playwright-mcp.sh"
PACKAGE = ROOT / "tests" / "data" / "cache" / "playwright-mcp" / "node_modules" / "@playwright" / "mcp"
VERSION = re.search(r"^VERSION=(\S+)$", FETCH.read_text(encoding="utf-8"), re.M).group(1)  # type: ignore[union-attr]


def installed() -> Path:
    """The package's cli.js, installed now (npm) if it is not yet."""
    cli = PACKAGE / "cli.js"
    if not cli.is_file() or json.loads((PACKAGE / "package.json").read_text())["version"] != VERSION:
        subprocess.run(["bash", str(FETCH)], check=True)
    return cli


def reference_client(cwd: Path, *extra: str) -> Client[Any]:
    """An MCP client to the real package over stdio: headless Debian chromium, an in-memory profile, its files under ``cwd``; ``extra`` options appended."""
    args = [str(installed()), "--executable-path", shutil.which("chromium") or "/usr/bin/chromium", "--headless", "--isolated", *extra]
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses its sandbox to root
    return Client(StdioTransport("node", args, cwd=str(cwd)))


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return _resolve(defs[ref.rsplit("/", 1)[-1]], defs) if ref else schema


def _members(schema: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema, defs)
    if "anyOf" in schema or "oneOf" in schema:
        return [m for sub in schema.get("anyOf", schema.get("oneOf", [])) for m in _members(sub, defs)]
    if isinstance(schema.get("type"), list):
        return [{**schema, "type": t} for t in schema["type"]]
    return [schema]


def _accepts(ours: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Our members that take values of JSON type ``kind`` (a number member takes integers)."""
    return [m for m in ours if m.get("type") == kind or (kind == "integer" and m.get("type") == "number") or "type" not in m and "enum" not in m]


def problems(real: dict[str, Any], ours: dict[str, Any], real_defs: dict[str, Any], our_defs: dict[str, Any], where: str) -> list[str]:
    """Why ``ours`` refuses values ``real`` accepts: a type, an enum value, an array item, an object property, a required field."""
    found: list[str] = []
    mine = _members(ours, our_defs)
    for member in _members(real, real_defs):
        kind = member.get("type") or ("string" if "enum" in member else None)
        if kind is None:
            continue
        takers = _accepts(mine, kind)
        if not takers:
            found.append(f"{where}: takes {kind}, ours takes {sorted({str(m.get('type')) for m in mine})}")
            continue
        enum = set(member.get("enum") or [])
        if enum and all(m.get("enum") for m in takers):
            missing = enum - {v for m in takers for v in m["enum"]}
            if missing:
                found.append(f"{where}: values {sorted(missing)} refused")
        if kind == "array" and "items" in member:
            found += problems(member["items"], takers[0].get("items", {}), real_defs, our_defs, f"{where}[]")
        if kind == "object":
            found += object_problems(member, takers[0], real_defs, our_defs, where)
    return found


def object_problems(real: dict[str, Any], ours: dict[str, Any], real_defs: dict[str, Any], our_defs: dict[str, Any], where: str) -> list[str]:
    """Properties of ``real`` that ours lacks or types differently, and fields only ours requires."""
    ours = _resolve(ours, our_defs)
    found = [f"{where}.{name}: missing" for name in real.get("properties", {}) if name not in ours.get("properties", {})]
    for name, schema in real.get("properties", {}).items():
        if name in ours.get("properties", {}):
            found += problems(schema, ours["properties"][name], real_defs, our_defs, f"{where}.{name}")
    extra_required = set(ours.get("required", [])) - set(real.get("required", []))
    found += [f"{where}.{name}: required by ours only" for name in sorted(extra_required)]
    return found


def parity_table(real: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]], left_out: dict[str, str]) -> tuple[str, list[str]]:
    """(Markdown table tool by tool, problems) of our tools against the package's."""
    rows = [f"Playwright MCP {VERSION} (npm @playwright/mcp) against Taskloom's agent profile", "", "| tool | package arguments | Taskloom | extra arguments |", "|---|---|---|---|"]
    found: list[str] = []
    for name in sorted(real):
        schema = real[name]
        args = ", ".join(sorted(schema.get("properties", {}))) or "—"
        if name in left_out:
            rows.append(f"| {name} | {args} | absent on purpose: {left_out[name]} | |")
            if name in ours:
                found.append(f"{name} is listed as left out but offered")
            continue
        if name not in ours:
            rows.append(f"| {name} | {args} | **missing** | |")
            found.append(f"{name}: missing (offer it or list it in LEFT_OUT with the reason)")
            continue
        mine = ours[name]
        issues = object_problems(schema, mine, schema.get("$defs", {}), mine.get("$defs", {}), name)
        found += issues
        extra = sorted(set(mine.get("properties", {})) - set(schema.get("properties", {})))
        rows.append(f"| {name} | {args} | {'; '.join(issues) if issues else 'compatible'} | {', '.join(extra)} |")
    for name in sorted(set(ours) - set(real)):
        if name.startswith("browser_"):
            rows.append(f"| {name} | (not in the package) | Taskloom's own | |")
    return "\n".join(rows) + "\n", found

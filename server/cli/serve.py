"""``taskloom serve``: run the MCP server over stdio (default) or streamable HTTP.

Over HTTP every request passes :class:`taskloom.tools.security.http_guard.HttpGuard`
first: Host and Origin are checked (403) and, when a token is in force, the bearer
token (401). FastMCP's own Host/Origin guard is switched off so that ours is the one
enforcing: FastMCP's checks nothing when bound off loopback and answers 421, not 403.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import typer

from ...tools.security.http_guard import HttpPolicy, choose_token, guard_middleware, make_policy
from ...tools.security.mcp import GOLD_TOOLS
from ...tools.settings import Settings
from .common import run, settings


def serve(
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP (at /mcp) instead of stdio; Host, Origin and the token are checked on every request."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address (loopback by default). Off loopback a bearer token is always required."),
    port: int = typer.Option(8765, "--port", help="HTTP port."),
    token: str | None = typer.Option(
        None, "--token", envvar="TASKLOOM_TOKEN", show_envvar=True,
        help="Bearer token HTTP clients must send (Authorization: Bearer …); also Settings.http_token. "
        "Off loopback one is generated and printed once to stderr when not given; on loopback none is needed unless you set one.",
    ),
    allowed_host: list[str] = typer.Option(
        [], "--allowed-host", help="Another Host name (name or name:port) the HTTP server answers to, besides loopback names and --host; repeatable; also TASKLOOM_ALLOWED_HOSTS."
    ),
    allowed_origin: list[str] = typer.Option(
        [], "--allowed-origin", help="Another Origin (scheme://host[:port]) allowed to call, besides loopback origins; repeatable; also TASKLOOM_ALLOWED_ORIGINS."
    ),
    profile: Literal["full", "agent"] = typer.Option("full", "--profile", help="full (everything) or agent (only env_* and browser_* tools, for agents under test)."),
    enable_desktop: bool = typer.Option(False, "--enable-desktop", help="Add the desktop_* tools (pyautogui under Xvfb)."),
    task: str | None = typer.Option(None, "--task", help="Bind env_start to this task (a server started for one episode)."),
    agent: str | None = typer.Option(None, "--agent", help="Agent name recorded in trajectories."),
    model: str | None = typer.Option(None, "--model", help="Model name recorded in trajectories."),
    episodes_dir: Path | None = typer.Option(None, "--episodes-dir", help="Where trajectories are written (default: the workspace's runs/episodes)."),
    max_steps: int | None = typer.Option(None, "--max-steps", min=1, help="Actions allowed per episode (a harness step limit)."),
    snapshot_mode: Literal["full", "none"] | None = typer.Option(
        None, "--snapshot-mode", help="What browser actions answer with: full (the page's snapshot; default) or none (URL, title, tabs, dialog; call browser_snapshot)."
    ),
) -> None:
    """Run the Taskloom MCP server: over stdio by default, or over streamable HTTP (at /mcp) with --http.

    Over HTTP every request is checked before MCP sees it:

    Host: a loopback name (127.0.0.1, localhost, [::1]), the --host address or an --allowed-host; else 403.

    Origin: absent, a loopback origin (any port) or an --allowed-origin; else 403.

    Token: required off loopback (printed once to stderr unless --token gives one); on loopback only if set; else 401.
    Without a token, the full profile's tools that read task gold, runs or files (tasks_*, eval_*, consensus_*,
    report_*, graph_ingest_document, graph_export) are refused.

    Roots: over HTTP only the workspace and --allow-root folders count, never the roots a client advertises.

    Episodes belong to the MCP session that started them; other sessions cannot act in them.
    """
    from ...tools.environment.mcp import Bound
    from ..app import build_server

    config = settings()
    if snapshot_mode is not None:
        config = config.model_copy(update={"snapshot_mode": snapshot_mode})
    bound = Bound(task_id=task, agent=agent, model=model, max_steps=max_steps)
    if not http:
        server = run(lambda: build_server(config, profile, enable_desktop, bound, episodes_dir))
        server.run(transport="stdio", show_banner=False)
        return
    policy, generated = run(_http_policy, host, token, allowed_host, allowed_origin, config)
    server = run(lambda: build_server(config, profile, enable_desktop, bound, episodes_dir))
    _announce(host, port, policy, generated, profile)
    server.run(
        transport="http", host=host, port=port, show_banner=False,
        middleware=[guard_middleware(policy)], host_origin_protection=False,
    )


def _http_policy(host: str, token: str | None, hosts: list[str], origins: list[str], config: Settings) -> tuple[HttpPolicy, bool]:
    """The HTTP policy from the flags and the settings; whether its token was generated here."""
    chosen, generated = choose_token(host, token or config.http_token)
    policy = make_policy(host, chosen, [*config.allowed_hosts, *hosts], [*config.allowed_origins, *origins])
    return policy, generated


def _announce(host: str, port: int, policy: HttpPolicy, generated: bool, profile: str = "full") -> None:
    """Tell the user, on stderr, where the server is and what it asks of clients; a generated token is shown once."""
    shown = f"[{host}]" if ":" in host else host
    lines = [f"taskloom: MCP over HTTP at http://{shown}:{port}/mcp; Host must be one of {', '.join(policy.host_names())}"]
    if policy.token is None:
        lines.append("taskloom: no bearer token required (loopback); pass --token or set TASKLOOM_TOKEN to require one")
        if profile == "full":
            lines.append(
                "taskloom: without a token, what reads task gold, runs or files is refused over HTTP "
                f"({', '.join(p + '*' if p.endswith('_') else p for p in GOLD_TOOLS)}); pass --token to use them"
            )
    elif generated:
        lines.append(f"taskloom: bearer token (shown once; clients send 'Authorization: Bearer <token>'): {policy.token.get_secret_value()}")
    else:
        lines.append("taskloom: bearer token required (the one you set)")
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()

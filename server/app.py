"""build_server: compose the capability sub-servers, resources and prompts into one FastMCP server."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP  # noqa: E402

from .. import __version__  # noqa: E402
from ..prompts import register_evaluation_prompts, register_prompts  # noqa: E402
from ..harness import mcp as harness_mcp  # noqa: E402
from ..harness.service import Harness  # noqa: E402
from ..resources import register_resources, register_run_resources  # noqa: E402
from ..tools.evaluate import mcp as eval_mcp  # noqa: E402
from ..tools.evaluate.service import EvaluationService  # noqa: E402
from ..tools.llm.client import make_llm  # noqa: E402
from ..tools.environment import desktop_mcp  # noqa: E402
from ..tools.environment import mcp as env_mcp  # noqa: E402
from ..tools.environment.desktop import DesktopEpisodes  # noqa: E402
from ..tools.environment.browser import BrowserPool  # noqa: E402
from ..tools.environment.manager import EpisodeManager  # noqa: E402
from ..tools.environment.mcp import Bound  # noqa: E402
from ..tools.generate import mcp as tasks_mcp  # noqa: E402
from ..tools.generate.service import TaskService  # noqa: E402
from ..tools.graph import mcp as graph_mcp  # noqa: E402
from ..tools.graph.service import GraphService  # noqa: E402
from ..tools.security.roots import Roots  # noqa: E402
from ..tools.settings import Settings  # noqa: E402
from ..tools.tasks.store import TaskStore  # noqa: E402
from ..tools.workspace import Workspace  # noqa: E402
from .errors import TaskloomErrors, quiet_expected_errors  # noqa: E402

__all__ = ["build_server", "Profile", "INSTRUCTIONS", "AGENT_INSTRUCTIONS"]

Profile = Literal["full", "agent"]

INSTRUCTIONS = """Taskloom turns documents and websites into knowledge graphs (nodes: sections, headings,
paragraphs, tables and cells, figures, captions, formulas, references, entities, chunks; web pages and
their elements) and lets agents act in a real browser with every action recorded.
Graphs: graph_ingest_document(path) or graph_list, then graph_search / graph_node / graph_neighbors /
graph_path / graph_sample_subgraph. Browser: env_start(url), browser_snapshot, browser_click(element, ref), …,
env_close. Resources: taskloom://graphs, taskloom://graphs/{graph_id}, taskloom://graphs/{graph_id}/nodes/{node_id}."""

AGENT_INSTRUCTIONS = """You are being evaluated on a task. Call env_start (with the task_id you were given,
or a url) to get the instruction and what you see first. Web tasks: act with browser_* tools, referring to
elements by the [ref=eN] values of the latest snapshot; take a new browser_snapshot when the page changes.
Document tasks: find the answer with doc_search and doc_read. When done, call env_answer with your answer
(if the task asks for one), then env_close."""


def _sub(name: str) -> FastMCP:
    return FastMCP(f"taskloom-{name}", mask_error_details=True)


def build_server(
    settings: Settings | None = None,
    profile: Profile = "full",
    enable_desktop: bool = False,
    bound: Bound | None = None,
    episodes_dir: Path | None = None,
    pool: BrowserPool | None = None,
    graphs: GraphService | None = None,
) -> FastMCP:
    """The Taskloom MCP server over one workspace.

    ``full`` exposes everything (people, IDEs, task generation); ``agent`` only what an
    agent under test may use: the ``env_*``, ``browser_*`` and ``doc_*`` tools (and
    ``desktop_*`` when enabled). ``bound`` ties ``env_start`` to one task, agent and
    model (a server the harness starts per episode); ``episodes_dir`` is where
    trajectories go (default ``runs/episodes`` in the workspace). Each capability is a
    sub-server mounted under its namespace; Taskloom errors are translated in one
    middleware and everything else is masked. ``pool`` and ``graphs`` share one browser
    process and one loaded graph service among many servers (the harness's per-episode
    servers); a shared pool is left open when the server stops.
    """
    settings = settings or Settings()
    quiet_expected_errors()
    workspace = Workspace(settings.workspace)
    roots = Roots([workspace.root, *settings.allow_roots])
    owns_pool = pool is None
    pool = pool or BrowserPool(settings.chromium)
    graphs = graphs or GraphService(settings, pool)
    episodes = EpisodeManager(
        pool, episodes_dir or workspace.runs / "episodes", workspace.tasks, settings.record_screenshots, settings.max_episodes, graphs
    )
    desktops: DesktopEpisodes | None = None

    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await episodes.close_all()
            if owns_pool:
                await pool.close()
            if desktops is not None:
                desktops.close_all()

    server = FastMCP(
        "taskloom",
        instructions=AGENT_INSTRUCTIONS if profile == "agent" else INSTRUCTIONS,
        version=__version__,
        mask_error_details=True,
        lifespan=lifespan,
    )
    server.add_middleware(TaskloomErrors())
    if enable_desktop:
        desktops = DesktopEpisodes(workspace.runs / "episodes", settings.record_screenshots)
        desktop_server = _sub("desktop")
        desktop_mcp.register(desktop_server, desktops, owner=env_mcp.owner_check(episodes))
    env_server, browser_server, doc_server = _sub("env"), _sub("browser"), _sub("doc")
    env_mcp.register_env(env_server, episodes, desktops, reveal_paths=profile == "full", bound=bound)
    env_mcp.register_browser(browser_server, episodes)
    env_mcp.register_doc(doc_server, episodes)
    server.mount(env_server, namespace="env")
    server.mount(browser_server, namespace="browser")
    server.mount(doc_server, namespace="doc")
    if desktops is not None:
        server.mount(desktop_server, namespace="desktop")
    if profile == "full":
        graph_server = _sub("graph")
        graph_mcp.register(graph_server, graphs, roots)
        server.mount(graph_server, namespace="graph")
        register_resources(server, graphs)
        tasks_server = _sub("tasks")
        tasks_mcp.register(tasks_server, TaskService(graphs, episodes), roots)
        server.mount(tasks_server, namespace="tasks")
        register_run_resources(server, workspace)
        evaluation = EvaluationService(workspace, make_llm(settings, workspace.cache))
        harness = Harness(settings, build_server)
        eval_server, consensus_server, report_server = _sub("eval"), _sub("consensus"), _sub("report")
        eval_mcp.register_eval(eval_server, evaluation, roots)
        harness_mcp.register_run_eval(eval_server, harness)
        eval_mcp.register_consensus(consensus_server, evaluation, roots)
        harness_mcp.register_report(report_server, harness)
        server.mount(eval_server, namespace="eval")
        server.mount(consensus_server, namespace="consensus")
        server.mount(report_server, namespace="report")
        register_prompts(server)
        register_evaluation_prompts(server, TaskStore(workspace))
    return server

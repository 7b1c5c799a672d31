"""build_server: compose the capability sub-servers, resources and prompts into one FastMCP server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastmcp import FastMCP

from .. import __version__
from ..harness import mcp as harness_mcp
from ..harness.service import Harness
from ..prompts import register_evaluation_prompts, register_prompts
from ..resources import register_resources, register_run_resources
from ..tools.environment.markdown_answers import MarkdownAnswers
from ..tools.environment.observe import RecordObservations
from ..tools.environment import desktop_mcp
from ..tools.environment import mcp as env_mcp
from ..tools.environment.desktop import DesktopEpisodes
from ..tools.environment.mcp import Bound
from ..tools.evaluate import mcp as eval_mcp
from ..tools.generate import mcp as tasks_mcp
from ..tools.graph import mcp as graph_mcp
from ..tools.runtime import Runtime
from ..tools.security.mcp import GoldNeedsToken
from ..tools.security.roots import Roots
from ..tools.settings import Settings
from .errors import TaskloomErrors, quiet_expected_errors

__all__ = ["build_server", "Profile", "INSTRUCTIONS", "AGENT_INSTRUCTIONS"]

Profile = Literal["full", "agent"]

INSTRUCTIONS = """Taskloom turns documents and websites into knowledge graphs (nodes: sections, headings,
paragraphs, tables and cells, figures, captions, formulas, references, entities, chunks; web pages and
their elements) and lets agents act in a real browser with every action recorded.
Graphs: graph_ingest_document(path) or graph_list, then graph_search / graph_node / graph_neighbors /
graph_path / graph_sample_subgraph. Browser: env_start(url), browser_snapshot, browser_click(target), …,
env_close. Resources: taskloom://graphs, taskloom://graphs/{graph_id}, taskloom://graphs/{graph_id}/nodes/{node_id}."""

AGENT_INSTRUCTIONS = """You are being evaluated on a task. Call env_start (with the task_id you were given,
or a url) to get the instruction and what you see first. Web tasks: act with browser_* tools, naming
elements by target = the [ref=eN] value of the latest snapshot; take a new browser_snapshot when the page changes.
Tabs the page opens are listed under "### Open tabs" (switch with browser_tabs); a dialog is shown under
"### Modal state" and waits for browser_handle_dialog.
Document tasks: find the answer with doc_search and doc_read. Desktop tasks: act with desktop_* tools and the episode_id,
naming elements by the [ref=eN] of the latest desktop_snapshot (desktop_hotkey for keys such as ctrl+s). When done, call env_answer with your answer
(if the task asks for one), then env_close."""


def _sub(name: str) -> FastMCP:
    return FastMCP(f"taskloom-{name}", mask_error_details=True)


def build_server(
    settings: Settings | None = None,
    profile: Profile = "full",
    enable_desktop: bool = False,
    bound: Bound | None = None,
    episodes_dir: Path | None = None,
    runtime: Runtime | None = None,
) -> FastMCP:
    """The Taskloom MCP server over one workspace.

    ``full`` exposes everything (people, IDEs, task generation); ``agent`` only what an
    agent under test may use: the ``env_*``, ``browser_*`` and ``doc_*`` tools (and
    ``desktop_*`` when enabled). ``bound`` ties ``env_start`` to one task, agent and
    model (a server the harness starts per episode); ``episodes_dir`` is where
    trajectories go (default ``runs/episodes`` in the workspace). Each capability is a
    sub-server mounted under its namespace; Taskloom errors are translated in one
    middleware and everything else is masked. Over HTTP, what reads task gold, runs or
    files needs a bearer token (:class:`~taskloom.tools.security.mcp.GoldNeedsToken`), and
    the roots a client advertises never widen the allowed roots.

    Without a ``runtime`` the server makes its own from ``settings`` and its lifespan
    closes it; a ``runtime`` passed in (the harness's per-episode servers share one
    browser and graph service) is left open for its owner to close, and ``settings``
    is then ignored.
    """
    quiet_expected_errors()
    owns_runtime = runtime is None
    rt = runtime if runtime is not None else Runtime(settings)
    settings = rt.settings
    workspace = rt.workspace
    roots = Roots([workspace.root, *settings.allow_roots])
    own_episodes = episodes_dir is not None or not owns_runtime
    episodes = rt.episode_manager(episodes_dir) if own_episodes else rt.episodes
    desktops: DesktopEpisodes | None = None

    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            try:
                await episodes.close_all()
                if owns_runtime:
                    await rt.aclose()
            finally:
                if desktops is not None:
                    desktops.close_all()

    server = FastMCP(
        "taskloom",
        instructions=AGENT_INSTRUCTIONS if profile == "agent" else INSTRUCTIONS,
        version=__version__,
        mask_error_details=True,
        lifespan=lifespan,
    )
    server.add_middleware(RecordObservations())  # outermost: records what the agent is answered, errors as translated below
    server.add_middleware(MarkdownAnswers(settings.inline_snapshots))  # browser observations as Playwright MCP's Markdown sections
    server.add_middleware(TaskloomErrors())
    server.add_middleware(GoldNeedsToken())  # over HTTP, gold, runs and files need a bearer token
    if enable_desktop:
        desktops = DesktopEpisodes(episodes_dir or workspace.runs / "episodes", settings.record_screenshots, final_screenshot=True)  # the last state, for the report
        desktop_server = _sub("desktop")
        desktop_mcp.register(desktop_server, desktops, owner=env_mcp.owner_check(episodes))
    env_server, browser_server, doc_server = _sub("env"), _sub("browser"), _sub("doc")
    env_mcp.register_env(env_server, episodes, desktops, reveal_paths=profile == "full", bound=bound)
    # agents upload only from the folders the user allowed, never from the workspace (it holds the tasks' gold)
    env_mcp.register_browser(browser_server, episodes, roots if profile == "full" else Roots(settings.allow_roots) if settings.allow_roots else None)
    env_mcp.register_doc(doc_server, episodes)
    server.mount(env_server, namespace="env")
    server.mount(browser_server, namespace="browser")
    server.mount(doc_server, namespace="doc")
    if desktops is not None:
        server.mount(desktop_server, namespace="desktop")
    if profile == "full":
        graph_server = _sub("graph")
        graph_mcp.register(graph_server, rt.graphs, roots)
        server.mount(graph_server, namespace="graph")
        register_resources(server, rt.graphs)
        tasks_server = _sub("tasks")
        tasks_mcp.register(tasks_server, rt.task_service(episodes), roots)
        server.mount(tasks_server, namespace="tasks")
        register_run_resources(server, workspace, rt.tasks)
        harness = Harness(settings, build_server, runtime=rt)
        evaluation = rt.evaluation_service()
        eval_server, consensus_server, report_server = _sub("eval"), _sub("consensus"), _sub("report")
        eval_mcp.register_eval(eval_server, evaluation, roots)
        harness_mcp.register_run_eval(eval_server, harness)
        eval_mcp.register_consensus(consensus_server, evaluation, roots)
        harness_mcp.register_report(report_server, harness)
        server.mount(eval_server, namespace="eval")
        server.mount(consensus_server, namespace="consensus")
        server.mount(report_server, namespace="report")
        register_prompts(server)
        register_evaluation_prompts(server, rt.tasks, roots)
    return server

"""The Runtime: the one object that builds, shares and closes Taskloom's services in a process.

Whoever runs Taskloom creates one — the server (``build_server``, closed by its
lifespan), each CLI command, the harness — and passes it down; nothing else builds a
browser pool, graph service, episode manager, LLM, embedder or task store. It is also
where the pieces meet that must not import each other: the graph service becomes the
environment's :class:`~taskloom.tools.environment.protocols.DocumentSource`, and the
evaluation checker its :class:`~taskloom.tools.environment.protocols.SuccessChecker`.

Construction is cheap: Chromium launches on the first episode or crawl, the embedder
loads on the first embedding, the LLM client is made on first use. Closing closes the
open episodes and the browser; the runtime stays usable (the browser relaunches on
next use), so a CLI command may run several event loops with one runtime
(:meth:`Runtime.run`), closing the browser at the end of each.

Examples
--------
>>> import tempfile
>>> from taskloom.tools.settings import Settings
>>> with Runtime.open_sync(Settings(workspace=tempfile.mkdtemp(), embedder="hashing")) as rt:
...     rt.graphs.list_graphs()
[]
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio

from .browser import BrowserPool
from .environment.appstate import StateFolder, StateTurns
from .environment.limits import EpisodeLimits
from .environment.manager import EpisodeManager
from .environment.protocols import DocHit, DocNode
from .evaluate.checks import Checker
from .graph.service import GraphService
from .llm.client import LLM, make_llm
from .llm.embedders import Embedder, make_embedder
from .settings import Settings
from .tasks.store import TaskStore
from .workspace import Workspace

if TYPE_CHECKING:  # imported where used: a command that only reads graphs does not load them
    from .evaluate.service import EvaluationService
    from .generate.service import TaskService

__all__ = ["Runtime", "GraphDocuments"]

T = TypeVar("T")

#: Longest node text a document episode's ``doc_read`` returns.
_MAX_TEXT = 4000


class GraphDocuments:
    """A :class:`~taskloom.tools.environment.protocols.DocumentSource` over a graph service's stored graphs."""

    def __init__(self, graphs: GraphService) -> None:
        self.graphs = graphs

    def ensure(self, graph_id: str) -> None:
        """Load the graph once, so a missing one fails now with the store's clear error."""
        self.graphs.load(graph_id)

    def search(self, graph_id: str, query: str, k: int) -> list[DocHit]:
        """Semantic search over the graph, as previews an agent may see."""
        hits = self.graphs.search(graph_id, query, k=k)
        return [DocHit(node_id=h.node_id, type=h.type, score=round(h.score, 4), preview=" ".join(h.text.split())[:240]) for h in hits]

    def read(self, graph_id: str, node_id: str) -> DocNode | None:
        """A node's text (first 4,000 characters), enclosing section, reading-order neighbours and first 30 children."""
        kg = self.graphs.load(graph_id)
        if node_id not in kg.g:
            return None
        node = kg.node(node_id)
        out = [(v, key) for _, v, key in kg.g.out_edges(node_id, keys=True)]
        into = [(u, key) for u, _, key in kg.g.in_edges(node_id, keys=True)]
        return DocNode(
            node_id=node_id,
            type=node.type.value,
            text=node.text[:_MAX_TEXT],
            section=next((u for u, key in sorted(into) if key == "contains"), None),
            previous=next((u for u, key in sorted(into) if key == "next"), None),
            next=next((v for v, key in sorted(out) if key == "next"), None),
            children=[v for v, key in sorted(out) if key == "contains"][:30],
        )


class Runtime:
    """Settings, workspace, browser pool, graph service, episode manager, LLM, embedder and task store of one process.

    Parameters
    ----------
    settings : Settings, optional
        Default: ``Settings()`` (environment and config file).
    screenshots : bool, optional
        Whether the default episode manager records screenshots; default
        ``settings.record_screenshots`` (task generation passes False).

    Use ``async with Runtime(settings) as rt:`` in async code, and
    :meth:`open_sync` in a synchronous command.
    """

    def __init__(self, settings: Settings | None = None, *, screenshots: bool | None = None) -> None:
        self.settings = settings if settings is not None else Settings()
        self.workspace = Workspace(self.settings.workspace)
        self.browsers = BrowserPool(self.settings.chromium)
        self.tasks = TaskStore(self.workspace, self.settings.lock_timeout)
        self.checker = Checker()
        self.graphs = GraphService(self.settings, self.browsers, embedder=lambda: make_embedder(self.settings))
        self.documents = GraphDocuments(self.graphs)
        self.screenshots = self.settings.record_screenshots if screenshots is None else screenshots
        state = self.settings.app_state
        #: The application's state, shared by every episode manager made here (``rt.episodes.state_reset = …`` sets it for all).
        self.state_turns = StateTurns(StateFolder(*state).reset if state else None)
        self.episodes = self.episode_manager()
        self._llm: LLM | None = None
        self._lock = threading.Lock()

    # -- what it owns ---------------------------------------------------------------------

    @property
    def llm_cache(self) -> Path:
        """Where LLM answers are cached by prompt hash: ``cache/llm`` in the workspace (the one place that decides it)."""
        return self.workspace.cache / "llm"

    @property
    def llm(self) -> LLM:
        """The configured LLM (``none`` or an OpenAI-compatible endpoint), made on first use.

        Raises InputError when ``llm_backend=openai`` lacks a base URL or model.
        """
        with self._lock:
            if self._llm is None:
                self._llm = make_llm(self.settings, self.llm_cache)
            return self._llm

    @property
    def embedder(self) -> Embedder:
        """The configured embedder, loaded on first use (the graph service's, so it is loaded once)."""
        return self.graphs.embedder

    def episode_manager(self, root: Path | None = None, screenshots: bool | None = None) -> EpisodeManager:
        """An episode manager on this runtime's browser, checker and graphs, writing trajectories under ``root``.

        The default one (``rt.episodes``) writes to the workspace's ``runs/episodes``; a
        server the harness starts for one episode gets its own folder. Whoever asks for
        a new one closes its episodes (``close_all``); the browser stays the runtime's.
        """
        return EpisodeManager(
            self.browsers,
            root or self.workspace.runs / "episodes",
            self.workspace.tasks,
            checker=self.checker,
            screenshots=self.screenshots if screenshots is None else screenshots,
            snapshots=self.settings.snapshot_mode == "full",
            record=self.settings.record,
            max_episodes=self.settings.max_episodes,
            documents=self.documents,
            limits=EpisodeLimits.from_settings(self.settings),
            turns=self.state_turns,
            login=self.settings.site_login,
        )

    def task_service(self, episodes: EpisodeManager | None = None) -> TaskService:
        """Task generation over this runtime's graphs, LLM and task store, replaying web tasks in ``episodes`` (default ``rt.episodes``)."""
        from .generate.service import TaskService

        return TaskService(self.graphs, episodes if episodes is not None else self.episodes, self.llm, self.tasks)

    def evaluation_service(self) -> EvaluationService:
        """Evaluation over this runtime's workspace, LLM and task store."""
        from .evaluate.service import EvaluationService

        return EvaluationService(self.workspace, self.llm, self.tasks)

    # -- lifetime -------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the default manager's open episodes (their final states are checked) and the browser.

        Safe to call twice; the runtime stays usable and relaunches the browser when
        it is next needed.
        """
        try:
            await self.episodes.close_all()
        finally:
            await self.browsers.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def run(self, fn: Callable[..., Awaitable[T]], *args: object) -> T:
        """Run ``fn(*args)`` in a new event loop and close the browser before that loop ends (for synchronous callers)."""

        async def go() -> T:
            try:
                return await fn(*args)
            finally:
                await self.aclose()

        return anyio.run(go)

    @classmethod
    @contextmanager
    def open_sync(cls, settings: Settings | None = None, *, screenshots: bool | None = None) -> Iterator[Runtime]:
        """A runtime for a synchronous caller (a CLI command), closed when the block ends."""
        runtime = cls(settings, screenshots=screenshots)
        try:
            yield runtime
        finally:
            anyio.run(runtime.aclose)

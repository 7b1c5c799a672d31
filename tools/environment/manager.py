"""EpisodeManager: start, find and close browser episodes; one browser process, many contexts.

An episode is found by its id, or through the MCP session it is bound to, so an
agent that never passes ``episode_id`` still acts in its own episode. Every episode
has an owner, the binding key of the session that started it (``process`` over stdio
and in memory, ``http:<mcp-session-id>`` over HTTP, None when started without a
session): naming another owner's episode by id is refused.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from playwright.async_api import BrowserContext, StorageState
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, Field, ValidationError

from ..browser import BrowserPool
from ..browser.dom import NAVIGATION_WATCH_JS
from ..browser.login import log_in
from ..errors import InputError, NotFoundError
from ..looplock import LoopLock
from ..tasks.model import SuccessCriterion, Task, criterion_key
from ..security.origin import OriginFence
from ..settings import SiteLogin
from .appstate import StateTurns
from .documents import DocumentEpisode
from .episodes import BrowserEpisode, TimedOut
from .limits import EpisodeLimits
from .protocols import DocumentSource, SuccessChecker
from .trajectory import ActionRecord, CloseStatus, CriterionResult, EpisodeRecord, Recorder, load_trajectory

__all__ = ["EpisodeManager", "FINAL_SCREENSHOT", "HAR_FILE", "PublicTask", "StartedEpisode", "TRACE_FILE"]

#: File names of an episode's recordings in its folder (beside ``trajectory.jsonl``).
HAR_FILE, TRACE_FILE = "network.har", "trace.zip"
FINAL_SCREENSHOT = "screenshots/final.png"  # relative to the episode folder

_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class PublicTask(BaseModel):
    """The part of a stored task an agent under test may see: never gold answers or criteria."""

    id: str
    kind: str = "web"
    instruction: str
    start_url: str | None = None
    allowed_domains: list[str] = Field(default_factory=list)


class StartedEpisode(BaseModel):
    """What env_start returns."""

    episode_id: str
    url: str
    title: str
    instruction: str | None = None
    snapshot: str
    trajectory: str | None = Field(None, description="Path of the episode's trajectory file (full profile only).")


class EpisodeManager:
    """All browser and document episodes of one server.

    Built by :class:`taskloom.tools.runtime.Runtime`, which passes the process's browser
    ``pool``, the ``checker`` that gives the final-state verdict at close (and probes
    watched states after every action), and the ``documents`` source document
    episodes read through (None: this manager opens no document episodes). With
    ``screenshots`` every successful browser action also saves a viewport PNG (opt-in:
    nothing that evaluates or reports reads them); whatever it says, an episode of a task that
    did not end with every criterion held keeps its final page as ``screenshots/final.png``
    (noted in its close record), so the report can show why it failed. With ``snapshots`` False an action answers
    with the URL, title, tabs and dialog only, as Playwright MCP's ``--snapshot-mode none``
    (``browser_snapshot`` still returns the page). ``record`` adds per-episode recordings to
    the episode's folder: ``har`` (``network.har``, written when the context closes) and
    ``trace`` (``trace.zip``, a Playwright trace with screenshots and DOM snapshots that
    ``playwright show-trace`` opens). ``limits`` are every episode's timeouts and snapshot
    size (see :class:`.limits.EpisodeLimits`). With a ``login`` every browser episode starts logged in: the
    login runs once in a context of its own (:mod:`taskloom.tools.browser.login`) and its cookies are reused,
    or after every state reset when the application keeps state (a reset ends the sessions); the agent never
    sees the credentials.
    """

    def __init__(
        self,
        pool: BrowserPool,
        root: Path,
        tasks: Path,
        *,
        checker: SuccessChecker,
        screenshots: bool = False,
        snapshots: bool = True,
        record: Sequence[str] = (),
        max_episodes: int = 16,
        documents: DocumentSource | None = None,
        limits: EpisodeLimits = EpisodeLimits(),
        turns: StateTurns | None = None,
        login: SiteLogin | None = None,
    ) -> None:
        self.pool = pool
        self.login = login
        self._login_state: StorageState | None = None  # the cookies of the last login, reused while no reset ended them
        self.checker = checker
        self.documents_source = documents
        self.root = root
        self.tasks = tasks
        self.screenshots = screenshots
        self.snapshots = snapshots
        self.record = frozenset(record)
        self.max_episodes = max_episodes
        self.limits = limits
        self.episodes: dict[str, BrowserEpisode] = {}
        self.documents: dict[str, DocumentEpisode] = {}
        self.sessions: dict[str, str] = {}
        self.owners: dict[str, str | None] = {}  # episode id -> binding key of the session that started it
        self._lock = LoopLock()
        #: An application's state (shared with the runtime's other managers): with a reset, one browser episode at a
        #: time holds it (reset, act, final check) and another waits up to ``turns.wait_s`` seconds.
        self.turns = turns if turns is not None else StateTurns()
        #: Set on a server bound to one task (:func:`.mcp.register_env`): opens that task's episode for a session that
        #: acts without one, so a Playwright-MCP agent's first ``browser_*`` call starts it (no ``env_start`` needed).
        self.autostart: Callable[[str | None], Awaitable[BrowserEpisode]] | None = None
        self.fresh: set[str] = set()  # episodes :attr:`autostart` just opened, until their session's next call

    @property
    def state_reset(self) -> Callable[[], object] | None:
        """Called (in a worker thread) before each browser episode opens: an application's state reset
        (e.g. :meth:`.appstate.StateFolder.reset`), so every episode and gold replay starts from the same state."""
        return self.turns.reset

    @state_reset.setter
    def state_reset(self, reset: Callable[[], object] | None) -> None:
        self.turns.reset = reset

    def private_task(self, task_id: str) -> Task | None:
        """The whole stored task, for server-side checks only (never returned to an agent); None if unreadable."""
        try:
            return Task.model_validate_json((self.tasks / f"{task_id}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def public_task(self, task_id: str) -> PublicTask:
        """The public fields of a stored task (workspace ``tasks/{id}.json``); nothing else is read out."""
        if not _TASK_ID.fullmatch(task_id or ""):
            raise InputError(f"task_id {task_id!r} is not a task id (letters, digits, '.', '_', '-')")
        path = self.tasks / f"{task_id}.json"
        if not path.is_file():
            raise NotFoundError(f"no task with id {task_id!r}; generate tasks first or pass a url")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            return PublicTask.model_validate({"id": task_id, **{k: v for k, v in data.items() if k in PublicTask.model_fields}})
        except (ValueError, ValidationError) as exc:
            raise InputError(f"task {task_id!r} is stored in an unreadable form ({str(exc).splitlines()[0]}); regenerate it") from None

    async def start(
        self,
        url: str | None = None,
        task_id: str | None = None,
        agent: str | None = None,
        model: str | None = None,
        session: str | None = None,
        allowed_domains: list[str] | None = None,
    ) -> tuple[BrowserEpisode, StartedEpisode]:
        """Open a new episode at ``url`` or at a task's start URL, bound to ``session`` if given.

        A start page that does not load within the navigation timeout leaves the episode
        open on whatever did load: its snapshot starts with a note saying so (and
        ``episode.start_error`` keeps the reason); any other failure closes it and raises.
        """
        task = self.public_task(task_id) if task_id else None
        start = url or (task.start_url if task else None)
        if not start:
            raise InputError("pass url or a task_id of a web task")
        if not start.startswith(("http://", "https://")):
            raise InputError(f"url {start!r} must start with http:// or https://")
        private = self.private_task(task_id) if task_id else None
        fence = OriginFence.for_site(start, allowed_domains or (task.allowed_domains if task else None), task_urls(private))
        episode_id = f"ep-{secrets.token_hex(6)}"
        await self._take_turn(episode_id, session)
        try:
            episode = await self._open(episode_id, start, fence, task_id, agent, model, private)
        except BaseException:
            self._end_turn(episode_id)
            raise
        self.claim(episode_id, session)
        try:
            observation = await episode.navigate(start)
        except TimedOut as exc:  # a slow site: the agent is told, and may wait or navigate again
            episode.start_error = str(exc)
            observation = await episode.observe(snapshot=self.snapshots, acted=False)
            note = f"(the start page {start} did not load in time: {exc})"
            observation.snapshot = f"{note}\n\n{observation.snapshot}" if observation.snapshot else note
        except Exception:
            await self.close(episode_id, status="error", reason=f"could not open {start}")
            raise
        return episode, StartedEpisode(
            episode_id=episode_id,
            url=observation.url,
            title=observation.title,
            instruction=task.instruction if task else None,
            snapshot=observation.snapshot or "",
            trajectory=str(episode.recorder.path),
        )

    async def _take_turn(self, episode_id: str, session: str | None) -> None:
        """For an application with state: wait until no other browser episode holds it (see ``state_wait_s``)."""
        if self.state_reset is None:
            return
        turns, held = self.turns, self.sessions.get(session or "")
        if held is not None and held == turns.holder:
            raise InputError(f"this application keeps state, so one episode runs at a time: close episode {held} first (env_close)")
        try:
            await asyncio.wait_for(turns.lock.acquire(), turns.wait_s)
        except TimeoutError:
            raise InputError(f"this application keeps state and episode {turns.holder} held it for {turns.wait_s:.0f} s; try again when it closes") from None
        turns.holder = episode_id

    def _end_turn(self, episode_id: str) -> None:
        if self.turns.holder == episode_id:
            self.turns.holder = None
            self.turns.lock.release()

    async def _open(self, episode_id: str, start: str, fence: OriginFence, task_id: str | None, agent: str | None, model: str | None, private: Task | None) -> BrowserEpisode:
        """A new browser episode's context, page and recorder (the application's state reset first), registered as open."""
        async with self._lock:
            if len(self.episodes) >= self.max_episodes:
                raise InputError(f"{self.max_episodes} episodes are open; close one with env_close first")
            if self.state_reset is not None:
                await asyncio.to_thread(self.state_reset)
                self._login_state = None  # the reset ended the application's sessions
            if self.login is not None and self._login_state is None:
                self._login_state = await log_in(self.pool, self.login, start, fence, self.limits.navigation_timeout_ms / 1000)
            guarded = await self.pool.new_context(fence=fence, record_har=self._har_path(episode_id), storage_state=self._login_state)
            if "trace" in self.record:
                await guarded.context.tracing.start(name=episode_id, title=task_id or start, screenshots=True, snapshots=True)
            page = await guarded.context.new_page()
            await guarded.context.add_init_script(NAVIGATION_WATCH_JS)  # every tab: an action knows when it set off a navigation
            header = EpisodeRecord(episode_id=episode_id, env="browser", task_id=task_id, agent=agent, model=model, start_url=start)
            recorder = Recorder(self.root / episode_id, header)
            episode = BrowserEpisode(episode_id, guarded, page, recorder, self.checker, self.screenshots, self.snapshots, self.limits)
            episode.task = private
            if episode.task is not None:
                episode.watch = watched_checks(episode.task)
            self.episodes[episode_id] = episode
        return episode

    async def start_document(
        self, task_id: str, agent: str | None = None, model: str | None = None, session: str | None = None
    ) -> tuple[DocumentEpisode, StartedEpisode]:
        """Open a document episode for a document task: the agent searches and reads the task's graph."""
        task = self.private_task(task_id)
        if task is None or task.kind != "document":
            raise InputError(f"task {task_id!r} is not a readable document task")
        source = self.documents_source
        if source is None:
            raise InputError("this server cannot open document episodes (no document source)")
        source.ensure(task.provenance.graph_id)  # fail now, with a clear error, if the graph is gone
        async with self._lock:
            if len(self.episodes) + len(self.documents) >= self.max_episodes:
                raise InputError(f"{self.max_episodes} episodes are open; close one with env_close first")
            episode_id = f"doc-{secrets.token_hex(6)}"
            header = EpisodeRecord(episode_id=episode_id, env="document", task_id=task_id, agent=agent, model=model)
            episode = DocumentEpisode(episode_id, task.provenance.graph_id, source, Recorder(self.root / episode_id, header))
            self.documents[episode_id] = episode
            self.claim(episode_id, session)
        return episode, StartedEpisode(
            episode_id=episode_id,
            url="",
            title="document",
            instruction=task.instruction,
            snapshot="(a document task: find the answer with doc_search and doc_read, then call env_answer and env_close)",
            trajectory=str(episode.recorder.path),
        )

    def claim(self, episode_id: str, owner: str | None, bind: bool = True) -> None:
        """Record that the session ``owner`` started ``episode_id`` (and, with ``bind``, make it that session's episode)."""
        self.owners[episode_id] = owner
        if owner and bind:
            self.sessions[owner] = episode_id

    def release(self, episode_id: str) -> None:
        """Forget an episode's owner and session binding (it has closed)."""
        self.owners.pop(episode_id, None)
        self.fresh.discard(episode_id)
        for session in [s for s, e in self.sessions.items() if e == episode_id]:
            del self.sessions[session]

    def check_owner(self, episode_id: str, session: str | None) -> None:
        """Refuse ``session`` an episode another session started; episodes without a recorded owner pass."""
        if episode_id in self.owners and self.owners[episode_id] != session:
            raise InputError(f"episode_id {episode_id!r}: that episode belongs to another session; start your own with env_start")

    def resolve(self, episode_id: str | None, session: str | None) -> str:
        """The id of the episode named (if ``session`` owns it), else of the one bound to ``session``."""
        if episode_id:
            self.check_owner(episode_id, session)
            return episode_id
        chosen = self.sessions.get(session) if session else None
        if chosen is None:
            if session is None and (self.episodes or self.documents):
                raise InputError("this connection has no session to find your episode by; pass the episode_id env_start returned")
            raise InputError("no episode: call env_start first (or pass episode_id)")
        return chosen

    def get(self, episode_id: str | None = None, session: str | None = None) -> BrowserEpisode:
        """The browser episode named, else the one bound to ``session``."""
        chosen = self.resolve(episode_id, session)
        episode = self.episodes.get(chosen)
        if episode is None:
            if chosen in self.documents:
                raise InputError(f"episode {chosen} is a document task: use doc_search and doc_read, not the browser")
            raise NotFoundError(f"no open episode {chosen!r}; it was closed or never started — call env_start")
        return episode

    async def current(self, episode_id: str | None, session: str | None) -> BrowserEpisode:
        """The browser episode named or bound to ``session``; on a bound server, a session without one gets the task's episode, started now."""
        if episode_id is None and self.autostart is not None and (session is None or session not in self.sessions):
            opened = await self.autostart(session)
            self.fresh.add(opened.id)
            return opened
        found = self.get(episode_id, session)
        self.fresh.discard(found.id)
        return found

    def get_document(self, episode_id: str | None = None, session: str | None = None) -> DocumentEpisode:
        """The document episode named, else the one bound to ``session``."""
        chosen = self.resolve(episode_id, session)
        episode = self.documents.get(chosen)
        if episode is None:
            if chosen in self.episodes:
                raise InputError(f"episode {chosen} is a browser episode: doc_search and doc_read work on document tasks")
            raise NotFoundError(f"no open document episode {chosen!r}; call env_start with a document task")
        return episode

    def recorder(self, episode_id: str) -> Recorder:
        """The recorder of an open browser or document episode."""
        episode = self.episodes.get(episode_id) or self.documents.get(episode_id)
        if episode is None:
            raise NotFoundError(f"no open episode {episode_id!r}; it was closed or never started — call env_start")
        return episode.recorder

    async def close(self, episode_id: str, status: CloseStatus = "closed", reason: str | None = None) -> Path:
        """Close an episode's context and finish its trajectory; returns the trajectory path."""
        async with self._lock:
            episode = self.episodes.pop(episode_id, None)
            document = self.documents.pop(episode_id, None)
            if episode is not None or document is not None:
                self.release(episode_id)
        if document is not None:
            document.closed = True
            document.recorder.close(status=status, reason=reason)
            return document.recorder.path
        if episode is None:
            raise NotFoundError(f"no open episode {episode_id!r}")
        checks, final_url, final_text, final_shot = None, None, None, None
        try:
            await episode.tabs.dismiss_all()  # a held dialog pauses the page: let it go before the final state is read
            if not episode.page.is_closed():
                try:
                    final_url = episode.page.url
                    final_text = (await episode.page.locator("body").inner_text(timeout=2_000))[:4000]
                    if episode.task is not None and episode.task.success:
                        actions = load_trajectory(episode.recorder.path).actions
                        checks = await self.checker.check(episode.page, episode.task.success, actions)
                        checks += skipped_subtask(episode.task, actions)
                    if episode.task is not None and (status != "closed" or not checks or not all(c.ok for c in checks)):
                        final_shot = FINAL_SCREENSHOT if await episode._capture(episode.recorder.folder / FINAL_SCREENSHOT) else None
                except PlaywrightError as exc:
                    reason = f"{reason + '; ' if reason else ''}final-state check failed: {str(exc).splitlines()[0]}"
        finally:
            self._end_turn(episode_id)  # the final state is read: the next episode may reset the application
        episode.closed = True
        reason = await self._stop_trace(episode_id, episode.guarded.context, reason)
        episode.recorder.close(status=status, reason=reason, checks=checks, final_url=final_url, final_text=final_text, screenshot=final_shot)
        await episode.guarded.context.close()  # writes the HAR file, when recorded
        return episode.recorder.path

    def _har_path(self, episode_id: str) -> Path | None:
        """Where an episode's HAR file goes (its folder, made now), or None when HAR is not recorded."""
        if "har" not in self.record:
            return None
        folder = self.root / episode_id
        folder.mkdir(parents=True, exist_ok=True)
        return folder / HAR_FILE

    async def _stop_trace(self, episode_id: str, context: BrowserContext, reason: str | None) -> str | None:
        """Write a traced episode's ``trace.zip``; a trace that cannot be written is noted in the close reason."""
        if "trace" not in self.record:
            return reason
        try:
            await context.tracing.stop(path=self.root / episode_id / TRACE_FILE)
        except PlaywrightError as exc:
            return f"{reason + '; ' if reason else ''}trace not saved: {str(exc).splitlines()[0]}"
        return reason

    async def close_all(self) -> None:
        """Close every open episode (server shutdown); final states are still checked."""
        for episode_id in [*self.episodes, *self.documents]:
            await self.close(episode_id, status="closed", reason="server shutting down")


def task_urls(task: Task | None) -> list[str]:
    """URLs a task's gold solution navigates to (a composite task may span sites): their origins join the episode's fence."""
    if task is None:
        return []
    steps = [*task.gold_steps, *(step for sub in task.subtasks for step in sub.gold_steps)]
    return [step.text for step in steps if step.action == "navigate" and step.text]


def watched_checks(task: Task) -> list[SuccessCriterion]:
    """The distinct state checks of a task's subtasks, probed after every action."""
    seen: dict[str, SuccessCriterion] = {}
    for subtask in task.subtasks:
        for check in subtask.checks:
            if check.on_state:
                seen.setdefault(criterion_key(check), check)
    return list(seen.values())


def skipped_subtask(task: Task, actions: list[ActionRecord]) -> list[CriterionResult]:
    """A composite's final state is not enough: a failed verdict for the first subtask whose checks never held during the episode.

    The verdict is on one of that subtask's own state checks (what it asked for), observed as never met
    at any point: a run that reaches the last page while skipping a step in between is not a success.
    """
    missing = unfinished_subtask(task, actions)
    if missing is None:
        return []
    sub = next(s for s in task.subtasks if f"subtask {s.id}'" in missing)
    check = next(c for c in sub.checks if c.on_state)
    return [CriterionResult(criterion=check, ok=False, observed=f"{missing} during the episode")]


def unfinished_subtask(task: Task, actions: list[ActionRecord]) -> str | None:
    """The first subtask whose state checks never all held after one action, if any (as the probes after every action recorded)."""
    held = [set(a.holds or []) for a in actions]
    for sub in task.subtasks:
        keys = {criterion_key(c) for c in sub.checks if c.on_state}
        if keys and not any(keys <= h for h in held):
            return f"subtask {sub.id}'s state checks never held together ({', '.join(sorted(keys))})"
    return None

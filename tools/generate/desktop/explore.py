"""``taskloom explore-app APP``: a knowledge graph of a desktop application's windows, menus, dialogs and controls.

The application runs in a fresh desktop session (its own display, buses and home folder, seeded
with the files its task families use). The explorer reads the main window, opens every menu of
the menu bar and every submenu one level down, records each entry, and opens each enabled entry
that announces a dialog (a name ending in "..." or "…"); it reads the dialog's controls, then
closes it with Escape (or its Cancel / Close button). Nothing else is activated, so no entry that
saves, closes or edits runs, and the seeded files are compared before and after: the report says
whether they are unchanged.

The graph: the application (``REGION``) contains its main window (``PAGE``); the window contains
its menus (``MENU``); a menu contains its entries (``BUTTON``, with ``role`` ``menuitem``) and
submenus; an entry ``OPENS`` the dialog (``MODAL``) it leads to; a dialog contains its controls
(buttons, check boxes, text fields, lists, tabs). Each node's text says where it is and what it
does ("File > Save As... (menu item; opens the dialog 'Save As')"), so the graph is searchable
like a web graph. Every action is recorded in the exploration episode's trajectory.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from ...environment.desktop import DesktopActionError, DesktopEpisodes
from ...environment.desktop_a11y import INTERACTIVE, A11yNode
from ...environment.desktop_organise import HOME_FILES
from ...environment.desktop_refs import AppDesktopEnv
from ...environment.desktop_sheet import WORKBOOKS, workbook_xml
from ...environment.desktop_tasks import SEED_FILES
from ...errors import InputError, TaskloomError
from ...graph.embedding import prepare_vectors, store_vectors
from ...graph.model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType
from ...graph.service import GraphService

__all__ = ["ExploreReport", "explore_app", "explore_and_store", "app_graph_id", "seeded_files", "DIALOG_ENTRY"]

DIALOG_ENTRY = re.compile(r"(?:\.\.\.|…)$")
CLOSE_WAIT = 3.0
OPEN_WAIT = 4.0
MENU_WAIT = 3.0
MAX_CONTROLS = 80
CONTROL_TYPES = {
    "button": NodeType.BUTTON, "checkbox": NodeType.CHECKBOX, "radio": NodeType.CHECKBOX, "textbox": NodeType.INPUT, "spinbutton": NodeType.INPUT,
    "combobox": NodeType.SELECT, "tab": NodeType.TAB, "menuitem": NodeType.BUTTON, "menuitemcheckbox": NodeType.CHECKBOX, "menuitemradio": NodeType.CHECKBOX,
    "slider": NodeType.INPUT, "link": NodeType.LINK, "menu": NodeType.MENU,
}


class ExploreReport(BaseModel):
    """What one exploration found, how long it took, and whether the seeded files were left alone."""

    graph_id: str
    app: str
    menus: int
    entries: int
    dialogs: int
    controls: int
    nodes: int
    edges: int
    embedded: int = 0
    not_opened: list[tuple[str, str]] = Field(default_factory=list, description="(menu path, why) for dialog entries not explored.")
    files_unchanged: bool
    trajectory: str
    seconds: float


def app_graph_id(app: str) -> str:
    """The stored graph id of an explored application (``app-mousepad``)."""
    return f"app-{app}"


def seeded_files(app: str) -> tuple[dict[str, str], list[str]]:
    """The files an exploration seeds (those the application's task families use) and the ones the application opens."""
    if app == "mousepad":
        return {p: "\n".join(lines) + "\n" for p, lines in SEED_FILES.items()}, [sorted(SEED_FILES)[0]]
    if app == "gnumeric":
        return {p: workbook_xml(p) for p in WORKBOOKS}, [sorted(WORKBOOKS)[0]]
    if app == "pcmanfm":
        return dict(HOME_FILES), ["."]
    raise InputError(f"no desktop application {app!r} to explore; one of gnumeric, mousepad, pcmanfm")


def _walk(nodes: list[A11yNode]) -> Iterator[A11yNode]:
    for node in nodes:
        yield node
        yield from _walk(node.children)


def _digest(home: Path) -> dict[str, str]:
    return {str(p.relative_to(home)): hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else "folder" for p in sorted(home.rglob("*")) if ".cache" not in p.parts}


def _enabled(node: A11yNode) -> bool:
    return bool({"enabled", "sensitive"} & set(node.states))


class _Explorer:
    """One exploration: the live application, the graph being built, and its counts."""

    def __init__(self, env: AppDesktopEnv, kg: KnowledgeGraph, max_dialogs: int, progress: Callable[[str], None]) -> None:
        self.env, self.kg, self.max_dialogs, self.progress = env, kg, max_dialogs, progress
        self.counts = {"menus": 0, "entries": 0, "dialogs": 0, "controls": 0}
        self.not_opened: list[tuple[str, str]] = []

    def windows(self) -> list[A11yNode]:
        return self.env.tree.snapshot()[1]

    def add(self, node_id: str, kind: NodeType, text: str, parent: str, edge: EdgeType = EdgeType.CONTAINS, **attrs: object) -> str:
        if node_id not in self.kg:
            self.kg.add_node(Node(id=node_id, type=kind, text=text, attrs=dict(attrs)))
        self.kg.add_edge(Edge(source=parent, target=node_id, type=edge))
        return node_id

    def run(self, app: str) -> None:
        main = self.windows()[0]
        window = self.add("window:main", NodeType.PAGE, f"{app}: main window '{main.name}'", f"app:{app}", role="window", title=main.name)
        bar = next((n for n in _walk([main]) if n.aria_role == "menubar"), None)
        self._controls(main, window, skip=bar)
        dialogs: list[list[str]] = []
        for menu in [m for m in (bar.children if bar else []) if m.aria_role == "menu" and m.name]:
            dialogs += self._menu([menu.name], window)
        for path in dialogs:
            if self.counts["dialogs"] >= self.max_dialogs:
                self.not_opened.append((" > ".join(path), f"the budget of {self.max_dialogs} dialogs was spent"))
                continue
            self._dialog(path)

    def _menu(self, path: list[str], parent: str) -> list[list[str]]:
        """Open the menu at ``path``, record its entries (and its submenus, one level down); the entries that open dialogs."""
        self.progress(f"menu {' > '.join(path)}")
        try:
            self.env.select_menu(path)
            shown = self._open_menu(path[-1])
        except DesktopActionError as exc:
            self.not_opened.append((" > ".join(path), f"the menu could not be opened: {exc}"))
            return []
        finally:
            for _ in path:
                self.env.press("esc")
            self._open_menu(path[-1], closed=True)
        if shown is None:
            self.not_opened.append((" > ".join(path), "the menu showed no entries"))
            return []
        self.counts["menus"] += 1
        where = " > ".join(path)
        menu = self.add(f"menu:{where}", NodeType.MENU, f"{where} menu: {', '.join(self.clean(c.name) for c in shown.children if c.name)}", parent, path=path)
        dialogs: list[list[str]] = []
        for entry in [c.model_copy(update={"name": self.clean(c.name)}) for c in shown.children if c.name and c.aria_role != "separator"]:
            if entry.aria_role == "menu":
                if len(path) < 2:
                    dialogs += self._menu([*path, entry.name], menu)
                continue
            self.counts["entries"] += 1
            enabled = _enabled(entry)
            opens = bool(DIALOG_ENTRY.search(entry.name)) and enabled
            effect = "opens a dialog" if opens else "an action, not run while exploring" if enabled else "disabled here"
            self.add(f"entry:{where} > {entry.name}", NodeType.BUTTON, f"{where} > {entry.name} (menu item; {effect})", menu,
                     role=entry.aria_role, path=[*path, entry.name], enabled=enabled)
            if opens:
                dialogs.append([*path, entry.name])
        return dialogs

    def _open_menu(self, name: str, closed: bool = False) -> A11yNode | None:
        """The open menu ``name`` once its entries read the same twice (None if it shows none within :data:`MENU_WAIT`); ``closed``: wait until it shows none."""
        deadline, last = time.monotonic() + MENU_WAIT, None
        while time.monotonic() < deadline:
            shown = next((n for n in _walk(self.windows()) if n.aria_role == "menu" and n.name == name and n.children), None)
            if closed and shown is None:
                return None
            if not closed and shown is not None:
                entries = [(c.name, c.role) for c in shown.children]
                if entries == last:
                    return shown
                last = entries
            time.sleep(0.05)
        return None

    def _dialog(self, path: list[str]) -> None:
        """Open the dialog behind the entry at ``path``, record it and its controls, close it."""
        where = " > ".join(path)
        self.progress(f"dialog {where}")
        before = {w.ref for w in self.windows()}  # refs name the same accessible object all episode long
        try:
            self.env.select_menu(path)
        except DesktopActionError as exc:
            for _ in path:
                self.env.press("esc")
            self.not_opened.append((where, f"the entry could not be clicked: {exc}"))
            return
        deadline, opened = time.monotonic() + OPEN_WAIT, None
        while opened is None and time.monotonic() < deadline:
            opened = next((w for w in self.windows() if w.ref not in before), None)
            time.sleep(0.1)
        if opened is None:
            self.not_opened.append((where, f"no new window within {OPEN_WAIT:g}s"))
            return
        self.env.tree.settle()
        opened = next((w for w in self.windows() if w.ref == opened.ref), opened)
        self.counts["dialogs"] += 1
        title = opened.name or path[-1].rstrip(".…")
        dialog = self.add(f"dialog:{title}", NodeType.MODAL, f"dialog '{title}', opened by {where}", f"entry:{where}", EdgeType.OPENS, role=opened.aria_role, title=title)
        self._controls(opened, dialog)
        for tab in [n for n in _walk([opened]) if n.aria_role == "tab" and n.name and "selected" not in n.states and _enabled(n)]:
            self.env.click_element(tab.ref)  # a tab shows other controls; choosing one changes no setting
            self.env.tree.settle()
            shown = next((w for w in self.windows() if w.ref == opened.ref), None)
            if shown is not None:
                self._controls(shown, dialog, tab=tab.name)
        self._close(opened, before, where)

    def _controls(self, window: A11yNode, parent: str, skip: A11yNode | None = None, tab: str = "") -> None:
        """The window's named interactive controls not yet recorded (at most :data:`MAX_CONTROLS`), outside ``skip`` (the menu bar)."""
        skipped = {n.ref for n in _walk([skip])} if skip is not None else set()
        title = self.kg.node(parent).attrs.get("title", "")
        where = f"'{title}', tab '{tab}'" if tab else f"'{title}'"
        for node in _walk(window.children):
            role, name = node.aria_role, self.clean(node.name)
            key = f"{parent}/{role}:{name}"
            if node.ref in skipped or role not in INTERACTIVE or role in ("menu", "menuitem") or not name or key in self.kg:
                continue
            if sum(1 for _ in self.kg.g.successors(parent)) >= MAX_CONTROLS:
                break
            self.counts["controls"] += 1
            state = "" if _enabled(node) else ", disabled"
            self.add(key, CONTROL_TYPES.get(role, NodeType.BUTTON), f"{role} '{name}' in {where}{state}", parent, role=role, enabled=_enabled(node), tab=tab)

    def clean(self, name: str) -> str:
        """A name as a reader needs it: one line, the session's temporary home folder shown as ``~``."""
        home = self.env.session.home
        name = re.sub(re.escape(str(home.parent.parent)) + r"/[^/\s']+/home", "~", name.replace(str(home), "~"))  # also as the application shortened it
        return " ".join(name.split())

    def _close(self, dialog: A11yNode, before: set[str], where: str) -> None:
        """Escape, then Cancel or Close if it stays; an error if it will not go (exploring on could change something)."""

        def gone() -> bool:
            deadline = time.monotonic() + CLOSE_WAIT
            while time.monotonic() < deadline:
                if all(w.ref in before for w in self.windows()):
                    return True
                time.sleep(0.1)
            return False

        self.env.press("esc")
        if gone():
            return
        for node in _walk(self.windows()):
            if node.aria_role == "button" and node.name.replace("_", "") in ("Cancel", "Close"):
                self.env.click_element(node.ref)
                if gone():
                    return
        raise TaskloomError(f"the dialog opened by {where} did not close (Escape, Cancel, Close); exploration stopped to leave the files alone")


def explore_app(app: str, root: Path, max_dialogs: int = 40, progress: Callable[[str], None] | None = None) -> tuple[KnowledgeGraph, ExploreReport]:
    """Explore ``app`` in a fresh session (episode folder under ``root``); the graph (not yet embedded or stored) and the report."""
    files, open_files = seeded_files(app)
    clock = time.perf_counter()
    episodes = DesktopEpisodes(root, screenshot_after=False)
    episode = f"explore-{app}-{int(time.time())}"
    env = episodes.start(episode, agent="explorer", app=app, files=files, open_files=open_files)
    if not isinstance(env, AppDesktopEnv):
        raise InputError(f"{app} did not start as an application episode")
    kg = KnowledgeGraph(GraphMeta(id=app_graph_id(app), name=f"{app} (explored desktop application)", kind="desktop", sources=[app]))
    kg.add_node(Node(id=f"app:{app}", type=NodeType.REGION, text=f"the desktop application {app}"))
    start = _digest(env.session.home)
    explorer = _Explorer(env, kg, max_dialogs, progress or (lambda _: None))
    try:
        explorer.run(app)
        unchanged = _digest(env.session.home) == start
    finally:
        episodes.close(episode, "closed", "exploration done")
    kg.meta.stats.update(explorer.counts, files_unchanged=unchanged)
    report = ExploreReport(
        graph_id=kg.id, app=app, nodes=len(kg), edges=kg.g.number_of_edges(), not_opened=explorer.not_opened, files_unchanged=unchanged,
        trajectory=str(root / episode / "trajectory.jsonl"), seconds=round(time.perf_counter() - clock, 2), **explorer.counts,
    )
    return kg, report


def explore_and_store(graphs: GraphService, app: str, max_dialogs: int = 40, progress: Callable[[str], None] | None = None) -> ExploreReport:
    """Explore ``app`` (:func:`explore_app`, episode under the workspace's runs), embed the graph and store it as ``app-<app>``."""
    kg, report = explore_app(app, graphs.workspace.runs / "explore", max_dialogs, progress)
    prepared = prepare_vectors(kg, graphs.settings, graphs.embedder, {n.type for n in kg.nodes()})
    with graphs.write_lock(f"explore {app}"):
        report.embedded = store_vectors(kg, prepared, graphs.vectors, graphs.embedder)
        kg.meta.stats.update(nodes=len(kg), edges=kg.g.number_of_edges(), embedded=report.embedded)
        graphs.store.save(kg)
    return report

"""The desktop task generator and the pseudo-graph it is keyed on.

Desktop families need no crawled graph: their material is an application and the files an
episode seeds. ``taskloom generate desktop:mousepad`` (or ``desktop:pcmanfm``, ``desktop:gnumeric``) names that as a
graph id; :func:`desktop_graph` builds the matching small graph in memory (the application, its
seeded files, an edge from one to each) so the shared stages run unchanged: reachability (each
task's evidence is its application and file), de-duplication, coverage. Nothing is stored in the
graph store; the explored graph of an application's windows, menus and dialogs is stored apart, as
``app-<name>`` (:mod:`.explore`), for search.
"""

from __future__ import annotations

from collections.abc import Callable

from ...environment.desktop_answers import answer_tasks
from ...environment.desktop_organise import HOME_FILES, organise_tasks
from ...environment.desktop_prefs import preference_tasks
from ...environment.desktop_sheet import WORKBOOKS, sheet_tasks
from ...environment.desktop_tasks import SEED_FILES, edit_file_tasks
from ...errors import InputError
from ...graph.model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType
from ...tasks.model import Task
from ..registry import Candidates, GenerationRequest, generator

__all__ = ["DESKTOP_PREFIX", "FAMILIES", "is_desktop_graph", "desktop_graph", "desktop_tasks"]

DESKTOP_PREFIX = "desktop:"
Maker = Callable[[int, int], list[Task]]
#: Per application: its families (task type -> maker ``(seed, count) -> tasks``) and the files they seed.
FAMILIES: dict[str, tuple[dict[str, Maker], list[str]]] = {
    "mousepad": (
        {
            "edit_file": lambda seed, count: edit_file_tasks(seed, count), "file_answer": lambda seed, count: answer_tasks("mousepad", seed, count),
            "change_preference": lambda seed, count: preference_tasks(seed, count),
        },
        sorted(SEED_FILES),
    ),
    "pcmanfm": ({"organise_files": lambda seed, count: organise_tasks(seed, count)}, [p.rstrip("/") for p in HOME_FILES] + ["."]),
    "gnumeric": (
        {"compute_sheet": lambda seed, count: sheet_tasks(seed, count), "file_answer": lambda seed, count: answer_tasks("gnumeric", seed, count)}, sorted(WORKBOOKS)
    ),
}
#: Families whose maker runs the application (a probe session): made only when asked for, if types are named.
LIVE = {"change_preference"}


def is_desktop_graph(graph_id: str) -> bool:
    """Whether ``graph_id`` names a desktop application (``desktop:<app>``) rather than a stored graph."""
    return graph_id.startswith(DESKTOP_PREFIX)


def desktop_graph(graph_id: str) -> KnowledgeGraph:
    """The in-memory graph of ``desktop:<app>``: the application node and one node per seeded file or folder."""
    app = graph_id.removeprefix(DESKTOP_PREFIX)
    if app not in FAMILIES:
        raise InputError(f"no desktop task families for {app!r}; desktop graphs are {', '.join(DESKTOP_PREFIX + a for a in sorted(FAMILIES))}")
    kg = KnowledgeGraph(GraphMeta(id=graph_id, name=f"{app} (desktop application)", kind="desktop", sources=[app]))
    kg.add_node(Node(id=f"app:{app}", type=NodeType.REGION, text=app))
    for path in FAMILIES[app][1]:
        node = f"folder:{path}" if path == "." else f"file:{path}"
        kg.add_node(Node(id=node, type=NodeType.DOCUMENT, text=path))
        kg.add_edge(Edge(source=f"app:{app}", target=node, type=EdgeType.CONTAINS))
    return kg


@generator("desktop-tasks", graph="desktop", llm=False, default=True)
async def desktop_tasks(request: GenerationRequest) -> Candidates:
    """Template families on a desktop application (edit a file or change a preference in mousepad; rename, move, make a folder in pcmanfm;
    compute and save in gnumeric; answer a question about a file in mousepad or gnumeric)."""
    app = request.kg.id.removeprefix(DESKTOP_PREFIX)
    makers = [make for kind, make in FAMILIES[app][0].items() if kind not in LIVE or not request.types or kind in request.types]
    spare = request.count  # for failed replays and near-duplicates; only the candidates the selection reaches are replayed
    tasks = [t for make in makers for t in make(request.seed, request.count + spare)]
    if request.types:
        tasks = [t for t in tasks if t.type in request.types or (t.provenance.template or "").split("/")[-1] in request.types]
    request.report.generator["desktop"] = {"app": app, "candidates": len(tasks)}
    return Candidates(tasks, {})

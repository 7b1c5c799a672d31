"""The Runtime owns the wiring: one of each service, shared, closed once; and the package layering it makes possible."""

from __future__ import annotations

import ast
import asyncio
import shutil
from pathlib import Path

import pytest

from taskloom.tools.browser import EnvironmentUnavailable
from taskloom.tools.errors import InputError
from taskloom.tools.evaluate.checks import Checker
from taskloom.tools.generate.service import TaskService
from taskloom.tools.graph.model import GraphMeta, KnowledgeGraph
from taskloom.tools.graph.service import GraphService
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def test_one_of_each_service_shared_by_everything_built_from_the_runtime(tmp_path: Path) -> None:
    assert not Runtime(Settings(workspace=tmp_path / "ws0", embedder="hashing")).episodes.screenshots  # per-step screenshots are opt-in
    rt = Runtime(Settings(workspace=tmp_path / "ws", embedder="hashing", record_screenshots=True))
    assert rt.graphs.browsers is rt.browsers and rt.episodes.pool is rt.browsers
    assert isinstance(rt.episodes.checker, Checker) and rt.episodes.documents_source is rt.documents
    service = rt.task_service()
    assert service.graphs is rt.graphs and service.episodes is rt.episodes and service.store is rt.tasks and service.llm is rt.llm
    evaluation = rt.evaluation_service()
    assert evaluation.tasks is rt.tasks and evaluation.llm is rt.llm
    assert rt.llm_cache == tmp_path / "ws" / "cache" / "llm"
    other = rt.episode_manager(tmp_path / "elsewhere", screenshots=False)
    assert other.pool is rt.browsers and other.root == tmp_path / "elsewhere" and not other.screenshots and rt.episodes.screenshots


def test_costly_pieces_wait_for_first_use(tmp_path: Path) -> None:
    rt = Runtime(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    assert rt.graphs._embedder is None and rt._llm is None and rt.browsers._browser is None
    assert rt.embedder is rt.embedder is rt.graphs.embedder and rt.embedder.name.startswith("hashing")


def test_services_refuse_clearly_what_needs_the_runtime(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing")
    with pytest.raises(EnvironmentUnavailable, match="no browser pool"):
        asyncio.run(GraphService(settings).ingest_website("http://127.0.0.1:9/"))
    graphs = GraphService(settings)
    graphs.store.save(KnowledgeGraph(GraphMeta(id="w", kind="web")))
    with pytest.raises(InputError, match="no episode manager"):
        asyncio.run(TaskService(graphs).compose("w"))


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_run_and_open_sync_close_the_browser_they_launched(tmp_path: Path) -> None:
    with Runtime.open_sync(Settings(workspace=tmp_path / "ws", embedder="hashing")) as rt:

        async def launch() -> bool:
            return (await rt.browsers.browser()).is_connected()

        assert rt.run(launch)
        assert rt.browsers._browser is None  # closed before that event loop ended
        assert rt.run(launch)  # and relaunched in the next one
    assert rt.browsers._browser is None


def _imports(package: str) -> set[str]:
    """The top-level ``tools`` modules and packages that ``tools/<package>`` imports (relative and absolute)."""
    found: set[str] = set()
    for path in (TOOLS / package).rglob("*.py"):
        here = list(path.relative_to(TOOLS).parts[:-1])  # the module's package, below tools/
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                target = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
                found.update([target[0]] if target else [alias.name for alias in node.names])
            elif node.module and node.module.startswith("taskloom.tools."):
                found.add(node.module.split(".")[2])
    return found - {package}


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("graph", {"environment", "evaluate", "generate", "runtime"}), ("environment", {"graph", "evaluate", "generate", "runtime"}),
     ("browser", {"graph", "environment", "evaluate", "generate", "runtime"}), ("evaluate", {"generate", "runtime"})],
)
def test_dependencies_point_one_way(package: str, forbidden: set[str]) -> None:
    imported = _imports(package)
    assert "errors" in imported  # the scan sees this package's imports at all
    assert not imported & forbidden, imported & forbidden

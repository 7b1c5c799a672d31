"""Registries: errors that name what is registered, typed arguments, specs in run logs, and entries from outside
the package — an agent run by the harness, a generator and an export format used, an entry point listed."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from taskloom.harness.agents.base import AgentSpec
from taskloom.harness.agents.registry import agents, make_agent
from taskloom.harness.service import Harness
from taskloom.harness.store import RunStore
from taskloom.server.app import build_server
from taskloom.tools.environment.trajectory import load_trajectory
from taskloom.tools.generate.service import TaskService
from taskloom.tools.graph.ingest.pipeline import detect_format
from taskloom.tools.graph.service import GraphService
from taskloom.tools.registry import Registry, RegistryError, registry_spec
from taskloom.tools.settings import Settings
from taskloom.tools.tasks import TaskStore
from taskloom.tools.workspace import Workspace

sys.path.insert(0, str(Path(__file__).parent / "plugins"))
outside_agent = importlib.import_module("outside_agent")  # registers the ``parrot`` agent
outside_formats = importlib.import_module("outside_formats")  # registers the ``verification-only`` generator and the ``ids`` export format

GUIDE = Path(__file__).resolve().parents[2] / "examples" / "documents" / "field-guide.md"


def test_unknown_names_and_arguments_are_refused_with_what_is_registered(settings: Settings) -> None:
    with pytest.raises(RegistryError, match=r"unknown agent kind 'wizard'; registered: builtin, command, explorer, oracle, parrot, replay"):
        make_agent(AgentSpec.parse("wizard"), settings)
    with pytest.raises(RegistryError, match="agent explorer does not take speed; it takes explore, seed"):
        make_agent(AgentSpec.parse("explorer:speed=2"), settings)
    with pytest.raises(RegistryError, match="agent oracle does not take settings"):  # context is the caller's, never an option
        make_agent(AgentSpec.parse("oracle:settings=x"), settings)
    with pytest.raises(RegistryError, match=r"explore='fast' is not valid"):
        make_agent(AgentSpec.parse("explorer:explore=fast"), settings)


def test_cli_strings_become_typed_arguments_recorded_on_the_agent(settings: Settings) -> None:
    made = make_agent(AgentSpec.parse("explorer:seed=1,explore=0.4"), settings)
    spec = registry_spec(made)
    assert spec is not None and (spec.kind, spec.name, spec.args, spec.origin) == ("agent", "explorer", {"seed": 1, "explore": 0.4}, "builtin")
    assert made.name == "explorer-0.4-1"  # the run's name for it, as before


def test_a_registry_of_its_own_checks_clashes_and_required_arguments() -> None:
    shapes: Registry[str] = Registry("shape")

    @shapes.register("square")
    def square(side: int) -> str:
        """A square."""
        return "#" * side

    assert shapes.create("square", {"side": "3"}) == "###" and shapes.get("square").summary == "A square."
    with pytest.raises(RegistryError, match=r"shape square needs side=…"):
        shapes.create("square")
    with pytest.raises(RegistryError, match="'square' is already registered"):
        shapes.add("square", lambda: "other")


def test_parsers_come_from_the_registry(tmp_path: Path) -> None:
    for name, text, fmt in (("a.md", "# T", "markdown"), ("b.htm", "<p>x</p>", "html"), ("c.dat", "<!DOCTYPE html><p>x", "html"), ("d.pdf.txt", "%PDF-1.4", "pdf"), ("e", "plain", "text")):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert detect_format(tmp_path / name) == fmt, name


def test_an_agent_from_outside_the_package_runs_through_the_harness(settings: Settings) -> None:
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    ids = asyncio.run(TaskService(graphs).generate(graph_id, count=1, seed=4, verify=False)).task_ids
    task = TaskStore(Workspace(settings.workspace)).load(ids[0])
    answer = "Parrots cannot read field guides."
    asyncio.run(Harness(settings, build_server).run([task], ["oracle", f"parrot:answer={answer},name=polly"], run_id="outside"))
    store = RunStore(Workspace(settings.workspace), "outside")
    results = {r.agent: r for r in store.results()}
    assert results["oracle"].success and not results["polly"].success
    trajectory = load_trajectory(Path(results["polly"].trajectory or ""))
    assert trajectory.answer == answer and [a.name for a in trajectory.actions][:1] == ["search"]
    logged = json.loads(store.spec_path.read_text(encoding="utf-8"))
    assert logged["entries"]["polly"] == {"kind": "agent", "name": "parrot", "args": {"answer": answer}, "origin": "outside_agent"}
    assert logged["entries"]["oracle"]["name"] == "oracle" and logged["executor"]["name"] == "local"
    assert "parrot" in agents.names() and outside_agent.Parrot.__doc__


def test_a_generator_and_an_export_format_from_outside_are_used(settings: Settings) -> None:
    graphs = GraphService(settings)
    graph_id = graphs.ingest_document(GUIDE).graph_id
    service = TaskService(graphs)
    result = asyncio.run(service.generate(graph_id, count=3, seed=0, generator="verification-only"))
    assert result.task_ids and result.generator is not None and result.generator.name == "verification-only"
    assert result.generator.origin == outside_formats.__name__
    assert {service.get(i).type for i in result.task_ids} == {"fact_verification"}
    assert service.export(fmt="ids").splitlines() == [t.id for t in service.list()]
    default = asyncio.run(service.generate(graph_id, count=3, seed=0))
    assert default.generator is not None and default.generator.name == "document-templates"
    with pytest.raises(RegistryError, match="unknown export format 'csv'; registered: .*ids.*jsonl"):
        service.export(fmt="csv")


@pytest.mark.integration
def test_an_entry_point_plugin_is_listed_and_a_broken_one_only_warns(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "tl_demo_plugin-0.3.dist-info").mkdir(parents=True)
    (site / "tl_demo_plugin-0.3.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tl-demo-plugin\nVersion: 0.3\n", encoding="utf-8")
    (site / "tl_demo_plugin-0.3.dist-info" / "entry_points.txt").write_text(
        "[taskloom.agents]\ndemo = tl_demo_plugin\nbroken = tl_demo_missing:agent\n\n[taskloom.exporters]\ncount = tl_demo_plugin:count_tasks\n", encoding="utf-8"
    )
    (site / "tl_demo_plugin.py").write_text(
        textwrap.dedent('''
            from taskloom.harness.agents.registry import agent
            from taskloom.harness.agents.scripted import OracleAgent


            @agent("demo")
            def demo(name: str = "demo") -> OracleAgent:
                """A demo agent from a plugin distribution."""
                return OracleAgent(name)


            def count_tasks(tasks):
                """How many tasks there are."""
                return f"{len(tasks)}\\n"
        '''),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(site), "FASTMCP_SHOW_SERVER_BANNER": "false", "FASTMCP_CHECK_FOR_UPDATES": "off"}
    done = subprocess.run([sys.executable, "-m", "taskloom.server.cli", "plugins", "--json"], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    demo = next(row for row in listed["agent"] if row["name"] == "demo")
    assert demo == {"name": "demo", "origin": "tl-demo-plugin 0.3", "summary": "A demo agent from a plugin distribution.", "details": {}}
    assert {"name": "count", "origin": "tl-demo-plugin 0.3", "summary": "How many tasks there are.", "details": {}} in listed["exporter"]
    assert "broken" not in {row["name"] for row in listed["agent"]}
    assert "agent plugin 'broken'" in done.stderr and "could not be loaded" in done.stderr and "tl-demo-plugin 0.3" in done.stderr
    assert {row["name"] for row in listed["parser"]} == {"pdf", "html", "markdown", "text"}

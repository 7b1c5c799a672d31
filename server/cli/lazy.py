"""Subcommands imported only when they run, so ``taskloom --help`` and each command start fast.

The root group lists every command from a table of ``name -> (module, attribute, summary)``;
a command's module (with its heavy imports: fastmcp, chromadb, Playwright, …) is imported
only when that command is invoked or its own ``--help`` is shown. The root's help shows the
table's one-line summaries, which ``tests/server/test_cli_imports.py`` checks against each
command's docstring.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from difflib import get_close_matches

import typer
from typer import _click as click  # Typer carries its own copy of click: its classes are the ones in play
from typer._click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command_from_info, get_group
from typer.models import CommandInfo

__all__ = ["LazyCommand", "LazyGroup", "COMMANDS"]


@dataclass(frozen=True)
class LazyCommand:
    """Where a subcommand lives: ``module`` (under ``taskloom.server.cli``) and ``attribute``.

    ``attribute`` names a command function, or a ``typer.Typer`` for a command group.
    ``summary`` is the line the root's help shows for it.
    """

    module: str
    attribute: str
    summary: str


#: Every ``taskloom`` subcommand, in the order the help lists them.
COMMANDS: dict[str, LazyCommand] = {
    "serve": LazyCommand("serve", "serve", "Run the Taskloom MCP server: over stdio by default, or over streamable HTTP (at /mcp) with --http."),
    "bridge": LazyCommand("bridge", "bridge", "Relay MCP over stdio to a Taskloom HTTP server (token from TASKLOOM_BRIDGE_TOKEN)."),
    "ingest": LazyCommand("ingest", "ingest", "Ingest a document (a file, or an http(s) URL to fetch) into a knowledge graph and print the report as JSON."),
    "crawl": LazyCommand("crawl", "crawl", "Crawl sites inside their allowed domains and print the report as JSON."),
    "explore-app": LazyCommand(
        "explore", "explore_app", "Explore a desktop application's menus and dialogs into a searchable graph (app-<name>) without changing its files; print the report."
    ),
    "demo": LazyCommand("demo", "demo", "The main job on the bundled examples: graphs, tasks, composites, agents, evaluation, consensus graphs, report."),
    "generate": LazyCommand("tasks", "generate", "Generate tasks from a knowledge graph and print the ids and the filtering report."),
    "compose": LazyCommand(
        "tasks", "compose", "Compose chained long tasks or task DAGs; print the ids, level statistics, why each chain stopped, and failures."
    ),
    "build": LazyCommand(
        "build", "build", "Build a dataset from a manifest: ingest, crawl, generate and verify each source as a resumable unit; print what was done."
    ),
    "run": LazyCommand("run", "run_agents", "Run agents on tasks, each episode in its own browser context; evaluate, build consensus graphs, write the report."),
    "report": LazyCommand("run", "report", "Rebuild a run's consensus graphs and its HTML report; print the summary."),
    "runs": LazyCommand("runs", "app", "List the workspace's runs and show one."),
    "gc": LazyCommand(
        "gc", "gc", "Find and remove debris (orphan vectors, index folders and screenshots, unfinished writes, stale locks); print a JSON report."
    ),
    "plugins": LazyCommand(
        "plugins", "plugins", "List the registered agents, task generators, document parsers, trajectory importers, export formats and executors."
    ),
    "graph": LazyCommand("graph", "app", "Inspect and query knowledge graphs."),
    "tasks": LazyCommand("tasks", "app", "List, show and export generated tasks."),
    "consensus": LazyCommand("consensus", "app", "Consensus graphs from agent logs: import a set, build its graphs, report on it."),
}


def load_command(name: str, spec: LazyCommand, group: TyperGroup) -> click.Command:
    """Import ``spec``'s module and build its click command the way Typer would have."""
    target = getattr(importlib.import_module(f"{__package__}.{spec.module}"), spec.attribute)
    if isinstance(target, typer.Typer):
        command: click.Command = get_group(target)
    else:
        info = CommandInfo(name=name, callback=target)
        command = get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode=group.rich_markup_mode)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """The root ``taskloom`` group: its subcommands are :data:`COMMANDS`, each imported on first use.

    While the root's own help is being written, each command is a stand-in carrying only its
    summary, so listing the commands imports none of them.
    """

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not, in table order."""
        return [*COMMANDS, *(n for n in self.commands if n not in COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The named command: loaded now if it is about to run; a summary-only stand-in while listing."""
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        spec = COMMANDS[cmd_name]
        if self._listing:
            return TyperCommand(cmd_name, help=spec.summary)
        self.commands[cmd_name] = load_command(cmd_name, spec, self)
        return self.commands[cmd_name]

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """Resolve like Typer, suggesting close names from every command (loaded or not) on a typo."""
        try:
            return self._click_resolve_command(ctx, args)
        except UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args and self.suggest_commands else []
            if matches:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The root's help, listing the commands by their summaries without importing them."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

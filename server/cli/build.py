"""``taskloom build MANIFEST``: documents and sites to a publishable dataset folder, resumably."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import console, echo_json, progress_bar, roots, run, settings, state


def build(
    manifest: Path = typer.Argument(..., metavar="MANIFEST", help="The build manifest (TOML): [dataset], [[source]] entries; see examples/build/manifest.toml."),
    out: Path = typer.Option(Path("datasets"), "--out", help="Where the dataset folder <name>-<version>/ (and the build records, in .taskloom-build/) go."),
    executor: str = typer.Option("local", "--executor", help="Where units run: local (this process). ray is not built yet."),
) -> None:
    """Build a dataset from a manifest: ingest, crawl, generate and verify each source as a resumable unit; print what was done."""
    import time

    from ...tools.build.dataset import assemble
    from ...tools.build.manifest import load_manifest
    from ...tools.build.pipeline import Builder, BuildResult

    start = time.monotonic()
    current = settings()
    where = roots(current)
    manifest_file = run(lambda: where.readable_file(manifest, "MANIFEST"))
    loaded = run(load_manifest, manifest_file)
    if loaded.dataset.embedder is not None and loaded.dataset.embedder != current.embedder:
        current = run(lambda: current.model_copy(update={"embedder": loaded.dataset.embedder}))
    target = run(lambda: where.resolve(out, "--out"))

    def say(line: str) -> None:
        if not state.get("quiet"):
            console.print(line, highlight=False, markup=False, soft_wrap=True)

    builder = run(lambda: Builder(loaded, current, target, lambda label, total: progress_bar(label, total), say, executor))
    outcomes = run(builder.run)
    folder = run(assemble, builder, manifest_file)
    say(f"build: dataset {folder.path} {'written' if folder.written else 'unchanged'}, {folder.tasks} tasks")
    result = BuildResult(dataset=folder.path, build=str(builder.dir), units=outcomes, tasks=folder.tasks, dataset_written=folder.written, seconds=round(time.monotonic() - start, 2))
    echo_json(result)
    if any(o.action == "failed" for o in outcomes):
        raise typer.Exit(1)

"""``taskloom build MANIFEST``: documents and sites to a publishable dataset folder, resumably."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import console, echo_json, progress_bar, roots, run, settings, state


def build(
    manifest: Path = typer.Argument(..., metavar="MANIFEST", help="The build manifest (TOML): [dataset], [[source]] entries; see examples/build/manifest.toml."),
    out: Path = typer.Option(Path("datasets"), "--out", help="Where the dataset folder <name>-<version>/ (and the build records, in .taskloom-build/) go."),
    executor: str = typer.Option("local", "--executor", help="Where the browser work runs: local (this process) or ray (each crawl and the replays on a Ray cluster; the tasks are the same)."),
    address: str | None = typer.Option(None, "--address", help="--executor ray: the cluster, auto, ray://host:port or host:port (default: a new local Ray)."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="--executor ray: replay worker slots, each with its own browser (default: one per cluster CPU)."),
) -> None:
    """Build a dataset from a manifest: ingest, crawl, generate and verify each source as a resumable unit; print what was done."""
    import time
    from contextlib import nullcontext

    from ...tools.build.dataset import assemble
    from ...tools.build.manifest import load_manifest
    from ...tools.build.pipeline import Builder, BuildResult
    from .tasks import ray_work

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

    remote = ray_work(executor, address, workers, current)
    builder = run(lambda: Builder(loaded, current, target, lambda label, total: progress_bar(label, total), say, remote))
    with nullcontext() if remote is None else remote.connected():
        outcomes = run(builder.run)
    folder = run(assemble, builder, manifest_file)
    say(f"build: dataset {folder.path} {'written' if folder.written else 'unchanged'}, {folder.tasks} tasks")
    where_run = {"name": "local"} if remote is None else remote.summary()
    result = BuildResult(dataset=folder.path, build=str(builder.dir), executor=where_run, units=outcomes, tasks=folder.tasks, dataset_written=folder.written, seconds=round(time.monotonic() - start, 2))
    echo_json(result)
    if any(o.action == "failed" for o in outcomes):
        raise typer.Exit(1)

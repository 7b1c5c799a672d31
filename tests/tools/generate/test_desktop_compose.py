"""Desktop value-flow chains and task graphs on Gnumeric workbooks (`taskloom compose desktop:gnumeric`).

Every gold is checked against Gnumeric's own evaluation of the chain's formula (through ``ssconvert``,
for many seeds), instructions state no intermediate value, checks fail on the seeded workbook and
on changed data; then chains and a task graph are composed and verified by replay in real Gnumeric
sessions. Needs gnumeric (ssconvert) and, for the replay, Xvfb, dbus, openbox and gir1.2-atspi-2.0.
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
import random
import shutil
import subprocess
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from taskloom.tools.environment.desktop_a11y import DEBIAN_PYTHON
from taskloom.tools.environment.desktop_checks import holds_at_start
from taskloom.tools.environment.desktop_sheet import WORKBOOKS, workbook_xml
from taskloom.tools.environment.sheet_cells import check_sheet, parse_cell
from taskloom.tools.errors import InputError
from taskloom.tools.generate.compose.composer import ComposeResult
from taskloom.tools.generate.compose.flowtasks import leaks
from taskloom.tools.generate.desktop.sheet_chain import chain_task, graph_task, grow_branch
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings
from taskloom.tools.tasks.model import Task

ATSPI = os.path.exists(DEBIAN_PYTHON) and subprocess.run([DEBIAN_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"], capture_output=True).returncode == 0
DESKTOP = pytest.mark.skipif(
    not all(shutil.which(b) for b in ("Xvfb", "xauth", "dbus-daemon", "openbox", "xprop", "gnumeric")) or not ATSPI, reason="needs Xvfb, dbus, openbox, gnumeric, gir1.2-atspi-2.0"
)
pytestmark = pytest.mark.skipif(not shutil.which("ssconvert"), reason="needs gnumeric's ssconvert (make system)")


def _tasks(seeds: range) -> list[Task]:
    """Every chain level and one task graph per workbook and seed, as the composer designs them (before replay)."""
    made: list[Task] = []
    for seed in seeds:
        rng = random.Random(seed)
        for path in sorted(WORKBOOKS):
            branch = grow_branch(path, 6, rng)
            made += [t for level in range(1, len(branch.hops) + 1) if (t := chain_task(branch, level, seed)) is not None]
            first, second = grow_branch(path, 3, rng, end="number"), grow_branch(path, 2, rng, end="number")
            if len(first.hops) >= 2 and len(second.hops) >= 2:
                made += [t for t in (graph_task(first, second, rng.choice(("sum", "difference")), seed),) if t is not None]
    return made


def _gnumeric_values(path: str, formulas: list[str]) -> list[str]:
    """What Gnumeric computes for each formula, placed one per row right of the seeded table (read back by ssconvert)."""
    _, header, _ = WORKBOOKS[path]
    col = len(header) + 3
    cells = "\n".join(f'<gnm:Cell Row="{r}" Col="{col}">{escape(f)}</gnm:Cell>' for r, f in enumerate(formulas))
    xml = workbook_xml(path).replace("</gnm:Cells>", cells + "\n</gnm:Cells>").replace(f"<gnm:MaxCol>{len(header) - 1}<", f"<gnm:MaxCol>{col}<")
    xml = xml.replace(f"<gnm:MaxRow>{len(WORKBOOKS[path][2])}<", f"<gnm:MaxRow>{max(len(formulas), len(WORKBOOKS[path][2]) + 1)}<")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "GSETTINGS_BACKEND": "memory"}
    out = subprocess.run(["ssconvert", "-T", "Gnumeric_stf:stf_csv", "fd://0", "fd://1"], input=xml, capture_output=True, text=True, env=env, check=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    return [rows[r][col] if r < len(rows) and col < len(rows[r]) else "" for r in range(len(formulas))]


def _expected(task: Task) -> tuple[str, float | str]:
    import json

    spec = json.loads(task.success[0].value)
    target = next(ref for ref in spec["cells"] if parse_cell(ref)[1] >= len(WORKBOOKS[spec["path"]][1]))
    return target, spec["cells"][target]


def test_every_gold_is_what_gnumeric_computes_from_the_chains_formula() -> None:
    tasks = _tasks(range(8))
    assert sum(t.level == 6 for t in tasks) >= 5 and sum(t.type == "value_graph" for t in tasks) >= 10, "chains reach level 6 and graphs are made"
    for path in sorted(WORKBOOKS):
        mine = [t for t in tasks if t.desktop and path in t.desktop.files]
        computed = _gnumeric_values(path, [t.gold_steps[1].text or "" for t in mine])
        for task, value in zip(mine, computed):
            gold = _expected(task)[1]
            same = value.casefold() == gold.casefold() if isinstance(gold, str) else abs(float(value) - gold) < 0.005
            assert same, f"{task.id}: Gnumeric computes {value!r}, the gold is {gold!r}\n{task.instruction}"


def test_instructions_hide_every_intermediate_value_and_no_task_holds_on_the_seeded_workbook() -> None:
    tasks = _tasks(range(3))
    for task in tasks:
        hidden = task.quality["flow"]["hidden"]
        assert not leaks(task.instruction, hidden), task.instruction
        assert len(task.subtasks) == (task.level or len(task.subtasks)) and task.dag is not None
        assert not holds_at_start(task), task.id
    graph = next(t for t in tasks if t.type == "value_graph")
    assert {b for _, b in graph.dag if b == "c"} == {"c"} and sum(b == "c" for _, b in graph.dag) == 2  # two branches meet in the last subtask
    assert _tasks(range(3)) == tasks  # the same seeds, the same tasks


def test_the_check_needs_the_value_and_unchanged_data(tmp_path: Path) -> None:
    task = next(t for t in _tasks(range(1)) if t.level == 3)
    path = next(iter(task.desktop.files)) if task.desktop else ""
    target, gold = _expected(task)
    row, col = parse_cell(target)
    kind = 60 if isinstance(gold, str) else 40

    def saved(value: float | str, change_data: bool = False) -> Path:
        xml = workbook_xml(path).replace("</gnm:Cells>", f'<gnm:Cell Row="{row}" Col="{col}" ValueType="{kind}">{escape(str(value))}</gnm:Cell>\n</gnm:Cells>')
        xml = xml.replace(f"<gnm:MaxCol>{len(WORKBOOKS[path][1]) - 1}<", f"<gnm:MaxCol>{col}<")
        if change_data:  # the first data cell of the first column a hop reads
            first = task.quality["flow"]["hops"][0]["column"]
            c = WORKBOOKS[path][1].index(first)
            old = f'Row="1" Col="{c}" ValueType="40">{WORKBOOKS[path][2][0][c]}<'
            assert old in xml
            xml = xml.replace(old, f'Row="1" Col="{c}" ValueType="40">{float(WORKBOOKS[path][2][0][c]) + 1000}<')
        file = tmp_path / path
        file.write_text(xml)
        return file

    assert check_sheet(task.success[0], saved(gold)).ok
    wrong = "someone else" if isinstance(gold, str) else gold + 1
    assert not check_sheet(task.success[0], saved(wrong)).ok
    result = check_sheet(task.success[0], saved(gold, change_data=True))
    assert not result.ok and "holds" in result.observed


@DESKTOP
@pytest.mark.integration
def test_compose_verifies_chains_to_level_four_and_a_task_graph_by_replay(tmp_path: Path) -> None:
    runtime = Runtime(Settings(workspace=tmp_path, embedder="hashing", record_screenshots=False), screenshots=False)

    async def go() -> tuple[ComposeResult, ComposeResult]:
        async with runtime:
            service = runtime.task_service()
            with pytest.raises(InputError, match="desktop:gnumeric"):
                await service.compose("desktop:mousepad", "chain", count=1)
            return await service.compose("desktop:gnumeric", "chain", count=1, levels=4, seed=0), await service.compose("desktop:gnumeric", "dag", count=1, seed=0)

    chains, graphs = asyncio.run(go())
    assert chains.chains[0].reached == 4, chains.chains
    stored = {t.id: t for t in runtime.task_service().list(kind="desktop")}
    levels = sorted(stored[i].level or 0 for i in chains.task_ids)
    assert levels == [1, 2, 3, 4]
    assert len(graphs.task_ids) == 1, graphs.dropped
    graph = stored[graphs.task_ids[0]]
    assert (graph.order_count or 0) >= 2 and graph.quality["replay"]["ok"]
    for task_id in [*chains.task_ids, *graphs.task_ids]:
        task = stored[task_id]
        assert task.gold_trajectory and Path(task.gold_trajectory).is_file() and task.kind == "desktop"
        assert task.difficulty == ("easy" if task.level == 1 else "medium" if task.level in (2, 3) else "hard") or task.type == "value_graph"

"""Harbor task directories: layout, task.toml, hidden gold, the shipped verifier, and the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.settings import Settings
from taskloom.tools.evaluate.metrics import answer_scores, answer_success
from taskloom.tools.tasks.formats import ExportContext, export_directory, export_text, is_directory_format
from taskloom.tools.tasks.harbor import HarborExpected, HarborExport, HarborTaskConfig, to_toml, write_harbor_task, write_harbor_tasks
from taskloom.tools.tasks.harbor_check import answer_ok, url_ok
from taskloom.tools.tasks.model import Task
from taskloom.tools.tasks.store import TaskStore
from taskloom.tools.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harbor_side import harbor_python  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
PDF = EXAMPLES / "documents" / "field-guide.pdf"
TASKLOOM = Path(sys.executable).parent / "taskloom"


def _tasks(name: str) -> list[Task]:
    lines = (EXAMPLES / "tasks" / name).read_text(encoding="utf-8").splitlines()
    return [Task.model_validate_json(line) for line in lines if line.strip()]


DOC_TASKS = _tasks("field-guide-document-tasks.jsonl")
WEB_TASKS = _tasks("example-site-composite-tasks.jsonl")
DOCUMENTS = {DOC_TASKS[0].provenance.graph_id: PDF}


def _verify(task_dir: Path, workdir: Path, logs: Path) -> tuple[int, dict[str, Any]]:
    """Run the task's tests/test.sh as Harbor would, with the container paths pointed at temporary folders."""
    env = {**os.environ, "TASKLOOM_WORKDIR": str(workdir), "TASKLOOM_VERIFIER_LOGS": str(logs)}
    done = subprocess.run(["bash", str(task_dir / "tests" / "test.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return int((logs / "reward.txt").read_text().strip()), json.loads((logs / "details.json").read_text())


def test_document_tasks_become_harbor_directories_with_gold_only_in_tests(tmp_path: Path) -> None:
    report = write_harbor_tasks(DOC_TASKS, tmp_path, DOCUMENTS)
    assert sorted(report.written) == sorted(t.id for t in DOC_TASKS) and report.skipped == {}
    for task in DOC_TASKS:
        folder = tmp_path / task.id
        for required in ("instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh", "tests/check.py", "tests/expected.json"):
            assert (folder / required).is_file(), required
        config = HarborTaskConfig.model_validate(tomllib.loads((folder / "task.toml").read_text(encoding="utf-8")))
        assert config.metadata["taskloom_task_id"] == task.id and config.environment.network_mode == "no-network"
        instruction = (folder / "instruction.md").read_text(encoding="utf-8")
        assert task.instruction in instruction and "/app/answer.txt" in instruction and "/app/field-guide.pdf" in instruction
        assert task.gold_answer is not None
        # the gold is nowhere the agent can see: not in the instruction, the config or the image's build context
        visible = instruction + (folder / "task.toml").read_text(encoding="utf-8") + (folder / "environment" / "Dockerfile").read_text(encoding="utf-8")
        assert f'"{task.gold_answer}"' not in visible and "gold" not in visible.lower()
        assert sorted(p.name for p in (folder / "environment").iterdir()) == ["Dockerfile", "field-guide.pdf"]
        expected = HarborExpected.model_validate_json((folder / "tests" / "expected.json").read_text(encoding="utf-8"))
        assert expected.answer is not None and expected.answer.gold == task.gold_answer
        assert os.access(folder / "tests" / "test.sh", os.X_OK) and os.access(folder / "solution" / "solve.sh", os.X_OK)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no staging folder is left behind"


def test_the_shipped_verifier_rewards_the_reference_answer_and_not_a_wrong_one(tmp_path: Path) -> None:
    task = next(t for t in DOC_TASKS if t.answer_kind == "number")
    write_harbor_tasks([task], tmp_path / "out", DOCUMENTS)
    folder, workdir, logs = tmp_path / "out" / task.id, tmp_path / "app", tmp_path / "logs"
    workdir.mkdir()
    assert _verify(folder, workdir, logs)[0] == 0  # no answer file
    solve = (folder / "solution" / "solve.sh").read_text(encoding="utf-8").replace("/app/", f"{workdir}/")
    subprocess.run(["bash", "-c", solve], check=True, timeout=30)
    reward, details = _verify(folder, workdir, logs)
    assert reward == 1, details
    (workdir / "answer.txt").write_text("I could not find it", encoding="utf-8")
    assert _verify(folder, workdir, logs)[0] == 0


def test_web_tasks_the_verifier_cannot_judge_from_files_are_skipped_with_the_reason(tmp_path: Path) -> None:
    report = write_harbor_tasks(WEB_TASKS, tmp_path / "out", {})
    judged = [t for t in WEB_TASKS if all(c.kind in ("url_matches", "page_is", "query_has") for c in t.success)]
    assert judged and sorted(report.written) == sorted(t.id for t in judged)
    assert sorted(report.skipped) == sorted(t.id for t in WEB_TASKS if t not in judged)
    assert "its checks clicked, element_state read the live page" in report.skipped["dag-2468bc21196f"]
    assert not (tmp_path / "out" / "dag-2468bc21196f").exists()


def test_web_tasks_carry_their_criteria_as_data_and_only_file_checkable_ones_are_judged(tmp_path: Path) -> None:
    """The shipped verifier still refuses to judge a check it cannot make (a task exported by hand, or by an older version)."""
    mixed = next(t for t in WEB_TASKS if any(c.kind not in ("url_matches", "page_is", "query_has") for c in t.success))
    folder = tmp_path / "out" / mixed.id
    write_harbor_task(mixed, folder, None, 600.0)
    config = HarborTaskConfig.model_validate(tomllib.loads((folder / "task.toml").read_text(encoding="utf-8")))
    assert config.environment.network_mode == "allowlist" and config.environment.allowed_hosts == ["127.0.0.1"] and config.metadata["taskloom_kind"] == "composite"
    instruction = (folder / "instruction.md").read_text(encoding="utf-8")
    assert mixed.start_url is not None and mixed.start_url in instruction and "/app/final_url.txt" in instruction
    expected = HarborExpected.model_validate_json((folder / "tests" / "expected.json").read_text(encoding="utf-8"))
    assert expected.criteria == mixed.success
    workdir = tmp_path / "app"
    workdir.mkdir()
    (workdir / "final_url.txt").write_text(mixed.start_url, encoding="utf-8")
    reward, details = _verify(folder, workdir, tmp_path / "logs")
    assert reward == 0
    unchecked = [c for c in details["checks"] if c["ok"] is None]
    assert unchecked and all("not checkable from files" in c["detail"] for c in unchecked)
    url_checks = [c for c in details["checks"] if str(c["check"]).startswith("url_matches")]
    assert all(c["ok"] is not None for c in url_checks)


def test_a_document_task_without_its_source_is_skipped_and_folders_are_replaced_only_when_asked(tmp_path: Path) -> None:
    report = write_harbor_tasks(DOC_TASKS[:1], tmp_path, {})
    assert report.written == [] and "ingest it again" in report.skipped[DOC_TASKS[0].id]
    first = write_harbor_tasks(DOC_TASKS[:1], tmp_path, DOCUMENTS)
    assert first.written == [DOC_TASKS[0].id]
    marker = tmp_path / DOC_TASKS[0].id / "stale.txt"
    marker.write_text("old", encoding="utf-8")
    again = write_harbor_tasks(DOC_TASKS[:1], tmp_path, DOCUMENTS)
    assert again.written == [] and "--overwrite" in again.skipped[DOC_TASKS[0].id] and marker.exists()
    replaced = write_harbor_tasks(DOC_TASKS[:1], tmp_path, DOCUMENTS, overwrite=True)
    assert replaced.written == [DOC_TASKS[0].id] and not marker.exists()


def test_the_registry_tells_folder_formats_from_text_formats(tmp_path: Path) -> None:
    assert is_directory_format("harbor") and not is_directory_format("jsonl")
    with pytest.raises(InputError, match="writes a folder"):
        export_text("harbor", DOC_TASKS)
    with pytest.raises(InputError, match="writes text"):
        export_directory("jsonl", DOC_TASKS, tmp_path)
    report = export_directory("harbor", DOC_TASKS[:2], tmp_path, ExportContext(documents=DOCUMENTS, agent_timeout_s=90))
    assert isinstance(report, HarborExport) and len(report.written) == 2
    assert tomllib.loads((tmp_path / DOC_TASKS[0].id / "task.toml").read_text(encoding="utf-8"))["agent"]["timeout_sec"] == 90


def test_toml_strings_survive_quotes_newlines_unicode_and_control_characters() -> None:
    value = 'say "hi"\\ then\nnew line\ttab \x7f del — ünïcode 😀'
    data = {"version": "1.0", "metadata": {"odd key": value, "tags": ["a", 'b"'], "level": 3, "flag": True}}
    assert tomllib.loads(to_toml(data)) == data


@pytest.mark.parametrize(
    ("pred", "gold", "kind"),
    [
        ("6 months", "6 months", "text"),
        ("Six months", "6 months", "text"),
        ("every 6 months, roughly", "6 months", "text"),
        ("1", "1", "number"),
        ("There is one figure (1).", "1", "number"),
        ("about 1,200 metres", "1200", "number"),
        ("12%", "0.12", "number"),
        ("2", "1", "number"),
        ("yes", "Yes", "boolean"),
        ("Not true", "yes", "boolean"),
        ("no", "false", "boolean"),
        ("rain gauge; hygrometer and barometer", "Barometer, Hygrometer, Rain gauge", "list"),
        ("rain gauge, hygrometer", "Barometer, Hygrometer, Rain gauge", "list"),
        ("The Station Logger", "station logger", "text"),
        ("", "station logger", "text"),
        ("-5.0", "−5", "number"),
        ("the answer is maybe", "yes", "boolean"),
    ],
)
def test_the_shipped_verifier_agrees_with_taskloom_answer_success(pred: str, gold: str, kind: str) -> None:
    task = DOC_TASKS[0].model_copy(update={"gold_answer": gold, "answer_kind": kind})
    assert answer_ok(pred, gold, kind) == answer_success(task, answer_scores(task, pred))


def test_url_criteria_are_judged_like_the_live_checker() -> None:
    from taskloom.tools.evaluate.checks import page_matches, query_matches

    pairs = [
        ("HTTP://a.org:80/docs/index.html?b=2&a=1#intro", "http://a.org/docs?a=1&b=2"),
        ("http://a.org/#/active", "http://a.org/#/completed"),
        ("http://a.org/s?genre=poetry&page=2&q=", "http://a.org/s/?genre=poetry"),
        ("http://a.org/s?genre=nature", "http://a.org/s?genre=poetry"),
        ("http://a.org/caf%C3%A9/", "http://a.org/café"),
    ]
    for actual, expected in pairs:
        assert url_ok("page_is", expected, actual) == page_matches(actual, expected)
        assert url_ok("query_has", expected, actual) == query_matches(actual, expected)


@pytest.mark.integration
@pytest.mark.slow
def test_harbors_own_loader_reads_the_exported_tasks(tmp_path: Path) -> None:
    """Harbor's ``Task`` loads each exported directory (a side venv: the ``harbor`` package needs Python ≥ 3.12)."""
    python = harbor_python()
    write_harbor_tasks([*DOC_TASKS, *WEB_TASKS], tmp_path, DOCUMENTS)
    script = (
        "import sys, pathlib\n"
        "from harbor.models.task.task import Task\n"
        "for d in sorted(pathlib.Path(sys.argv[1]).iterdir()):\n"
        "    t = Task(d)\n"
        "    assert Task.is_valid_dir(d), d\n"
        "    print(t.name, t.config.agent.timeout_sec, t.config.environment.network_mode.value)\n"
    )
    done = subprocess.run([str(python), "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    judged = [t for t in WEB_TASKS if all(c.kind in ("url_matches", "page_is", "query_has") for c in t.success)]
    assert len(done.stdout.splitlines()) == len(DOC_TASKS) + len(judged)


@pytest.mark.integration
def test_cli_exports_harbor_directories_from_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKLOOM_")}
    env.update(TASKLOOM_WORKSPACE=str(workspace), TASKLOOM_EMBEDDER="hashing", FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    shutil.copyfile(PDF, tmp_path / PDF.name)

    def taskloom(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(TASKLOOM), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)

    ingest = taskloom("ingest", PDF.name)
    assert ingest.returncode == 0, ingest.stderr
    assert json.loads(ingest.stdout)["graph_id"] == DOC_TASKS[0].provenance.graph_id  # the example tasks name this PDF's graph by content hash
    store = TaskStore(Workspace(workspace))
    for task in DOC_TASKS:
        store.save(task)
    wrong = taskloom("tasks", "export", "--format", "harbor", "-o", "x.jsonl")
    assert wrong.returncode == 2 and "--out DIR" in wrong.stderr
    done = taskloom("tasks", "export", "--format", "harbor", "--out", "harbor-tasks")
    assert done.returncode == 0, done.stderr
    report = HarborExport.model_validate_json(done.stdout)
    assert sorted(report.written) == sorted(t.id for t in DOC_TASKS)
    assert (tmp_path / "harbor-tasks" / DOC_TASKS[0].id / "environment" / PDF.name).read_bytes() == PDF.read_bytes()


@pytest.mark.anyio
async def test_the_mcp_tool_exports_harbor_directories(settings: Settings, tmp_path: Path) -> None:
    from fastmcp import Client

    from taskloom.server.app import build_server

    shutil.copyfile(PDF, tmp_path / PDF.name)
    async with Client(build_server(settings)) as client:
        ingested = await client.call_tool("graph_ingest_document", {"path": str(tmp_path / PDF.name)})
        assert ingested.structured_content is not None and ingested.structured_content["graph_id"] == DOC_TASKS[0].provenance.graph_id
        store = TaskStore(Workspace(settings.workspace))
        for task in [*DOC_TASKS, *WEB_TASKS]:
            store.save(task)
        result = await client.call_tool("tasks_export", {"format": "harbor", "path": str(tmp_path / "harbor"), "kind": "document"})
        exported = result.structured_content
        assert exported is not None and exported["count"] == len(DOC_TASKS) and exported["skipped"] == {}
        assert sorted(p.name for p in (tmp_path / "harbor").iterdir()) == sorted(t.id for t in DOC_TASKS)
        refused = await client.call_tool("tasks_export", {"format": "harbor"}, raise_on_error=False)
        assert refused.is_error and "give path" in str(refused.content[0])


def test_a_desktop_task_is_skipped_with_the_reason_and_nothing_is_written(tmp_path: Path) -> None:
    from taskloom.tools.environment.desktop_sheet import sheet_tasks

    task = sheet_tasks(0, 1)[0]
    report = write_harbor_tasks([task], tmp_path, {})
    assert report.written == [] and "needs a display and gnumeric" in report.skipped[task.id]
    assert not (tmp_path / task.id).exists()

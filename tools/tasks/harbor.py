"""Tasks as Harbor task directories (``--format harbor``): one folder per task, as Harbor's loader reads it.

Layout of ``OUT/<task id>/`` (Harbor's published task format)::

    instruction.md        the instruction the agent sees, and where to leave its answer; never gold
    task.toml             version, [metadata], [verifier], [agent] and [environment] tables
    environment/          the container: a Dockerfile (plus the source document of a document task)
    tests/                hidden from the agent: test.sh → check.py reads expected.json (the gold)
    solution/             the reference solution when there is one: solve.sh writes the gold answer

The gold answer and success criteria are written only under ``tests/`` and ``solution/``,
which Harbor copies into the container after the agent has finished (``tests/``) or only
for its oracle agent (``solution/``). The verifier is :mod:`.harbor_check`, copied verbatim;
it writes ``reward.txt`` (1 or 0) to Harbor's verifier log folder. Web tasks need their site
reachable from the container; see ``docs/exports.md`` for what a Harbor run of them checks.

On the exporting machine the gold is its owner's alone: every folder Taskloom makes is 0700,
every file 0600 (scripts 0700), except ``environment/``'s files (no gold; 0644, as the image needs them).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field

from ..security.private import DIR_MODE, FILE_MODE, private_dirs
from .harbor_check import URL_KINDS
from .model import SuccessCriterion, Task

__all__ = [
    "HarborTaskConfig",
    "HarborExpected",
    "ExpectedAnswer",
    "HarborExport",
    "WORKDIR",
    "harbor_config",
    "site_hosts",
    "harbor_instruction",
    "write_harbor_task",
    "write_harbor_tasks",
    "to_toml",
]

#: Where the agent works inside the container, and where the verifier looks for its files.
WORKDIR = "/app"
#: The base image: Python for the verifier (standard library only).
BASE_IMAGE = "python:3.12-slim"
_CHECK_SOURCE = Path(__file__).with_name("harbor_check.py")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VerifierSection(_Section):
    """``[verifier]``: how long ``tests/test.sh`` may run."""

    timeout_sec: float = Field(120.0, gt=0, description="Seconds the verifier may run.")


class AgentSection(_Section):
    """``[agent]``: how long the agent may work."""

    timeout_sec: float = Field(600.0, gt=0, description="Seconds the agent may run.")


class EnvironmentSection(_Section):
    """``[environment]``: the container's build time and resources."""

    build_timeout_sec: float = Field(600.0, gt=0, description="Seconds the image build may take.")
    cpus: int = Field(1, ge=1)
    memory_mb: int = Field(2048, ge=256)
    storage_mb: int = Field(10240, ge=512)
    network_mode: Literal["no-network", "allowlist", "public"] = Field(description="Document tasks: no network; web tasks: their site's hosts.")
    allowed_hosts: list[str] | None = Field(None, description="With allowlist: the hosts the container may reach.")


class HarborTaskConfig(_Section):
    """``task.toml`` as Taskloom writes it (the parts of Harbor's task config we fill)."""

    version: str = Field("1.0", description="Harbor's task-config version (read as schema_version by newer Harbor).")
    metadata: dict[str, str | int | float | bool | list[str]] = Field(default_factory=dict, description="Free-form: difficulty, category, tags, provenance.")
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    environment: EnvironmentSection


class ExpectedAnswer(_Section):
    """The gold answer a document task's verifier compares ``answer.txt`` with."""

    gold: str
    answer_kind: str = Field("text", description="text, number, boolean or list: which success rule applies.")


class HarborExpected(_Section):
    """``tests/expected.json``: what ``check.py`` reads (hidden from the agent)."""

    task_id: str
    kind: str
    answer: ExpectedAnswer | None = Field(None, description="Present when the task asks for an answer.")
    criteria: list[SuccessCriterion] = Field(default_factory=list, description="Web and composite tasks: the success criteria, as data.")
    answer_file: str = Field("answer.txt", description="Relative to the working directory.")
    final_url_file: str = Field("final_url.txt", description="Relative to the working directory.")


class HarborExport(BaseModel):
    """What a Harbor export wrote."""

    out: str = Field(description="The folder holding one task directory per task.")
    written: list[str] = Field(default_factory=list, description="Task ids written, each as OUT/<id>/.")
    skipped: dict[str, str] = Field(default_factory=dict, description="Task id → why it was not written.")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def to_toml(data: Mapping[str, Any]) -> str:
    """Top-level scalars, then one ``[table]`` per mapping (one level deep, as ``task.toml`` needs); None values are left out.

    >>> print(to_toml({"version": "1.0", "agent": {"timeout_sec": 60.0}}), end="")
    version = "1.0"
    <BLANKLINE>
    [agent]
    timeout_sec = 60.0
    """
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items() if v is not None and not isinstance(v, Mapping)]
    for name, table in data.items():
        if isinstance(table, Mapping):
            lines += ["", f"[{_toml_key(name)}]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items() if v is not None)]
    return "\n".join(lines) + "\n"


def harbor_config(task: Task, agent_timeout_s: float = 600.0) -> HarborTaskConfig:
    """``task.toml`` for one task: provenance in ``[metadata]``; network only for tasks on a site."""
    metadata: dict[str, str | int | float | bool | list[str]] = {
        "difficulty": task.difficulty,
        "category": task.type,
        "tags": ["taskloom", task.kind, task.type],
        "taskloom_task_id": task.id,
        "taskloom_kind": task.kind,
        "graph_id": task.provenance.graph_id,
        "generator": task.provenance.generator,
    }
    if task.provenance.template:
        metadata["template"] = task.provenance.template
    if task.level is not None:
        metadata["level"] = task.level
    hosts = site_hosts(task)
    if task.kind == "document":
        environment = EnvironmentSection(network_mode="no-network")
    else:
        environment = EnvironmentSection(network_mode="allowlist", allowed_hosts=hosts) if hosts else EnvironmentSection(network_mode="public")
    return HarborTaskConfig(metadata=metadata, agent=AgentSection(timeout_sec=agent_timeout_s), environment=environment)


def site_hosts(task: Task) -> list[str]:
    """The host names a web task's site lives on (start URL and allowed domains, without scheme or port).

    >>> from taskloom.tools.tasks.model import Provenance
    >>> t = Task(id="t", kind="web", type="lookup", instruction="…", start_url="http://127.0.0.1:8000/", allowed_domains=["https://shop.example.org:8443"],
    ...          provenance=Provenance(graph_id="g", generator="x"))
    >>> site_hosts(t)
    ['127.0.0.1', 'shop.example.org']
    """
    found: list[str] = []
    for item in [*([task.start_url] if task.start_url else []), *task.allowed_domains]:
        host = urlparse(item if "://" in item else f"http://{item}").hostname
        if host and host not in found:
            found.append(host)
    return found


def harbor_instruction(task: Task, document: str | None = None) -> str:
    """``instruction.md``: the task's instruction and where to leave the result (never gold)."""
    parts = [task.instruction.strip(), ""]
    if task.kind == "document":
        if document:
            parts.append(f"The document is `{WORKDIR}/{document}`.")
        parts.append(f"Write your answer (the answer only) to `{WORKDIR}/answer.txt`.")
    else:
        if task.start_url:
            parts.append(f"Start at {task.start_url}" + (f" (stay on {', '.join(task.allowed_domains)})." if task.allowed_domains else "."))
        parts.append(f"When you are done, write the URL of the page you ended on to `{WORKDIR}/final_url.txt`.")
        if task.gold_answer is not None:
            parts.append(f"Write your answer (the answer only) to `{WORKDIR}/answer.txt`.")
    return "\n".join(parts) + "\n"


def _expected(task: Task) -> HarborExpected:
    answer = None if task.gold_answer is None else ExpectedAnswer(gold=task.gold_answer, answer_kind=task.answer_kind)
    return HarborExpected(task_id=task.id, kind=task.kind, answer=answer, criteria=[] if task.kind == "document" else list(task.success))


_TEST_SH = f"""#!/bin/bash
# Taskloom verifier: judges what the agent left in {WORKDIR} against expected.json (standard-library Python only).
HERE="$(cd "$(dirname "$0")" && pwd)"
LOGS="${{TASKLOOM_VERIFIER_LOGS:-/logs/verifier}}"
WORKDIR="${{TASKLOOM_WORKDIR:-{WORKDIR}}}"
mkdir -p "$LOGS"
python3 "$HERE/check.py" "$HERE/expected.json" "$WORKDIR" "$LOGS" || echo 0 > "$LOGS/reward.txt"
"""


def _dockerfile(document: str | None) -> str:
    lines = [f"FROM {BASE_IMAGE}", f"WORKDIR {WORKDIR}"]
    if document:
        lines.append(f"COPY {json.dumps([document, f'{WORKDIR}/{document}'])}")
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str, executable: bool = False, shared: bool = False) -> None:
    """Write one file of a task folder: 0600 (0700 if ``executable``), or 0644 when ``shared`` (no gold; copied into the image)."""
    private_dirs(path.parent)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644 if shared else DIR_MODE if executable else FILE_MODE)


def write_harbor_task(task: Task, folder: Path, document: Path | None = None, agent_timeout_s: float = 600.0) -> None:
    """Write one task's Harbor directory into ``folder`` (which must be empty or absent)."""
    doc_name = None if document is None else (_SAFE.sub("-", document.name).strip("-.") or "document")
    _write(folder / "instruction.md", harbor_instruction(task, doc_name))
    _write(folder / "task.toml", to_toml(harbor_config(task, agent_timeout_s).model_dump(mode="json")))
    _write(folder / "environment" / "Dockerfile", _dockerfile(doc_name), shared=True)
    if document is not None and doc_name is not None:
        shutil.copyfile(document, folder / "environment" / doc_name)
        (folder / "environment" / doc_name).chmod(0o644)
    _write(folder / "tests" / "test.sh", _TEST_SH, executable=True)
    _write(folder / "tests" / "check.py", _CHECK_SOURCE.read_text(encoding="utf-8"))
    _write(folder / "tests" / "expected.json", _expected(task).model_dump_json(indent=1, exclude_none=True) + "\n")
    if task.gold_answer is not None:
        solve = f"#!/bin/bash\n# The reference answer (Harbor gives solution/ only to its oracle agent).\nprintf '%s\\n' {shlex.quote(task.gold_answer)} > {WORKDIR}/answer.txt\n"
        _write(folder / "solution" / "solve.sh", solve, executable=True)
    if task.gold_steps:
        steps = [s.model_dump(mode="json", exclude_none=True) for s in task.gold_steps]
        _write(folder / "solution" / "gold_steps.json", json.dumps(steps, indent=1, ensure_ascii=False) + "\n")


def write_harbor_tasks(
    tasks: Sequence[Task], out: Path, documents: Mapping[str, Path], overwrite: bool = False, agent_timeout_s: float = 600.0
) -> HarborExport:
    """Write ``OUT/<task id>/`` for every task; each folder appears whole (built aside, then renamed).

    ``documents`` maps a document graph's id to its source file, copied into the task's
    environment; a document task whose source is unknown, a web or composite task with a check the
    shipped verifier cannot make from files (:data:`.harbor_check.URL_KINDS` are the ones it can),
    and a desktop task, are skipped with the reason.
    An existing task folder is replaced only with ``overwrite``.
    """
    private_dirs(out)
    report = HarborExport(out=str(out))
    for task in tasks:
        name = _SAFE.sub("-", task.id).strip("-.") or "task"
        target = out / name
        document = documents.get(task.provenance.graph_id) if task.kind == "document" else None
        if task.kind == "document" and (document is None or not document.is_file()):
            report.skipped[task.id] = (
                f"the source document of graph {task.provenance.graph_id!r} is not on this machine; "
                "ingest it again from a local file (taskloom ingest PATH), then export"
            )
            continue
        unjudged = sorted({c.kind for c in task.success if c.kind not in URL_KINDS}) if task.kind in ("web", "composite") else []
        if unjudged:
            report.skipped[task.id] = (
                f"its checks {', '.join(unjudged)} read the live page or the agent's actions, which the files of a Harbor container do not hold: "
                "no run of it could earn reward 1 there; run it with taskloom run"
            )
            continue
        if task.kind == "desktop":
            report.skipped[task.id] = (
                f"a desktop task needs a display and {task.desktop.app if task.desktop else 'its application'} in the task's container, "
                "which the Harbor export does not build yet; run it with taskloom run"
            )
            continue
        if target.exists() and not overwrite:
            report.skipped[task.id] = f"{target} already exists; pass --overwrite to replace it"
            continue
        staging = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}."))
        try:
            write_harbor_task(task, staging, document, agent_timeout_s)
            staging.chmod(DIR_MODE)  # gold lies under tests/ and solution/: the folder is its owner's alone
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging)
        report.written.append(task.id)
    return report

"""Task files are checked task by task, and every problem names the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.tasks.files import read_task_file

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "tasks" / "field-guide-document-tasks.jsonl"


def _rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_shipped_example_reads_whole() -> None:
    assert [t.id for t in read_task_file(EXAMPLE)] == [r["id"] for r in _rows()]


def test_a_document_task_without_gold_answer_is_refused_with_line_and_field(tmp_path: Path) -> None:
    rows = _rows()
    del rows[1]["gold_answer"]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_task_file(path)
    message = str(refused.value)
    assert message.startswith(f"{path}, line 2, field gold_answer: a document task needs a gold answer (task '{rows[1]['id']}')"), message
    assert "line 1" not in message and "taskloom tasks export" in message


def test_a_json_list_names_the_line_each_task_starts_on(tmp_path: Path) -> None:
    rows = _rows()[:3]
    rows[2]["difficulty"] = "impossible"
    rows[0]["kind"] = "web"  # a web task needs a start URL
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    starts = [i + 1 for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()) if line == "  {"]
    with pytest.raises(InputError) as refused:
        read_task_file(path)
    message = str(refused.value)
    assert f"line {starts[0]}, field start_url: a web task needs a start URL" in message, message
    assert f"line {starts[2]}, field difficulty: input should be 'easy'" in message, message
    assert f"line {starts[1]}," not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id": "a"}\n{"id": ', "line 2: not valid JSON"),
        ("[1, 2]", "line 1, field (task): a task is a JSON object, got int"),
        ("\n\n", "holds no tasks"),
    ],
)
def test_broken_files_say_where(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        read_task_file(path)

"""Settings sources and precedence, and the crash-safe writes of tools/workspace.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from taskloom.tools import workspace as workspace_mod
from taskloom.tools.settings import Settings, load_settings
from taskloom.tools.workspace import append_jsonl, atomic_write_text


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No TASKLOOM_* variables from the outside, and a cwd without taskloom.toml."""
    for name in list(os.environ):
        if name.startswith("TASKLOOM_"):
            monkeypatch.delenv(name)
    home = tmp_path / "cwd"
    home.mkdir()
    monkeypatch.chdir(home)


def write_config(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("TASKLOOM_CONFIG", str(path))
    return path


# --- sources ------------------------------------------------------------------------


def default(name: str) -> object:
    return Settings.model_fields[name].default


def test_defaults_without_any_source() -> None:
    s = Settings()
    assert s.workspace == Path(".taskloom")
    assert s.embedder == "minilm"
    assert s.similarity_threshold == default("similarity_threshold")


def test_values_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TASKLOOM_WORKSPACE", str(tmp_path / "from-env"))
    monkeypatch.setenv("TASKLOOM_SIMILARITY_THRESHOLD", "0.42")
    s = Settings()
    assert s.workspace == tmp_path / "from-env"
    assert s.similarity_threshold == 0.42


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TASKLOOM_WORKSPACE", "")
    monkeypatch.setenv("TASKLOOM_EMBEDDER", "")
    s = Settings()
    assert s.workspace == Path(".taskloom") and s.embedder == "minilm"
    write_config(tmp_path, 'workspace = "  "\n', monkeypatch)
    assert Settings().workspace == Path(".taskloom"), "an empty workspace in the config file is the default too, never the current folder"


def test_values_from_toml_top_level_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, 'workspace = "/srv/taskloom"\nsimilarity_threshold = 0.33\nchunk_chars = 900\n', monkeypatch)
    s = Settings()
    assert s.workspace == Path("/srv/taskloom")
    assert s.similarity_threshold == 0.33
    assert s.chunk_chars == 900


def test_values_from_toml_taskloom_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, '[taskloom]\nembedder = "hashing"\nsimilarity_threshold = 0.55\n\n[other-tool]\nchunk_chars = 101\n', monkeypatch)
    s = Settings()
    assert s.embedder == "hashing"
    assert s.similarity_threshold == 0.55
    assert s.chunk_chars == default("chunk_chars") != 101  # the other tool's table is not read


def test_toml_ignores_unknown_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, "colour = \"blue\"\nseed = 11\n", monkeypatch)
    s = Settings()
    assert s.seed == 11
    assert not hasattr(s, "colour")


def test_taskloom_toml_in_cwd_is_read_without_taskloom_config() -> None:
    Path("taskloom.toml").write_text("similarity_threshold = 0.21\n", encoding="utf-8")
    assert Settings().similarity_threshold == 0.21


# --- precedence: explicit > env > toml > default ------------------------------------


def test_toml_beats_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, "similarity_top_k = 9\n", monkeypatch)
    assert default("similarity_top_k") != 9
    assert Settings().similarity_top_k == 9


def test_env_beats_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, "similarity_threshold = 0.1\nchunk_chars = 500\n", monkeypatch)
    monkeypatch.setenv("TASKLOOM_SIMILARITY_THRESHOLD", "0.2")
    s = Settings()
    assert s.similarity_threshold == 0.2
    assert s.chunk_chars == 500  # toml still fills what env leaves out


def test_explicit_beats_env_and_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, "similarity_threshold = 0.1\n", monkeypatch)
    monkeypatch.setenv("TASKLOOM_SIMILARITY_THRESHOLD", "0.2")
    assert Settings(similarity_threshold=0.3).similarity_threshold == 0.3


def test_load_settings_ignores_none_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TASKLOOM_WORKSPACE", str(tmp_path / "env-ws"))
    s = load_settings(workspace=None, embedder="hashing")
    assert s.workspace == tmp_path / "env-ws"
    assert s.embedder == "hashing"


# --- invalid values -----------------------------------------------------------------


def test_invalid_env_value_is_a_validation_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKLOOM_SIMILARITY_THRESHOLD", "1.5")
    with pytest.raises(ValidationError) as info:
        Settings()
    assert [e["loc"] for e in info.value.errors()] == [("similarity_threshold",)]


def test_invalid_explicit_value_is_a_validation_error() -> None:
    with pytest.raises(ValidationError) as info:
        Settings(embedder="word2vec")
    assert [e["loc"] for e in info.value.errors()] == [("embedder",)]


def test_invalid_toml_value_is_a_validation_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_config(tmp_path, 'chunk_chars = "lots"\n', monkeypatch)
    with pytest.raises(ValidationError) as info:
        Settings()
    assert [e["loc"] for e in info.value.errors()] == [("chunk_chars",)]


# --- workspace writes ---------------------------------------------------------------


def test_atomic_write_text_writes_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.txt"
    atomic_write_text(target, "first")
    atomic_write_text(target, "second ✓")
    assert target.read_text(encoding="utf-8") == "second ✓"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_atomic_write_text_keeps_old_content_when_the_rename_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "data" / "out.txt"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")

    def fail(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(workspace_mod.os, "replace", fail)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write_text(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_append_jsonl_appends_one_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "log.jsonl"
    append_jsonl(path, {"n": 1, "text": "é"})
    append_jsonl(path, [2, None])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"n": 1, "text": "é"}, [2, None]]
    assert path.read_text(encoding="utf-8").endswith("\n")

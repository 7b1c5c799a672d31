"""Every test file is collected: no folder under tests/ has a name pytest skips.

pytest's default ``norecursedirs`` includes ``build`` and ``dist``: ``tests/tools/build/`` was
never collected by ``make test`` until it was renamed ``tests/tools/dataset/``.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def test_no_folder_of_test_files_has_a_name_pytest_skips(pytestconfig: pytest.Config) -> None:
    patterns = pytestconfig.getini("norecursedirs")
    assert "build" in patterns  # pytest's default, which this check exists for
    folders = {f.parent for f in TESTS.rglob("test_*.py") if "data" not in f.relative_to(TESTS).parts[:1]}
    assert len(folders) >= 8
    skipped = sorted(str(d.relative_to(TESTS)) for d in folders for part in d.relative_to(TESTS).parts if any(fnmatch(part, p) for p in patterns))
    assert skipped == [], f"pytest never collects these folders (norecursedirs {patterns}): rename them"

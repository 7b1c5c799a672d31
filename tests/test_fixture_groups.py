"""The files of each shared-fixture group exist and use the fixture the group shares (a typo would silently split a group)."""

from __future__ import annotations

from .conftest import ROOT, SHARED_FIXTURE_GROUPS

#: The fixture each group is built around.
SHARED = {"trackers": ("trac", "roundup"), "penguins": ("penguins_graph",)}


def test_every_grouped_file_exists_and_uses_its_groups_fixture() -> None:
    assert set(SHARED_FIXTURE_GROUPS.values()) == set(SHARED)
    for file, group in SHARED_FIXTURE_GROUPS.items():
        source = (ROOT / file).read_text(encoding="utf-8")
        assert any(f"{name}: " in source or f"{name}," in source or f"{name})" in source for name in SHARED[group]), file

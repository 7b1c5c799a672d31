"""``browser_find``'s search of a snapshot: matches under their path, flags, and patterns refused before compiling."""

from __future__ import annotations

import pytest

from taskloom.tools.environment.browser_extra import MAX_REGEX_CHARS, find_in_snapshot
from taskloom.tools.errors import InputError

SNAPSHOT = """- main [ref=e1]:
  - heading "Penguins" [level=1] [ref=e2]
  - list [ref=e3]:
    - listitem [ref=e4]: Adelie
    - listitem [ref=e5]: Gentoo
"""


def test_a_match_is_shown_under_its_path_and_flags_apply() -> None:
    count, report = find_in_snapshot(SNAPSHOT, regex="/gentoo/i")
    assert count == 1 and "Path: - main [ref=e1] > - list [ref=e3]" in report and "Gentoo" in report
    assert find_in_snapshot(SNAPSHOT, regex="gentoo")[0] == 0  # no flag: case matters
    assert find_in_snapshot(SNAPSHOT, text="ADELIE")[0] == 1


def test_a_pattern_too_long_to_compile_on_the_event_loop_is_refused_saying_the_limit() -> None:
    assert find_in_snapshot(SNAPSHOT, regex="G" + "." * (MAX_REGEX_CHARS - 2))[0] == 0  # at the limit: compiled and searched
    with pytest.raises(InputError, match=f"at most {MAX_REGEX_CHARS:,}"):
        find_in_snapshot(SNAPSHOT, regex="x" * (1024 * 1024))
    with pytest.raises(InputError, match="not a valid regular expression"):
        find_in_snapshot(SNAPSHOT, regex="(")

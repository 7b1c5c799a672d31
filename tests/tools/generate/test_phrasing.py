"""Field labels in instructions: noun-phrase labels as words, others quoted as the site shows them (no browser needed)."""

from __future__ import annotations

import pytest

from taskloom.tools.generate.web.phrasing import field_noun, field_phrase, reads_as_noun


@pytest.mark.parametrize(
    "label, words",
    [
        ("Body Mass (g)", "body mass"),
        ("Flipper Length (mm)", "flipper length"),
        ("studyName", "study name"),
        ("Individual ID", "individual ID"),
        ("Date of Birth", "date of birth"),
        ("Date created", "date created"),
        ("Species", "species"),
        ("Status", "status"),
        ("ISBN", "ISBN"),
    ],
)
def test_noun_phrase_labels_stay_words(label: str, words: str) -> None:
    assert reads_as_noun(label)
    assert field_noun(label) == words == field_phrase(label)


@pytest.mark.parametrize(
    "label, shown",
    [
        ("Date Egg", "“Date Egg” value"),  # head noun first: not "date egg"
        ("Delta 13 C (o/oo)", "“Delta 13 C” value"),  # digits and one-letter words; the unit is dropped as for other labels
        ("Delta 15 N (o/oo)", "“Delta 15 N” value"),
        ("Copies", "“Copies” value"),  # plural: "What copies is listed" would not parse
        ("Closes", "“Closes” value"),  # a verb
        ("Allow null", "“Allow null” value"),  # a flag
        ("On the shelf now", "“On the shelf now” value"),  # a preposition first
        ("Packed as .zip", "“Packed as .zip” value"),  # punctuation
    ],
)
def test_other_labels_are_quoted_as_the_site_shows_them(label: str, shown: str) -> None:
    assert not reads_as_noun(label)
    assert field_noun(label) == shown
    assert f"What is the {field_noun(label)} of the record?".count("“") == 1

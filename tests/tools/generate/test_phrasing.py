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


def test_a_field_named_like_the_record_gives_its_value_after_the_noun() -> None:
    """pandas' API tables: the record noun is "method" and so is its first column; the instruction reads "the method zfill"."""
    import numpy as np

    from taskloom.tools.generate.web.find import _record_phrase
    from taskloom.tools.graph.model import Node

    def record(name: str, kind: str) -> Node:
        fields = {"Method": {"raw": name, "type": "text"}, "Kind": {"raw": kind, "type": "text"}}
        return Node(id=f"record:{name}", type="record", attrs={"fields": fields})

    population = [record("zfill", "string"), record("zip", "array"), record("wrap", "string")]
    alone = _record_phrase(population[0], ["Method"], population, np.random.default_rng(0), noun="method")
    assert f"the method {alone}" in (f"the method {w}" for w in ("zfill", "“zfill”"))
    both = _record_phrase(population[0], ["Method", "Kind"], population, np.random.default_rng(0), noun="method")
    assert both.startswith(alone + " ") and ("with kind" in both or "whose kind is" in both) and "method" not in both
    other = _record_phrase(population[0], ["Method"], population, np.random.default_rng(0), noun="function")
    assert other in (f"with method {alone}", f"whose method is {alone}")

"""The scanner baseline's reading: instructions read flat, results read from snapshots (tables and card lists), answers computed."""

from __future__ import annotations

from taskloom.harness.agents.scanner import answer_from, read_ask, result_items

TABLE = """- table [ref=e1]:
  - rowgroup [ref=e2]:
    - row [ref=e3]:
      - columnheader "Species" [ref=e4]
      - columnheader "Individual ID" [ref=e5]
      - columnheader "Delta 13 C (o/oo)" [ref=e6]
  - rowgroup [ref=e7]:
    - row [ref=e8]:
      - cell "Adelie Penguin" [ref=e9]
      - cell "N1A1" [ref=e10]
      - cell "-25.1" [ref=e11]
    - row [ref=e12]:
      - cell "Chinstrap penguin" [ref=e13]
      - cell "N2A2" [ref=e14]
      - cell "-24.2" [ref=e15]
    - row [ref=e16]:
      - cell "Chinstrap penguin" [ref=e17]
      - cell "N3A1" [ref=e18]
      - cell "-26.7" [ref=e19]
"""

CARDS = """- list [ref=e1]:
  - listitem [ref=e2]:
    - heading [level=3] [ref=e3]:
      - link "Whale Roads" [ref=e4]:
    - paragraph [ref=e5]: Morag Dunleavy · 2022 · Audiobook · Nature
  - listitem [ref=e6]:
    - heading [level=3] [ref=e7]:
      - link "Storm Watching" [ref=e8]:
    - paragraph [ref=e9]: Iain Achterberg · 2019 · Book · Nature
"""


def test_the_lowest_negative_value_of_a_named_group_in_a_table() -> None:
    ask = read_ask("What is the individual ID of the penguin with the lowest “Delta 13 C” value among the Chinstrap penguins?")
    items = [i for i in result_items(TABLE) if all(v.lower() in i.text.lower() for v in ask.values)]
    assert [i.fields[1][1] for i in items] == ["N2A2", "N3A1"]
    assert answer_from(items, ask)[0] == "N3A1"  # -26.7 is the lowest, not 24.2


def test_cards_answer_by_their_one_number_and_counts() -> None:
    items = result_items(CARDS)
    assert [i.name for i in items] == ["Whale Roads", "Storm Watching"]
    assert answer_from(items, read_ask("What is the title of the book with the highest year among the books with genre Nature?"))[0] == "Whale Roads"
    assert answer_from(items, read_ask("How many books with genre Nature are there?"))[0] == "2"


DOCS_TABLE = """- link [ref=e20]:
  - /url: array.html
  - code [ref=e21]: array
  - text: — Efficient arrays of numeric values
- table [ref=e1]:
  - rowgroup [ref=e2]:
    - row [ref=e3]:
      - columnheader "Type code" [ref=e4]
      - columnheader "C Type" [ref=e5]
      - columnheader "Python Type" [ref=e6]
  - rowgroup [ref=e7]:
    - row [ref=e8]:
      - cell "'b'" [ref=e9]
      - cell "signed char" [ref=e10]
      - cell "int" [ref=e11]
    - row [ref=e12]:
      - cell "'d'" [ref=e13]
      - cell "double" [ref=e14]
      - cell "float" [ref=e15]
"""


def test_a_quoted_field_is_asked_by_its_whole_name_and_a_link_printed_in_parts_has_its_name() -> None:
    """Python docs: "Type code" and "C Type" both hold "type"; the quoted “C Type” is the one asked. The link to the array page
    is printed as its parts (code "array", text "— Efficient …"), so its name is theirs."""
    from taskloom.harness.agents.explorer import parse_snapshot

    ask = read_ask("What is the “C Type” value of the record with “Type code” value “'d'” in the table of the page “array — Efficient arrays of numeric values”?")
    assert ask.label == "C Type" and ask.values == ["'d'", "array — Efficient arrays of numeric values"]
    kept = [i for i in result_items(DOCS_TABLE) if "'d'" in i.text]
    assert answer_from(kept, ask)[0] == "double"
    assert [e.name for e in parse_snapshot(DOCS_TABLE) if e.role == "link"] == ["array — Efficient arrays of numeric values"]

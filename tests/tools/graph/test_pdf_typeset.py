"""Tables and text typeset here with LaTeX (``tests/data/typeset/*.tex``, compiled by pdflatex for each run),
read back cell by cell: the truth is the source.

``tables.tex`` sets five tables the ways papers and manuals do: booktabs (three rules), a vertical rule
under a one-rule header, spanning headers over \\cmidrule with group labels on rows of their own, group
labels beside a group's first row between \\midrule, and space alone. ``t1fonts.tex`` sets text in TeX's T1
encoding with no Type 1 fonts installed, so pdflatex embeds Type 3 bitmaps whose codes carry no Unicode
map (ligatures at 0x1B–0x1F, dashes at 0x15–0x16, quotes at 0x10–0x11), as dvips-era vignettes do.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from taskloom.tools.graph.ingest.pipeline import build_document_graph
from taskloom.tools.graph.model import KnowledgeGraph, Node
from taskloom.tools.settings import Settings

SOURCES = Path(__file__).resolve().parents[2] / "data" / "typeset"


def _compile(name: str, out: Path) -> Path:
    assert shutil.which("pdflatex"), "pdflatex is missing: `make setup` installs texlive-latex-recommended"
    shutil.copy(SOURCES / f"{name}.tex", out / f"{name}.tex")
    for _ in range(2):  # the second run resolves \ref
        subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"], cwd=out, check=True, capture_output=True, timeout=600)
    return out / f"{name}.pdf"


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    out = tmp_path_factory.mktemp("typeset")
    settings = Settings(workspace=tmp_path_factory.mktemp("ws"), embedder="hashing")
    return {name: build_document_graph(_compile(name, out), settings) for name in ("tables", "t1fonts")}


def _table(kg: KnowledgeGraph, number: str) -> Node:
    found = [t for t in kg.nodes("table") if t.attrs.get("number") == number]
    assert len(found) == 1, f"{len(found)} tables numbered {number}"
    return found[0]


def _grid(kg: KnowledgeGraph, number: str) -> tuple[list[str | None], list[list[str]]]:
    """(column headers of columns 1.., body rows as [row header, values…]) of a numbered table."""
    table = _table(kg, number)
    cells = [c for c in kg.nodes("table_cell") if c.id.startswith(f"{table.id}/") and not c.attrs.get("header")]
    width = 1 + max(c.attrs["col"] for c in cells)
    heads = {c.attrs["col"]: c.attrs.get("column_header") for c in cells}
    rows: dict[int, dict[int, Node]] = {}
    for c in cells:
        rows.setdefault(c.attrs["row"], {})[c.attrs["col"]] = c
    body = []
    for r in sorted(rows):
        if not any(rows[r][col].text for col in range(1, width) if col in rows[r]):
            continue  # a group label's own row
        label = next((c.attrs.get("row_header") for col, c in rows[r].items() if col > 0 and c.attrs.get("row_header")), "")
        body.append([str(label)] + [rows[r][col].text if col in rows[r] else "" for col in range(1, width)])
    return [heads.get(col) for col in range(1, width)], body


def test_booktabs(graphs: dict[str, KnowledgeGraph]) -> None:
    assert _grid(graphs["tables"], "1") == (
        ["Rain (mm)", "Wind (km/h)", "Days"],
        [["Aberdeen", "812.4", "18.2", "151"], ["Brighton", "745.1", "21.7", "132"], ["Cardiff", "1151.9", "16.4", "168"], ["Dundee", "699.3", "15.9", "140"]],
    )


def test_a_vertical_rule_and_a_one_rule_header(graphs: dict[str, KnowledgeGraph]) -> None:
    assert _grid(graphs["tables"], "2") == (
        ["20–39", "40–59", "60+"],
        [["Cyclists", "412", "388", "97"], ["Runners", "530", "264", "41"], ["Swimmers", "205", "311", "182"]],
    )


def test_spanning_headers_and_group_labels_on_rows_of_their_own(graphs: dict[str, KnowledgeGraph]) -> None:
    heads, rows = _grid(graphs["tables"], "3")
    assert heads == ["Intercept Bias", "Intercept MAE", "Intercept RMSE", "Slope Bias", "Slope MAE", "Slope RMSE"]
    assert rows == [
        ["Kaplan, n = 100", "0.0031", "0.0712", "0.1044", "-0.0015", "0.0654", "0.0977"],
        ["Kaplan, n = 400", "0.0012", "0.0355", "0.0521", "0.0008", "0.0331", "0.0490"],
        ["Meier, n = 100", "-0.0047", "0.0698", "0.1019", "0.0026", "0.0671", "0.0988"],
        ["Meier, n = 400", "-0.0019", "0.0349", "0.0517", "0.0011", "0.0327", "0.0482"],
    ]


def test_group_labels_beside_a_groups_first_row(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["tables"]
    table = _table(kg, "4")
    purpose = {c.attrs["row_header"]: (c.text, c.attrs.get("group")) for c in kg.nodes("table_cell") if c.id.startswith(f"{table.id}/") and c.attrs.get("column_header") == "Purpose"}
    assert purpose == {
        "fopen()": ("opens a file", "files"), "fclose()": ("closes a file", "files"), "fseek()": ("moves within a file", "files"),
        "malloc()": ("reserves memory", "memory"), "free()": ("returns memory", "memory"),
        "strlen()": ("measures a string", "strings"), "strcpy()": ("copies a string", "strings"),
    }  # fmt: skip


def test_space_alone(graphs: dict[str, KnowledgeGraph]) -> None:
    assert _grid(graphs["tables"], "5") == (
        ["Moons", "Day (h)"],
        [["Mercury", "0", "4222.6"], ["Venus", "0", "2802.0"], ["Earth", "1", "24.0"], ["Mars", "2", "24.7"], ["Jupiter", "95", "9.9"]],
    )


def test_a_sideways_table(graphs: dict[str, KnowledgeGraph]) -> None:
    assert _grid(graphs["tables"], "6") == (
        ["Length (km)", "Basin (km2)", "Mouth"],
        [["Danube", "2850", "801463", "Black Sea"], ["Rhine", "1233", "185000", "North Sea"], ["Elbe", "1094", "148268", "North Sea"], ["Loire", "1006", "117054", "Atlantic"]],
    )


def test_a_long_table_over_pages_with_no_rules_after_its_header(graphs: dict[str, KnowledgeGraph]) -> None:
    heads, rows = _grid(graphs["tables"], "7")
    assert heads == ["Square", "Rest"]
    assert rows == [[str(n), str(n * n), f"{(n * 37) % 101 / 10:.1f}"] for n in range(1, 121)]


def test_a_header_over_some_columns_with_a_rule_under_it(graphs: dict[str, KnowledgeGraph]) -> None:
    """"Judge" stands off the table's middle, over six of nine columns; the ``cmidrule`` under it says which."""
    heads, rows = _grid(graphs["tables"], "8")
    assert heads == ["Contact", "Bottle"] + [f"Judge {n}" for n in range(1, 7)]
    assert rows[0] == ["cold", "no", "1", "2", "1", "2", "3", "2", "3"]
    assert rows[3] == ["warm", "yes", "4", "5", "4", "5", "5", "4", "5"]


def test_a_caption_above_rows_with_no_rules_under_a_grid_takes_its_own_rows(graphs: dict[str, KnowledgeGraph]) -> None:
    """Table 10's caption stands right under Table 9's grid and above its own loose rows."""
    assert _grid(graphs["tables"], "9") == (["Score"], [["Alpha", "0.125"], ["Beta", "0.250"], ["Gamma", "0.375"]])
    assert _grid(graphs["tables"], "10") == (["Score"], [["Delta", "11.5"], ["Epsilon", "22.25"], ["Zeta", "33.125"]])


def test_two_halves_side_by_side_are_one_table_of_the_left_halfs_columns(graphs: dict[str, KnowledgeGraph]) -> None:
    """Table 11 repeats "Unit | Key | Factor" to set seven rows in two halves: "metre" is no column of "gram"'s row."""
    heads, rows = _grid(graphs["tables"], "11")
    assert heads == ["Key", "Factor"]
    assert rows == [
        ["gram", "g", "1"], ["kilogram", "kg", "1000"], ["tonne", "t", "1000000"], ["ounce", "oz", "28.35"],
        ["metre", "m", "1"], ["kilometre", "km", "1000"], ["centimetre", "cm", "0.01"],
    ]  # fmt: skip


def test_type3_fonts_in_t1_read_as_the_source_says(graphs: dict[str, KnowledgeGraph]) -> None:
    kg = graphs["t1fonts"]
    paragraphs = [n.text for n in kg.nodes("paragraph")]
    assert "The difference is efficient at first; its influence flows from the office – see “the figures” — and the waffle." in paragraphs
    assert _grid(kg, "1") == (["20–39", "40–59", "60+"], [["Official", "412", "388", "97"], ["Affiliate", "530", "264", "41"]])
    assert not [n.text for n in kg.nodes() if n.text and any(ord(ch) < 0x20 and ch not in "\n\t" for ch in n.text)]

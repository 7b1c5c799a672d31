"""Figures are closed rooms: a plot's tick labels, axis titles and legends belong to it and never become prose.

Pages of Debian's vignettes (``tests/data/fetch-pdfs.sh``), each laid out on its own as ingest lays it out:
uncaptioned R plots in survival.pdf (a step curve with its legend, four panels of smooths), a caption under
two rows of panels in clm_article.pdf, a plot whose clipped strokes run on past its caption in sandwich-CL.pdf,
a plot set at a larger size than the text in lmer.pdf, 2 × 2 panels with bold titles whose strokes run past
their frames in paper2JSS.pdf (r-cran-fitdistrplus); ruled tables and framed code stay what they are.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from taskloom.tools.graph.ingest.pdf_regions import Region
from taskloom.tools.graph.ingest.pdf_text import TextBlock

Layout = Callable[[str, int], tuple[list[TextBlock], list[Region]]]

def _prose(blocks: list[TextBlock]) -> list[str]:
    return [" ".join(b.text.split()) for b in blocks if b.kind not in ("figure", "table", "caption")]


def test_an_uncaptioned_step_plot_takes_its_ticks_titles_and_legend_and_leaves_the_code_above_it(laid_out: Layout) -> None:
    """survival p. 23: Kaplan-Meier steps (level and upright strokes only) under the line of code that drew the legend."""
    blocks, regions = laid_out("survival.pdf", 23)
    figures = [r for r in regions if r.kind == "figure"]
    assert len(figures) == 1 and figures[0].caption is None
    for label in ("0.00 0.05 0.10", "Fraction with PCM", "Years post diagnosis", "Males, PCM, incorrect curve"):
        assert label in figures[0].text
    prose = _prose(blocks)
    assert any(p.startswith("col=1, lwd=2") for p in prose) and "col=1" not in figures[0].text  # code is never a label
    assert not [p for p in prose if p in ("Fraction with PCM", "Years post diagnosis") or p.startswith("0 5 10 15")]


def test_four_uncaptioned_panels_leave_no_label_as_prose(laid_out: Layout) -> None:
    """survival p. 73: four panels of smoothed coefficients, each with its tick labels set one number a line."""
    blocks, regions = laid_out("survival.pdf", 73)
    assert sum(r.kind == "figure" for r in regions) == 4
    assert not [p for p in _prose(blocks) if p.startswith(("Beta(t)", "1 5 10 50", "−3 −1 0")) or p == "Time"]


def test_a_caption_under_two_rows_of_panels_holds_both_rows(laid_out: Layout) -> None:
    """clm_article p. 30: Figure 6 is 2 × 3 slices; before, the top row's labels were six paragraphs."""
    blocks, regions = laid_out("clm_article.pdf", 30)
    (figure,) = [r for r in regions if r.kind == "figure"]
    assert figure.caption is not None and figure.caption.text.startswith("Figure 6")
    assert "1|2" in figure.text and "4|5" in figure.text and figure.text.count("Relative log−likelihood") == 6
    assert not [p for p in _prose(blocks) if "log−likelihood" in p and len(p.split()) < 4]


def test_strokes_running_past_a_caption_do_not_hold_the_caption(laid_out: Layout) -> None:
    """sandwich-CL p. 24: a steep line of Figure 2's middle panel, clipped on the page, extends past the caption in the drawing."""
    blocks, regions = laid_out("sandwich-CL.pdf", 24)
    captioned = {r.caption.text.split(":")[0]: r for r in regions if r.kind == "figure" and r.caption is not None}
    second = captioned["Figure 2"]
    assert second.bbox[3] <= second.caption.bbox[1] + 1 and "binomial(logit)" in second.text  # type: ignore[union-attr]
    assert [r for r in regions if r.kind == "figure" and r.caption is None] == []
    assert not [p for p in _prose(blocks) if p.startswith("0 0.1 0.2") or p in ("CL−0 PL PC", "BS standard basic")]


def test_tick_labels_set_larger_than_the_text_still_label_their_plot(laid_out: Layout) -> None:
    """lmer p. 48: a plot scaled up so its tick labels are 13 pt beside 10.9 pt text."""
    blocks, regions = laid_out("lmer.pdf", 48)
    (figure,) = [r for r in regions if r.kind == "figure"]
    assert "−2 −1 0 1 2" in figure.text and "−0.5" in figure.text
    assert not [p for p in _prose(blocks) if p in ("0.5", "−0.5", "−1.0", "−2 −1 0 1 2")]


def test_bold_plot_titles_over_a_grid_of_clipped_panels_are_the_figures_not_sections(laid_out: Layout) -> None:
    """paper2JSS p. 5: Figure 3 is 2 × 2 panels titled "Histogram and theoretical densities", "Q−Q plot", …; a Q-Q line
    clipped at its frame runs far above it in the drawing. Before, the panels were three figures and the titles headings."""
    blocks, regions = laid_out("paper2JSS.pdf", 5)
    (figure,) = [r for r in regions if r.kind == "figure"]
    assert figure.caption is not None and figure.caption.text.startswith("Figure 3")
    for title in ("Histogram and theoretical densities", "Q−Q plot", "Empirical and theoretical CDFs", "P−P plot"):
        assert title in figure.text
    assert not [b.text for b in blocks if b.kind == "heading"]
    blocks, regions = laid_out("paper2JSS.pdf", 10)  # one plot set larger than the text: its title, ticks "1e−01 …" and axis title
    (figure,) = [r for r in regions if r.kind == "figure"]
    assert "Fitting a lognormal distribution" in figure.text and "1e−01 1e+01" in figure.text and "data in log scale" in figure.text
    assert not [b.text for b in blocks if b.kind == "heading"]


@pytest.mark.parametrize(("pdf", "page"), [("countreg.pdf", 2), ("crq.pdf", 16), ("xtableGallery.pdf", 3), ("validate.pdf", 6)])
def test_ruled_tables_and_framed_code_are_no_plots(laid_out: Layout, pdf: str, page: int) -> None:
    """A table's rules and a code frame are level and upright at a few places: no uncaptioned figure is made of them."""
    blocks, regions = laid_out(pdf, page)
    assert not [r for r in regions if r.kind == "figure" and r.caption is None]
    assert _prose(blocks)

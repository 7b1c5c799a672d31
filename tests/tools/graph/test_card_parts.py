"""Unlabelled card parts are named only when every detail page the crawl read agrees on one label."""

from __future__ import annotations

from taskloom.tools.graph.web.capture import PageCapture
from taskloom.tools.graph.web.parts import PART, learn_part_labels, named_columns, named_fields
from taskloom.tools.graph.web.records import RecordBlock, RecordRow


def _page(url: str, *blocks: RecordBlock) -> PageCapture:
    return PageCapture(url=url, final_url=url, title="", text="", depth=0, order=0, dom_hash=url, elements=[], records=list(blocks))


def _detail(**fields: str) -> RecordBlock:
    return RecordBlock(kind="key_value", rows=[RecordRow(fields=fields)])


def _cards(*parts: tuple[str, str, str]) -> RecordBlock:
    rows = [RecordRow(fields={"title": t, PART + "/span1": a, PART + "/span2": b}, url=f"http://h/{t}") for t, a, b in parts]
    return RecordBlock(kind="cards", selector="#results", columns=["title", PART + "/span1", PART + "/span2"], rows=rows)


def test_a_part_is_named_when_every_detail_page_gives_the_same_label() -> None:
    cards = _cards(("a", "2014", "Book"), ("b", "2019", "Book"), ("c", "2001", "Audiobook"))
    pages = [_page("http://h/s", cards), _page("http://h/a", _detail(Year="2014", Format="Book")), _page("http://h/b", _detail(Year="2019", Format="Book"))]
    labels = learn_part_labels(pages, str)
    assert labels == {"#results" + PART + "/span1": "Year", "#results" + PART + "/span2": "Format"}
    # The third card's detail page was never read: its parts are named all the same, by their place.
    assert named_fields(cards, cards.rows[2].fields, labels) == {"title": "c", "Year": "2001", "Format": "Audiobook"}
    assert named_columns(cards, labels) == ["title", "Year", "Format"]


def test_a_part_two_labels_fit_or_one_page_witnesses_stays_unnamed() -> None:
    cards = _cards(("a", "3", "x"), ("b", "2", "y"))
    both = [_page("http://h/s", cards), _page("http://h/a", _detail(Copies="3", Shelves="3")), _page("http://h/b", _detail(Copies="2", Shelves="2"))]
    assert learn_part_labels(both, str) == {}  # Copies and Shelves both fit every card: no name
    one = [_page("http://h/s", cards), _page("http://h/a", _detail(Copies="3"))]
    assert learn_part_labels(one, str) == {}  # one witness proves nothing
    disagree = [_page("http://h/s", cards), _page("http://h/a", _detail(Copies="3")), _page("http://h/b", _detail(Copies="5"))]
    assert learn_part_labels(disagree, str) == {}
    assert named_fields(cards, cards.rows[0].fields, {}) == {"title": "a"}  # unnamed parts are left out

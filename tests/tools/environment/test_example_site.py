"""The example site (examples/site, "Harbourside Library") really works in a browser.

The site is served by ``http.server`` on 127.0.0.1 and driven with Playwright's Chromium: search,
filters, pagination, tabs, the loan-request modal with its validation and toast, the dropdown menu,
breadcrumbs, and that no request ever leaves 127.0.0.1 (the footer's external links are never fetched).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from taskloom.tools.environment.site import serve_static

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

SITE = Path(__file__).resolve().parents[3] / "examples" / "site"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGES = ["index.html", "search.html", "search.html?q=sea", "book.html?id=b01", "genres.html", "about.html"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")



@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve_static(SITE) as site:
        yield site.url + "/"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def requested_urls() -> list[str]:
    return []


@pytest.fixture
def page(browser, requested_urls: list[str]) -> Iterator[object]:
    """A fresh context (empty localStorage) whose every request is recorded and must stay on 127.0.0.1."""
    context = browser.new_context()
    context.set_default_timeout(5000)
    context.on("request", lambda request: requested_urls.append(request.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    foreign = [url for url in requested_urls if urlsplit(url).hostname != "127.0.0.1"]
    assert not foreign, f"requests left 127.0.0.1: {foreign}"
    assert not errors, f"JavaScript errors: {errors}"


def _open(page, url: str) -> None:
    """Go to a page and wait until its script has rendered (search and book pages set body[data-ready])."""
    page.goto(url)
    if "search.html" in url or "book.html" in url:
        expect(page.locator("body")).to_have_attribute("data-ready", "true")


def _result_ids(page) -> list[str]:
    return page.locator("#results li.result").evaluate_all("rows => rows.map(r => r.dataset.bookId)")


def _books() -> list[dict]:
    return json.loads((SITE / "data" / "books.json").read_text())


# ---------------------------------------------------------------- data


def test_catalogue_data_is_complete() -> None:
    books = _books()
    assert len(books) == 36
    assert len({b["id"] for b in books}) == 36
    assert {b["genre"] for b in books} == {"Mystery", "Science Fiction", "History", "Nature", "Poetry"}
    assert {b["format"] for b in books} == {"Book", "E-book", "Audiobook"}
    for b in books:
        assert {"id", "title", "author", "year", "genre", "format", "available", "copies", "shelf", "summary", "isbn"} <= b.keys()
        assert b["summary"].count(". ") + b["summary"].count("? ") == 1, b["id"]  # two sentences
        assert re.fullmatch(r"978-\d-\d{4}-\d{4}-\d", b["isbn"])


def test_site_is_self_contained() -> None:
    """No file loads anything from another origin; the only absolute URLs are the two footer links."""
    for path in SITE.rglob("*"):
        if path.suffix not in {".html", ".css", ".js"}:
            continue
        text = path.read_text()
        assert '="//' not in text, path.name  # no protocol-relative URLs
        urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
        assert urls <= {"http://outside.invalid/partner.html", "https://example.org/"}, (path.name, urls)


# ---------------------------------------------------------------- search, filters, pagination


def test_search_sea_counts_and_links(page, base_url: str) -> None:
    page.goto(base_url + "index.html")
    page.get_by_role("searchbox", name="Search the catalogue").fill("sea")
    page.locator("#search-submit").click()
    expect(page).to_have_url(re.compile(r"search\.html\?q=sea$"))
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#result-count")).to_have_text("12 results for \u201csea\u201d")
    assert _result_ids(page) == ["b02", "b05", "b08", "b11", "b14", "b17", "b21", "b23"]
    first = page.locator("#results li.result").first
    expect(first.get_by_role("link", name="Salt on the Stairwell")).to_have_attribute("href", "book.html?id=b02")
    expect(first).to_contain_text("Tomasz Wren")
    expect(first).to_contain_text("2019")
    expect(first.locator(".badge")).to_have_text("Available")
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    expect(crumbs.get_by_role("link", name="Home")).to_have_attribute("href", "index.html")
    expect(crumbs.locator('[aria-current="page"]')).to_have_text("Search")


def test_filters_narrow_results(page, base_url: str) -> None:
    _open(page, base_url + "search.html?q=sea")
    page.get_by_label("Genre").select_option("nature")
    expect(page).to_have_url(re.compile(r"search\.html\?q=sea&genre=nature$"))
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#result-count")).to_have_text("3 results for \u201csea\u201d in Nature")
    assert _result_ids(page) == ["b23", "b25", "b27"]

    page.locator("#filter-available").check()
    expect(page).to_have_url(re.compile(r"search\.html\?q=sea&genre=nature&available=1$"))
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#result-count")).to_have_text("2 results for \u201csea\u201d in Nature, available now")
    assert _result_ids(page) == ["b23", "b27"]
    expect(page.locator("#filter-available")).to_be_checked()
    expect(page.locator("#pagination")).to_be_hidden()

    page.get_by_role("radio", name="Audiobook").check()
    expect(page).to_have_url(re.compile(r"format=Audiobook"))
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#result-count")).to_contain_text("0 results")
    expect(page.locator("#no-results")).to_be_visible()


def test_pagination_shows_other_rows(page, base_url: str) -> None:
    _open(page, base_url + "search.html?q=sea")
    pager = page.get_by_role("navigation", name="Pagination")
    expect(pager.locator('[aria-current="page"]')).to_have_text("1")
    page_one = _result_ids(page)
    pager.get_by_role("link", name="Next").click()
    expect(page).to_have_url(re.compile(r"search\.html\?q=sea&page=2$"))
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    page_two = _result_ids(page)
    assert page_two == ["b25", "b27", "b33", "b36"]
    assert not set(page_one) & set(page_two)
    expect(pager.locator('[aria-current="page"]')).to_have_text("2")
    expect(page.locator("#page-next")).to_have_attribute("aria-disabled", "true")
    expect(page.locator("#results")).to_have_attribute("start", "9")

    _open(page, base_url + "search.html")
    expect(page.locator("#result-count")).to_have_text("36 results")
    expect(pager.get_by_role("link")).to_have_text(["1", "2", "3", "4", "5", "Next"])  # "Previous" is disabled on page 1
    expect(page.locator("#page-prev")).to_have_attribute("aria-disabled", "true")
    pager.get_by_role("link", name="3", exact=True).click()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    assert _result_ids(page) == [f"b{n:02d}" for n in range(17, 25)]
    expect(page.locator("#page-prev")).to_have_attribute("href", "search.html?page=2")


# ---------------------------------------------------------------- book page: tabs, modal, toast


def test_book_page_tabs_and_breadcrumbs(page, base_url: str) -> None:
    _open(page, base_url + "book.html?id=b01")
    expect(page.get_by_role("heading", level=1)).to_have_text("The Lantern Keeper's Secret")
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    expect(crumbs.get_by_role("link")).to_have_text(["Home", "Mystery"])
    expect(crumbs.get_by_role("link", name="Mystery")).to_have_attribute("href", "search.html?genre=mystery")
    expect(crumbs.locator('[aria-current="page"]')).to_have_text("The Lantern Keeper's Secret")
    expect(page.locator("#meta-isbn")).to_have_text("978-1-9127-0001-1")

    panels = {name: page.locator(f"#panel-{name.lower()}") for name in ("Summary", "Details", "Reviews")}
    expect(panels["Summary"]).to_be_visible()
    expect(page.get_by_role("tabpanel")).to_have_count(1)
    for name in ("Details", "Reviews", "Summary"):
        tab = page.get_by_role("tab", name=name)
        tab.click()
        expect(tab).to_have_attribute("aria-selected", "true")
        for other, panel in panels.items():
            if other == name:
                expect(panel).to_be_visible()
            else:
                expect(panel).to_be_hidden()
        expect(page.get_by_role("tabpanel")).to_have_count(1)
    page.get_by_role("tab", name="Reviews").click()
    expect(panels["Reviews"]).to_contain_text("Joan P.")
    expect(page.locator("#related").get_by_role("link")).to_have_count(3)


def test_loan_modal_validates_then_confirms_with_toast(page, base_url: str) -> None:
    page.clock.install()  # page timers under test control: the toast's lifetime is checked without waiting
    _open(page, base_url + "book.html?id=b23")
    dialog = page.get_by_role("dialog", name="Request a loan")
    expect(dialog).to_be_hidden()
    page.locator("#request-loan").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_have_attribute("aria-modal", "true")

    dialog.get_by_label("Your name").fill("Robin Quayle")
    dialog.get_by_label("Library card number").fill("1234")
    dialog.get_by_role("button", name="Submit request").click()
    alert = dialog.get_by_role("alert")
    expect(alert).to_have_text("Library card number must be exactly 8 digits.")
    expect(dialog).to_be_visible()
    expect(page.locator("#loan-card")).to_have_attribute("aria-invalid", "true")

    dialog.get_by_label("Library card number").fill("20481234")
    dialog.get_by_label("Pickup branch").select_option("Northgate")
    dialog.get_by_role("button", name="Submit request").click()
    expect(dialog).to_be_hidden()
    toast = page.get_by_role("status")
    expect(toast).to_have_text("Loan requested: Seabirds of the Western Cliffs \u2014 pick up at Northgate")
    expect(page.locator("#book-status")).to_have_text("Requested")
    expect(page.locator("#request-loan")).to_be_disabled()

    page.clock.run_for(10_500)  # the toast stays up for at least 10 s ...
    expect(toast).to_be_visible()
    page.clock.run_for(2_000)  # ... and goes away after 12 s
    expect(page.locator("#toast")).to_be_hidden()

    page.reload()  # the request is remembered in localStorage
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#book-status")).to_have_text("Requested")
    expect(page.locator("#loan-status")).to_have_text("Pick up at Northgate within 7 days.")


def test_loan_modal_cancel_and_required_name(page, base_url: str) -> None:
    _open(page, base_url + "book.html?id=b03")
    page.locator("#request-loan").click()
    dialog = page.locator("#loan-dialog")
    page.locator("#loan-card").fill("12345678")
    page.locator("#loan-submit").click()
    expect(dialog.get_by_role("alert")).to_have_text("Please enter your name.")
    expect(dialog).to_be_visible()
    page.locator("#loan-cancel").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#toast")).to_be_hidden()
    expect(page.locator("#book-status")).to_have_text("On loan")
    expect(page.locator("#request-loan")).to_be_focused()


# ---------------------------------------------------------------- menu, static pages, network


def test_browse_menu_opens(page, base_url: str) -> None:
    page.goto(base_url + "index.html")
    button = page.get_by_role("button", name="Browse")
    expect(button).to_have_attribute("aria-haspopup", "menu")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("menu")).to_be_hidden()
    button.click()
    expect(button).to_have_attribute("aria-expanded", "true")
    menu = page.get_by_role("menu")
    expect(menu).to_be_visible()
    items = menu.get_by_role("menuitem")
    expect(items).to_have_text(["All books", "Available now", "Mystery", "Science Fiction", "History", "Nature", "Poetry"])
    for i in range(7):
        expect(items.nth(i)).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    button.click()
    menu.get_by_role("menuitem", name="Poetry").click()
    expect(page).to_have_url(re.compile(r"search\.html\?genre=poetry$"))
    expect(page.locator("#result-count")).to_have_text("7 results in Poetry")


def test_static_pages(page, base_url: str) -> None:
    page.goto(base_url + "index.html")
    expect(page.locator("article.book-card")).to_have_count(4)
    expect(page.locator("#footer-partner")).to_have_attribute("href", "http://outside.invalid/partner.html")
    expect(page.locator("#footer-example")).to_have_attribute("href", "https://example.org/")

    page.goto(base_url + "genres.html")
    expect(page.get_by_role("main").get_by_role("heading", level=2)).to_have_count(5)
    expect(page.locator("#genre-link-science-fiction")).to_have_attribute("href", "search.html?genre=science-fiction")

    page.goto(base_url + "about.html")
    table = page.get_by_role("table", name="Opening hours at Harbourside Central")
    expect(table.get_by_role("rowheader")).to_have_count(7)
    expect(table.get_by_role("columnheader")).to_have_text(["Day", "Opens", "Closes"])
    expect(table.get_by_role("row", name="Wednesday")).to_contain_text("20:00")
    question = page.get_by_role("button", name="Where do I find my library card number?")
    expect(question).to_have_attribute("aria-expanded", "false")
    question.click()
    expect(page.locator("#faq-panel-2")).to_contain_text("8-digit number")


def test_interactive_elements_have_unique_ids(page, base_url: str) -> None:
    for path in PAGES:
        _open(page, base_url + path)
        report = page.evaluate(
            """() => {
                const ids = [...document.querySelectorAll('[id]')].map(e => e.id);
                const dupes = ids.filter((id, i) => ids.indexOf(id) !== i);
                const bare = [...document.querySelectorAll('a, button, input, select, textarea, [role=tab], [role=menuitem]')]
                    .filter(e => !e.id && !e.dataset.testid).map(e => e.outerHTML.slice(0, 80));
                return {dupes, bare};
            }"""
        )
        assert report == {"dupes": [], "bare": []}, path


def test_browsing_never_leaves_localhost(page, base_url: str, requested_urls: list[str]) -> None:
    for path in PAGES + ["book.html?id=b36", "book.html?id=nope", "search.html?genre=history&format=E-book&available=1"]:
        _open(page, base_url + path)
        page.get_by_role("button", name="Browse").click()
        page.locator("#footer-partner").hover()
        page.locator("#footer-example").hover()
    _open(page, base_url + "book.html?id=nope")
    expect(page.get_by_role("heading", name="Book not found")).to_be_visible()
    hosts = {urlsplit(url).hostname for url in requested_urls}
    assert hosts == {"127.0.0.1"}
    assert any(url.endswith("/data/books.json") for url in requested_urls)
    assert not any("outside.invalid" in url or "example.org" in url for url in requested_urls)

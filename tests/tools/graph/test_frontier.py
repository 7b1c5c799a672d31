"""The crawl frontier without a browser: template caps, views of a listing, a listing's pages, determinism."""

from __future__ import annotations

from taskloom.tools.graph.web.frontier import Frontier

BASE = "http://site.test"


def _drain(f: Frontier, links: dict[str, list[str]], batch: int = 8, kept: set[str] | None = None) -> list[str]:
    """Run the frontier as the crawl does: pick a batch, 'load' it (every URL kept unless ``kept`` says otherwise), add its links in order."""
    order: list[str] = []
    while picked := f.next_batch(batch):
        for e in picked:
            ok = kept is None or e.url in kept
            f.done(e.url, kept=ok)
            order.append(e.url)
            if ok:
                for link in links.get(e.url, []):
                    f.add(link, e.depth + 1, parent=e.url)
    return order


def test_detail_pages_are_capped_per_template_and_the_rest_reported() -> None:
    items = [f"{BASE}/item/{i:03d}" for i in range(40)]
    links = {BASE + "/": items + [BASE + "/about", BASE + "/help"]}
    f = Frontier(BASE + "/", max_pages=30, max_depth=3, template_cap=5)
    f.add(BASE + "/", 0)
    order = _drain(f, links)
    assert order[0] == BASE + "/"
    assert sum(u.startswith(BASE + "/item/") for u in order) == 5
    assert BASE + "/about" in order and BASE + "/help" in order
    left = f.leftovers()
    assert len(left) == 35 and {s.reason for s in left.values()} == {"template_cap"}
    assert "/item/{id}" in left[items[-1]].detail


def test_unseen_templates_come_before_more_pages_of_a_seen_one() -> None:
    links = {BASE + "/": [f"{BASE}/item/{i}" for i in range(1, 7)] + [BASE + "/dialogs.html", BASE + "/tabs.html"]}
    f = Frontier(BASE + "/", max_pages=4, max_depth=3, template_cap=5)
    f.add(BASE + "/", 0)
    order = _drain(f, links, batch=3)
    # one item page, then the two pages of templates not seen yet, although the items were linked first
    assert order == [BASE + "/", BASE + "/item/1", BASE + "/dialogs.html", BASE + "/tabs.html"]
    left = f.leftovers()
    assert all(left[f"{BASE}/item/{i}"].reason == "budget" for i in range(2, 7))


def test_sort_and_format_variants_are_views_crawled_last_and_at_most_view_cap() -> None:
    listing = BASE + "/books/"
    views = [f"{listing}?sort={k}" for k in ("title", "-title", "year", "-year")] + [f"{listing}?format=csv", f"{listing}?export=json"]
    links = {BASE + "/": [listing], listing: views + [BASE + "/about"]}
    # a budget that the plain pages and view_cap views fill: nothing else is loaded
    f = Frontier(BASE + "/", max_pages=5, max_depth=3, view_cap=2)
    f.add(BASE + "/", 0)
    order = _drain(f, links)
    crawled_views = [u for u in order if u in views]
    assert crawled_views == views[:2] and order[-2:] == crawled_views  # after every plain page; both directions of one field
    left = f.leftovers()
    assert {u for u, s in left.items() if s.reason == "view_variant"} == set(views[2:])
    # budget to spare goes to the other sort orders, never to format or export views
    f = Frontier(BASE + "/", max_pages=50, max_depth=3, view_cap=2)
    f.add(BASE + "/", 0)
    order = _drain(f, links)
    assert [u for u in order if u in views] == views[:4] and order[-4:] == views[:4]
    assert {u for u, s in f.leftovers().items() if s.reason == "view_variant"} == set(views[4:])


def test_sort_views_pair_directions_first_pages_first_biggest_listing_first() -> None:
    big, small = BASE + "/rows/", BASE + "/tags/"
    # the default order links ascending sorts only; a sorted page links the other direction and its own next page
    links: dict[str, list[str]] = {BASE + "/": [small, big], big: [f"{big}?page=2", f"{big}?page=3", *(f"{big}?o={n}" for n in (1, 2, 3))], small: [f"{small}?o=1"]}
    for n in (1, 2, 3):
        links[f"{big}?o={n}"] = [f"{big}?o={n}&page=2", f"{big}?o=-{n}"]
    f = Frontier(BASE + "/", max_pages=10, max_depth=3, view_cap=1)
    f.add(BASE + "/", 0)
    order = _drain(f, links, batch=1)
    views = [u for u in order if "o=" in u]
    assert views[:2] == [f"{big}?o=1", f"{small}?o=1"]  # view_cap per listing, the bigger listing first
    assert views[2:] == [f"{big}?o=-1", f"{big}?o=2", f"{big}?o=-2"]  # spare budget: the other direction, then a new field, no later pages


def test_a_listing_is_paged_to_its_own_cap_without_adding_depth() -> None:
    listing = BASE + "/rows/"
    pages = [listing] + [f"{listing}?page={n}" for n in range(2, 16)]
    links = {BASE + "/": [listing]}
    for here, nxt in zip(pages, pages[1:]):  # each page links only to the next one
        links[here] = [nxt]
    f = Frontier(BASE + "/", max_pages=100, max_depth=2, template_cap=2, listing_cap=12)
    f.add(BASE + "/", 0)
    order = _drain(f, links)
    assert [u for u in order if u.startswith(listing)] == pages[:13]  # the first page + 12 paged ones, despite template_cap 2 and depth 2
    assert f.leftovers()[pages[13]].reason == "template_cap"


def test_links_beyond_max_depth_are_reported_as_depth() -> None:
    links = {BASE + "/": [BASE + "/a"], BASE + "/a": [BASE + "/b"], BASE + "/b": [BASE + "/c"]}
    f = Frontier(BASE + "/", max_pages=10, max_depth=2)
    f.add(BASE + "/", 0)
    assert _drain(f, links) == [BASE + "/", BASE + "/a", BASE + "/b"]
    assert f.leftovers() == {BASE + "/c": f.leftovers()[BASE + "/c"]} and f.leftovers()[BASE + "/c"].reason == "depth"


def test_failed_loads_do_not_use_budget_or_caps() -> None:
    items = [f"{BASE}/item/{i}" for i in range(10)]
    f = Frontier(BASE + "/", max_pages=10, max_depth=3, template_cap=3)
    f.add(BASE + "/", 0)
    order = _drain(f, {BASE + "/": items}, kept={BASE + "/", *items[2:]})
    assert order[:6] == [BASE + "/", *items[:5]] and f.kept == 4  # two failures, then three kept item pages fill the cap
    assert f.leftovers()[items[5]].reason == "template_cap"


def test_same_discoveries_give_the_same_order() -> None:
    names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    links = {BASE + "/": [f"{BASE}/{n}.html" for n in names] + [f"{BASE}/item/{i}" for i in range(9)]}
    for n in names:
        links[f"{BASE}/{n}.html"] = [f"{BASE}/{n}/sub.html", f"{BASE}/{n}/?sort=x", f"{BASE}/item/{n}9"]

    def run() -> list[str]:
        f = Frontier(BASE + "/", max_pages=25, max_depth=3)
        f.add(BASE + "/", 0)
        return _drain(f, links)

    first = run()
    assert first == run() and len(first) == 25
    # unseen templates first, by depth then discovery: the ten pages, one item, the ten sub pages; then more items; no sort view fits
    assert first[1:12] == [f"{BASE}/{n}.html" for n in names] + [f"{BASE}/item/0"]
    assert first[12:22] == [f"{BASE}/{n}/sub.html" for n in names]
    assert first[22:] == [f"{BASE}/item/{i}" for i in range(1, 4)]
    assert not any("sort=" in u for u in first)


def test_files_that_are_not_pages_come_last_capped_per_folder() -> None:
    icons = [f"{BASE}/static/img/{n}.png" for n in ("insert", "delete", "update", "select", "drop", "create")]
    links = {BASE + "/": [*icons, BASE + "/data.csv", BASE + "/tables/", BASE + "/tables/?sort=name"]}
    f = Frontier(BASE + "/", max_pages=50, max_depth=3, template_cap=5)
    f.add(BASE + "/", 0)
    order = _drain(f, links)
    assert order[:3] == [BASE + "/", BASE + "/tables/", BASE + "/tables/?sort=name"]  # the page, then its view, then the files
    assert order[3:] == [*icons[:5], BASE + "/data.csv"]
    assert f.leftovers()[icons[5]].reason == "template_cap"


def test_short_ids_that_look_like_words_join_their_siblings_template() -> None:
    rows = [f"{BASE}/table/row/{b}/" for b in ("WzFd", "Wzdd", "Wzhd", "WzJd", "Wzld", "WzNd", "WzRd")]  # base64 of [1]..[7]
    f = Frontier(BASE + "/", max_pages=50, max_depth=3, template_cap=3)
    f.add(BASE + "/", 0)
    order = _drain(f, {BASE + "/": rows})
    assert order == [BASE + "/", *rows[:3]]
    assert all(f.leftovers()[u].reason == "template_cap" for u in rows[3:])

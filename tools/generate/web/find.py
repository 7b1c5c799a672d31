"""Find and open (family 3): reach one page described by its content, never by its title or the links to it.

Two kinds of target, both checked by ``page_is`` (URLs normalised: fragment, trailing
slash, ``index.html``, query order):

- a record's detail page, named by the smallest set of its field values that no other
  record of its (completely crawled) listing shares, leaving out row ids, URLs and any
  value that the page's title or a link to it shows;
- a content page, named by a sentence of its main text that no other crawled page or app
  state shows anywhere in its whole text (long pages keep their sentences as hashes, see
  ``graph.web.fulltext``) nor in a content item it shows, and whose words do not mostly
  appear in the page's title or in the texts of links to it. The site's own search results
  are not consulted (the generator reads the graph only).

A record's identifying values must also tell it apart from every record of another listing
that shows the same fields (a record with equal values in all the fields both show is the
same thing shown twice). Its noun comes from the listing's first column or URL
(``phrasing.column_noun``, ``phrasing.path_noun``), never from a file, database or column of codes.

The gold steps navigate to the target (a reference solution; the agent finds its own
route). The start page is the crawl's shallowest ordinary page other than the target.
Everything here reads the graph only; nothing knows a site.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set as AbstractSet
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ...environment.canonical import canonical
from ...graph.model import KnowledgeGraph, Node
from ...graph.web.capture import normalize_url
from ...graph.web.frontier import RESOURCE_EXTENSIONS
from ...graph.web.fulltext import appears_in
from ...graph.web.urls import listing_key, query_of, query_role
from ...tasks.model import GoldStep, Provenance, SuccessCriterion, Task
from ..registry import Candidates, GenerationRequest, generator
from .phrasing import ID_LABEL, column_noun, detail_noun, field_noun, path_noun, plural, quoted, short_value

__all__ = [
    "web_find",
    "norm_text",
    "task_rng",
    "ordinary_pages",
    "record_identity",
    "page_sentences",
    "own_content",
    "word_overlap",
    "link_texts_to",
    "start_page",
    "subject_noun",
    "listing_noun",
    "shown_elsewhere",
    "SiteText",
    "goal_task",
    "FIND_HOPS",
]

#: Hop budget of the reachability filter for a find task (start page → target page).
FIND_HOPS = 8
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z“\"(])")
_CODEY = re.compile(r"[=<>{}\[\]|\\@#$%^*~`]|https?:|\.\w+\(|\w_\w|::")
_STOP = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being this that these those it its it's "
    "not no can may will would should could has have had do does did if then than so such which who whom whose what when where "
    "how all any each every some more most other into over under about also only just very there their they them you your "
    "we our one two use used using".split()
)
_DETERMINERS = frozenset("the a an each every all most many some no".split())


def _words(text: str) -> list[str]:
    return [w.lower().strip("'’-") for w in _WORD.findall(text)]


def _content_words(text: str) -> set[str]:
    return {w for w in _words(text) if len(w) >= 3 and w not in _STOP}


def norm_text(text: str) -> str:
    return " ".join(text.split()).casefold()


def _is_resource(url: str) -> bool:
    path = urlparse(url).path
    return "." in path.rsplit("/", 1)[-1] and path.rsplit(".", 1)[-1].lower() in RESOURCE_EXTENSIONS


def ordinary_pages(kg: KnowledgeGraph) -> list[Node]:
    """Crawled pages that are documents (not app states or files such as images), shallowest first."""
    pages = [p for p in kg.nodes("page") if not p.attrs.get("state") and not _is_resource(str(p.attrs["url"]))]
    return sorted(pages, key=lambda p: (int(p.attrs.get("depth") or 0), str(p.attrs["url"])))


def start_page(kg: KnowledgeGraph, avoid: Iterable[str] = ()) -> Node | None:
    """The crawl's shallowest ordinary page whose URL is not in ``avoid``."""
    banned = set(avoid)
    return next((p for p in ordinary_pages(kg) if str(p.attrs["url"]) not in banned), None)


def link_texts_to(kg: KnowledgeGraph, page: Node) -> list[str]:
    """Names of the links and buttons that lead to ``page`` (``navigates_to`` edges)."""
    names: list[str] = []
    for source, _, data in kg.g.in_edges(page.id, data=True):
        if data.get("type") != "navigates_to":
            continue
        node = kg.node(source)
        name = str(node.attrs.get("name") or node.text or "").strip()
        if name and name not in names:
            names.append(name)
    return names


def word_overlap(text: str, others: Iterable[str]) -> float:
    """Share of ``text``'s content words (3+ letters, not function words) found in ``others``.

    >>> word_overlap("Wraps the single paragraph so every line is short.", ["textwrap — Text wrapping"])
    0.0
    >>> round(word_overlap("The textwrap module wraps text.", ["textwrap — Text wrapping"]), 2)
    0.5
    """
    mine = _content_words(text)
    if not mine:
        return 1.0
    theirs: set[str] = set()
    for other in others:
        theirs |= _content_words(other)
    return len(mine & theirs) / len(mine)


def listing_noun(kg: KnowledgeGraph, listing: Node) -> str | None:
    """A singular noun for what ``listing`` lists: its first column when that names the records, else its URL's path,
    else the path its records' own pages share."""
    columns = listing.attrs.get("columns") or []
    if columns:
        values = [str(((r.attrs.get("fields") or {}).get(str(columns[0])) or {}).get("raw") or "") for r in _members(kg, listing.id)]
        if values and len(set(values)) == len(values) and (noun := column_noun(str(columns[0]), values)):
            return noun
    own_pages = [str(r.attrs["detail_url"]) for r in _members(kg, listing.id) if r.attrs.get("detail_url")]
    return path_noun(str(listing.attrs.get("url") or "")) or detail_noun(own_pages)


def _members(kg: KnowledgeGraph, listing_id: str) -> list[Node]:
    return [r for r in kg.nodes("record") if listing_id in (r.attrs.get("listings") or [])]


def subject_noun(kg: KnowledgeGraph, listing_url: str | None) -> str | None:
    """A plural noun for what the listing at ``listing_url`` lists (see :func:`listing_noun`; a URL no listing has: its path)."""
    if not listing_url:
        return None
    key = listing_key(listing_url)
    listing = next((n for n in kg.nodes("listing") if n.attrs.get("url") == listing_url), None) or next(
        (n for n in kg.nodes("listing") if n.attrs.get("url") == key), None
    )
    noun = listing_noun(kg, listing) if listing is not None else path_noun(listing_url)
    return plural(noun) if noun else None


# --------------------------------------------------------------------------- records


def _cost(field: dict[str, Any]) -> int:
    kind, raw = field.get("type"), str(field.get("raw") or "")
    words = len(raw.split())
    base = {"text": 1, "date": 3, "number": 4}.get(str(kind), 9)
    if kind == "number" and "." in raw:
        base += 2
    return base + (2 if words > 3 else 0)


def _same(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    """Could ``a`` be the value ``b``? A missing field might be anything."""
    if a is None or a.get("type") == "missing":
        return True
    return norm_text(str(a.get("raw") or "")) == norm_text(str(b.get("raw") or ""))


def record_identity(
    record: Node, population: Sequence[Node], banned_text: Iterable[str] = (), max_fields: int = 3, outside: Sequence[Node] = ()
) -> list[str] | None:
    """The smallest set of field labels whose values tell ``record`` apart from every other record in ``population`` and ``outside``.

    ``population`` is the record's (complete) listing: a record there missing a field might
    have any value. ``outside`` holds records of other listings: one clashes only when it shows
    every chosen field with the same value. Row ids, URLs, missing values, long texts and
    values shown in ``banned_text`` (the page's title, link texts) are never used; cheaper
    fields (short texts, then dates, then numbers) win among sets of one size. None when no
    set of up to ``max_fields`` does.
    """
    fields: dict[str, dict[str, Any]] = record.attrs.get("fields") or {}
    banned = " " + " ".join(norm_text(t) for t in banned_text) + " "
    usable = [
        label
        for label, field in fields.items()
        if field.get("type") in ("text", "number", "date")
        and not ID_LABEL.match(label.strip())
        and 0 < len(str(field.get("raw") or "")) <= 40
        and f" {norm_text(str(field.get('raw')))} " not in banned
        and norm_text(str(field.get("raw"))) not in banned
    ]
    others = [r for r in population if r.id != record.id]
    order = {label: i for i, label in enumerate(fields)}
    for size in range(1, max_fields + 1):
        options = sorted(
            itertools.combinations(usable, size),
            key=lambda combo: (sum(_cost(fields[lbl]) for lbl in combo), [order[lbl] for lbl in combo]),
        )
        for combo in options:
            if any(all(_same((o.attrs.get("fields") or {}).get(lbl), fields[lbl]) for lbl in combo) for o in others):
                continue
            if any(all(_shows(o, lbl, fields[lbl]) for lbl in combo) for o in outside if o.id != record.id):
                continue
            return list(combo)
    return None


def _shows(other: Node, label: str, value: dict[str, Any]) -> bool:
    field = (other.attrs.get("fields") or {}).get(label)
    return field is not None and field.get("type") != "missing" and _same(field, value)


def _outside(kg: KnowledgeGraph, record: Node, population: Sequence[Node]) -> list[Node]:
    """Records of other listings that show a field of ``record`` and differ from it somewhere (not the same thing shown twice)."""
    own = {r.id for r in population}
    fields: dict[str, dict[str, Any]] = record.attrs.get("fields") or {}
    out: list[Node] = []
    for other in kg.nodes("record"):
        if other.id in own:
            continue
        theirs: dict[str, dict[str, Any]] = other.attrs.get("fields") or {}
        shared = [lbl for lbl in fields if lbl in theirs and fields[lbl].get("type") != "missing" and theirs[lbl].get("type") != "missing"]
        if shared and not all(_same(theirs[lbl], fields[lbl]) for lbl in shared):
            out.append(other)
    return out


def _record_phrase(record: Node, labels: list[str], population: Sequence[Node], rng: np.random.Generator, noun: str = "") -> str:
    """What names the record after its noun: "with genre “Poetry” and year 1999", "whose …"; a field named as the noun itself
    gives its value straight after it ("the method zfill", not "the method with method zfill")."""
    fields: dict[str, dict[str, Any]] = record.attrs["fields"]
    parts: list[tuple[str, str]] = []
    for label in labels:
        others = [str((r.attrs.get("fields") or {}).get(label, {}).get("raw") or "") for r in population]
        parts.append((field_noun(label), quoted(short_value(str(fields[label]["raw"]), others))))
    with_names = bool(int(rng.integers(2)))
    lead = ""
    same = next((p for p in parts if noun and p[0].lower() == noun.lower()), None)
    if same is not None:
        parts.remove(same)
        lead = same[1] if not parts else same[1] + " "
        if not parts:
            return lead
    if with_names:
        items = [f"{name} {value}" for name, value in parts]
        joiner = "with "
    else:
        items = [f"{name} is {value}" for name, value in parts]
        joiner = "whose "
    listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    return lead + joiner + listed


_RECORD_TEMPLATES = (
    "Open the detail page of the {noun} {phrase}.",
    "Find the {noun} {phrase}, and bring up its own page.",
    "Go to the full entry for the {noun} {phrase}.",
    "Show me the page that describes the {noun} {phrase}.",
    "Locate the {noun} {phrase} and open its record.",
)


def _listing_pages(kg: KnowledgeGraph, paged_only: bool = False) -> set[str]:
    """Ids of the pages that show a listing (``shows`` edges to listing nodes); with ``paged_only``, a listing of several pages."""
    found: set[str] = set()
    for u, v, d in kg.g.edges(data=True):
        if d.get("type") == "shows" and kg.node_type(v) == "listing":
            attrs = kg.node(v).attrs
            if not paged_only or max(int(attrs.get("pages_seen") or 1), int(attrs.get("pages_total") or 1)) > 1:
                found.add(u)
    return found


def _record_targets(kg: KnowledgeGraph) -> tuple[list[tuple[Node, Node]], list[tuple[Node, Node]]]:
    """Records of a complete listing with a detail page: (record, crawled page) pairs, and (record, link to its page) pairs for pages not crawled.

    A detail page the crawl did not open is still a target: its URL is the record's own
    link (a ``link`` node on a listing page), and replay checks that the page loads.
    """
    pages = {str(p.attrs["url"]): p for p in ordinary_pages(kg)}
    crawled = {str(p.attrs["url"]) for p in kg.nodes("page")}
    listing_pages = _listing_pages(kg)
    links: dict[str, Node] = {}
    for link in kg.nodes("link"):
        links.setdefault(str(link.attrs.get("href") or ""), link)
    seen: list[tuple[Node, Node]] = []
    unseen: list[tuple[Node, Node]] = []
    for record in sorted(kg.nodes("record"), key=lambda n: n.id):
        detail, listing = record.attrs.get("detail_url"), record.attrs.get("listing")
        if not detail or not listing or listing not in kg or not kg.node(listing).attrs.get("complete"):
            continue
        page = pages.get(str(detail))
        if page is not None and page.id not in listing_pages:
            seen.append((record, page))
        elif str(detail) not in crawled and str(detail) in links and not _is_resource(str(detail)):
            unseen.append((record, links[str(detail)]))
    return seen, unseen


def _link_target(link: Node, url: str) -> Node:
    """A stand-in page node for a detail page not crawled: its URL, and the id of the link that leads there (for reachability)."""
    return Node(id=link.id, type=link.type, attrs={"url": url, "title": ""})


# --------------------------------------------------------------------------- content pages


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]


def own_content(kg: KnowledgeGraph) -> dict[str, list[str]]:
    """The texts of content items shown on one page only, by that page's URL (read once for a loop over pages)."""
    by_url: dict[str, list[str]] = {}
    for _, data in kg.g.nodes(data=True):
        pages = data.get("attrs", {}).get("pages") if data["type"] == "business_data" else None
        if isinstance(pages, list) and len(pages) == 1:
            by_url.setdefault(str(pages[0]), []).append(str(data.get("text") or ""))
    return by_url


def page_sentences(kg: KnowledgeGraph, page: Node, own: Mapping[str, list[str]] | None = None) -> list[str]:
    """Plain sentences (8–30 words, capitalised prose, no code) of the page's text and of content items only it shows, in page order.

    ``own``: :func:`own_content` of ``kg``, when the caller reads many pages.
    """
    url = str(page.attrs["url"])
    found: list[str] = []
    items = (own_content(kg) if own is None else own).get(url, [])
    for text in [page.text.partition("\n")[2], *items]:  # the page's text (after its title line), then its own content items
        for sentence in _sentences(text):
            words = sentence.split()
            if (
                not 8 <= len(words) <= 30
                or not sentence[0].isupper()
                or sentence[-1] not in ".!"
                or _CODEY.search(sentence)
                or "(" in sentence
            ):
                continue
            if sum(bool(_WORD.fullmatch(w.strip(".,;:!?”“\"'’()"))) for w in words) < 0.85 * len(words):
                continue
            if sentence not in found:
                found.append(sentence)
    return found


def _common_title_words(kg: KnowledgeGraph) -> set[str]:
    """Content words in most pages' titles (a site's name is no page's own)."""
    titles = [_content_words(str(p.attrs.get("title") or "")) for p in kg.nodes("page")]
    counts = Counter(w for t in titles for w in t)
    return {w for w, n in counts.items() if n > max(2, len(titles) // 2)}


def _shares_stem(words: set[str], others: set[str]) -> bool:
    """Whether a word of ``words`` is one of ``others`` or shares its stem ("searching" / "search")."""
    return any(w == o or (min(len(w), len(o)) >= 4 and (w.startswith(o) or o.startswith(w))) for w in words for o in others)


def _fact(sentence: str) -> str | None:
    """The sentence as a 'that …' clause, when it opens with a determiner (else None)."""
    first = sentence.split()[0]
    if first.lower() not in _DETERMINERS or not first[:1].isupper():
        return None
    return first.lower() + sentence[len(first) :].rstrip(".!")


_FACT_TEMPLATES = (
    "Find the page that explains that {fact}.",
    "Open the page which states that {fact}.",
    "Go to the page where you can read that {fact}.",
    "Locate the page telling you that {fact}.",
)
_QUOTE_TEMPLATES = (
    "Find the page that contains this sentence: “{sentence}”",
    "Open the page on which the following is written: “{sentence}”",
    "Go to the page whose text says: “{sentence}”",
)


def sentence_opener(sentence: str) -> str:
    return " ".join(_words(sentence)[:3])


def common_openers(kg: KnowledgeGraph, pages: Sequence[Node], min_pages: int = 3) -> set[str]:
    """Sentence openings (first three words) found on ``min_pages`` or more pages: boilerplate ("Changed in version …"), not a page's own content."""
    counts: dict[str, int] = {}
    own = own_content(kg)
    for page in pages:
        for opener in {sentence_opener(s) for s in page_sentences(kg, page, own)}:
            counts[opener] = counts.get(opener, 0) + 1
    return {o for o, n in counts.items() if n >= min_pages}


@dataclass(frozen=True)
class SiteText:
    """Everything the crawl saw written, by the page it belongs to (an app state belongs to its page's URL).

    ``pages``: (owner URL, normalised start of the text, hashes of the whole text's sentence pieces);
    ``items``: (owner URLs showing it, normalised text) for content items, regions and dialogs;
    ``own``: :func:`own_content`; ``title_common``: :func:`_common_title_words`.
    """

    pages: tuple[tuple[str, str, frozenset[str]], ...]
    items: tuple[tuple[frozenset[str], str], ...]
    own: Mapping[str, list[str]]
    title_common: frozenset[str]

    @classmethod
    def of(cls, kg: KnowledgeGraph) -> SiteText:
        owner = {str(p.attrs["url"]): _owner(p) for p in kg.nodes("page")}
        pages = tuple((_owner(p), norm_text(p.text), frozenset(p.attrs.get("text_hashes") or ())) for p in kg.nodes("page"))
        items = tuple(
            (frozenset(owner.get(str(u), str(u)) for u in n.attrs.get("pages") or []), norm_text(n.text))
            for kind in ("business_data", "region", "modal")
            for n in kg.nodes(kind)
            if n.text
        )
        return cls(pages, items, own_content(kg), frozenset(_common_title_words(kg)))


def _owner(page: Node) -> str:
    """The URL a page node stands for: its own, or for an app state the page it was reached on."""
    base = page.attrs.get("base_url") if page.attrs.get("state") else None
    return normalize_url(str(base)) if base else str(page.attrs["url"])


def shown_elsewhere(site: SiteText, url: str, sentence: str) -> bool:
    """Whether ``sentence`` stands anywhere in the text of a page, app state or content item other than the page at ``url``."""
    key = norm_text(sentence)
    for owner, text, hashes in site.pages:
        if owner != url and (key in text or (hashes and appears_in(sentence, hashes))):
            return True
    return any(owners - {url} and key in text for owners, text in site.items)


def _content_instruction(
    kg: KnowledgeGraph, page: Node, site: SiteText, rng: np.random.Generator, boilerplate: AbstractSet[str] = frozenset()
) -> tuple[str, str] | None:
    """(instruction, sentence) for a content page, or None when no sentence is distinctive enough."""
    title = str(page.attrs.get("title") or "")
    links = link_texts_to(kg, page)
    distinctive = _content_words(title) - site.title_common  # a site's name in every title is not the page's
    url = str(page.attrs["url"])
    for sentence in page_sentences(kg, page, site.own):
        if sentence_opener(sentence) in boilerplate or '"' in sentence:
            continue  # a sentence many pages open alike, or one quoting others
        if shown_elsewhere(site, url, sentence):
            continue  # another page, app state or content item shows it too
        if _shares_stem(_content_words(sentence), distinctive) or word_overlap(sentence, [title, *links]) > 1 / 3:
            continue  # a word matcher could follow the title or a link's text
        if len(_content_words(sentence)) < 5:
            continue
        fact = _fact(sentence)
        if fact is not None and int(rng.integers(3)):
            template = _FACT_TEMPLATES[int(rng.integers(len(_FACT_TEMPLATES)))]
            return template.format(fact=fact), sentence
        template = _QUOTE_TEMPLATES[int(rng.integers(len(_QUOTE_TEMPLATES)))]
        return template.format(sentence=sentence), sentence
    return None


# --------------------------------------------------------------------------- tasks


def goal_task(
    kg: KnowledgeGraph,
    family: str,
    task_type: str,
    instruction: str,
    start: Node,
    target: Node,
    success: list[SuccessCriterion],
    seed: int,
    difficulty: str = "medium",
) -> Task:
    """A goal task whose reference solution navigates from ``start`` to ``target``."""
    url = str(target.attrs["url"])
    start_url = str(start.attrs["url"])
    digest = hashlib.sha1(f"{kg.id}|{family}|{start_url}|{url}|{instruction}".encode()).hexdigest()[:12]
    return Task(
        id=f"web-{digest}",
        kind="web",
        type=task_type,
        difficulty=difficulty,  # type: ignore[arg-type]
        instruction=instruction,
        start_url=start_url,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start_url).hostname or ""]),
        gold_steps=[GoldStep(action="navigate", text=url, node_id=target.id, canonical=canonical("navigate", url=url))],
        success=success,
        provenance=Provenance(graph_id=kg.id, template=family, generator=f"web-{task_type}", model="none", seed=seed),
    )


def task_rng(seed: int, key: str) -> np.random.Generator:
    return np.random.default_rng([seed, int(hashlib.sha1(key.encode()).hexdigest()[:8], 16)])


def find_tasks(kg: KnowledgeGraph, seed: int, limit: int) -> tuple[list[Task], dict[str, Any]]:
    """Record and content-page find tasks (at most ``limit`` of each), and counts of what was skipped and why."""
    skipped: dict[str, int] = {}
    records: list[Task] = []
    populations: dict[str, list[Node]] = {}
    seen, unseen = _record_targets(kg)
    # crawled detail pages first; pages only linked fill in (in a seeded order) when fewer than ``limit`` were crawled
    order_unseen = task_rng(seed, "find-unseen").permutation(len(unseen))
    fill = max(0, min(max(3, limit // 4), limit - len(seen)))  # every candidate costs a browser replay
    targets = [(r, p, True) for r, p in seen] + [(unseen[int(i)][0], unseen[int(i)][1], False) for i in order_unseen[:fill]]
    for record, page, was_crawled in targets:
        listing = str(record.attrs["listing"])
        if listing not in populations:
            populations[listing] = [r for r in kg.nodes("record") if listing in (r.attrs.get("listings") or [])]
        population = populations[listing]
        detail = str(record.attrs["detail_url"])
        start = start_page(kg, avoid=[detail, *(record.attrs.get("pages") or [])])
        if start is None:
            skipped["no start page"] = skipped.get("no start page", 0) + 1
            continue
        shown = [str(page.attrs.get("title") or "")] + link_texts_to(kg, page) if was_crawled else [str(page.attrs.get("name") or page.text or "")]
        labels = record_identity(record, population, shown, outside=_outside(kg, record, population))
        if labels is None:
            skipped["no identifying fields"] = skipped.get("no identifying fields", 0) + 1
            continue
        rng = task_rng(seed, record.id)
        noun = listing_noun(kg, kg.node(listing)) or "item"
        template = _RECORD_TEMPLATES[int(rng.integers(len(_RECORD_TEMPLATES)))]
        instruction = template.format(noun=noun, phrase=_record_phrase(record, labels, population, rng, noun))
        target = page if was_crawled else _link_target(page, detail)
        task = goal_task(kg, "find-record", "find", instruction, start, target, [SuccessCriterion(kind="page_is", value=detail)], seed)
        task.evidence = [record.id]
        task.quality["target"] = {"kind": "record", "fields": labels, "crawled": was_crawled}
        records.append(task)
    contents: list[Task] = []
    record_pages = {t.gold_steps[0].node_id for t in records}
    site = SiteText.of(kg)
    listing_pages = _listing_pages(kg, paged_only=True)  # a page of results: its sentences belong to the records it lists
    boilerplate = common_openers(kg, ordinary_pages(kg))
    for page in ordinary_pages(kg):
        url = str(page.attrs["url"])
        if page.id in record_pages or page.id in listing_pages or any(query_role(k) in ("page", "sort") for k in query_of(url)):
            continue
        start = start_page(kg, avoid=[url])
        if start is None:
            continue
        made = _content_instruction(kg, page, site, task_rng(seed, page.id), boilerplate)
        if made is None:
            skipped["no distinctive sentence"] = skipped.get("no distinctive sentence", 0) + 1
            continue
        instruction, sentence = made
        task = goal_task(kg, "find-content", "find", instruction, start, page, [SuccessCriterion(kind="page_is", value=url)], seed)
        task.quality["target"] = {"kind": "content", "sentence": sentence}
        contents.append(task)
    from .statefind import state_find_tasks  # it builds on this module's sentence rules

    contents += state_find_tasks(kg, seed, boilerplate, skipped)
    order = task_rng(seed, "find")
    picked = [records[int(i)] for i in order.permutation(len(records))[:limit]] + [
        contents[int(i)] for i in order.permutation(len(contents))[:limit]
    ]
    return picked, {"records": len(records), "content_pages": len(contents), "skipped": skipped}


@generator("web-find", graph="web")
async def web_find(request: GenerationRequest) -> Candidates:
    """Find-and-open tasks: a record's detail page by its identifying fields, a content page by a sentence of its own."""
    tasks, details = find_tasks(request.kg, request.seed, max(request.count * 2, 8))
    if request.types:
        tasks = [t for t in tasks if t.type in request.types]
    request.report.generator = details
    return Candidates(tasks, {"find-record": FIND_HOPS, "find-content": FIND_HOPS, "find-state": FIND_HOPS})

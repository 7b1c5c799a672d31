"""Information lookup (issue 15, family 1): one field of one record, asked about by the values that identify it.

A record the start page does not show is named by the smallest set of its short text
fields (id-like and categorical values, never the asked field) that no other record of
its listing shares (so only listings the crawl saw completely are used, and never one whose records are all in a wider complete
listing: a filter of it); the question asks for one other non-missing field (a number with
its unit, a date, or a short text) in one of several phrasings. The gold answer is the
field's value; the gold steps open a crawled page that shows the record (its detail
page when crawled, else a listing page). The structured goal is kept under
``task.quality["lookup"]``.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ...graph.model import KnowledgeGraph, Node
from ...graph.web.urls import bare_key, query_of, query_role, site_path
from ...tasks.model import GoldStep, Provenance, Task
from ..registry import Candidates, GenerationRequest, generator
from .scope import LAYOUT_KEYS, Scope, listing_scope, scoped_noun
from .phrasing import FOOTNOTE_MARK, ID_LABEL, answer_metrics, column_noun, detail_noun, field_noun, field_phrase, path_noun, plural, quoted, short_value, singular, value_text

__all__ = ["FieldStats", "ListingData", "listing_data", "start_page", "describe_record", "web_lookup", "LOOKUP_TEMPLATE", "is_meta_listing", "listing_quotas", "unique_key", "wider_listing", "filtered_on", "gives_away", "site_order"]

LOOKUP_TEMPLATE = "web-lookup"
#: Hops from the start page to the answer page the reachability filter allows.
HOPS = 8
#: Labels of a structure listing (a table's columns with their types, null and key flags): the site describing itself.
_META_LABEL = re.compile(
    r"^(?:(?:data ?)?type|null|nullable|(?:allow|not) ?null|default(?: value)?|pk|primary ?key|foreign ?key|unique|auto ?increment|collation|constraints?|indexe?d?|extra)$",
    re.IGNORECASE,
)
#: A structure listing is small: a schema, not content.
_META_MAX_RECORDS = 200
_MAX_IDENT_CHARS = 40
#: A field whose value differs for every record (a title) names a record up to this length.
_MAX_NAME_CHARS = 80
_MAX_ANSWER_CHARS = 40


@dataclass
class FieldStats:
    """What one field looks like across a listing's records."""

    label: str
    types: Counter[str] = field(default_factory=Counter)
    values: Counter[str] = field(default_factory=Counter)  # raw text of non-missing values
    longest: int = 0
    population: int = 0  # records in the listing, whether or not they show this field

    @property
    def covers_all(self) -> bool:
        """Every record of the listing shows this field (a value or a shown blank): a count or a uniqueness over it is proven.

        A field read only from the detail pages the crawl opened is known for some records only.
        """
        return sum(self.types.values()) == self.population

    @property
    def main_type(self) -> str:
        present = [(n, t) for t, n in self.types.items() if t != "missing"]
        return max(present)[1] if present else "missing"

    @property
    def numbers_only(self) -> bool:
        """Every value shown is a number (a year column with "1991-1995" or "2001-now" in it is not: its extremes are not the numbers')."""
        return self.types["number"] > 0 and self.types["number"] == sum(n for t, n in self.types.items() if t != "missing")

    @property
    def distinct(self) -> int:
        return len(self.values)

    @property
    def longest_short(self) -> int:
        """Length of the longest value as an instruction writes it (a trailing parenthetical dropped when values stay distinct)."""
        return max((len(short_value(v, self.values)) for v in self.values), default=0)

    def identifying(self) -> bool:
        """Short text values, more than one of them: usable to name a record; a record's own name (a title no other record has) may be longer."""
        own_name = self.distinct == self.population and self.types["text"] == self.population
        return (
            self.covers_all
            and self.main_type == "text"
            and self.types["text"] == sum(self.types.values()) - self.types["missing"]
            and self.distinct >= 2
            and self.longest_short <= (_MAX_NAME_CHARS if own_name else _MAX_IDENT_CHARS)
            and not ID_LABEL.match(self.label.strip())
        )

    def askable(self) -> bool:
        """A field worth asking about: not a row key, not constant, numbers, dates or short texts."""
        if ID_LABEL.match(self.label.strip()) or self.distinct < 2:
            return False
        return self.main_type in ("number", "date") or (self.main_type == "text" and self.longest <= _MAX_ANSWER_CHARS)


@dataclass
class ListingData:
    """A listing's node, its records (in id order), their field statistics and the noun for one record."""

    node: Node
    records: list[Node]
    stats: dict[str, FieldStats]
    noun: str
    where: str = ""  # "on the page “array — …”" when nothing names the records (a docs page's table): instructions say where they are

    def short(self, label: str, raw: str) -> str:
        """The value as an instruction writes it (see :func:`phrasing.short_value`)."""
        return short_value(raw, self.stats[label].values) if label in self.stats else raw


def _stats(records: list[Node]) -> dict[str, FieldStats]:
    stats: dict[str, FieldStats] = {}
    for record in records:
        for label, value in record.attrs.get("fields", {}).items():
            entry = stats.setdefault(label, FieldStats(label))
            entry.types[str(value.get("type"))] += 1
            if value.get("type") != "missing":
                raw = str(value.get("raw", ""))
                entry.values[raw] += 1
                entry.longest = max(entry.longest, len(raw))
    for entry in stats.values():
        entry.population = len(records)
    return stats


def _first_column_noun(node: Node, stats: dict[str, FieldStats], size: int) -> str | None:
    """A listing whose first column is one plain word naming a distinct value per record lists things of that name (not codes, ids or titles)."""
    columns = node.attrs.get("columns") or []
    if not columns:
        return None
    label = str(columns[0]).strip()
    entry = stats.get(label)
    if entry is None or entry.main_type != "text" or entry.distinct != size or ID_LABEL.match(label):
        return None
    return column_noun(label, entry.values)


_TITLE_PARTS = re.compile(r"\s+[—–|·-]\s+")


def site_suffix(titles: list[str]) -> str:
    """The part after the last separator (" — ", " | ", " - ") that most page titles end with: the site's name, not the page's.

    >>> site_suffix(["array — Arrays — Python 3.11 docs", "Built-in Types — Python 3.11 docs", "Search — Python 3.11 docs"])
    'Python 3.11 docs'
    >>> site_suffix(["Mystery books", "Poetry — Books"])
    ''
    """
    ends = Counter(parts[-1] for t in titles if len(parts := _TITLE_PARTS.split(t)) >= 2)
    end, seen = ends.most_common(1)[0] if ends else ("", 0)
    return end if seen >= max(3, 0.8 * len(titles)) else ""


def short_title(title: str, suffix: str) -> str:
    """``title`` without the site's ``suffix`` ("array — Efficient arrays of numeric values")."""
    if not suffix or not title.endswith(suffix):
        return title
    return re.sub(r"\s+[—–|·-]\s*$", "", title[: -len(suffix)]).strip() or title


def site_order(node: Node) -> tuple[str, str, str]:
    """A listing's or record's place in a stable order: its URL within the site, table and fields (node ids hash the origin, port included)."""
    url = str(node.attrs.get("key") or node.attrs.get("detail_url") or "")
    return site_path(url), str(node.attrs.get("table") or ""), node.text if node.type == "record" else ""


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
#: A heading's section number ("9.21. "), which a page's title does not carry.
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.?\s+")


def _table_place(node: Node, title: str, suffix: str, heading_unique: bool) -> str:
    """Where a table is: "in the table “Comparisons” of the page “…”" when its heading is its own, else by its place among the
    page's tables ("in the third table of the page “…”"), else "in the table of the page “…”" (the page's only table)."""
    table, page = str(node.attrs.get("table") or ""), f" of the page {quoted(short_title(title, suffix))}" if title else ""
    if not title:
        return ""
    if table and heading_unique and _SECTION_NUMBER.sub("", table) not in (title, short_title(title, suffix)):  # a table headed by its page's own title is "the table"
        return f"in the table {quoted(table)}{page}"
    nth, of = (node.attrs.get("position") or [1, 1])[:2]
    if of > 1:
        return f"in the {_ORDINALS[nth - 1] if nth <= len(_ORDINALS) else f'{nth}th'} table{page}"
    return f"in the table{page}"


def listing_data(kg: KnowledgeGraph) -> list[ListingData]:
    """Every listing with records, with a noun per listing (first column, else URL path, else "record"; a clash keeps it for the larger)."""
    out: list[ListingData] = []
    members: dict[str, list[Node]] = {}
    for record in kg.nodes("record"):
        for lid in record.attrs.get("listings") or []:
            members.setdefault(str(lid), []).append(record)
    titles = {str(p.attrs.get("url")): str(p.attrs.get("title") or "").strip() for p in kg.nodes("page")}
    tables = Counter((n.attrs.get("url"), n.attrs.get("table")) for n in kg.nodes("listing") if n.attrs.get("table"))  # a heading over two tables names neither
    places: dict[str, str] = {}
    suffix = site_suffix(list(titles.values()))
    for node in sorted(kg.nodes("listing"), key=lambda n: (site_order(n), n.id)):
        records = sorted(members.get(node.id, []), key=lambda n: (site_order(n), n.id))
        if not records:
            continue
        stats = _stats(records)
        details = [str(r.attrs["detail_url"]) for r in records if r.attrs.get("detail_url")]
        title, table = titles.get(str(node.attrs.get("url") or ""), ""), str(node.attrs.get("table") or "")
        # one table of several on a page: the page's path names the page's subject ("functions"), not this table's rows
        noun = _first_column_noun(node, stats, len(records)) or (None if table else path_noun(str(node.attrs.get("url") or ""))) or detail_noun(details)
        where = _table_place(node, title, suffix, tables[(node.attrs.get("url"), table)] == 1)
        out.append(ListingData(node, records, stats, noun or "record", "" if noun and not table else where))  # one table of several is always placed
        places[node.id] = where if table else ""
    by_noun: dict[str, list[ListingData]] = {}
    for data in out:
        by_noun.setdefault(data.noun, []).append(data)
    for same in by_noun.values():
        for data in sorted(same, key=lambda d: (-len(d.records), site_order(d.node), d.node.id))[1:]:
            data.noun, data.where = "record", data.where or places[data.node.id]  # a table among several that lost its noun: placed by its table
    return out


def wider_listing(data: ListingData, listings: list[ListingData]) -> str | None:
    """A complete listing holding every record of ``data`` and more: ``data`` is a restriction of it (a filter) that an instruction would not name.

    Counts over ``data`` are not what the site lists, and values unique among its records may be shared by the wider listing's others.
    """
    own = {r.id for r in data.records}
    for other in listings:
        if other is not data and other.node.attrs.get("complete") and len(other.records) > len(own) and own <= {r.id for r in other.records}:
            return other.node.id
    return None


def filtered_on(data: ListingData) -> str | None:
    """The field a listing's URL restricts (``?status=!closed`` on a listing with a Status column): it holds only some of the records.

    A query parameter whose name, without a framework's ``_``/``@`` mark, is one of the listing's
    field labels filters on that field; any other filtering parameter (a field the listing does not
    show, a search) restricts it too and is named as written. A count over the listing is the
    filtered part's, which an instruction would have to name.

    >>> from taskloom.tools.graph.model import Node
    >>> data = ListingData(Node(id="l", type="listing", text="", attrs={"url": "http://h/query?status=%21closed&order=priority"}), [], {"Status": None, "Priority": None}, "ticket")  # type: ignore[dict-item]
    >>> filtered_on(data), filtered_on(ListingData(Node(id="l", type="listing", text="", attrs={"url": "http://h/issue?@group=priority&@sort=title"}), [], {"Priority": None}, "issue"))  # type: ignore[dict-item]
    ('Status', None)
    >>> filtered_on(ListingData(Node(id="l", type="listing", text="", attrs={"url": "http://h/query?group=status&milestone=Someday"}), [], {"Status": None}, "ticket"))  # type: ignore[dict-item]
    'milestone'
    """
    fields = {re.sub(r"\W+", "", label.lower()): label for label in data.stats}
    other: str | None = None
    for key in query_of(str(data.node.attrs.get("url") or "")):
        if query_role(key) != "filter":
            continue
        bare = re.sub(r"\W+", "", bare_key(key))
        if label := fields.get(bare):
            return label
        if other is None and bare not in LAYOUT_KEYS:
            other = bare_key(key)  # a filter on a field the listing does not show (Trac's milestone=…, its Milestone column hidden)
    return other


def is_meta_listing(data: ListingData) -> bool:
    """A listing of the site's own structure (columns with type, null, default or key flags), not of its content.

    Two or more of its field labels are structure words ("Data type", "Allow null",
    "Primary key", "Default") and it has few records. Questions about it are low-value.
    """
    labels = [lb for lb in data.stats if _META_LABEL.match(field_phrase(lb).strip())]
    return len(labels) >= 2 and len(data.records) <= _META_MAX_RECORDS


def listing_quotas(listings: list[ListingData], pool: int, meta_cap: int = 1) -> dict[str, int]:
    """Tasks to make per listing: shares of ``pool`` by record count (at least one each).

    Structure listings get ``meta_cap`` each, and none when the site also lists content.
    """
    content = [d for d in listings if not is_meta_listing(d)]
    total = sum(len(d.records) for d in content) or 1
    quotas = {d.node.id: max(1, -(-pool * len(d.records) // total)) for d in content}
    quotas.update({d.node.id: 0 if content else meta_cap for d in listings if is_meta_listing(d)})
    return quotas


def interleave(groups: list[list[Task]]) -> list[Task]:
    """Tasks dealt round-robin from ``groups`` (largest listing first), so the first tasks span the listings."""
    out: list[Task] = []
    for round_ in range(max((len(g) for g in groups), default=0)):
        out.extend(g[round_] for g in groups if round_ < len(g))
    return out


def unique_key(data: ListingData, record: Node, avoid: set[str] | frozenset[str] = frozenset()) -> str | None:
    """A one-word value only ``record`` has in the listing (no other field shows it either), at least 4 characters; the longest.

    Seen on a page as whole words, it shows that the record is on that page.
    """
    keys = [
        raw
        for label, f in record.attrs.get("fields", {}).items()
        if label not in avoid
        and f.get("type") not in ("missing", "date")
        and len(raw := str(f.get("raw") or "")) >= 4
        and not re.search(r"\s", raw)
        and label in data.stats
        and data.stats[label].covers_all
        and data.stats[label].values.get(raw, 0) == 1
        and sum(raw in st.values for st in data.stats.values()) == 1
    ]
    return max(keys, key=lambda k: (len(k), k), default=None)


def start_page(kg: KnowledgeGraph) -> Node | None:
    """The site's start page: the page crawled from the graph's first source URL, else the first page."""
    pages = list(kg.nodes("page"))
    sources = [s.rstrip("/") for s in kg.meta.sources]
    return next((p for p in pages if str(p.attrs.get("url", "")).rstrip("/") in sources), pages[0] if pages else None)


def _fields(record: Node) -> dict[str, dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = record.attrs.get("fields", {})
    return fields


def _names_kind(data: ListingData, label: str) -> bool:
    """Whether every value of the field ends with the listing's noun ("Gentoo penguin" for penguins): it reads as the record's head."""
    return all(singular(data.short(label, v).split()[-1].lower()) == data.noun for v in data.stats[label].values if v.split())


def _preference(data: ListingData, label: str) -> tuple[int, int, int, str]:
    """Id-like fields (many distinct values) first, then categories (those naming the kind of record first), yes/no-like two-valued fields last."""
    distinct = data.stats[label].distinct
    if distinct / len(data.records) >= 0.3:
        return (0, 0, -distinct, label)
    return (2 if distinct == 2 else 1, 0 if _names_kind(data, label) else 1, -distinct, label)


def identify(data: ListingData, record: Node, exclude: str) -> list[str] | None:
    """The smallest set of identifying labels (up to three) whose values only ``record`` has in its listing."""
    own = _fields(record)
    labels = [lb for lb, st in data.stats.items() if lb != exclude and st.identifying() and own.get(lb, {}).get("type") == "text"]
    labels.sort(key=lambda lb: _preference(data, lb))
    for size in (1, 2, 3):
        for combo in sorted(itertools.combinations(range(len(labels)), size), key=lambda c: (sum(c), c)):
            chosen = [labels[i] for i in combo]
            wanted = {lb: own[lb]["raw"] for lb in chosen}
            matches = sum(1 for r in data.records if all(_fields(r).get(lb, {}).get("raw") == v for lb, v in wanted.items()))
            if matches == 1:
                return chosen
    return None


def describe_record(data: ListingData, record: Node, labels: list[str], scope: Scope | None = None) -> str:
    """"the Gentoo penguin with individual ID N12A1 and study name PAL0809": the noun, then each identifying value (and the listing's scope)."""
    own = _fields(record)
    head, rest = f"the {data.noun}", [f"{field_noun(scope.label)} {quoted(scope.value)}"] if scope is not None else []
    for label in labels:
        value = data.short(label, str(own[label]["raw"]))
        words = value.split()
        if head == f"the {data.noun}" and len(words) > 1 and singular(words[-1].lower()) == data.noun:
            head = "the " + " ".join(words[:-1] + [words[-1] if words[-1].isupper() else words[-1].lower()])  # the value names the kind ("Gentoo penguin")
        elif head == f"the {data.noun}" and field_phrase(label).lower() == data.noun:
            head = f"the {data.noun} {quoted(value)}"
        else:
            rest.append(f"{field_noun(label)} {quoted(value)}")
    where = f" {data.where}" if data.where else ""
    if not rest:
        return head + where
    return f"{head} with " + (rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1]) + where


_QUESTIONS = {
    "number": [
        "What {field} was recorded for {subject}?",
        "What is the {field} of {subject}?",
        "Find the {field} listed for {subject}.",
        "According to the site, what {field} does {subject} have?",
        "Look up {subject}: what is its {field}?",
    ],
    "date": [
        "What {field} is given for {subject}?",
        "Which date is listed as the {field} of {subject}?",
        "Find the {field} recorded for {subject}.",
        "Look up {subject}: what is its {field}?",
    ],
    "text": [
        "What {field} is listed for {subject}?",
        "What is the {field} of {subject}?",
        "Find the {field} recorded for {subject}.",
        "Look up {subject} and report its {field}.",
    ],
}


def _answer_page(kg: KnowledgeGraph, record: Node, start_url: str) -> Node | None:
    """A crawled page that shows the record: its detail page first, else the first listing page that shows it."""
    urls = {str(p.attrs.get("url")): p for p in kg.nodes("page")}
    pages = [u for u in record.attrs.get("pages") or [] if u != start_url and u in urls]
    detail = record.attrs.get("detail_url")
    if detail in pages:
        return urls[str(detail)]
    return urls[pages[0]] if pages else None


def gives_away(answer: str, instruction: str, naming: list[str]) -> bool:
    """Whether the question holds its own answer: the answer's words are in the instruction, or a naming value's words are in the answer.

    >>> gives_away("Milestone: Someday", "What is the title of the record with milestone Someday?", ["Someday"])
    True
    >>> gives_away("Ann Smith", "Who is the owner of the ticket with summary “Login fails”?", ["Login fails"])
    False
    """
    def words(text: str) -> str:
        return " " + " ".join(re.findall(r"\w+", text.lower())) + " "

    said, asked = words(instruction), words(answer)
    return (asked.strip() != "" and asked in said) or any(words(v).strip() and words(v) in asked for v in naming)


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, int(hashlib.sha1("|".join(parts).encode()).hexdigest()[:8], 16)])


def lookup_task(kg: KnowledgeGraph, data: ListingData, record: Node, label: str, start: Node, seed: int, scope: Scope | None = None) -> Task | None:
    """The lookup task asking for ``label`` of ``record``, or None when the record cannot be named or reached; a scoped listing's record is named with its scope."""
    start_url = str(start.attrs.get("url"))
    own = _fields(record)
    if start_url in (record.attrs.get("pages") or []) or own.get(label, {}).get("type") in (None, "missing"):
        return None
    labels = identify(data, record, label)
    page = _answer_page(kg, record, start_url)
    if labels is None or page is None:
        return None
    asked = own[label]
    if FOOTNOTE_MARK.match(str(asked.get("raw") or "")):
        return None  # "(4)" points at a note; it is no answer
    kind = "number" if asked["type"] == "number" else "text"
    rng = _rng(seed, kg.id, record.id, label)
    templates = _QUESTIONS.get(str(asked["type"]), _QUESTIONS["text"])
    instruction = templates[int(rng.integers(len(templates)))].format(field=field_noun(label), subject=describe_record(data, record, labels, scope))
    instruction = instruction[0].upper() + instruction[1:]
    answer = value_text(asked)
    if asked["type"] == "number" and asked.get("unit") and str(asked["unit"]) in str(asked.get("raw")):
        answer = str(asked["raw"])  # the page writes the unit itself ("44N", "12%"): the answer is what it shows, not a respelling
    if asked.get("unit") is None and "," not in str(asked.get("raw")):
        answer = answer.replace(",", "")  # a bare number the site writes without separators (a year, a code) stays as written
    if gives_away(answer, instruction, [value_text(own[lb]) for lb in labels]):
        return None
    digest = hashlib.sha1(f"{kg.id}|{LOOKUP_TEMPLATE}|{record.id}|{label}".encode()).hexdigest()[:12]
    url = str(page.attrs["url"])
    return Task(
        id=f"web-lookup-{digest}",
        kind="web",
        type="lookup",
        difficulty="medium",
        instruction=instruction,
        gold_answer=answer,
        answer_kind=kind,
        metrics=answer_metrics(kind),
        evidence=[record.id],
        start_url=start_url,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start_url).hostname or ""]),
        gold_steps=[GoldStep(action="navigate", text=url, node_id=page.id, canonical=f"navigate(url={url!r})")],
        reasoning_path=[(data.node.id, "contains", record.id), (page.id, "shows", record.id)],
        provenance=Provenance(graph_id=kg.id, template=LOOKUP_TEMPLATE, generator=LOOKUP_TEMPLATE, model="none", seed=seed),
        quality={
            "answer_visible": True,
            "lookup": {
                "listing": data.node.id,
                "record": record.id,
                "identify": {lb: own[lb]["raw"] for lb in labels},
                "field": label,
                "value": asked.get("value"),
                "raw": asked.get("raw"),
                "unit": asked.get("unit"),
                "answer_page": url,
                **({"scope": {"field": scope.label, "value": scope.value, "shared": scope.shared}} if scope is not None else {}),
            },
        },
    )


def _listing_tasks(kg: KnowledgeGraph, data: ListingData, askable: list[str], start: Node, seed: int, quota: int, scope: Scope | None = None) -> list[Task]:
    """Up to ``quota`` lookups over one listing's records in a seeded order, spread over the askable fields."""
    rng = _rng(seed, kg.id, data.node.id)
    asked_count: Counter[str] = Counter()
    tasks: list[Task] = []
    for index in rng.permutation(len(data.records)):
        if len(tasks) >= quota:
            break
        record = data.records[int(index)]
        present = [lb for lb in askable if _fields(record).get(lb, {}).get("type") not in (None, "missing")]
        if not present:
            continue
        fewest = min(asked_count[lb] for lb in present)  # spread the questions over the fields
        choices = [lb for lb in present if asked_count[lb] == fewest]
        label = choices[int(rng.integers(len(choices)))]
        task = lookup_task(kg, data, record, label, start, seed, scope)
        asked_count[label] += 1  # a failed try counts too: a field no record can be asked about must not block the others
        if task is not None:
            tasks.append(task)
    return tasks


@generator(LOOKUP_TEMPLATE, graph="web")
async def web_lookup(request: GenerationRequest) -> Candidates:
    """Questions about one field of one record the start page does not show, naming the record by its identifying values."""
    kg, seed = request.kg, request.seed
    pool = max(request.count, 8)  # every candidate costs a browser replay; the goal families share the count
    start = start_page(kg)
    skipped: list[dict[str, str]] = []
    if start is None:
        request.report.generator = {"listings": 0, "skipped": [{"reason": "the graph has no pages"}]}
        return Candidates([], {LOOKUP_TEMPLATE: HOPS})
    listings = sorted(listing_data(kg), key=lambda d: (is_meta_listing(d), -len(d.records), d.node.id))
    parts = {d.node.id: wider for d in listings if d.node.attrs.get("complete") and (wider := wider_listing(d, listings)) is not None}
    quotas = listing_quotas([d for d in listings if d.node.id not in parts], pool)
    groups: list[list[Task]] = []
    used: list[ListingData] = []
    for data in listings:
        if not data.node.attrs.get("complete"):
            # identifying values unique among the records seen may be shared by records not seen
            skipped.append({"listing": data.node.id, "reason": f"listing not seen completely ({len(data.records)} records seen); identifying values could not be checked for uniqueness"})
            continue
        if data.node.id in parts:
            skipped.append({"listing": data.node.id, "reason": f"a part of the complete listing {parts[data.node.id]}: its records are asked about there, where uniqueness holds among all of them"})
            continue
        scope: Scope | str | None = None
        if (field := filtered_on(data)) is not None and isinstance(scope := listing_scope(data, listings), str):
            skipped.append({"listing": data.node.id, "reason": f"its URL filters on its own field {field!r}: a value unique among its records may be shared by records it leaves out ({scope})"})
            continue
        if isinstance(scope, Scope):  # the scope tells the listing apart from a wider one of the same records: its noun is theirs
            data = replace(data, noun=scoped_noun(data))
        askable = [lb for lb, st in sorted(data.stats.items()) if st.askable() and field_phrase(lb).lower() != data.noun]
        if not askable:
            skipped.append({"listing": data.node.id, "reason": "no field worth asking about (numbers, dates or short texts that vary)"})
            continue
        groups.append(_listing_tasks(kg, data, askable, start, seed, quotas[data.node.id], scope if isinstance(scope, Scope) else None))
        used.append(data)
    tasks = interleave([g for g, d in zip(groups, used) if not is_meta_listing(d)]) + interleave([g for g, d in zip(groups, used) if is_meta_listing(d)])
    request.report.generator = {
        "listings": len(listings),
        "start_url": start.attrs.get("url"),
        "tasks": len(tasks),
        "skipped": skipped,
        "nouns": {d.node.id: plural(d.noun) for d in listings},
        "structure_listings": [d.node.id for d in listings if is_meta_listing(d)],
    }
    return Candidates(tasks, {LOOKUP_TEMPLATE: HOPS})

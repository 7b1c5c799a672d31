"""Value flow across listings: a value read in one table names a row of another, and counts of two tables meet in one comparison.

Where no single listing carries value flow (a documentation site: many small tables of text,
none with a number field and two categories), two listings still can:

* **join chains** — two tables seen whole share a field (the same label, at least two values in
  common): level 1 reads a row's value of that field ("the C type of type code 'H'" on the
  array page); level 2 asks another field of the one row of the second table with that value
  ("the standard size of the format with the same C type", on the struct page); level 3 counts
  the second table's other rows sharing a category value with that row; level 4 sets that count
  against the rows of a third table seen whole ("how many more … are listed in the table of the
  page X than …"). The instruction names the first row and the tables, never the value that joins
  them, the row it leads to, nor the count.
* **count graphs** — two tables seen whole on one page each: count each (two independent
  subtasks), then subtract (the third consumes both counts): "how many more formats does the
  struct page's table list than type codes the array page's table".

Every gold is re-derived by a second route before replay: the tables' pages are read again in a
fresh browser context with its clock moved on (:class:`~..web.confirm.Rereader`), the records
rebuilt as a crawl builds them and the answer recomputed from that read (rows counted as the
page shows them, not as records merged); another answer drops the composite.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ...environment.manager import EpisodeManager
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, Provenance, Resource, SuccessCriterion, Subtask, Task
from ..web.compare import ListingGroups
from ..web.confirm import Rereader, reread_graph
from ..web.lookup import ListingData, describe_record, gives_away, identify, is_meta_listing, listing_data, short_title, site_order, site_suffix, start_page, unique_key, wider_listing
from ..web.phrasing import FOOTNOTE_MARK, answer_metrics, field_noun, plural, quoted
from ..web.style import instruction_style
from .dag import verify_composite
from .flow import MAX_SET
from .flowcompose import ChainStop, FlowResult, shape_graph, verify_levels
from .flowtasks import leaks

__all__ = ["Join", "joins", "compose_join_chains", "compose_count_graphs"]



def _norm(text: str) -> str:
    """A label as compared across tables ("Python type" is "Python Type")."""
    return " ".join(str(text).split()).casefold()


def _same_value(text: str) -> str:
    """A value as compared across tables: spacing aside, exactly (format "b" is not "B")."""
    return " ".join(str(text).split())


def _raw(record: Node, label: str) -> str | None:
    field = record.attrs.get("fields", {}).get(label) or {}
    return None if field.get("type") in (None, "missing") else str(field.get("raw"))


@dataclass
class Join:
    """Row ``source`` of ``a`` and the one row ``target`` of ``b`` with its value of the shared field (``label_a`` / ``label_b``)."""

    a: ListingData
    b: ListingData
    label_a: str
    label_b: str
    source: Node
    naming: list[str]  # the labels that identify ``source`` in ``a``
    target: Node

    @property
    def value(self) -> str:
        return str(_raw(self.source, self.label_a))


def _whole(kg: KnowledgeGraph) -> list[ListingData]:
    """Listings seen completely on one page, not the site's own structure, not a filter of a wider one."""
    datas = listing_data(kg)
    return [
        d for d in datas
        if d.node.attrs.get("complete") and len(d.node.attrs.get("pages") or []) == 1 and not is_meta_listing(d) and wider_listing(d, datas) is None
    ]


def _place(kg: KnowledgeGraph, data: ListingData) -> str:
    """Where the listing is, as an instruction says it: its table and page ("in the table of the page “array — …”"); cards are
    "on the page …". A table is always named as one: "the functions on the page “Call Protocol”" would count the page's prose too."""
    if data.where:
        return data.where
    titles = [str(p.attrs.get("title") or "") for p in kg.nodes("page")]
    title = next((str(p.attrs.get("title") or "") for p in kg.nodes("page") if p.attrs.get("url") == data.node.attrs.get("url")), "")
    if not title:
        return ""
    return f"{'in the table of' if data.node.attrs.get('shown_as') == 'table' else 'on'} the page {quoted(short_title(title, site_suffix(titles)))}"


def joins(kg: KnowledgeGraph) -> list[Join]:
    """Every join the crawl proves: both tables whole, the shared label with two or more values in common, the value on exactly one row of ``b``."""
    out: list[Join] = []
    listings = _whole(kg)
    for a, b in itertools.permutations(listings, 2):
        if a.node.attrs.get("url") == b.node.attrs.get("url"):
            continue
        labels_b = {_norm(lb): lb for lb in b.stats}
        for label_a in a.stats:
            label_b = labels_b.get(_norm(label_a))
            if label_b is None:
                continue
            rows_b: dict[str, list[Node]] = {}
            for record in b.records:
                if (raw := _raw(record, label_b)) is not None:
                    rows_b.setdefault(_same_value(raw), []).append(record)
            shared = {v for r in a.records if (raw := _raw(r, label_a)) is not None and len(rows_b.get(v := _same_value(raw), [])) == 1 and len(v) >= 3 and not FOOTNOTE_MARK.match(v)}
            if len(shared) < 2:
                continue  # one common value may be chance; two or more say the columns hold the same kind of thing
            for source in a.records:
                raw = _raw(source, label_a)
                if raw is None or _same_value(raw) not in shared:
                    continue
                naming = identify(a, source, label_a)
                if naming and not any(FOOTNOTE_MARK.match(_same_value(str(_raw(source, lb)))) for lb in naming):  # a row named by a footnote mark ("(6)") is not named
                    out.append(Join(a, b, label_a, label_b, source, naming, rows_b[_same_value(raw)][0]))
    return sorted(out, key=lambda j: (site_order(j.a.node), site_order(j.b.node), j.label_a, site_order(j.source), j.source.id))


def _asked(join: Join, rng: np.random.Generator) -> str | None:
    """A field of the target row to ask at level 2: askable in ``b``, not the shared one, its value not the joining one nor a footnote mark ("(4)")."""
    labels = [
        lb for lb, st in join.b.stats.items()
        if lb != join.label_b and st.askable() and (raw := _raw(join.target, lb)) is not None and _same_value(raw) != _same_value(join.value) and not FOOTNOTE_MARK.match(_same_value(raw)) and st.values.get(raw, 0) < len(join.b.records)
    ]
    return labels[int(rng.integers(len(labels)))] if labels else None


def _category(join: Join) -> tuple[str, list[Node]] | None:
    """A category of ``b`` whose value the target shares with 2 to :data:`MAX_SET` other rows (level 3 counts them)."""
    groups = ListingGroups(join.b)
    for label in groups.categories:
        raw = _raw(join.target, label)
        if raw is None or label == join.label_b:
            continue
        others = [r for r in join.b.records if r.id != join.target.id and _raw(r, label) == raw]
        if 2 <= len(others) <= MAX_SET:
            return label, others
    return None


def _third(kg: KnowledgeGraph, join: Join, count: int) -> ListingData | None:
    """A third table seen whole, placed apart from the other two (its own heading or page), with more rows than ``count`` (level 4
    asks by how many), first in site order."""
    used = {join.a.node.id, join.b.node.id}
    places = {_place(kg, join.a), _place(kg, join.b)}
    found = [
        d for d in _whole(kg)
        if d.node.id not in used and count < len(d.records) <= MAX_SET and (place := _place(kg, d)) and place not in places and any(_shows(d, r) for r in d.records)
    ]
    return min(found, key=lambda d: (site_order(d.node), d.node.id), default=None)


def _page(data: ListingData) -> str:
    return str((data.node.attrs.get("pages") or [data.node.attrs.get("url")])[0])


def _navigate(urls: list[str], start_url: str, pages: dict[str, Node]) -> list[GoldStep]:
    out: list[GoldStep] = []
    for url in dict.fromkeys(u for u in urls if u != start_url):
        node = pages.get(url)
        out.append(GoldStep(action="navigate", text=url, node_id=node.id if node else None, canonical=f"navigate(url={url!r})"))
    return out


def _shows(data: ListingData, record: Node) -> list[SuccessCriterion]:
    """The check that the record was looked at: a one-word value only it has, else the first of the values that identify it."""
    key = unique_key(data, record) or next((_raw(record, lb) for lb in identify(data, record, "") or []), None)
    return [SuccessCriterion(kind="text_present", value=key, scope="main", whole_words=True)] if key else []


def _base(kg: KnowledgeGraph, start: Node) -> dict[str, Any]:
    start_url = str(start.attrs["url"])
    return {"start_url": start_url, "allowed_domains": list(kg.meta.stats.get("allowed_domains") or [urlparse(start_url).hostname or ""])}


def _lead(place: str, question: str) -> str:
    """"In the table of the page “…”, what is …?" (the place first, so the rest of the sentence stays short)."""
    return f"{place[0].upper()}{place[1:]}, {question}" if place else question[0].upper() + question[1:]


def join_level(kg: KnowledgeGraph, join: Join, level: int, asked: str | None, start: Node, seed: int, chain_id: str, third: ListingData | None = None) -> tuple[Task | None, str]:
    """The level-``level`` task of a join chain (1: the shared value; 2: a field of the row it leads to; 3: the rows sharing that row's
    category; 4: how many more rows ``third`` lists than that count)."""
    a, b = join.a, join.b
    place_a, place_b = _place(kg, a), _place(kg, b)
    source = describe_record(a, join.source, join.naming) + (f" {place_a}" if place_a and not a.where else "")  # the row's table is always said
    field = field_noun(join.label_a)
    target_naming = identify(b, join.target, "") or []
    hidden = list(dict.fromkeys([join.value, a.short(join.label_a, join.value)] + [str(_raw(join.target, lb)) for lb in target_naming]))
    category = _category(join) if level >= 3 else None
    if level == 1:
        instruction, answer, kind = f"What is the {field} of {source}?", a.short(join.label_a, join.value), "text"
        hidden = []
    elif level == 2:
        if asked is None:
            return None, "the row the value leads to has no other field worth asking"
        answer, kind = b.short(asked, str(_raw(join.target, asked))), "text"
        instruction = _lead(place_b, f"what is the {field_noun(asked)} of the {b.noun} with the same {field} as {source}?")
    elif category is None:
        return None, "the row the value leads to shares no category value with 2 or more other rows of its table"
    elif level == 4 and third is None:
        return None, f"no third table seen whole lists more than {len(category[1])} rows to set the count against"
    else:
        label, others = category
        hidden.append(str(_raw(join.target, label)))
        answer, kind = str(len(others)), "number"
        instruction = _lead(place_b, f"how many other {plural(b.noun)} have the same {field_noun(label)} as the {b.noun} with the same {field} as {source}?")
        if level == 4 and third is not None:
            hidden.append(answer)
            answer = str(len(third.records) - len(others))
            others_b = f"other {plural(b.noun)} {place_b}" if place_b else f"other {plural(b.noun)}"
            instruction = f"How many more {plural(third.noun)} are listed {_place(kg, third)} than {others_b} with the same {field_noun(label)} as the {b.noun} with the same {field} as {source}?"
    said = instruction.casefold().split(place_b.casefold()) if place_b else []
    if level >= 3 and len(said) > 2:
        return None, "the instruction names the second table twice"
    if leaked := leaks(instruction, [h for h in hidden if h != answer], (b.noun, plural(b.noun))):
        return None, f"the instruction states intermediate values {leaked}"
    if gives_away(answer, instruction, [str(_raw(join.source, lb)) for lb in join.naming]) and kind == "text":
        return None, "the question holds its own answer"
    if (style := instruction_style(instruction)).style != "goal":
        return None, f"the instruction reads as a script ({style.reason})"
    pages = {str(p.attrs.get("url")): p for p in kg.nodes("page") if not p.attrs.get("state")}
    start_url = str(start.attrs["url"])
    gold = _navigate([_page(a)] + ([_page(b)] if level >= 2 else []) + ([_page(third)] if level >= 4 and third is not None else []), start_url, pages)
    ids = [f"s{i}" for i in range(1, level + 1)]
    value = Resource(kind="field_value", name=f"s1:{join.label_a}={join.value}")
    subtasks = [Subtask(id="s1", instruction=f"Find {source} and note its {field}", category=urlparse(_page(a)).path, outputs=[value], checks=_shows(a, join.source))]
    if level >= 2:
        note = field_noun(category[0]) if category else field_noun(asked or join.label_b)
        subtasks.append(Subtask(id="s2", instruction=f"Find the {b.noun} {place_b} with that {field} and note its {note}".replace("  ", " "), category=urlparse(_page(b)).path,
                                inputs=[value], outputs=[Resource(kind="record", name=f"s2:{join.target.id}")], checks=_shows(b, join.target)))
    if category is not None:
        label, others = category
        subtasks.append(Subtask(id="s3", instruction=f"Count the other {plural(b.noun)} with that {field_noun(label)}", category=urlparse(_page(b)).path,
                                inputs=[subtasks[1].outputs[0]], outputs=[Resource(kind="record_set", name="s3:" + "|".join(sorted(r.id for r in others)))], checks=_shows(b, others[0])))
    if level >= 4 and third is not None:
        shown = next(r for r in third.records if _shows(third, r))
        subtasks.append(Subtask(id="s4", instruction=f"Count the {plural(third.noun)} {_place(kg, third)} and subtract that count from it", category=urlparse(_page(third)).path,
                                inputs=[subtasks[2].outputs[0]], outputs=[Resource(kind="field_value", name=f"s4:answer={answer}")], checks=_shows(third, shown)))
    return Task(
        id=f"chain-{chain_id}-l{level}",
        kind="composite",
        type="chained",
        difficulty="easy" if level == 1 else "medium" if level < 4 else "hard",
        instruction=instruction,
        gold_steps=gold,
        gold_answer=answer,
        answer_kind=kind,  # type: ignore[arg-type]
        metrics=answer_metrics(kind),
        subtasks=subtasks,
        dag=[(ids[i], ids[i + 1]) for i in range(level - 1)],
        level=level,
        evidence=[a.node.id, join.source.id] + ([b.node.id, join.target.id] if level >= 2 else []) + ([third.node.id] if level >= 4 and third is not None else []),
        provenance=Provenance(graph_id=kg.id, template=f"{a.node.id}>{b.node.id}", generator="compose-join", model="none", seed=seed),
        quality={
            "answer_visible": kind == "text",
            "flow": {"chain": chain_id, "join": _join_record(join, asked, category[0] if category else None, third if level >= 4 else None), "hidden": hidden},
        },
        **_base(kg, start),
    ), ""


def _join_record(join: Join, asked: str | None, category: str | None, third: ListingData | None) -> dict[str, Any]:
    return {
        "a": join.a.node.id, "b": join.b.node.id, "label_a": join.label_a, "label_b": join.label_b,
        "identify": {lb: _raw(join.source, lb) for lb in join.naming}, "asked": asked, "category": category,
        **({"third": third.node.id, "third_key": third.node.attrs.get("key")} if third is not None else {}),
    }


def _listing_by_key(kg: KnowledgeGraph, key: str) -> ListingData | None:
    return next((d for d in listing_data(kg) if d.node.attrs.get("key") == key), None)


def recompute_join(kg: KnowledgeGraph, keys: tuple[str, str], spec: dict[str, Any], level: int) -> str | None:
    """A join chain's level-``level`` answer over ``kg``'s records (the crawl's, or a second read's), None when the join does not hold there."""
    a, b = (_listing_by_key(kg, k) for k in keys)
    if a is None or b is None or not a.node.attrs.get("complete") or not b.node.attrs.get("complete"):
        return None
    sources = [r for r in a.records if all(_raw(r, lb) == raw for lb, raw in spec["identify"].items())]
    value = _raw(sources[0], spec["label_a"]) if len(sources) == 1 else None
    if value is None:
        return None
    if level == 1:
        return a.short(spec["label_a"], value)
    targets = [r for r in b.records if _same_value(_raw(r, spec["label_b"]) or "") == _same_value(value)]
    if len(targets) != 1:
        return None
    target = targets[0]
    if level == 2:
        raw = _raw(target, spec["asked"]) if spec.get("asked") else None
        return None if raw is None else b.short(spec["asked"], raw)
    shared = _raw(target, spec["category"]) if spec.get("category") else None
    if shared is None:
        return None
    count = sum(1 for r in b.records if r.id != target.id and _raw(r, spec["category"]) == shared)
    if level == 3:
        return str(count)
    third = _listing_by_key(kg, str(spec.get("third_key")))
    return None if third is None or not third.node.attrs.get("complete") else str(len(third.records) - count)


async def _second_read(reader: Rereader, kg: KnowledgeGraph, listings: list[ListingData]) -> KnowledgeGraph | str:
    return await reread_graph(reader, list(dict.fromkeys(_page(d) for d in listings)))


async def confirm_join(reader: Rereader, kg: KnowledgeGraph, join: Join, task: Task) -> str | None:
    """None when the crawl's records and a second read of both pages give the task's answer, else why not."""
    spec, keys, level = task.quality["flow"]["join"], (str(join.a.node.attrs["key"]), str(join.b.node.attrs["key"])), int(task.level or 1)
    first = recompute_join(kg, keys, spec, level)
    if first != task.gold_answer:
        return f"routes disagree: recomputed from the crawled records, the answer is {first!r}, not {task.gold_answer!r}"
    third = _listing_by_key(kg, str(spec.get("third_key"))) if level >= 4 else None
    fresh = await _second_read(reader, kg, [join.a, join.b] + ([third] if third is not None else []))
    if isinstance(fresh, str):
        return f"unconfirmed: {fresh}"
    again = recompute_join(fresh, keys, spec, level)
    if again != task.gold_answer:
        return f"volatile: read again in a fresh browser with the clock moved on, the answer is {again!r}, not {task.gold_answer!r}"
    pages = {_page(join.a), _page(join.b)} | ({_page(third)} if third is not None else set())
    task.quality["confirmed"] = [f"recomputed from the crawled records: {first!r}", f"second read of {len(pages)} pages: {again!r}"]
    return None


def _spread(found: list[Join], rng: np.random.Generator) -> list[Join]:
    """Joins in a seeded order that takes each table pair's rows in turn (not eight chains over one pair before another's first)."""
    by_pair: dict[tuple[str, str, str], list[Join]] = {}
    for join in found:
        by_pair.setdefault((join.a.node.id, join.b.node.id, join.label_a), []).append(join)
    queues = [[group[int(i)] for i in rng.permutation(len(group))] for _, group in sorted(by_pair.items())]
    queues = [queues[int(i)] for i in rng.permutation(len(queues))]
    out: list[Join] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


_NO_JOIN = "no two tables seen whole on one page each share a field (the same label, two or more values in common, each on one row of the second)"


async def compose_join_chains(kg: KnowledgeGraph, episodes: EpisodeManager, count: int, levels: int, seed: int) -> FlowResult:
    """``count`` join chains, each giving its verified levels 1..4 (fewer when ``levels`` is smaller or a level cannot be made)."""
    result = FlowResult()
    start, found = start_page(kg), joins(kg)
    if start is None or not found:
        result.reason = _NO_JOIN if start is not None else "the graph has no start page"
        return result
    reader = Rereader(episodes.pool, kg)
    try:
        seen: set[str] = set()
        for index, join in enumerate(_spread(found, np.random.default_rng([seed, 17]))):
            if len(result.chains) >= count:
                break
            if join.source.id in seen:
                continue
            seen.add(join.source.id)
            chain_id = hashlib.sha1(f"{kg.id}|{join.a.node.attrs.get('key')}|{join.b.node.attrs.get('key')}|{site_order(join.source)}|{seed}".encode()).hexdigest()[:10]
            asked = _asked(join, np.random.default_rng([seed, index]))
            category = _category(join)
            third = _third(kg, join, len(category[1])) if category is not None else None
            made = (join_level(kg, join, level, asked, start, seed, chain_id, third) for level in range(1, min(levels, 4) + 1))

            async def confirm(task: Task, join: Join = join) -> str | None:
                return await confirm_join(reader, kg, join, task)

            last = "no follow-up consumes the difference (level 4 is a join chain's last)" if levels >= 4 else f"the step budget ran out at level {levels}"
            reached, stopped = await verify_levels(made, episodes, result, last, confirm)
            result.chains.append(ChainStop(chain=chain_id, listing=f"{join.a.node.id}>{join.b.node.id}", reached=reached, stopped=stopped))
    finally:
        await reader.close()
    return result


def _rows_shown(blocks: list[Any], data: ListingData) -> bool:
    """Whether a second read shows the table with as many rows as the listing has records (a row merged into another would differ)."""
    table, columns = data.node.attrs.get("table"), list(data.node.attrs.get("columns") or [])
    return any(len(b.rows) == len(data.records) for b in blocks if b.kind == "table" and (not table or b.title == table) and list(b.columns) == columns)


def count_graph(kg: KnowledgeGraph, a: ListingData, b: ListingData, start: Node, seed: int) -> Task | None:
    """Count two tables, subtract: three subtasks, the first two independent (two orders)."""
    if len(b.records) > len(a.records):
        a, b = b, a
    place_a, place_b = _place(kg, a), _place(kg, b)
    shown_a = next((r for r in a.records if _shows(a, r)), None)
    shown_b = next((r for r in b.records if _shows(b, r)), None)
    if not place_a or not place_b or shown_a is None or shown_b is None:
        return None
    answer = str(len(a.records) - len(b.records))
    set_a = Resource(kind="record_set", name="s1:" + "|".join(sorted(r.id for r in a.records)))
    set_b = Resource(kind="record_set", name="s2:" + "|".join(sorted(r.id for r in b.records)))
    subtasks = [
        Subtask(id="s1", instruction=f"Count the {plural(a.noun)} {place_a}", category=urlparse(_page(a)).path, outputs=[set_a], checks=_shows(a, shown_a)),
        Subtask(id="s2", instruction=f"Count the {plural(b.noun)} {place_b}", category=urlparse(_page(b)).path, outputs=[set_b], checks=_shows(b, shown_b)),
        Subtask(id="s3", instruction="Subtract the second count from the first", category=urlparse(_page(a)).path, inputs=[set_a, set_b],
                outputs=[Resource(kind="field_value", name=f"answer={answer}")], checks=_shows(a, shown_a)),
    ]
    pages = {str(p.attrs.get("url")): p for p in kg.nodes("page") if not p.attrs.get("state")}
    digest = hashlib.sha1(repr((kg.id, a.node.attrs.get("key"), b.node.attrs.get("key"), seed)).encode()).hexdigest()[:12]
    return Task(
        id=f"dag-{digest}",
        kind="composite",
        type="task_graph",
        difficulty="medium",
        instruction="",
        gold_steps=_navigate([_page(a), _page(b)], str(start.attrs["url"]), pages),
        gold_answer=answer,
        answer_kind="number",
        metrics=answer_metrics("number"),
        subtasks=subtasks,
        evidence=[a.node.id, b.node.id],
        provenance=Provenance(graph_id=kg.id, template=f"{a.node.id}-{b.node.id}", generator="compose-count-graph", model="none", seed=seed),
        quality={
            "intent": f"find how many more {plural(a.noun)} are listed {place_a} than {plural(b.noun)} {place_b}",
            "answer_visible": False,
            "flow": {"counts": {a.node.id: len(a.records), b.node.id: len(b.records)}, "hidden": [str(len(a.records)), str(len(b.records))]},
        },
        **_base(kg, start),
    )


async def _confirm_counts(reader: Rereader, a: ListingData, b: ListingData) -> str | None:
    for data in (a, b):
        blocks = await reader.read(_page(data))
        if isinstance(blocks, str):
            return f"unconfirmed: {_page(data)} could not be read again: {blocks}"
        if not _rows_shown(blocks, data):
            return f"routes disagree: read again, no table {data.node.attrs.get('table')!r} of {_page(data)} shows {len(data.records)} rows"
    return None


async def compose_count_graphs(kg: KnowledgeGraph, episodes: EpisodeManager, count: int, seed: int, llm: Any = None, capability: str | None = None) -> FlowResult:
    """``count`` task graphs over pairs of whole tables on different pages (see the module docstring), each confirmed, consistency-checked and replayed."""
    result = FlowResult()
    start = start_page(kg)
    listings = [d for d in _whole(kg) if 3 <= len(d.records) <= MAX_SET]
    pairs = [(a, b) for a, b in itertools.combinations(listings, 2) if a.node.attrs.get("url") != b.node.attrs.get("url") and len(a.records) != len(b.records)]
    if start is None or not pairs:
        result.reason = "no two tables seen whole on one page each, on different pages, list different numbers (3 to 40) of rows" if start is not None else "the graph has no start page"
        return result
    order = np.random.default_rng([seed, 23]).permutation(len(pairs))
    reader = Rereader(episodes.pool, kg)
    used: set[str] = set()
    try:
        for index in order[: count * 4]:
            if len(result.tasks) >= count:
                break
            a, b = pairs[int(index)]
            if a.node.id in used and b.node.id in used:
                continue
            task = count_graph(kg, a, b, start, seed)
            if task is None:
                continue
            if (dropped := await shape_graph(task, seed, llm, capability)) is not None:
                result.dropped.append((task.id, dropped))
                continue
            failed = await _confirm_counts(reader, a, b) or await verify_composite(task, episodes)
            if failed is not None:
                result.dropped.append((task.id, failed))
                continue
            task.quality["confirmed"] = [f"rows of both tables read again: {len(a.records)} and {len(b.records)}"]
            used |= {a.node.id, b.node.id}
            result.tasks.append(task)
    finally:
        await reader.close()
    if not result.tasks:
        why = "; ".join(f"{tid}: {reason}" for tid, reason in result.dropped[:3]) or "no pair gave a task"
        result.reason = f"no count graph over {len(pairs)} pairs of whole tables: {why}"
    return result

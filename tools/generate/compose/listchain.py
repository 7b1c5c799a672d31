"""Chains and task graphs on a list app (TodoMVC and its kind): later steps act on the state earlier steps left.

The material is what :func:`..web.change.list_apps` read from the crawl's app states: how an item is added, its own
checkbox, and the routes that show only open or only done items. No value leaves the page, so a chain's dependence is
the state itself: a step names an item by where the list shows it ("the item listed last") in the view an earlier
step chose, and a view hides what an earlier step changed. A chain (items A, B, C drawn from a neutral vocabulary):

1. add A, B and C;
2. mark the item listed second done (B);
3. have the list show only the items still open (A, C; B is stored, hidden);
4. in that view, mark the item listed last done (C leaves the view);
5. switch to the completed items and reopen the one listed first (B leaves the view; C stays, done);
6. add D without leaving that view (it is open, so the view hides it; stored).

Each subtask's checks are the whole state right after it (the exact items in view with their states, the view's URL,
the items the view hides but the app still stores); level k is checked on subtask k's; the graph evaluator sees each
earlier subtask's checks hold at some point of the replay. A level needing a view the app lacks stops the chain, with
the reason. A task graph: ``s1`` adds A and marks it done, ``s2`` adds B and C (either order), ``s3`` shows one view,
checked on what it shows; every order is replayed in a fresh state.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import urlparse

from ...environment.manager import EpisodeManager
from ...graph.model import KnowledgeGraph
from ...tasks.model import GoldStep, Provenance, Resource, Subtask, SuccessCriterion, Task
from ..web.change import ITEM_TEXTS, ListApp, _item_toggle, _listing, _rng, _view_url, list_apps
from .dag import shaped
from .flowcompose import ChainStop, FlowResult, verify_levels
from .levels import level_difficulty
from .stategraph import _verify_orders

__all__ = ["compose_list_chains", "compose_list_graphs"]

_Part = tuple[str, list[GoldStep], list[SuccessCriterion]]


def _items(shown: dict[str, str], hidden: list[str] | None = None, url: str | None = None) -> list[SuccessCriterion]:
    """The whole state: exactly ``shown`` in view, the view's URL, and ``hidden`` items still stored."""
    checks = [SuccessCriterion(kind="items", value=json.dumps(shown, ensure_ascii=False))]
    checks += [SuccessCriterion(kind="url_matches", value=url)] if url else []
    return checks + [SuccessCriterion(kind="stored", value=t) for t in hidden or []]


def _add(app: ListApp, texts: list[str]) -> list[GoldStep]:
    return [GoldStep(action="type", selector=app.adder["selector"], text=t, submit=True) for t in texts]


def _toggle(app: ListApp, text: str) -> GoldStep:
    return GoldStep(action="click", selector=_item_toggle(app.toggle, text))


def _view(app: ListApp, view: str) -> tuple[GoldStep, str]:
    target = app.views[view]
    return GoldStep(action="click", selector=target["selector"], node_id=target["node_id"]), _view_url(str(app.base.attrs["url"]), str(target["route"]))


def _parts(app: ListApp, a: str, b: str, c: str, d: str) -> tuple[list[_Part], str]:
    """The chain's subtasks in order, as far as the app's views allow, and why it stops there."""
    parts: list[_Part] = [
        (f"add {_listing([a, b, c])} to the list", _add(app, [a, b, c]), _items({a: "unchecked", b: "unchecked", c: "unchecked"})),
        ("mark the item listed second done", [_toggle(app, b)], _items({a: "unchecked", b: "checked", c: "unchecked"})),
    ]
    if "open" not in app.views:
        return parts, "level 3: the app shows no view of open items only"
    click, url = _view(app, "open")
    parts += [
        ("have the list show only the items still open", [click], _items({a: "unchecked", c: "unchecked"}, [b], url)),
        ("in that view, mark the item listed last done", [_toggle(app, c)], _items({a: "unchecked"}, [b, c], url)),
    ]
    if "done" not in app.views:
        return parts, "level 5: the app shows no view of done items only"
    click, url = _view(app, "done")
    parts += [
        ("switch to the completed items only and reopen the one listed first", [click, _toggle(app, b)], _items({c: "checked"}, [a, b], url)),
        (f"add “{d}” without leaving that view", _add(app, [d]), _items({c: "checked"}, [a, b, d], url)),
    ]
    return parts, ""


def _level(kg: KnowledgeGraph, app: ListApp, parts: list[_Part], chain_id: str, level: int, seed: int) -> Task:
    chosen = parts[:level]
    first = chosen[0][0]
    instruction = first[:1].upper() + first[1:] + "." + (f" Then {'; '.join(p[0] for p in chosen[1:-1])}{'; and ' if level > 2 else ''}{chosen[-1][0]}." if level > 1 else "")
    ids = [f"s{i}" for i in range(1, level + 1)]
    start = str(app.base.attrs["url"])
    return Task(
        id=f"chain-{chain_id}-l{level}",
        kind="composite",
        type="chained",
        difficulty=level_difficulty(level),
        instruction=instruction,
        start_url=start,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start).hostname or ""]),
        gold_steps=[s for p in chosen for s in p[1]],
        success=list(chosen[-1][2]),
        subtasks=[Subtask(id=i, instruction=p[0], category="application", gold_steps=p[1], checks=p[2]) for i, p in zip(ids, chosen)],
        dag=[(ids[i], ids[i + 1]) for i in range(level - 1)],
        level=level,
        provenance=Provenance(graph_id=kg.id, template="list-chain", generator="compose-chain", model="none", seed=seed),
        quality={"flow": {"chain": chain_id, "hidden": [], "steps": [p[0] for p in chosen]}},
    )


def _draw(kg: KnowledgeGraph, app: ListApp, seed: int, index: int, k: int) -> list[str]:
    rng = _rng(seed, kg.id, str(app.base.attrs["url"]), "composite", str(index))
    return [ITEM_TEXTS[int(i)] for i in rng.choice(len(ITEM_TEXTS), size=k, replace=False)]


async def compose_list_chains(kg: KnowledgeGraph, episodes: EpisodeManager, count: int, levels: int, seed: int) -> FlowResult:
    """Up to ``count`` chains on the graph's first list app, each giving its verified levels 1..min(levels, 6)."""
    result = FlowResult()
    apps = list_apps(kg)
    if not apps:
        result.reason = "no list app in the crawl's app states (an input that adds items, each with its own checkbox)"
        return result
    app = apps[0]
    for index in range(count):
        a, b, c, d = _draw(kg, app, seed, index, 4)
        chain_id = hashlib.sha1(f"{kg.id}|list-chain|{app.base.attrs['url']}|{index}|{seed}".encode()).hexdigest()[:10]
        parts, short = _parts(app, a, b, c, d)
        made = [(_level(kg, app, parts, chain_id, level, seed), "") for level in range(1, min(levels, len(parts)) + 1)]
        budget = short if short and levels > len(parts) else f"the step budget ran out at level {min(levels, len(parts))}"
        reached, stopped = await verify_levels(made, episodes, result, budget)
        result.chains.append(ChainStop(chain=chain_id, listing=str(app.base.attrs["url"]), reached=reached, stopped=stopped))
    return result


async def compose_list_graphs(kg: KnowledgeGraph, episodes: EpisodeManager, count: int, seed: int) -> FlowResult:
    """Up to ``count`` task graphs on the graph's first list app: two independent changes, then one view (alternating)."""
    result = FlowResult()
    apps = [app for app in list_apps(kg) if app.views]
    if not apps:
        result.reason = "no list app with a view of open or done items only in the crawl's app states"
        return result
    app, views = apps[0], sorted(apps[0].views, reverse=True)  # "open" first
    for index in range(count):
        a, b, c = _draw(kg, app, seed, 100 + index, 3)
        view = views[index % len(views)]
        task = _graph(kg, app, a, b, c, view, seed)
        failed = await _verify_orders(task, episodes)
        if failed is not None:
            result.dropped.append((task.id, failed))
            continue
        result.tasks.append(task)
    if not result.tasks:
        result.reason = "every list task graph failed: " + "; ".join(why for _, why in result.dropped[:3])
    return result


def _graph(kg: KnowledgeGraph, app: ListApp, a: str, b: str, c: str, view: str, seed: int) -> Task:
    """``s1`` adds A and marks it done ∥ ``s2`` adds B and C → ``s3`` shows only open (or only done) items."""
    done, added = Resource(kind="record", name=f"{a} done"), Resource(kind="record", name=f"{b} and {c} added")
    click, url = _view(app, view)
    shown = {b: "unchecked", c: "unchecked"} if view == "open" else {a: "checked"}
    hidden = [a] if view == "open" else [b, c]
    say = "have the list show only the items still open" if view == "open" else "have the list show only the completed items"
    subtasks = [
        Subtask(id="s1", instruction=f"add “{a}” to the list and mark it done", category="application", gold_steps=[*_add(app, [a]), _toggle(app, a)],
                checks=[SuccessCriterion(kind="element_state", value=_item_toggle(app.toggle, a), state="checked")], outputs=[done]),
        Subtask(id="s2", instruction=f"add {_listing([b, c])} to the list", category="application", gold_steps=_add(app, [b, c]),
                checks=[SuccessCriterion(kind="element_state", value=_item_toggle(app.toggle, t), state="unchecked") for t in (b, c)], outputs=[added]),
        Subtask(id="s3", instruction=say, category="application", gold_steps=[click], checks=_items(shown, hidden, url), inputs=[done, added]),
    ]  # fmt: skip
    digest = hashlib.sha1(f"{kg.id}|list-graph|{a}|{b}|{c}|{view}|{seed}".encode()).hexdigest()[:12]
    start = str(app.base.attrs["url"])
    task = Task(
        id=f"dag-{digest}",
        kind="composite",
        type="task_graph",
        difficulty="medium",
        instruction=f"Make two changes, in either order: {subtasks[0].instruction}; {subtasks[1].instruction}. Once both are done, {say}.",
        start_url=start,
        allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start).hostname or ""]),
        gold_steps=[s for sub in subtasks for s in sub.gold_steps],
        success=list(subtasks[2].checks),
        subtasks=subtasks,
        provenance=Provenance(graph_id=kg.id, template="list-graph", generator="compose-dag", model="none", seed=seed),
        quality={"intent": "two independent changes to a list, then a view that shows what both did", "flow": {"hidden": [], "steps": [s.instruction for s in subtasks]}},
    )
    return shaped(task, seed)

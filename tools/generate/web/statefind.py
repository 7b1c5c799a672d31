"""Find targets that are app states: a passage a single-page app shows only after its own controls are used.

A state the crawl reached from a fresh load by clicks and client-side routes (never by typing:
a sample value is no goal) whose main text holds a plain sentence that neither the fresh load nor
any other page or state shows becomes a task: bring that passage up without leaving the page.
Criteria: the page (``page_is``, fragment free) and the sentence in the main content
(``text_present``); any route to a view showing it passes. A sentence whose words are mostly the
names of the controls on the way is skipped (a word matcher would follow them). The gold steps
are the state's recorded actions; replay at generation proves them from a fresh load.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlparse

from ...environment.canonical import canonical
from ...graph.model import KnowledgeGraph, Node
from ...graph.web.capture import normalize_url
from ...graph.web.fulltext import appears_in
from ...tasks.model import GoldStep, Provenance, SuccessCriterion, Task
from .find import norm_text, own_content, page_sentences, sentence_opener, task_rng, word_overlap

__all__ = ["state_find_tasks", "STATE_TEMPLATES"]

STATE_TEMPLATES = (
    "Without leaving this page, bring up the passage that says: “{sentence}”",
    "Make the page show the text that reads: “{sentence}”",
    "Stay on this page and open the part of it where you can read: “{sentence}”",
)


def _steps(kg: KnowledgeGraph, base: Node, via: list[dict[str, Any]]) -> list[GoldStep] | None:
    """The state's actions as gold steps (None when one types or names no control)."""
    url = str(base.attrs["url"])
    by_selector = {str(n.attrs.get("selector")): n.id for kind in ("link", "button", "tab", "checkbox") for n in kg.nodes(kind) if url in (n.attrs.get("pages") or [])}
    steps: list[GoldStep] = []
    for action in via:
        if action["kind"] == "route":
            target = f"{url.split('#', 1)[0]}#{str(action.get('value') or '').lstrip('#')}"
            steps.append(GoldStep(action="navigate", text=target, canonical=canonical("navigate", url=target)))
        elif action["kind"] == "click" and action.get("selector"):
            steps.append(GoldStep(action="click", selector=str(action["selector"]), node_id=by_selector.get(str(action["selector"]))))
        else:
            return None
    return steps


def _elsewhere(kg: KnowledgeGraph, state: Node, sentence: str) -> bool:
    """Whether a page or state other than ``state`` (its fresh load included) shows the sentence."""
    key = norm_text(sentence)
    return any(
        other.id != state.id and (key in norm_text(other.text) or appears_in(sentence, frozenset(other.attrs.get("text_hashes") or ())))
        for other in kg.nodes("page")
    )


def state_find_tasks(kg: KnowledgeGraph, seed: int, boilerplate: set[str], skipped: dict[str, int]) -> list[Task]:
    """Find tasks whose target is an app state's own passage (see the module docstring), one per state at most."""
    pages = {normalize_url(str(p.attrs["url"])): p for p in kg.nodes("page") if not p.attrs.get("state")}
    tasks: list[Task] = []
    own = own_content(kg)
    for state in sorted((p for p in kg.nodes("page") if p.attrs.get("state")), key=lambda p: str(p.attrs["url"])):
        base = pages.get(normalize_url(str(state.attrs.get("base_url") or "")))
        via = list(state.attrs.get("via") or [])
        steps = None if base is None or not via else _steps(kg, base, via)
        if base is None or steps is None:
            skipped["app state: not reached by clicks and routes from a crawled page"] = skipped.get("app state: not reached by clicks and routes from a crawled page", 0) + 1
            continue
        controls = [str(a.get("name") or "") for a in via]
        sentence = next(
            (
                s
                for s in page_sentences(kg, state, own)
                if sentence_opener(s) not in boilerplate and not _elsewhere(kg, state, s) and word_overlap(s, controls) <= 1 / 3
            ),
            None,
        )
        if sentence is None:
            skipped["app state: no passage only it shows"] = skipped.get("app state: no passage only it shows", 0) + 1
            continue
        rng = task_rng(seed, state.id)
        instruction = STATE_TEMPLATES[int(rng.integers(len(STATE_TEMPLATES)))].format(sentence=sentence)
        start = str(base.attrs["url"])
        digest = hashlib.sha1(f"{kg.id}|find-state|{start}|{state.id}|{instruction}".encode()).hexdigest()[:12]
        tasks.append(
            Task(
                id=f"web-{digest}",
                kind="web",
                type="find",
                difficulty="medium",
                instruction=instruction,
                start_url=start,
                allowed_domains=list(kg.meta.stats.get("allowed_domains") or [urlparse(start).hostname or ""]),
                gold_steps=steps,
                success=[SuccessCriterion(kind="page_is", value=start), SuccessCriterion(kind="text_present", value=sentence, scope="main")],
                provenance=Provenance(graph_id=kg.id, template="find-state", generator="web-find", model="none", seed=seed),
                quality={"target": {"kind": "state", "sentence": sentence, "state": state.id, "via": controls}},
            )
        )
    return tasks

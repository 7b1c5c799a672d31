"""The shipped web meta-paths, in Graph2Eval's three priority tiers.

1. **business** — the path runs through real business data (result rows, records)
   or a filtered result list, so tasks built on it are about the site's content.
2. **general** — common interaction structures: search, forms in dialogs, tabs,
   menus, breadcrumbs, pagination, multi-hop navigation.
3. **basic** — fallbacks that match almost any page (follow a link, press a button).

Generators try :func:`patterns_by_priority` in order and use the first tiers that
match. Each meta-path carries an instruction template whose ``{slot}`` placeholders
are filled with the bound nodes' labels by :meth:`MetaPath.instruction`.

Shapes follow what the web graph builder actually emits (``tools/graph/web/build.py``):
result rows are ``business_data`` nodes inside a ``region`` (the result list), and
their detail links sit in the same or an enclosing region rather than inside the row;
menu items may be attributed to the navigation region around the menu rather than to
the menu itself, which is why ``menu_navigation`` allows one ``<-[contains]- Region``
detour.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from ...errors import NotFoundError
from ...graph.model import KnowledgeGraph
from .engine import Match, Pattern, compile_pattern

__all__ = ["Tier", "TIERS", "MetaPath", "META_PATHS", "get_meta_path", "patterns_by_priority", "node_label"]

Tier = Literal["business", "general", "basic"]
TIERS: tuple[Tier, ...] = ("business", "general", "basic")


def node_label(kg: KnowledgeGraph, node_id: str, limit: int = 80) -> str:
    """A short human label of a node: accessible name, page title, or first line of text."""
    data = kg.g.nodes[node_id]
    attrs = data.get("attrs") or {}
    label = attrs.get("name") or attrs.get("title") or (data.get("text") or "").strip().split("\n", 1)[0] or node_id
    label = re.sub(r"\s+", " ", str(label)).strip()
    return label if len(label) <= limit else label[: limit - 1] + "…"


class MetaPath(BaseModel):
    """A named meta-path: its tier, pattern, task type and instruction template."""

    id: str
    tier: Tier
    pattern: str = Field(description="Graph-regex pattern (see taskloom.tools.generate.metapath.engine).")
    task_type: str = Field(description="Task.type of tasks generated from it.")
    template: str = Field(description="Instruction with {slot} placeholders.")
    description: str = ""

    @property
    def compiled(self) -> Pattern:
        return compile_pattern(self.pattern)

    def instruction(self, kg: KnowledgeGraph, found: Match) -> str:
        """The template with each ``{slot}`` replaced by the label of its bound node."""
        labels = {name: node_label(kg, node) for name, node in found.slots.items()}
        return re.sub(r"\{(\w+)\}", lambda m: labels.get(m.group(1), m.group(0)), self.template)


META_PATHS: tuple[MetaPath, ...] = (
    # ---------------------------------------------------------------- business
    MetaPath(
        id="search_filter_detail",
        tier="business",
        pattern=(
            "SearchBox($q) -[fills]-> Form($search) -[submits]-> Page($results) (-[contains]-> Region)* "
            "-[contains]-> Filter($filter) -[filters]-> Region($list) (<-[contains]- Region)* "
            "-[contains]-> Link($item) -[navigates_to]-> Page($detail)"
        ),
        task_type="search_filter_detail",
        template="Search the site with the '{q}' box, narrow the results with the '{filter}' filter, then open '{item}'.",
        description="Search, filter the result list, open one result's detail page.",
    ),
    MetaPath(
        id="business_detail",
        tier="business",
        pattern="BusinessData($record) (<-[contains]- Region($list)){1,2} -[contains]-> Link($item) -[navigates_to]-> Page($detail)",
        task_type="business_detail",
        template="Find the record '{record}' and open the detail page '{detail}' through the link '{item}'.",
        description="A business record, its list, a detail link next to it and the page it leads to.",
    ),
    MetaPath(
        id="business_lookup",
        tier="business",
        pattern="Page($page) (-[contains]-> Region){0,3} -[contains]-> Region($list)[role=result_list] -[contains]-> BusinessData($record)",
        task_type="business_lookup",
        template="On '{page}', find the entry '{record}' and report its details.",
        description="Read a business record from a result list or table on a page.",
    ),
    # ---------------------------------------------------------------- general
    MetaPath(
        id="search",
        tier="general",
        pattern="SearchBox($q) -[fills]-> Form($search) -[submits]-> Page($results)",
        task_type="search",
        template="Use the '{q}' box to search the site and open the results page '{results}'.",
        description="Type a query into a search box and submit its form.",
    ),
    MetaPath(
        id="modal_form_submit",
        tier="general",
        pattern=(
            "Button($open) -[opens]-> Modal($dialog) -[contains]-> (Input|Select|Checkbox)($field) "
            "-[fills]-> Form($form) <-[controls]- Button($submit)[name~submit]"
        ),
        task_type="modal_form",
        template="Press '{open}', fill in '{field}' in the '{dialog}' dialog and press '{submit}'.",
        description="Open a dialog, fill one of its form fields and submit the form.",
    ),
    MetaPath(
        id="tab_switch",
        tier="general",
        pattern="Tab($tab) -[opens]-> Region($panel)",
        task_type="tab_switch",
        template="Switch to the '{tab}' tab and read its panel.",
        description="Select a tab and read the panel it shows.",
    ),
    MetaPath(
        id="menu_navigation",
        tier="general",
        pattern="Button($trigger) -[opens]-> Menu($menu) (<-[contains]- Region)? -[contains]-> Link($item) -[navigates_to]-> Page($target)",
        task_type="menu_navigation",
        template="Open the '{trigger}' menu and follow '{item}' to '{target}'.",
        description="Open a dropdown menu and follow one of its links.",
    ),
    MetaPath(
        id="breadcrumb_navigation",
        tier="general",
        pattern="Region($crumbs)[name~breadcrumb] -[contains]-> Link($crumb) -[navigates_to]-> Page($target)",
        task_type="breadcrumb_navigation",
        template="Use the breadcrumb link '{crumb}' to go back to '{target}'.",
        description="Follow a breadcrumb trail link (a region named like 'Breadcrumb').",
    ),
    MetaPath(
        id="pagination_browse",
        tier="general",
        pattern="Pagination($pager) -[contains]-> Link($pagelink) -[navigates_to]-> Page($target)",
        task_type="pagination",
        template="Use the pagination control to go to page '{pagelink}' of the results.",
        description="Move through paged results with the pagination links.",
    ),
    MetaPath(
        id="multi_hop_navigation",
        tier="general",
        pattern="Link($first)[href!~#] -[navigates_to]-> Page($via) (-[contains]-> Region* -[contains]-> Link($next) -[navigates_to]-> Page($target)){1,3}",
        task_type="multi_hop_navigation",
        template="Follow '{first}' to '{via}', then keep navigating until you reach '{target}' (last link: '{next}').",
        description="A chain of one to three further page-to-page hops.",
    ),
    MetaPath(
        id="form_fill_submit",
        tier="general",
        pattern="(Input|SearchBox|Select|Checkbox|Filter)($field) -[fills]-> Form($form) -[submits]-> Page($target)",
        task_type="form_fill",
        template="Fill in '{field}' and submit the form to reach '{target}'.",
        description="Fill a form field and submit the form.",
    ),
    # ---------------------------------------------------------------- basic
    MetaPath(
        id="link_click",
        tier="basic",
        pattern="Page($page) -[contains]-> Region* -[contains]-> Link($link) -[navigates_to]-> Page($target)",
        task_type="navigation",
        template="On '{page}', click '{link}' to open '{target}'.",
        description="Follow one link from a page.",
    ),
    MetaPath(
        id="button_click",
        tier="basic",
        pattern="Button($button) -[opens|controls]-> (Modal|Menu|Region|Form|Toast)($target)",
        task_type="click",
        template="Press '{button}' and check what it opens or changes ('{target}').",
        description="Press a button that opens or controls something.",
    ),
)


def get_meta_path(meta_path_id: str) -> MetaPath:
    """The shipped meta-path with this id."""
    for meta_path in META_PATHS:
        if meta_path.id == meta_path_id:
            return meta_path
    raise NotFoundError(f"no meta-path {meta_path_id!r}; known: {', '.join(m.id for m in META_PATHS)}")


def patterns_by_priority(tiers: tuple[Tier, ...] | list[Tier] | None = None) -> list[MetaPath]:
    """Shipped meta-paths ordered business → general → basic (shipping order within a tier)."""
    wanted = set(tiers) if tiers is not None else set(TIERS)
    return [m for tier in TIERS if tier in wanted for m in META_PATHS if m.tier == tier]

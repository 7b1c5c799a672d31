"""Edit a section of a wiki page (issue 33): goals to add a sentence at the end of a named section.

Read from what the crawl observed, never from a site's names:

- **Wiki pages.** A crawled page (no query: the page itself, not an old version or a view)
  with a *text export*: a link of the same path whose only query value names a text format
  (``?format=txt``, ``?action=raw``), fetched once (a GET) at generation; and an *editor
  opener*: a GET form whose action is the same path with ``edit`` in its query, or a link
  named *Edit…*, the control the gold clicks.
- **Editors.** A crawled page at the opener's URL, or at a URL with the same query and
  parent path (another page's editor stands for this one's), holding a POST form with one
  big text box (the tallest, at least 80 px) and a commit button (the first word submits,
  saves, updates…; *Preview* or *Cancel* never).
- **Sections** (:mod:`taskloom.tools.evaluate.sections`): from the export's markup; only
  leaf sections whose heading text is plain words and unique on the page, whose body is
  prose (no code block) are used.

A goal names the page (its title's first part, which its URL path holds), the section and
a new sentence; it states the outcome, never the controls. The gold opens the editor, fills
the text box with the current markup with the sentence as a new paragraph at the end of the
section, and commits. The check is a ``record`` criterion of the *section* form (see
:mod:`taskloom.tools.evaluate.appstate`): after the episode the page's export has the sentence
once, ending that section, whose earlier text and the rest of the page are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlparse

import httpx
import numpy as np

from ...evaluate.sections import Section, flat, sections, split_section, text_digest
from ...graph.model import KnowledgeGraph, Node
from ...tasks.model import GoldStep, SuccessCriterion, Task
from .edit import _COMMIT, _NOT_COMMIT

__all__ = ["WikiPage", "wiki_pages", "wiki_tasks", "with_sentence", "SENTENCES"]

#: Query values that ask for a page's markup as text.
_TEXT_VALUES = frozenset({"txt", "text", "raw", "plain", "source", "markdown", "md", "wiki"})
_EDIT_NAME = re.compile(r"^\s*edit\b", re.I)
_TITLE_SPLIT = re.compile(r"\s+[-–—|:·]\s+")
_PLAIN_TITLE = re.compile(r"[A-Za-z][\w .,'&()/-]{1,60}")
_MIN_BOX = 80.0  # px: the height of a text box made for a page's markup
#: Neutral sentences (one found on the page is skipped).
SENTENCES = (
    "Ask the documentation team before changing the steps in this part.",
    "This part was last checked against the current release.",
    "Screenshots for these steps are kept in the shared project folder.",
    "Report mistakes in this part to the documentation team.",
    "New contributors should read this part before anything else.",
    "A shorter summary of this part is planned for the next release.",
)
_PHRASES = (
    "In the wiki page “{page}”, the section “{section}” should end with the sentence “{text}”",
    "Add the sentence “{text}” at the end of the section “{section}” of the wiki page “{page}”.",
    "The section “{section}” of the wiki page “{page}” needs one more sentence at its end: “{text}”",
)


@dataclass
class WikiPage:
    """A wiki page the crawl saw: its node, name, text export, the control that opens its editor, and the editor's text box and commit button."""

    page: Node
    name: str
    export: str
    opener: Node
    textarea: Node
    commit: Node


def _by_page(nodes: Iterable[Node]) -> dict[str, list[Node]]:
    """Nodes by every page they were seen on."""
    found: dict[str, list[Node]] = {}
    for node in nodes:
        for url in dict.fromkeys([str(node.attrs.get("page_url") or ""), *(str(u) for u in node.attrs.get("pages") or [])]):
            found.setdefault(url, []).append(node)
    return found


def _text_export(links: list[Node], url: str) -> str | None:
    """A link on the page to the same path with one query value naming a text format."""
    path = urlparse(url)
    for link in links:
        href = urlparse(str(link.attrs.get("href") or ""))
        query = parse_qsl(href.query)
        if (href.netloc, href.path) == (path.netloc, path.path) and len(query) == 1 and query[0][1].lower() in _TEXT_VALUES:
            return href._replace(fragment="").geturl()
    return None


def _opener(kg: KnowledgeGraph, forms: list[Node], links: list[Node], url: str) -> tuple[Node, str] | None:
    """The control on the page that opens its editor, and the editor's URL: a GET form to the same path with ``edit`` in its query, or a link named *Edit…*."""
    path = urlparse(url).path
    for form in forms:
        action = urlparse(str(form.attrs.get("action") or ""))
        if form.attrs.get("method") != "get" or action.path != path or not any("edit" in f"{k}={v}".lower() for k, v in parse_qsl(action.query)):
            continue
        button = next((kg.node(e.source) for e in kg.edges_into(form.id, "controls") if kg.node(e.source).attrs.get("selector")), None)
        if button is not None:
            return button, action.geturl()
    for link in links:
        href = str(link.attrs.get("href") or "")
        if _EDIT_NAME.match(str(link.attrs.get("name") or "")) and link.attrs.get("selector") and urlparse(href).path == path:
            return link, href
    return None


def _same_editor(seen: str, wanted: str) -> bool:
    """Whether the crawled page ``seen`` is the editor at ``wanted`` or another page's editor of the same shape (same query, same parent path)."""
    a, b = urlparse(seen), urlparse(wanted)
    return (a.netloc, a.query) == (b.netloc, b.query) and a.path.rsplit("/", 1)[0] == b.path.rsplit("/", 1)[0]


def _editor(kg: KnowledgeGraph, editor_url: str) -> tuple[Node, Node] | None:
    """The big text box and commit button of a POST form on a crawled editor page (:func:`_same_editor`), the exact URL first."""
    pages = sorted({str(p.attrs["url"]) for p in kg.nodes("page") if _same_editor(str(p.attrs["url"]), editor_url)}, key=lambda u: u != editor_url)
    for url in pages:
        for form in kg.nodes("form"):
            if form.attrs.get("page_url") != url or form.attrs.get("method") != "post":
                continue
            fillers = [kg.node(e.source) for e in kg.edges_into(form.id, "fills")]
            boxes = [f for f in fillers if f.type.value == "input" and f.attrs.get("input_type") in (None, "textarea") and f.attrs.get("selector") and len(f.attrs.get("bbox") or []) == 4]
            box = max(boxes, key=lambda f: float(f.attrs["bbox"][3]) - float(f.attrs["bbox"][1]), default=None)
            buttons = [kg.node(e.source) for e in kg.edges_into(form.id, "controls")]
            commit = next((b for b in buttons if b.attrs.get("input_type") in (None, "submit") and b.attrs.get("selector")
                           and _COMMIT.match(str(b.attrs.get("name") or "").strip()) and not _NOT_COMMIT.search(str(b.attrs.get("name") or ""))), None)
            if box is not None and commit is not None and float(box.attrs["bbox"][3]) - float(box.attrs["bbox"][1]) >= _MIN_BOX:
                return box, commit
    return None


def _name(page: Node) -> str | None:
    """The page's name: its title's first part, when its URL path holds it (spaces may be underscores).

    >>> _name(Node(id="p", type="page", text="", attrs={"url": "http://h/wiki/Main_Page", "title": "Main Page - Wiki"}))
    'Main Page'
    """
    title = str(page.attrs.get("title") or "").strip()
    first = _TITLE_SPLIT.split(title, maxsplit=1)[0].strip() if title else ""
    path = unquote(urlparse(str(page.attrs["url"])).path).replace("_", " ").lower()
    return first if first and _PLAIN_TITLE.fullmatch(first) and first.lower() in path else None


def wiki_pages(kg: KnowledgeGraph) -> list[WikiPage]:
    """The wiki pages the crawl saw (see the module notes), in page order."""
    found: list[WikiPage] = []
    links, forms = _by_page(kg.nodes("link")), _by_page(kg.nodes("form"))
    for page in kg.nodes("page"):
        url = str(page.attrs["url"])
        if page.attrs.get("state") or urlparse(url).query or urlparse(url).fragment:
            continue
        name, export, opened = _name(page), _text_export(links.get(url, []), url), _opener(kg, forms.get(url, []), links.get(url, []), url)
        if name is None or export is None or opened is None:
            continue
        editor = _editor(kg, opened[1])
        if editor is not None:
            found.append(WikiPage(page, name, export, opened[0], *editor))
    return found


def _usable(text: str) -> list[Section]:
    """Leaf sections with a plain heading no other heading has, whose body is prose (some words, no code block)."""
    found = sections(text)
    titles = [flat(s.title) for s in found]
    lines = text.splitlines()
    usable = []
    for s in found:
        body = "\n".join(lines[s.line + 1 : s.end])
        if s.leaf and titles.count(flat(s.title)) == 1 and _PLAIN_TITLE.fullmatch(s.title) and len(re.findall(r"[A-Za-z]{3,}", body)) >= 8 and not re.search(r"\{\{\{|```|~~~|<pre\b", body, re.I):
            usable.append(s)
    return usable


def with_sentence(text: str, section: Section, sentence: str) -> str:
    """``text`` with ``sentence`` as a new paragraph after the last non-blank line of ``section``'s body.

    >>> page = "= A\\none.\\n\\n= B\\ntwo.\\n"
    >>> with_sentence(page, sections(page)[0], "New.")
    '= A\\none.\\n\\nNew.\\n\\n= B\\ntwo.\\n'
    """
    lines = text.splitlines()
    last = max((i for i in range(section.line + 1, section.end) if lines[i].strip()), default=section.line)
    out = [*lines[: last + 1], "", sentence, *lines[last + 1 :]]
    return "\n".join(out) + ("\n" if text.endswith(("\n", "\r")) else "")


async def _export_text(client: httpx.AsyncClient, url: str, report: dict[str, Any]) -> str | None:
    try:
        response = await client.get(url)
    except httpx.HTTPError as exc:
        report.setdefault("wiki_exports_skipped", []).append(f"{url}: {type(exc).__name__}")
        return None
    if response.status_code != 200 or "html" in response.headers.get("content-type", "") or not response.text.strip():
        report.setdefault("wiki_exports_skipped", []).append(f"{url}: HTTP {response.status_code} {response.headers.get('content-type', '')}")
        return None
    return response.text


async def wiki_tasks(kg: KnowledgeGraph, seed: int, count: int, home: str, make: Any, report: dict[str, Any]) -> list[Task]:
    """Up to ``count`` section goals, on different wiki pages, starting at ``home``; ``make`` builds the task (the change family's ``_task``)."""
    pages = [p for p in wiki_pages(kg) if p.page.attrs["url"] != home]
    rng = np.random.default_rng([seed, int(hashlib.sha1(f"{kg.id}|wiki".encode()).hexdigest()[:8], 16)])
    tasks: list[Task] = []
    async with httpx.AsyncClient(timeout=15.0, follow_redirects=False) as client:
        for index in rng.permutation(len(pages)):
            if len(tasks) >= count:
                break
            wiki = pages[int(index)]
            text = await _export_text(client, wiki.export, report)
            usable = _usable(text) if text else []
            sentences = [s for s in SENTENCES if text and flat(s) not in flat(text)]
            if text is None or not usable or not sentences:
                continue
            section = usable[int(rng.integers(len(usable)))]
            sentence = sentences[int(rng.integers(len(sentences)))]
            parts = split_section(text, section.title)
            if parts is None:
                continue
            url = str(wiki.page.attrs["url"])
            check = {"source": wiki.export, "heading": section.title, "text": sentence, "before": text_digest(parts[0]), "others": text_digest(parts[1])}
            steps = [
                GoldStep(action="navigate", text=url),
                GoldStep(action="click", selector=str(wiki.opener.attrs["selector"]), node_id=wiki.opener.id),
                GoldStep(action="type", selector=str(wiki.textarea.attrs["selector"]), text=with_sentence(text, section, sentence), node_id=wiki.textarea.id),
                GoldStep(action="click", selector=str(wiki.commit.attrs["selector"]), node_id=wiki.commit.id),
            ]
            instruction = _PHRASES[int(rng.integers(len(_PHRASES)))].format(page=wiki.name, section=section.title, text=sentence)
            goal = {"kind": "wiki", "page": url, "name": wiki.name, "section": section.title, "level": section.level, "text": sentence, "export": wiki.export}
            success = [SuccessCriterion(kind="record", value=json.dumps(check, ensure_ascii=False, sort_keys=True))]
            tasks.append(make(kg, seed, json.dumps(goal, sort_keys=True), instruction, home, steps, success, goal))
    report.update(wiki_pages=len(pages), wiki_tasks=len(tasks))
    return tasks

"""Field-mode merging: actions join one node when their typed fields say they are the same action.

The rules (an action's page is its ``url`` when the log gives one, else the last URL the
trajectory navigated to, else unknown):

* kinds must match, and so must the action name within a kind (``dblclick`` is not ``click``);
* **navigate**: by normalised URL (scheme, ``www.``, fragment, trailing slash and query order ignored);
* **type** / **select**: by target identity and value (case and spacing ignored);
* **scroll**: by direction; **key**: by key; **back**, **wait**: one node each; **answer**: one
  node per answer action name (``answer`` / ``report_infeasible``), whatever the text;
* **click** / **hover** with an element identity (:meth:`ActionTarget.identity`: element id,
  selector, or role + name): by identity, the name without counts and current values
  (:func:`element_name`: "Pasta (1,234 ratings)" is "pasta", "Sort by: Price" is "sort by"); a
  name that is only a number (a calendar day, a page number) says nothing across pages: it
  merges on the same page only, and only after as many "next/previous month" steps on it; dates
  in names merge by the date (:func:`.dates.iso_dates`: "Sat Jul 25 2026" is "25 July 2026");
* **click** / **hover** at coordinates only: on the same page, within ``pixel_tolerance``
  pixels on both axes (single linkage over the points sorted by x, so the partition does not
  depend on input order);
* **unnamed controls** (``click(element='image')``): by canonical string on the same page only
  (when the page is unknown, after the same preceding action): never across pages;
* anything else: by canonical string.

Every key is built from sorted, normalised fields, so the partition is independent of input order.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from networkx.utils import UnionFind

from .dates import iso_dates, month_step
from .model import ActionTarget, AgentTrajectory, CanonicalAction

__all__ = ["normalize_url", "element_name", "page_contexts", "field_key", "cluster_points", "field_paths", "DEFAULT_PIXEL_TOLERANCE"]

#: Two clicks at most this many pixels apart on both axes, on the same page, are the same click.
DEFAULT_PIXEL_TOLERANCE = 12.0


@lru_cache(maxsize=65_536)
def normalize_url(url: str) -> str:
    """A URL in a form that compares equal across harmless spelling differences.

    >>> normalize_url("https://www.Example.org/a/?b=2&a=1#top") == normalize_url("http://example.org/a?a=1&b=2")
    True
    >>> normalize_url("about:blank"), normalize_url("example.org:x/y")
    ('about:blank', 'example.org:x/y')
    """
    raw = url.strip()
    if ":" in raw and "://" not in raw:  # about:blank, javascript:…, data:…: compared as written
        return raw.lower()
    parts = urlsplit(raw if "://" in raw else "http://" + raw)
    host = (parts.hostname or "").lower().removeprefix("www.")
    try:
        port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    except ValueError:  # a port that is not a number: keep the network location as written
        host, port = parts.netloc.lower(), ""
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return f"{host}{port}{parts.path.rstrip('/')}" + (f"?{query}" if query else "")


_COUNT = re.compile(
    r"\(\s*[\d.,]+\s*[km+]?\s*[^\W\d]*\s*\)|\b\d(?:[.,]\d)?\s+out\s+of\s+5(?:\s+stars?)?|"
    r"\b[\d.,]+\s*[km+]?\s+(?:ratings?|reviews?|votes?|results?|items?|comments?|stars?|answers?|likes?|products?|listings?)\b",
    re.I,
)  # fmt: skip
_FORM_ROLES = {"combobox", "listbox", "select", "textbox", "searchbox", "spinbutton", "slider", "input", "textarea"}


@lru_cache(maxsize=65_536)
def element_name(name: str, role: str = "") -> str:
    """An element's name as it identifies the element: casefolded, counts stripped, a form control's current value dropped.

    >>> element_name("Creamy Pasta (1,234)"), element_name("Creamy pasta 1,234 ratings"), element_name("Sort by: Price", "combobox")
    ('creamy pasta', 'creamy pasta', 'sort by')
    >>> element_name("Choose Saturday, July 25th, 2026"), element_name("Sat Jul 25 2026", "gridcell")
    ('2026-07-25', '2026-07-25')
    """
    text = _COUNT.sub(" ", iso_dates(name))
    if role.lower() in _FORM_ROLES and ":" in text:
        text = text.split(":", 1)[0]
    return " ".join(text.split()).casefold().strip(" -–|·,")


@lru_cache(maxsize=65_536)
def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def page_contexts(actions: Sequence[CanonicalAction]) -> list[str]:
    """The page of each action: its own ``url``, else the last navigation's URL before it, else ``""``."""
    out: list[str] = []
    current = ""
    for act in actions:
        out.append(normalize_url(act.url) if act.url else current)
        if act.kind == "navigate" and act.value:
            current = normalize_url(act.value)
        elif act.url:
            current = normalize_url(act.url)
    return out


_BARE_NUMBER = re.compile(r"[\d\s.,:/-]+")
_ISO_DATE = re.compile(r"(?:\d{4}|-)-\d\d-\d\d")


def _identity(target: ActionTarget | None, page: str, months: int = 0) -> tuple[Any, ...] | None:
    """What says which element this is (:meth:`ActionTarget.identity`), names cleaned.

    A bare number is tied to its page, and to the calendar months stepped through on it (``months``).
    """
    if target is None:
        return None
    identity, bare_number = _target_identity(target.element_id, target.selector, target.role, target.name)
    if not bare_number or identity is None:
        return identity
    return (*identity, page, months) if months else (*identity, page)


@lru_cache(maxsize=65_536)
def _target_identity(element_id: str | None, selector: str | None, role: str | None, name: str | None) -> tuple[tuple[str, ...] | None, bool]:
    """The identity of a target with these fields, and whether its cleaned name is a bare number (cached: logs repeat targets)."""
    identity = ActionTarget(element_id=element_id, selector=selector, role=role, name=name).identity()
    if identity is None or identity[0] != "name":
        return identity, False
    cleaned = element_name(name or "", role or "") or identity[2]
    return ("name", identity[1], cleaned), bool(_BARE_NUMBER.fullmatch(cleaned)) and not _ISO_DATE.fullmatch(cleaned)


def field_key(act: CanonicalAction, page: str, previous: tuple[Any, ...] | None = None, months: int = 0) -> tuple[Any, ...] | None:
    """The merge key of an action, or None for a coordinate-only click or hover (clustered by :func:`cluster_points`).

    ``previous`` is the key of the action before (where an unnamed control is, when the page is
    unknown); ``months`` the calendar months stepped through on this page before it (:func:`.dates.month_step`).
    """
    kind, target = act.kind, act.target
    if kind == "navigate":
        return ("navigate", normalize_url(act.value or ""))
    if kind in ("scroll", "key"):
        return (kind, _norm(act.value))
    if kind in ("back", "wait"):
        return (kind,)
    if kind == "answer":
        return ("answer", act.name)
    identity = _identity(target, page, months)
    if kind in ("type", "select"):
        return (kind, act.name, identity, _norm(act.value))
    if act.name in ("click", "dblclick", "hover"):
        if identity is not None:
            return (kind, act.name, identity)
        if target is not None and target.x is not None and target.y is not None:
            return None
        if not page and previous is not None and len(previous) == 4 and isinstance(previous[3], tuple):
            return (kind, act.name, act.text, previous[3])  # after another unnamed control: the same place as that one
        return (kind, act.name, act.text, page or ("after", previous))  # an unnamed control: this page only
    return (kind, act.name, act.text)


def cluster_points(points: Sequence[tuple[float, float]], tolerance: float) -> list[int]:
    """Cluster index of each point: single linkage where two points join when both axes differ by ≤ ``tolerance``.

    Clusters are numbered by their smallest point, so the result does not depend on the input order.

    >>> cluster_points([(600, 475), (1013, 298), (604, 470), (0, 0)], 12)
    [1, 2, 1, 0]
    """
    order = sorted(range(len(points)), key=lambda i: points[i])
    uf: UnionFind[int] = UnionFind(range(len(points)))
    for a, i in enumerate(order):
        xi, yi = points[i]
        for j in order[a + 1 :]:
            xj, yj = points[j]
            if xj - xi > tolerance:
                break
            if abs(yj - yi) <= tolerance:
                uf.union(i, j)
    first: dict[int, tuple[float, float]] = {}
    for i, point in enumerate(points):
        root = uf[i]
        first[root] = min(first.get(root, point), point)
    ranked = {root: n for n, root in enumerate(sorted(first, key=lambda r: first[r]))}
    return [ranked[uf[i]] for i in range(len(points))]


def field_paths(trajectories: Sequence[AgentTrajectory], tolerance: float) -> tuple[list[list[tuple[Any, ...]]], Counter[tuple[Any, ...]]]:
    """Every trajectory's actions as merge keys (coordinate clicks clustered per page and name), and how often each key occurs."""
    paths: list[list[tuple[Any, ...] | None]] = []
    pending: dict[tuple[str, str], list[tuple[int, int, tuple[float, float]]]] = defaultdict(list)
    # An action's key depends only on its canonical text (which fixes its kind, name, target and value),
    # its page, the month steps before it there, and (on an unknown page) the key before it: logs repeat
    # these far more than they vary, so each combination is keyed once.
    known: dict[tuple[Any, ...], tuple[tuple[Any, ...] | None, int]] = {}
    for t, traj in enumerate(trajectories):
        path: list[tuple[Any, ...] | None] = []
        months, last_page = 0, None  # "next/previous month" steps since the trajectory entered this page
        for s, (act, page) in enumerate(zip(traj.actions, page_contexts(traj.actions))):
            if page != last_page:
                months, last_page = 0, page
            previous = path[-1] if path else None
            memo = (act.text, act.kind, act.value, page, months, None if page else previous)
            found = known.get(memo)
            if found is None:
                name = act.target.name if act.target is not None else None
                found = known[memo] = (field_key(act, page, previous, months), month_step(name) if name else 0)
            key, step = found
            months += step
            if key is None:
                assert act.target is not None and act.target.x is not None and act.target.y is not None
                pending[(act.name, page)].append((t, s, (act.target.x, act.target.y)))
            path.append(key)
        paths.append(path)
    for (name, page), items in sorted(pending.items()):
        labels = cluster_points([p for _, _, p in items], tolerance)
        anchors: dict[int, tuple[float, float]] = {}
        for (_, _, point), label in zip(items, labels):
            anchors[label] = min(anchors.get(label, point), point)
        for (t, s, _), label in zip(items, labels):
            paths[t][s] = ("xy", name, page, anchors[label])
    done: list[list[tuple[Any, ...]]] = [[k for k in path if k is not None] for path in paths]
    return done, Counter(k for path in done for k in path)

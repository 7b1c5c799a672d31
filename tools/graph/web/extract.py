"""What a page holds: elements found in the live DOM, and the node type each one becomes.

The extraction runs in the page (one ``evaluate``) and returns plain records; the
classification into DESIGN.md's web node types is pure Python, so it is testable
without a browser.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from ...browser.dom import DESCRIBE_JS

__all__ = ["ElementInfo", "EXTRACT_JS", "EXTRACT_JSON_JS", "MAX_ELEMENTS", "classify_element", "read_page", "VISIBLE_CONTAINERS_JS"]


class ElementInfo(BaseModel):
    """One element as the page described it."""

    tag: str
    role: str | None = None
    name: str = ""
    text: str = ""
    selector: str
    bbox: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    visible: bool = True
    href: str | None = None
    input_type: str | None = None
    field_name: str | None = None
    form: str | None = Field(None, description="Selector of the form the element belongs to.")
    region: str | None = Field(None, description="Selector of the nearest landmark/region around the element.")
    dialog: str | None = Field(None, description="Selector of the dialog the element is in.")
    controls: list[str] = Field(default_factory=list, description="Selectors named by aria-controls.")
    haspopup: str | None = None
    expanded: str | None = None
    options: list[str] = Field(default_factory=list, description="Option labels of a select.")
    action: str | None = Field(None, description="Resolved GET submission URL of a form with its default values.")
    method: str | None = None
    is_search: bool = False
    is_filter: bool = False
    is_pagination: bool = False
    list_item_of: str | None = Field(None, description="Selector of the list this repeated item belongs to.")
    aria_label: str | None = None
    rel: str | None = None
    target: str | None = Field(None, description="A link's target attribute (_blank opens a new tab).")
    live: str | None = Field(None, description="aria-live politeness of a live region.")
    submit_url: str | None = Field(None, description="A form's resolved action (the current URL when it has none), any method, no query.")
    has_submit: bool | None = Field(None, description="Whether a form has a submit button (else Enter submits it).")
    submit_names: list[str] = Field(default_factory=list, description="A form's submit buttons: name, value, text.")
    field_names: list[tuple[str, str]] = Field(default_factory=list, description="A form's named fields: (name, type).")
    is_toast: bool = Field(False, description="A live region a click was seen revealing.")
    pagination: dict[str, Any] | None = Field(None, description="A pagination link: direction, page.")
    sort: dict[str, Any] | None = Field(None, description="A sort link: field, key, value.")
    facet: dict[str, Any] | None = Field(None, description="A facet link narrowing the page's listing: param, value, count.")


#: Most elements read from one page; the rest are counted in ``truncated`` (long reference pages, indexes).
MAX_ELEMENTS = 1500
#: Most repeated content items (``business_data``) read from one page.
MAX_ITEMS = 300

EXTRACT_JS = (
    "() => { const describe = "
    + DESCRIBE_JS.strip()
    + r""";
  const cache = {};
  describe(null, cache);
  const sel = (e) => e ? cache.selectorOf(e) : null;
  const regionOf = (e) => e.parentElement ? e.parentElement.closest('nav, main, header, footer, aside, [role=region], [role=navigation], [role=search], [role=tabpanel], section[aria-label], section[aria-labelledby]') : null;
  const out = [];
  const seen = new Set();
  let truncated = 0;
  const formOf = (e) => (e.form !== undefined && e.form !== null && typeof e.form === 'object' && e.form.tagName === 'FORM') ? e.form : e.closest('form');
  const add = (e, extra) => {
    if (seen.has(e)) return; seen.add(e);
    if (out.length >= __MAX__) { truncated++; return; }
    const d = describe(e, cache);
    const form = e.tagName === 'FORM' ? null : formOf(e);
    const dialog = e.closest('[role=dialog], [role=alertdialog], dialog');
    const controls = (e.getAttribute('aria-controls') || '').split(/\s+/).filter(Boolean)
      .map(id => document.getElementById(id)).filter(Boolean).map(sel);
    const live = e.getAttribute('aria-live');
    out.push(Object.assign(d, {
      href: e.tagName === 'A' && e.hasAttribute('href') ? e.href : null,
      input_type: (e.getAttribute('type') || '').toLowerCase() || null,
      field_name: e.getAttribute('name'),
      form: form ? sel(form) : null,
      region: (r => r && r !== e ? sel(r) : null)(regionOf(e)),
      dialog: dialog && dialog !== e ? sel(dialog) : null,
      controls, haspopup: e.getAttribute('aria-haspopup'), expanded: e.getAttribute('aria-expanded'),
      options: e.tagName === 'SELECT' ? Array.from(e.options).slice(0, 200).map(o => (o.label || o.text || '').replace(/[\u{E000}-\u{F8FF}]/gu, '').trim()) : [],
      aria_label: e.getAttribute('aria-label'),
      rel: e.getAttribute('rel'), target: e.getAttribute('target'),
      live: live && live !== 'off' ? live : null,
      is_search: !!(e.closest('[role=search]') || (e.getAttribute('type') || '') === 'search' || (e.tagName === 'FORM' && e.querySelector('input[type=search]'))),
    }, extra || {}));
  };
  const interactive = 'a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=tab], [role=menuitem], [role=checkbox], summary';
  const structural = 'form, dialog, [role=dialog], [role=alertdialog], [role=menu], [role=tablist], [role=tabpanel], [role=status], [role=alert], [role=log], [aria-live]:not([aria-live=off]), nav, main, header, footer, aside, [role=search], [role=region], section[aria-label], section[aria-labelledby], table, details';
  document.querySelectorAll(structural).forEach(e => {
    const extra = {};
    if (e.tagName === 'FORM') {
      const method = (e.getAttribute('method') || 'get').toLowerCase();
      extra.method = method;
      const target = new URL(e.getAttribute('action') || location.href, location.href);  // no action: the current URL
      target.hash = '';
      extra.submit_url = target.href;
      if (method === 'get' && !e.closest('[role=dialog], [role=alertdialog], dialog')) {  // a dialog's form acts, it does not lead to a page
        const url = new URL(target.href);
        url.search = '';
        new FormData(e).forEach((v, k) => { if (typeof v === 'string') url.searchParams.append(k, v); });
        extra.action = url.href;
      }
      const submitters = Array.from(e.elements).filter(c => (c.tagName === 'BUTTON' && !['button', 'reset'].includes((c.getAttribute('type') || 'submit').toLowerCase())) || (c.tagName === 'INPUT' && ['submit', 'image'].includes((c.getAttribute('type') || '').toLowerCase())));
      extra.has_submit = submitters.length > 0;
      extra.submit_names = submitters.slice(0, 10).map(c => [c.getAttribute('name') || '', c.value || '', (c.textContent || '').trim()].join(' ').trim());
      extra.field_names = Array.from(e.elements).filter(c => c.name && !['submit', 'button', 'reset', 'image'].includes((c.type || '').toLowerCase()))
        .slice(0, 50).map(c => [c.name, c.tagName === 'SELECT' ? 'select' : (c.type || c.tagName).toLowerCase()]);
    }
    add(e, extra);
  });
  document.querySelectorAll(interactive).forEach(e => add(e));
  // Repeated content items (result rows, cards, table rows): 3+ same-shaped siblings with text.
  let items = 0;
  document.querySelectorAll('ul, ol, tbody, div, section, main').forEach(list => {
    if (items >= __ITEMS__ || list.children.length < 3 || list.closest('nav, header, footer, [role=menu], [role=tablist]')) return;
    const kids = Array.from(list.children).filter(c => c.getClientRects().length);
    const shape = (c) => c.tagName + '.' + Array.from(c.classList).sort().join('.');
    const groups = {};
    kids.forEach(c => { (groups[shape(c)] = groups[shape(c)] || []).push(c); });
    Object.values(groups).forEach(g => {
      if (g.length < 3 || items >= __ITEMS__) return;
      if (!g.every(c => (c.textContent || '').trim().length >= 15)) return;
      g.slice(0, __ITEMS__ - items).forEach(c => { items++; add(c, {role: 'business_data', list_item_of: sel(list)}); });
      add(list, {role: 'result_list'});
    });
  });
  return {url: location.href, title: document.title, text: (document.body ? document.body.innerText : '').slice(0, 200000), elements: out, truncated};
}"""
).replace("__MAX__", str(MAX_ELEMENTS)).replace("__ITEMS__", str(MAX_ITEMS))

#: EXTRACT_JS returning its result as one JSON string: Playwright's object serialisation of a
#: thousand-element result costs seconds, a string milliseconds.
EXTRACT_JSON_JS = "() => JSON.stringify((" + EXTRACT_JS + ")())"


async def read_page(page: Any) -> dict[str, Any]:
    """Run the extraction in ``page``: ``{url, title, text, elements, truncated}`` (``truncated``: elements over :data:`MAX_ELEMENTS`)."""
    data: dict[str, Any] = json.loads(await page.evaluate(EXTRACT_JSON_JS))
    return data


#: Selectors of dialogs, menus, tab panels, toasts and open details that are visible now.
VISIBLE_CONTAINERS_JS = """() => {
  const describe = """ + DESCRIBE_JS.strip() + """;
  const shown = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return (r.width > 0 || r.height > 0) && s.visibility !== 'hidden' && s.display !== 'none' && !e.hidden; };
  const cache = {};
  describe(null, cache);
  return Array.from(document.querySelectorAll('[role=dialog], [role=alertdialog], dialog, [role=menu], [role=tabpanel], [role=status], [role=alert], [role=log], [aria-live]:not([aria-live=off]), details[open] > :not(summary), [role=listbox]'))
    .filter(shown).filter(e => (e.innerText || '').trim().length > 0 || e.querySelector('input, button, a'))
    .map(e => cache.selectorOf(e));
}"""


def classify_element(info: ElementInfo) -> str | None:
    """The web node type of an extracted element, or None when it is not a graph node.

    Examples
    --------
    >>> classify_element(ElementInfo(tag="input", input_type="search", selector="#q", is_search=True))
    'search_box'
    >>> classify_element(ElementInfo(tag="select", selector="#genre", is_filter=True))
    'filter'
    >>> classify_element(ElementInfo(tag="div", role="dialog", selector="#m"))
    'modal'
    >>> classify_element(ElementInfo(tag="p", role="status", selector="#count"))
    'region'
    """
    role = (info.role or "").lower()
    tag = info.tag
    if role == "business_data":
        return "business_data"
    if role == "result_list":
        return "region"
    if role in ("dialog", "alertdialog") or tag == "dialog":
        return "modal"
    if role in ("status", "alert", "log") or info.live:
        return "toast" if info.is_toast else "region"
    if role == "menu":
        return "menu"
    if role == "tab":
        return "tab"
    if role == "tablist":
        return None
    if tag == "form":
        return "form"
    if info.is_pagination and (tag == "nav" or role == "navigation"):
        return "pagination"
    if tag in ("nav", "main", "header", "footer", "aside", "section", "details") or role in ("navigation", "search", "region", "tabpanel", "table") or tag == "table":
        return "region"
    if tag == "select" or role in ("combobox", "listbox"):
        return "filter" if info.is_filter else "select"
    if tag == "input" and info.input_type in ("checkbox", "radio") or role == "checkbox":
        return "filter" if info.is_filter else "checkbox"
    if tag in ("input", "textarea") and info.input_type not in ("submit", "button", "reset", "image"):
        return "search_box" if info.is_search and info.input_type in (None, "search", "text") else "input"
    if tag == "a" and info.href:
        return "filter" if info.facet else "link"
    if tag in ("button", "summary", "input") or role in ("button", "menuitem"):
        return "button"
    return None

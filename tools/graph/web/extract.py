"""What a page holds: elements found in the live DOM, and the node type each one becomes.

The extraction runs in the page (one ``evaluate``) and returns plain records; the
classification into DESIGN.md's web node types is pure Python, so it is testable
without a browser.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ...browser.dom import DESCRIBE_JS

__all__ = ["ElementInfo", "EXTRACT_JS", "classify_element", "VISIBLE_CONTAINERS_JS"]


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


EXTRACT_JS = (
    "() => { const describe = "
    + DESCRIBE_JS.strip()
    + r""";
  const sel = (e) => e ? describe(e).selector : null;
  const regionOf = (e) => e.parentElement ? e.parentElement.closest('nav, main, header, footer, aside, [role=region], [role=navigation], [role=search], [role=tabpanel], section[aria-label], section[aria-labelledby]') : null;
  const out = [];
  const seen = new Set();
  const add = (e, extra) => {
    if (seen.has(e)) return; seen.add(e);
    const d = describe(e);
    const form = e.closest('form');
    const dialog = e.closest('[role=dialog], dialog');
    const controls = (e.getAttribute('aria-controls') || '').split(/\s+/).filter(Boolean)
      .map(id => document.getElementById(id)).filter(Boolean).map(sel);
    out.push(Object.assign(d, {
      href: e.tagName === 'A' && e.hasAttribute('href') ? e.href : null,
      input_type: (e.getAttribute('type') || '').toLowerCase() || null,
      field_name: e.getAttribute('name'),
      form: form && form !== e ? sel(form) : null,
      region: (r => r && r !== e ? sel(r) : null)(regionOf(e)),
      dialog: dialog && dialog !== e ? sel(dialog) : null,
      controls, haspopup: e.getAttribute('aria-haspopup'), expanded: e.getAttribute('aria-expanded'),
      options: e.tagName === 'SELECT' ? Array.from(e.options).map(o => o.label || o.text) : [],
      aria_label: e.getAttribute('aria-label'),
      is_search: !!(e.closest('[role=search]') || (e.getAttribute('type') || '') === 'search'),
      is_pagination: !!e.closest('nav[aria-label*="agination" i], .pagination, [role=navigation][aria-label*="agination" i]'),
    }, extra || {}));
  };
  const interactive = 'a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=tab], [role=menuitem], [role=checkbox], summary';
  const structural = 'form, dialog, [role=dialog], [role=menu], [role=tablist], [role=tabpanel], [role=status], [role=alert], .toast, nav, main, header, footer, aside, [role=search], [role=region], section[aria-label], section[aria-labelledby], table, details';
  document.querySelectorAll(structural).forEach(e => {
    const extra = {};
    if (e.tagName === 'FORM') {
      const method = (e.getAttribute('method') || 'get').toLowerCase();
      extra.method = method;
      if (method === 'get' && e.hasAttribute('action')) {
        const url = new URL(e.getAttribute('action'), location.href);
        new FormData(e).forEach((v, k) => { if (typeof v === 'string') url.searchParams.append(k, v); });
        extra.action = url.href;
      }
      extra.is_filter = !e.matches('[role=search]') && !!e.querySelector('select, input[type=checkbox], input[type=radio]') && !e.closest('[role=dialog], dialog');
    }
    add(e, extra);
  });
  document.querySelectorAll(interactive).forEach(e => {
    const form = e.closest('form');
    const isFilter = !!form && !form.matches('[role=search]') && !!form.querySelector('select, input[type=checkbox], input[type=radio]') && !form.closest('[role=dialog], dialog');
    add(e, {is_filter: isFilter && ['SELECT', 'INPUT'].includes(e.tagName) && !['submit', 'button'].includes((e.getAttribute('type') || '').toLowerCase())});
  });
  // Repeated content items (result rows, cards, table rows): 3+ same-shaped siblings with text.
  document.querySelectorAll('ul, ol, tbody, div, section, main').forEach(list => {
    const kids = Array.from(list.children).filter(c => c.offsetParent !== null || c.getClientRects().length);
    const shape = (c) => c.tagName + '.' + Array.from(c.classList).sort().join('.');
    const groups = {};
    kids.forEach(c => { (groups[shape(c)] = groups[shape(c)] || []).push(c); });
    Object.values(groups).forEach(g => {
      if (g.length < 3 || list.closest('nav, header, footer, [role=menu], [role=tablist]')) return;
      if (!g.every(c => (c.innerText || '').trim().length >= 15)) return;
      g.forEach(c => add(c, {role: 'business_data', list_item_of: sel(list)}));
      add(list, {role: 'result_list'});
    });
  });
  return {url: location.href, title: document.title, text: (document.body ? document.body.innerText : '').slice(0, 4000), elements: out};
}"""
)

#: Selectors of dialogs, menus, tab panels, toasts and open details that are visible now.
VISIBLE_CONTAINERS_JS = """() => {
  const describe = """ + DESCRIBE_JS.strip() + """;
  const shown = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return (r.width > 0 || r.height > 0) && s.visibility !== 'hidden' && s.display !== 'none' && !e.hidden; };
  return Array.from(document.querySelectorAll('[role=dialog], dialog, [role=menu], [role=tabpanel], [role=status], [role=alert], .toast, details[open] > :not(summary), [role=listbox]'))
    .filter(shown).filter(e => (e.innerText || '').trim().length > 0 || e.querySelector('input, button, a'))
    .map(e => describe(e).selector);
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
    """
    role = (info.role or "").lower()
    tag = info.tag
    if role == "business_data":
        return "business_data"
    if role == "result_list":
        return "region"
    if role in ("dialog", "alertdialog") or tag == "dialog":
        return "modal"
    if role in ("status", "alert") or "toast" in info.selector:
        return "toast"
    if role == "menu":
        return "menu"
    if role == "tab":
        return "tab"
    if role == "tablist":
        return None
    if tag == "form":
        return "form"
    if tag == "nav" and (info.is_pagination or "agination" in (info.aria_label or "")):
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
        return "link"
    if tag in ("button", "summary", "input") or role in ("button", "menuitem"):
        return "button"
    return None

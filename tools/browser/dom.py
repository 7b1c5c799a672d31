"""JavaScript run in pages: describe an element (role, accessible name, text, unique selector, box) and set-of-marks drawing.

The same description feeds the crawler's graph nodes and the recorder's action
targets, so a node and an action on the same element agree.
"""

from __future__ import annotations

import io

__all__ = ["DESCRIBE_JS", "NAVIGATION_WATCH_JS", "NAVIGATION_PENDING_JS", "draw_marks"]

#: ``(el, cache?) => {...}``: role, accessible name, text, a CSS selector matching only ``el``, and its box.
#: Names follow the accessible-name rules (aria-labelledby, aria-label, <label>, content with img alt and
#: svg <title>, title, placeholder); the HTML ``name`` attribute never names anything. Private-use code
#: points (icon fonts) and zero-width characters are removed, so an icon-only control is named "".
#: ``cache`` (an object kept across calls of one extraction) makes selectors O(1) per element: the
#: selector is the path from the nearest ancestor with a unique id, ``:nth-of-type`` where siblings share a tag.
DESCRIBE_JS = r"""
(el, cache) => {
  const C = cache || {};
  const implicitRole = (e) => {
    const t = e.tagName.toLowerCase(), type = (e.getAttribute('type') || '').toLowerCase();
    if (t === 'a' && e.hasAttribute('href')) return 'link';
    if (t === 'button' || (t === 'input' && ['button','submit','reset','image'].includes(type))) return 'button';
    if (t === 'input' && type === 'checkbox') return 'checkbox';
    if (t === 'input' && type === 'radio') return 'radio';
    if (t === 'input' && type === 'search') return 'searchbox';
    if (t === 'input' || t === 'textarea') return 'textbox';
    if (t === 'select') return e.multiple ? 'listbox' : 'combobox';
    if (t === 'option') return 'option';
    if (t === 'form') return 'form';
    if (t === 'nav') return 'navigation';
    if (t === 'table') return 'table';
    if (t === 'tr') return 'row';
    if (t === 'li') return 'listitem';
    if (/^h[1-6]$/.test(t)) return 'heading';
    if (t === 'dialog') return 'dialog';
    return null;
  };
  // Private-use code points (icon fonts), zero-width and soft-hyphen characters never name anything.
  const clean = (s) => (s || '').replace(/[\u{E000}-\u{F8FF}\u{F0000}-\u{10FFFF}\u200B-\u200F\u2060-\u2064\uFEFF\u00AD]/gu, '').replace(/\s+/g, ' ').trim();
  const cssEscape = (s) => (window.CSS && CSS.escape) ? CSS.escape(s) : s.replace(/[^a-zA-Z0-9_-]/g, '\\$&');
  if (!C.ids) {  // id -> count, once per cache: selectors are built without querying the document per element
    C.ids = new Map();
    document.querySelectorAll('[id]').forEach(n => C.ids.set(n.id, (C.ids.get(n.id) || 0) + 1));
    C.index = new WeakMap();
  }
  const uniqueId = (n) => n.id && C.ids.get(n.id) === 1;
  const nthOfType = (n) => {
    if (!C.index.has(n)) {
      const counts = {};
      for (const c of n.parentElement.children) { counts[c.tagName] = (counts[c.tagName] || 0) + 1; C.index.set(c, counts[c.tagName]); }
      for (const c of n.parentElement.children) if (counts[c.tagName] === 1) C.index.set(c, 0);
    }
    return C.index.get(n);
  };
  if (!C.selectors) C.selectors = new WeakMap();
  const selectorOf = (e) => {
    if (C.selectors.has(e)) return C.selectors.get(e);
    const parts = [];
    let node = e;
    while (node && node.nodeType === 1 && node !== document.documentElement) {
      if (uniqueId(node)) { parts.unshift('#' + cssEscape(node.id)); break; }
      let part = node.tagName.toLowerCase();
      if (node.parentElement) { const k = nthOfType(node); if (k) part += `:nth-of-type(${k})`; }
      parts.unshift(part);
      node = node.parentElement;
    }
    const found = parts.join(' > ');
    C.selectors.set(e, found);
    return found;
  };
  C.selectorOf = selectorOf;  // callers holding the cache can ask for a selector alone
  if (el === null) return null;
  const hiddenNode = (n) => n.nodeType === 1 && (n.hidden || n.getAttribute('aria-hidden') === 'true' || ['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT'].includes(n.tagName));
  // Name from content: text, img alt, svg <title>, aria-label of descendants; aria-hidden parts skipped. Bounded.
  const contentText = (root, limit) => {
    let out = '', steps = 0;
    const walk = (n) => {
      if (out.length > limit || ++steps > 2000) return;
      if (n.nodeType === 3) { out += n.nodeValue; return; }
      if (n.nodeType !== 1 || (n !== root && hiddenNode(n))) return;
      if (n !== root) {
        const label = n.getAttribute('aria-label');
        if (label && clean(label)) { out += ' ' + label + ' '; return; }
        if (n.tagName === 'IMG') { out += ' ' + (n.getAttribute('alt') || '') + ' '; return; }
        if (n.tagName === 'INPUT') { out += ' ' + (n.value || '') + ' '; return; }
      }
      if (n.namespaceURI === 'http://www.w3.org/2000/svg' && n.tagName.toLowerCase() === 'svg') {
        const title = n.querySelector('title'); if (title) out += ' ' + title.textContent + ' '; return;
      }
      const block = n !== root && /^(DIV|P|LI|BR|TD|TH|TR|H[1-6])$/.test(n.tagName);
      if (block) out += ' ';
      for (const c of n.childNodes) walk(c);
      if (block) out += ' ';
    };
    walk(root);
    return clean(out);
  };
  const byIds = (ids) => clean(ids.split(/\s+/).map(id => { const r = document.getElementById(id); return r ? (clean(r.getAttribute('aria-label')) || contentText(r, 300)) : ''; }).join(' '));
  const fromContent = new Set(['button','link','tab','menuitem','menuitemcheckbox','menuitemradio','option','radio','checkbox','switch','heading','cell','columnheader','rowheader','gridcell','treeitem','tooltip','row','listitem','term','summary']);
  const nameOf = (e, role) => {
    const t = e.tagName, type = (e.getAttribute('type') || '').toLowerCase();
    let n = '';
    const by = e.getAttribute('aria-labelledby');
    if (by && (n = byIds(by))) return n;
    if ((n = clean(e.getAttribute('aria-label')))) return n;
    if (['INPUT', 'SELECT', 'TEXTAREA', 'METER', 'PROGRESS', 'OUTPUT'].includes(t) && e.labels && e.labels.length) {
      if ((n = clean(Array.from(e.labels).map(l => contentText(l, 300)).join(' ')))) return n;
    }
    if (t === 'INPUT' && ['submit', 'reset', 'button'].includes(type)) return clean(e.value) || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
    if (t === 'INPUT' && type === 'image') return clean(e.getAttribute('alt')) || clean(e.getAttribute('title')) || 'Submit';
    if (t === 'IMG') return clean(e.getAttribute('alt')) || clean(e.getAttribute('title'));
    if (t === 'FIELDSET') { const legend = e.querySelector(':scope > legend'); if (legend && (n = contentText(legend, 300))) return n; }
    if (t === 'TABLE' && e.caption && (n = contentText(e.caption, 300))) return n;
    if (t === 'FIGURE') { const cap = e.querySelector(':scope > figcaption'); if (cap && (n = contentText(cap, 300))) return n; }
    if (fromContent.has(role || '') || t === 'SUMMARY' || t === 'LABEL' || t === 'LEGEND') { if ((n = contentText(e, 300))) return n; }
    if ((n = clean(e.getAttribute('title')))) return n;
    if ((n = clean(e.getAttribute('placeholder')))) return n;
    return '';
  };
  const role = el.getAttribute('role') || implicitRole(el);
  const box = el.getBoundingClientRect();
  const clip = (s, n) => clean(s).slice(0, n);
  const big = el.getElementsByTagName('*').length > 400;  // innerText lays out the whole subtree: raw text is enough there
  const raw = el.tagName === 'INPUT' ? (el.value || '') : big ? (el.textContent || '').slice(0, 4000) : (el.innerText || el.textContent || '');
  return {
    tag: el.tagName.toLowerCase(),
    role,
    name: clip(nameOf(el, role), 200),
    text: clip(raw.slice(0, 4000), 500),
    selector: selectorOf(el),
    bbox: [box.x + window.scrollX, box.y + window.scrollY, box.x + window.scrollX + box.width, box.y + window.scrollY + box.height],
    visible: !!(box.width || box.height) && getComputedStyle(el).visibility !== 'hidden',
  };
}
"""


#: Init script: note in the page's own world when it asks for a cross-document navigation (Navigation API
#: ``navigate`` event: links, forms, ``location`` assignments), so an action that sets one off without
#: Playwright waiting for it (``select_option``, a key press on the page) is known to have done so; and when
#: it opens a new tab or window (``window.open``, a link or form with a target, a modifier or middle click on a
#: link), so the new tab is waited for and listed before the page is observed.
NAVIGATION_WATCH_JS = """(() => {
  if (window.__taskloomNavigation) return;
  const watch = window.__taskloomNavigation = {pending: false, popup: false};
  if (window.navigation) {
    navigation.addEventListener('navigate', (e) => {
      if (!e.destination.sameDocument && !e.downloadRequest) watch.pending = true;
    });
  }
  const opener = window.open;
  window.open = function (...args) { watch.popup = true; return opener.apply(this, args); };
  const elsewhere = (target) => !!target && !['_self', '_parent', '_top'].includes(target.toLowerCase());
  const onLink = (e, modified) => {
    const link = e.target instanceof Element ? e.target.closest('a[href], area[href]') : null;
    if (link && (elsewhere(link.target) || modified)) watch.popup = true;
  };
  document.addEventListener('click', (e) => onLink(e, e.ctrlKey || e.metaKey || e.shiftKey), true);
  document.addEventListener('auxclick', (e) => onLink(e, e.button === 1), true);
  document.addEventListener('submit', (e) => { if (e.target instanceof HTMLFormElement && elsewhere(e.target.target)) watch.popup = true; }, true);
})()"""

#: ``() => {navigation, popup, title}``: whether the page asked for a navigation, or opened a tab, since the last call (and forget it); its title.
NAVIGATION_PENDING_JS = """() => {
  const watch = window.__taskloomNavigation;
  const found = {navigation: !!(watch && watch.pending), popup: !!(watch && watch.popup), title: document.title};
  if (watch) { watch.pending = false; watch.popup = false; }
  return found;
}"""


def draw_marks(png: bytes, marks: list[tuple[str, tuple[float, float, float, float]]], kind: str = "png") -> bytes:
    """Draw numbered boxes (set-of-marks) on a screenshot: one box and label per ``(label, bbox)``; the result is in format ``kind`` (png, jpeg, webp)."""
    from PIL import Image, ImageDraw

    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    palette = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000"]
    for i, (label, (x0, y0, x1, y1)) in enumerate(marks):
        if x1 <= x0 or y1 <= y0 or x0 > image.width or y0 > image.height:
            continue
        colour = palette[i % len(palette)]
        draw.rectangle([x0, y0, x1, y1], outline=colour, width=2)
        tx, ty = x0, max(0.0, y0 - 12)
        width = 7 * len(label) + 4
        draw.rectangle([tx, ty, tx + width, ty + 12], fill=colour)
        draw.text((tx + 2, ty), label, fill="white")
    out = io.BytesIO()
    if kind == "png":
        image.save(out, format="PNG", compress_level=1)
    else:
        image.save(out, format=kind.upper())
    return out.getvalue()

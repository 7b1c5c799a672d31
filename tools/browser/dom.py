"""JavaScript run in pages: describe an element (role, name, text, unique selector, box) and set-of-marks drawing.

The same description feeds the crawler's graph nodes and the recorder's action
targets, so a node and an action on the same element agree.
"""

from __future__ import annotations

import io

__all__ = ["DESCRIBE_JS", "draw_marks"]

#: ``(el) => {...}``: role, accessible name, text, a CSS selector matching only ``el``, and its box.
DESCRIBE_JS = r"""
(el) => {
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
  const cssEscape = (s) => (window.CSS && CSS.escape) ? CSS.escape(s) : s.replace(/[^a-zA-Z0-9_-]/g, '\\$&');
  const unique = (sel) => { try { return document.querySelectorAll(sel).length === 1; } catch (_) { return false; } };
  const selectorOf = (e) => {
    if (e.id && unique('#' + cssEscape(e.id))) return '#' + cssEscape(e.id);
    const testid = e.getAttribute('data-testid');
    if (testid && unique(`[data-testid="${testid}"]`)) return `[data-testid="${testid}"]`;
    const parts = [];
    let node = e;
    while (node && node.nodeType === 1 && node !== document.documentElement) {
      let part = node.tagName.toLowerCase();
      if (node.id && unique('#' + cssEscape(node.id))) { parts.unshift('#' + cssEscape(node.id)); break; }
      const parent = node.parentElement;
      if (parent) {
        const same = Array.from(parent.children).filter(c => c.tagName === node.tagName);
        if (same.length > 1) part += `:nth-of-type(${same.indexOf(node) + 1})`;
      }
      parts.unshift(part);
      const sel = parts.join(' > ');
      if (unique(sel)) return sel;
      node = parent;
    }
    return parts.join(' > ');
  };
  const labelText = (e) => {
    if (e.getAttribute('aria-label')) return e.getAttribute('aria-label');
    const by = e.getAttribute('aria-labelledby');
    if (by) return by.split(/\s+/).map(id => (document.getElementById(id) || {}).innerText || '').join(' ');
    if (e.labels && e.labels.length) return Array.from(e.labels).map(l => l.innerText).join(' ');
    if (e.getAttribute('placeholder')) return e.getAttribute('placeholder');
    if (e.tagName === 'IMG') return e.getAttribute('alt') || '';
    if (['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName)) return e.getAttribute('title') || e.getAttribute('name') || '';
    return (e.innerText || e.textContent || '').trim();
  };
  const box = el.getBoundingClientRect();
  const clip = (s, n) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  return {
    tag: el.tagName.toLowerCase(),
    role: el.getAttribute('role') || implicitRole(el),
    name: clip(labelText(el), 200),
    text: clip(el.innerText || el.textContent || el.value || '', 500),
    selector: selectorOf(el),
    bbox: [box.x + window.scrollX, box.y + window.scrollY, box.x + window.scrollX + box.width, box.y + window.scrollY + box.height],
    visible: !!(box.width || box.height) && getComputedStyle(el).visibility !== 'hidden',
  };
}
"""


def draw_marks(png: bytes, marks: list[tuple[str, tuple[float, float, float, float]]]) -> bytes:
    """Draw numbered boxes (set-of-marks) on a screenshot: one box and label per ``(label, bbox)``."""
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
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()

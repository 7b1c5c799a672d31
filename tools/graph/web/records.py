"""Records a site shows (table rows, detail pages, cards, definition lists) and the listings that hold them.

CONTRACT:
- ``read_records(page) -> list[RecordBlock]``: one ``page.evaluate`` of ``RECORDS_JS``; the crawl
  calls it on every captured page (and app state) and stores the blocks on ``PageCapture.records``.
- ``add_records(kg, result, page_ids)``: called by ``build_web_graph`` after pages and elements;
  adds ``record`` and ``listing`` nodes and ``shows`` / ``details`` / ``contains`` edges.

Record node: ``type="record"``, ``text`` "label: value; …", attrs ``fields`` = {label: {"value":
number|str|None, "type": "number"|"date"|"url"|"text"|"missing", "unit": str|None, "raw": str}}
(a missing value — NULL, NA, empty — keeps its field with ``value`` None and type ``"missing"``),
``listing`` (listing node id or None), ``detail_url`` (normalised URL or None), ``pages`` (URLs
showing it), ``listings`` (every listing showing it).
Listing node: ``type="listing"``, attrs ``key`` (``urls.listing_key``), ``url``, ``columns``,
``pages_seen``, ``pages_total`` (None if unknown), ``total_stated``, ``records``, ``complete`` (bool),
``sorts`` [{"field", "direction": "asc"|"desc"|None, "url"}].

What is read (general rules, no site's names): tables with a header row (``th`` in ``thead`` or
a first row of ``th``) give one record per body row (a row of one cell spanning the columns is a
group heading, and a row holding a table, e.g. a pager, is skipped), header → cell text, and the row's link to
its detail page ("View"-like links first, then a link in a cell); header-less tables whose rows
are label/value pairs, and definition lists with short terms and values, give one record (the
page's own); cards are 2+ same-shaped siblings with a heading and a link, or with "Label: value"
lines. Cell text leaves out icon glyphs (private-use code points), hidden-from-assistive-tech
parts and controls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ...browser.dom import DESCRIBE_JS

if TYPE_CHECKING:
    from ..model import KnowledgeGraph
    from .capture import CrawlResult

__all__ = ["Pager", "RecordRow", "RecordBlock", "RECORDS_JS", "read_records", "add_records"]


class Pager(BaseModel):
    """Where a page sits in its listing, as the page says it."""

    current: int | None = Field(None, description="Page number from a counter such as 'Page 1 / 7'.")
    total: int | None = Field(None, description="Number of pages from that counter.")
    stated_total: int | None = Field(None, description="Number of records the page states ('344 rows', '36 results', 'Showing 1–8 of 36'); None when it states several different numbers.")
    totals: list[int] = Field(default_factory=list, description="Every distinct record count the page states outside tables.")
    truncation: str | None = Field(None, description="Words saying the rows shown are not all ('more than 1,000 rows', '1000+ results', 'first 100 rows').")
    next: str | None = Field(None, description="URL of the next page (rel=next or a 'Next'/'›' link).")
    next_elsewhere: str | None = Field(None, description="A rel=next or 'Next'-named link to another path: a later page elsewhere, or the next document.")
    last: str | None = Field(None, description="URL of the last page ('Last'/'»').")
    links: list[str] = Field(default_factory=list, description="Links to the same path (other pages, orders and filters of the listing).")


class RecordRow(BaseModel):
    """One record as a block shows it: label → text, and its detail page's URL."""

    fields: dict[str, str] = Field(default_factory=dict)
    url: str | None = None


class RecordBlock(BaseModel):
    """Records as one page region shows them (a table, a key-value table, a card list, a definition list)."""

    kind: Literal["table", "key_value", "cards", "definitions"] = Field(description="'table', 'key_value', 'cards' or 'definitions'.")
    selector: str = ""
    title: str = Field("", description="The block's caption or label, else the nearest heading before a table, if any.")
    columns: list[str] = Field(default_factory=list)
    column_links: dict[str, str] = Field(default_factory=dict, description="Column label → URL its header links to (sort orders).")
    rows: list[RecordRow] = Field(default_factory=list)
    truncated: bool = Field(False, description="More rows than were read.")
    pager: Pager | None = Field(None, description="The page's pagination (table and card blocks).")


RECORDS_JS = (
    "() => { const describe = "
    + DESCRIBE_JS.strip()
    + r""";
  const MAX_TABLES = 30, MAX_ROWS = 1000, MAX_COLS = 60, MAX_CELL = 400, MAX_CARDS = 300, MAX_NODES = 20000;
  const PUA = /[\uE000-\uF8FF]|[\uDB80-\uDBFF][\uDC00-\uDFFF]/g;
  const SKIP = /^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT|SVG|BUTTON|SELECT|TEXTAREA|INPUT|OPTION)$/i;
  const WEEKDAY = /^(su|mo|tu|we|th|fr|sa|sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sunday|monday|tuesday|wednesday|thursday|friday|saturday)\.?$/i;
  const BLOCK = /^(P|DIV|LI|BR|TR|TD|TH|DT|DD|H[1-6]|UL|OL|SECTION|ARTICLE|HEADER|FOOTER)$/;
  const PERMALINK = (n) => n.tagName === 'A' && (n.getAttribute('href') || '').startsWith('#') && /^\s*[\u00B6#\u00A7]\s*$/.test(n.textContent || '');
  const textOf = (el, skip) => {
    const parts = [];
    const walk = (n) => {
      if (n.nodeType === 3) { parts.push(n.data); return; }
      if (n.nodeType !== 1 || SKIP.test(n.tagName) || n.getAttribute('aria-hidden') === 'true' || (skip && skip.has(n))) return;
      if (PERMALINK(n)) return;  // Sphinx's "¶" after a definition in a cell is no part of its value
      if (BLOCK.test(n.tagName)) parts.push(' ');
      for (const c of n.childNodes) walk(c);
      if (BLOCK.test(n.tagName)) parts.push(' ');
    };
    walk(el);
    return parts.join('').replace(PUA, '').replace(/\s+/g, ' ').trim().slice(0, MAX_CELL);
  };
  const ARROWS = /[\u2190-\u21FF\u25A0-\u25FF\u2B00-\u2BFF]/g;
  const labelOf = (el) => textOf(el).replace(ARROWS, '').replace(/:\s*$/, '').trim();
  const cellText = (c) => {
    // A truncated preview beside the full value (one hidden), or an ellipsis toggle: keep the full value only.
    const kids = Array.from(c.children);
    if (kids.length < 2) return textOf(c);
    const texts = kids.map(k => textOf(k));
    const drop = new Set();
    texts.forEach((t, i) => {
      const stem = t.replace(/(\.\.\.|\u2026)\s*$/, '');
      if (/^(\.{2,}|\u2026)$/.test(t) || (stem && texts.some((u, j) => j !== i && u.length > stem.length && u.startsWith(stem)))) drop.add(kids[i]);
    });
    return textOf(c, drop);
  };
  const nameOf = (a) => ((a.getAttribute('aria-label') || a.getAttribute('title') || textOf(a)) || '').replace(PUA, '').trim();
  const here = location.href.split('#')[0];
  const DETAIL = /^(view|details?|open|show|more|read more|see more|more info|info)\b/i;
  const detailLink = (scope, prefer) => {
    let best = null, rank = 9;
    for (const a of scope.querySelectorAll('a[href]')) {
      const raw = a.getAttribute('href') || '';
      if (raw.startsWith('#') || !/^https?:/.test(a.href)) continue;
      // A link into a section of a page (a glossary term, a function's entry) is a cross-reference, not the row's own page.
      if (a.hash && !/^#!?\//.test(a.hash) && !DETAIL.test(nameOf(a))) continue;
      const url = a.href.split('#')[0];
      if (url === here) continue;
      const samePath = new URL(url).pathname === location.pathname;
      const r = DETAIL.test(nameOf(a)) ? 0 : (prefer && prefer.contains(a)) ? 1 : samePath ? 9 : 2;
      if (r < rank) { best = url; rank = r; }
    }
    return best;
  };
  const blocks = [];
  // Tables: a header row → one record per body row; no header but label/value rows → one record.
  // A table holding tables is read only with a header row; its rows that hold a table (a pager, a layout cell) are no records.
  const tables = Array.from(document.querySelectorAll('table')).slice(0, MAX_TABLES);
  // A table without a caption is named by the nearest heading before it (a section's title, its permalink mark dropped).
  const headings = Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'));
  // A heading's text without its permalink mark (Sphinx's "¶", a trailing "#").
  const headingText = (h) => textOf(h).replace(/\s*[\u00B6#]\s*$/, '').trim();
  const headingBefore = (el) => {
    let last = null;
    for (const h of headings) { if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) last = h; else break; }
    return last ? headingText(last) : '';
  };
  for (const t of tables) {
    const nested = !!t.querySelector('table');
    const rows = Array.from(t.rows).filter(r => !r.querySelector('table'));
    if (!rows.length) continue;
    let header = null;
    if (t.tHead && t.tHead.rows.length) header = t.tHead.rows[t.tHead.rows.length - 1];
    else if (rows[0].cells.length > 1 && Array.from(rows[0].cells).every(c => c.tagName === 'TH' || c.getAttribute('role') === 'columnheader')) header = rows[0];
    if (nested && !header) continue;
    const inHead = (r) => (t.tHead && t.tHead.contains(r)) || (t.tFoot && t.tFoot.contains(r)) || r === header;
    const body = rows.filter(r => !inHead(r));
    const caption = t.caption ? textOf(t.caption) : (t.getAttribute('aria-label') || headingBefore(t));
    if (!header) {
      const kv = body.length >= 2 && body.every(r => r.cells.length === 2 && (r.cells[0].tagName === 'TH' || /:\s*$/.test(textOf(r.cells[0]))));
      if (!kv) continue;
      const fields = {};
      for (const r of body) {
        const label = labelOf(r.cells[0]);
        if (label && !(label in fields)) fields[label] = cellText(r.cells[1]);
      }
      blocks.push({kind: 'key_value', selector: describe(t).selector, title: caption, columns: Object.keys(fields), rows: [{fields, url: null}]});
      continue;
    }
    const columns = [], links = {};
    for (const c of header.cells) {
      let label = labelOf(c);
      if (label && columns.includes(label)) label = label + ' (' + (columns.filter(x => x === label).length + 1) + ')';
      for (let k = 0; k < (c.colSpan || 1) && columns.length < MAX_COLS; k++) columns.push(k ? '' : label);
      const a = c.querySelector('a[href]');
      if (label && a && /^https?:/.test(a.href)) links[label] = a.href;
    }
    if (columns.filter(Boolean).length < 2) continue;
    // A calendar grid (weekday columns) is a date picker, not records: its rows are weeks and change with the clock.
    if (columns.filter(c => WEEKDAY.test(c)).length >= 5) continue;
    const out = [];
    for (const r of body.slice(0, MAX_ROWS)) {
      // One cell across a table of several columns: a group heading or a note between records, not a record.
      if (r.cells.length === 1 && columns.length > 1) continue;
      const cells = [];
      for (const c of r.cells) for (let k = 0; k < (c.colSpan || 1); k++) cells.push(k ? null : c);
      if (cells.length < 2) continue;
      const fields = {};
      let filled = 0;
      cells.forEach((c, i) => { if (c && columns[i]) { fields[columns[i]] = cellText(c); if (fields[columns[i]]) filled++; } });
      if (!filled) continue;
      // The header row repeated inside the body (Trac's grouped queries repeat it under each group): no record.
      if (cells.every((c, i) => !c || !columns[i] || labelOf(c) === columns[i])) continue;
      const firstLinked = cells.find(c => c && c.querySelector('a[href]'));
      out.push({fields, url: detailLink(r, firstLinked)});
    }
    if (out.length) blocks.push({kind: 'table', selector: describe(t).selector, title: caption, columns: columns.filter(Boolean), column_links: links, rows: out, truncated: body.length > MAX_ROWS});
  }
  // Definition lists with short terms and values: one record.
  for (const dl of Array.from(document.querySelectorAll('dl')).slice(0, MAX_TABLES)) {
    const fields = {};
    let term = null, pairs = 0, ok = true;
    for (const e of dl.querySelectorAll(':scope > dt, :scope > dd, :scope > div > dt, :scope > div > dd')) {
      const text = textOf(e);
      if (e.tagName === 'DT') { term = labelOf(e); if (term.length > 60) ok = false; continue; }
      if (!term || text.length > 200) { ok = false; continue; }
      fields[term] = term in fields ? fields[term] + '; ' + text : text;
      pairs++;
    }
    if (ok && pairs >= 2) blocks.push({kind: 'definitions', selector: describe(dl).selector, title: '', columns: Object.keys(fields), rows: [{fields, url: null}]});
  }
  // Cards: 2+ same-shaped siblings, each with a heading and a link, or with 2+ "Label: value" lines.
  const LABELLED = /^([A-Za-z\u00C0-\u024F][^:\n,.;]{0,29}):\s+(\S[^\n]{0,199})$/;
  const shape = (e) => e.tagName + '>' + Array.from(e.children).map(c => c.tagName).join(',');
  const PART = '\u241F', MAX_PARTS = 12;
  const partsOf = (card, heading) => {
    const out = [];
    const walk = (el, path, depth) => {
      const seen = {};
      for (const c of el.children) {
        const tag = c.tagName.toLowerCase();
        seen[tag] = (seen[tag] || 0) + 1;
        if (out.length >= MAX_PARTS || SKIP.test(c.tagName) || c.getAttribute('aria-hidden') === 'true' || (heading && heading.contains(c))) continue;
        const here = path + '/' + tag + seen[tag];
        if (c.children.length) { if (depth < 4) walk(c, here, depth + 1); continue; }
        const text = textOf(c);
        if (text && text.length <= 60 && !text.includes(':')) out.push([here, text]);
      }
    };
    walk(card, '', 0);
    return out;
  };
  const taken = new Set();
  let cards = 0, visited = 0;
  for (const list of document.querySelectorAll('ul, ol, div, section, main, article')) {
    if (++visited > MAX_NODES || cards >= MAX_CARDS) break;
    if (list.children.length < 2 || list.closest('nav, header, footer, table, dl, [role=menu], [role=tablist], [role=navigation]')) continue;
    if (Array.from(taken).some(c => c.contains(list))) continue;
    const groups = {};
    for (const c of list.children) (groups[shape(c)] = groups[shape(c)] || []).push(c);
    for (const group of Object.values(groups)) {
      if (group.length < 2) continue;
      const rows = [];
      for (const card of group) {
        const text = (card.innerText || card.textContent || '').replace(PUA, '');
        if (text.length > 2000 || !card.children.length) { rows.length = 0; break; }
        const fields = {};
        const heading = card.querySelector('h1, h2, h3, h4, h5, h6, [role=heading]');
        if (heading && headingText(heading)) fields['title'] = headingText(heading);
        let pairs = 0;
        for (const line of text.split('\n')) {
          const m = line.trim().match(LABELLED);
          if (m && !/https?:$/.test(m[1]) && !(m[1] in fields)) { fields[m[1].trim()] = m[2].trim(); pairs++; }
        }
        // Unlabelled parts ("Margaret Oyelaran · 2014 · Book"): kept under their place in the card; the graph names them from detail pages.
        for (const [path, value] of partsOf(card, heading)) if (value !== fields['title']) fields[PART + path] = value;
        // A heading linking only to its own anchor (a section's permalink) names no record page: sections are no cards.
        const titleLink = heading && (heading.querySelector('a[href]:not([href^="#"]), a[href^="#/"], a[href^="#!"]') || heading.closest('a[href]'));
        const titled = !!(heading && fields['title'] && titleLink);
        const url = detailLink(card, titled ? heading : null);
        if (!(pairs >= 2 || (titled && url))) { rows.length = 0; break; }
        rows.push({fields, url});
      }
      if (rows.length < 2) continue;
      // A label is a field name only if several cards use it (one card's prose "X: y" is not).
      const uses = {};
      rows.forEach(r => Object.keys(r.fields).forEach(k => { uses[k] = (uses[k] || 0) + 1; }));
      rows.forEach(r => Object.keys(r.fields).forEach(k => { if (k !== 'title' && uses[k] < 2) delete r.fields[k]; }));
      group.forEach(c => taken.add(c));
      cards += rows.length;
      const columns = [];
      rows.forEach(r => Object.keys(r.fields).forEach(k => { if (!columns.includes(k)) columns.push(k); }));
      blocks.push({kind: 'cards', selector: describe(list).selector, title: '', columns, rows});
    }
  }
  // Where this page sits in its listing: a page counter, a stated total, next/last links, same-path links.
  const pager = {current: null, total: null, stated_total: null, totals: [], truncation: null, next: null, next_elsewhere: null, last: null, links: []};
  const NOUNS = '(?:rows|records|results|items|entries|matches|hits)';
  const NUM = '(\\d{1,3}(?:,\\d{3})+|\\d+)';
  const STATED = new RegExp('(?:^|[^\\d.,])' + NUM + '\\s+' + NOUNS + '\\b', 'i');
  const RANGE = new RegExp('\\d+\\s*[\u2013\u2014-]\\s*\\d+\\s+of\\s+' + NUM + '\\b', 'i');
  // Words that say the rows shown are not all there are: "more than 1,000 rows", "1000+ results", "results truncated", "(truncated)";
  // not prose that uses the word of something else ("Excluded time components are truncated").
  const CUT = new RegExp('\\b(?:more than|over|at least|in excess of|upwards of|limited to|capped at)\\s+' + NUM + '\\s+' + NOUNS + '\\b|\\b' + NUM + '\\+\\s*' + NOUNS + '\\b|\\b(?:results?|rows?|records?|items?|entries|list|table) (?:were |was |have been |has been |are |is )?(?:limited|capped|truncated)\\b|^\\W*truncated\\W*$', 'i');
  const FIRST = new RegExp('\\b(?:the first|first|top)\\s+' + NUM + '\\s+' + NOUNS + '\\b', 'i');
  let first = null;
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  const seenParents = new Set();
  for (let n = walker.nextNode(), i = 0; n && i < MAX_NODES; n = walker.nextNode(), i++) {
    const p = n.parentElement;
    if (!p || seenParents.has(p) || SKIP.test(p.tagName)) continue;
    seenParents.add(p);
    const s = (p.textContent || '').replace(/\s+/g, ' ').trim();
    if (!s || s.length > 120) continue;
    const counter = s.match(/\bpage\s+(\d{1,6})\s*(?:\/|of)\s*(\d{1,6})\b/i);
    if (counter && pager.total === null) { pager.current = +counter[1]; pager.total = +counter[2]; }
    const inTable = p.closest('table, [role=table], [role=grid]');
    const cut = s.match(CUT);
    // A data cell's words ("x truncated to Integral") describe the record; inside a table only a count says rows are cut.
    if (cut && pager.truncation === null && !(inTable && !/\d/.test(cut[0]))) pager.truncation = cut[0];
    const top = s.match(FIRST);
    if (top && first === null) first = top[0];
    if (cut || top || inTable) continue;  // a count inside a table is a field, not the listing's total
    for (const m of [s.match(STATED), s.match(RANGE)]) {
      const n = m ? +m[1].replace(/,/g, '') : null;
      if (n !== null && !pager.totals.includes(n)) pager.totals.push(n);
    }
  }
  // One stated number is the listing's total; several different ones (a page listing tables with their row counts) state none.
  if (pager.totals.length === 1) pager.stated_total = pager.totals[0];
  if (first !== null && pager.stated_total === null && pager.truncation === null) pager.truncation = first;
  // rel=next to another path is the next document (Sphinx links every page to the next chapter), not this listing's next page.
  const next = document.querySelector('a[rel~=next][href], link[rel~=next][href]');
  if (next && /^https?:/.test(next.href)) {
    if (new URL(next.href).pathname === location.pathname) pager.next = next.href;
    else pager.next_elsewhere = next.href;
  }
  const NEXT = /^(next(\s+page)?(\s*(›|»|>>|>|→))?|›|>|→)$/i, LAST = /^(last(\s+page)?(\s*(»|>>|>>\||→\|))?|»)$/i;
  for (const a of document.querySelectorAll('a[href]')) {
    if (!/^https?:/.test(a.href)) continue;
    const url = new URL(a.href);
    const name = nameOf(a);
    if (url.pathname !== location.pathname) {
      if (!pager.next_elsewhere && NEXT.test(name)) pager.next_elsewhere = a.href;
      continue;
    }
    if (url.search === location.search && url.hash && !/^#!?\//.test(url.hash)) continue;  // an anchor on this page (the docs of next()), not another page
    if (!pager.next && NEXT.test(name)) pager.next = a.href;
    if (!pager.last && LAST.test(name)) pager.last = a.href;
    if (pager.links.length < 300 && !pager.links.includes(a.href)) pager.links.push(a.href);
  }
  blocks.forEach(b => { if (b.kind === 'table' || b.kind === 'cards') b.pager = pager; });
  return blocks;
}"""
)


async def read_records(page: Any) -> list[RecordBlock]:
    """The record blocks on the page as it is now."""
    return [RecordBlock.model_validate(b) for b in await page.evaluate(RECORDS_JS)]


def add_records(kg: KnowledgeGraph, result: CrawlResult, page_ids: dict[str, str]) -> None:
    """Add record and listing nodes for every page's blocks (see the module docstring)."""
    from .listings import RecordGraph

    RecordGraph(kg, result, page_ids).build()

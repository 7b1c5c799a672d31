"""Pages the crawl linked to but never loaded, read over plain HTTP: a second route to a find target's uniqueness on a site without search.

A crawl under a page budget sees part of a site; a sentence unique among the crawled pages may
stand on a page it skipped (an all-in-one reference page, a changelog that repeats every release
note). The graph keeps those URLs (``meta.stats["unvisited"]``); they, and the pages they link to in turn, are fetched here once,
same origin only (every redirect hop too), HTML only, and their text (markup stripped) is
searched for the sentence. A site with more than :data:`MAX_UNSEEN_PAGES` such pages leaves
uniqueness unproven.
"""

from __future__ import annotations

import asyncio
import html
import re
import urllib.error
import urllib.request
from urllib.parse import urljoin, urlparse

from ...graph.model import KnowledgeGraph
from ...graph.web.capture import normalize_url
from ...graph.web.frontier import RESOURCE_EXTENSIONS

__all__ = ["UnseenPages", "page_text", "MAX_UNSEEN_PAGES"]

#: Pages fetched at most; a site that left more unread cannot be searched this way.
MAX_UNSEEN_PAGES = 1500
#: Bytes read of one page, and seconds one fetch may take.
MAX_BYTES = 4 * 1024 * 1024
FETCH_SECONDS = 15.0
#: Fetches at once.
CONCURRENCY = 8

_DROP = re.compile(r"(?is)<(script|style|noscript|template)\b.*?</\1\s*>|<!--.*?-->")
_TAG = re.compile(r"(?s)<[^>]*>")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)\]])")


def page_text(markup: str) -> str:
    """The words of an HTML page, compared loosely: markup and scripts dropped, entities decoded, no space before punctuation, lower case.

    >>> page_text('<p>If an <a href="x">sqlite3</a> object is <b>rolled back</b>.</p><script>var a = 1;</script>')
    'if an sqlite3 object is rolled back.'
    """
    text = html.unescape(_TAG.sub(" ", _DROP.sub(" ", markup))).replace("\u2019", "'")
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split())).casefold()


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    def __init__(self, origin: tuple[str, str]) -> None:
        self.origin = origin

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        target = urlparse(newurl)
        if (target.scheme, target.netloc) != self.origin:
            return None  # a hop to another origin is not followed
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_HREF = re.compile(r"""(?i)\bhref\s*=\s*["']([^"'#]+)""")


def _fetch(url: str, origin: tuple[str, str]) -> tuple[str, list[str]] | None:
    """(loose text, links) of an HTML page of ``origin``; None when it is not one or cannot be read."""
    opener = urllib.request.build_opener(_SameOrigin(origin))
    try:
        with opener.open(url, timeout=FETCH_SECONDS) as response:
            if "html" not in str(response.headers.get("Content-Type", "")).lower():
                return None
            markup = response.read(MAX_BYTES).decode(response.headers.get_content_charset() or "utf-8", errors="replace")
            final = response.geturl()
    except (urllib.error.URLError, OSError, ValueError):
        return None  # an unreadable page holds nothing we could show an agent either
    return page_text(markup), [urljoin(final, html.unescape(h.strip())) for h in _HREF.findall(markup)]


def _document(url: str) -> bool:
    name = urlparse(url).path.rsplit("/", 1)[-1]
    return "." not in name or name.rsplit(".", 1)[-1].lower() not in RESOURCE_EXTENSIONS


class UnseenPages:
    """The site beyond the crawl, read over HTTP (same origin as the graph's start): each page once, on first use.

    From the URLs the crawl linked to but never loaded, links are followed page by page (documents
    only, never a crawled page) up to :data:`MAX_UNSEEN_PAGES`; ``complete`` says whether nothing
    was left unread.
    """

    def __init__(self, kg: KnowledgeGraph) -> None:
        start = urlparse(str(kg.meta.sources[0]) if kg.meta.sources else "")
        self.origin = (start.scheme, start.netloc)
        self.crawled = {normalize_url(str(p.attrs["url"])) for p in kg.nodes("page")}
        self.urls = [u for u in kg.meta.stats.get("unvisited") or [] if self._ours(u)]
        self._texts: dict[str, str | None] = {}
        self.complete = False
        self._spidered = False

    def _ours(self, url: str) -> bool:
        parts = urlparse(url)
        return (parts.scheme, parts.netloc) == self.origin

    async def _load(self, urls: list[str]) -> list[str]:
        """Fetch ``urls`` not read yet; returns the links they show."""
        gate = asyncio.Semaphore(CONCURRENCY)
        links: list[str] = []

        async def one(url: str) -> None:
            async with gate:
                got = await asyncio.to_thread(_fetch, url, self.origin)
            self._texts[url] = got[0] if got else None
            links.extend(got[1] if got else [])

        await asyncio.gather(*(one(u) for u in dict.fromkeys(urls) if u not in self._texts and self._ours(u)))
        return links

    async def _spider(self) -> None:
        if self._spidered:
            return
        self._spidered = True
        queue = list(dict.fromkeys(self.urls))
        queued = set(queue)  # every URL ever queued: still in the queue, or read (in _texts)
        looked: set[str] = set()  # links as written, each considered once (a manual's pages repeat thousands of links)
        while queue:
            room = MAX_UNSEEN_PAGES - len(self._texts)
            if room <= 0:
                return  # left unread: not complete
            batch, queue = queue[:room], queue[room:]
            for link in await self._load(batch):
                if link in looked:
                    continue
                looked.add(link)
                if not link.startswith(("http://", "https://")) or not self._ours(link) or not _document(link):
                    continue
                url = normalize_url(link)
                if url not in self._texts and url not in self.crawled and url not in queued:
                    queued.add(url)
                    queue.append(url)
        self.complete = True

    async def holders(self, sentence: str, urls: list[str] | None = None) -> list[str]:
        """Which of ``urls`` (default: the whole site beyond the crawl, see the class) show ``sentence``."""
        if urls is None:
            await self._spider()
        else:
            await self._load(urls)
        key = page_text(sentence)
        pool = self._texts if urls is None else {u: self._texts.get(u) for u in urls}
        return [u for u, text in pool.items() if text and key in text]

    @property
    def read_count(self) -> int:
        """Pages fetched so far that could be read."""
        return sum(1 for t in self._texts.values() if t)

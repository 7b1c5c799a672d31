"""The site's own search as a second route to a find target's uniqueness.

A site with a search form that submits by GET (a search box filling a form, or a field whose
name is a search key such as ``q``) is asked for the target sentence. The pages its results link
to, less the links a search for a word no page holds also shows (the site's navigation), are the
candidates: each is read, and one that shows the sentence too (crawled or not) makes the target
ambiguous. A search that finds only the target, or nothing, leaves the crawl's proof as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode, urljoin, urlparse, urlunparse

from ...graph.model import KnowledgeGraph
from ...graph.web.capture import normalize_url
from ...graph.web.urls import SEARCH_KEYS

__all__ = ["SiteSearch", "site_search", "result_url", "NO_MATCH_QUERY", "MAX_RESULT_PAGES", "QUERY_CHARS"]

#: A query no page holds: its result page shows only the site's chrome.
NO_MATCH_QUERY = "qzxjvkwq"
#: Result pages read per sentence, in the site's order (best first); the rest are counted in the route as not read.
MAX_RESULT_PAGES = 5
#: The sentence is searched for up to this many characters (cut at a word).
QUERY_CHARS = 120


@dataclass(frozen=True)
class SiteSearch:
    """A GET search form: where it submits and the name of its text field."""

    action: str
    field: str

    def url(self, query: str) -> str:
        """The result page's URL for ``query`` (the sentence cut at a word to :data:`QUERY_CHARS`)."""
        text = query if len(query) <= QUERY_CHARS else query[:QUERY_CHARS].rsplit(" ", 1)[0]
        parts = urlparse(self.action)
        return urlunparse(parts._replace(query=urlencode({self.field: text}), fragment=""))


def site_search(kg: KnowledgeGraph) -> SiteSearch | None:
    """The site's GET search form, if the crawl saw one (the first by node id, for reproducibility)."""
    for box in sorted(list(kg.nodes("search_box")) + list(kg.nodes("input")), key=lambda n: n.id):
        name = str(box.attrs.get("field_name") or "")
        if not name or (box.type == "input" and name.lower() not in SEARCH_KEYS):
            continue
        for _, form_id, data in kg.g.out_edges(box.id, data=True):
            if data.get("type") != "fills" or kg.node_type(form_id) != "form":
                continue
            form = kg.node(form_id).attrs
            if str(form.get("method") or "get").lower() != "get":
                continue
            action = urljoin(str(form.get("page_url") or ""), str(form.get("action") or form.get("page_url") or ""))
            if action.startswith(("http://", "https://")):
                return SiteSearch(action=urlunparse(urlparse(action)._replace(query="", fragment="")), field=name)
    return None


def result_url(href: str, crawled: set[str]) -> str:
    """A result link as a page: fragment dropped, and the query too when only the bare URL was crawled (``?highlight=…``)."""
    url = normalize_url(href.split("#", 1)[0])
    bare = urlunparse(urlparse(url)._replace(query=""))
    return bare if url not in crawled and bare in crawled else url

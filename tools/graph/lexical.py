"""Lexical retrieval (BM25, ``bm25s``) over a graph's text nodes, and its fusion with vector search.

Embeddings find passages by meaning but blur exact terms (a function name, an argument, a
dataset); BM25 finds exact terms but not paraphrases. Hybrid search runs both and fuses the two
rankings by weighted **reciprocal rank fusion**: ``score(n) = Σ w_i / (RRF_K + rank_i(n))`` over the
rankings that hold ``n`` (Cormack et al., 2009; ``RRF_K = 60``). Ranks, not raw scores, are fused,
so the two scales never need calibrating. The vector ranking counts half (``VECTOR_WEIGHT``): with
the small offline MiniLM it is the weaker of the two on ``bench/search.py`` (MRR 0.50 against 0.70).

BM25 uses ``k1 = 0.9, b = 0.4``, the passage-retrieval defaults of Anserini, which normalise
length less than ``b = 0.75``: a short heading or caption that repeats a query word no longer
outranks the paragraph that answers the query. A node's document also holds the title of the
section it is in, so a passage is found by the topic its section names.

Terms are lower-cased words of two or more letters and numbers (dotted and underscored names such as ``lme4::lmer`` or
``na.rm`` also kept whole), English stop words dropped, each word reduced to its Snowball
stem (``requirements`` → ``requir``). The index covers the nodes vector search covers (the embedded types with text); it is
built on first use and kept per graph until the graph changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

import bm25s
import numpy as np
import snowballstemmer

from .model import EdgeType, KnowledgeGraph, NodeType

__all__ = ["RRF_K", "VECTOR_WEIGHT", "terms", "LexicalIndex", "fuse"]

RRF_K = 60
VECTOR_WEIGHT = 0.5
BM25_K1, BM25_B = 0.9, 0.4
_WORD = re.compile(r"[a-z0-9]+(?:(?:[._]|::)[a-z0-9]+)*")
_STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its of on or our "
    "so such than that the their them then there these they this those to was we were what when where which while who why "
    "will with would you your".split()
)  # fmt: skip


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def _fold(word: str) -> str:
    """The word's English Snowball stem (numbers and names with digits kept whole)."""
    return word if any(ch.isdigit() for ch in word) else str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """The BM25 terms of ``text``; a dotted name also yields its parts.

    >>> terms("The models' random effects, e.g. lme4::lmer and na.rm")
    ['model', 'random', 'effect', 'e.g', 'lme4::lmer', 'lme4', 'lmer', 'na.rm', 'na', 'rm']
    >>> terms("requirements required")
    ['requir', 'requir']
    """
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in _STOP or (len(word) == 1 and not word.isdigit()):
            continue
        out.append(_fold(word))
        parts = re.split(r"[._:]+", word)
        if len(parts) > 1:
            out.extend(_fold(p) for p in parts if len(p) > 1 and p not in _STOP)
    return out


class LexicalIndex:
    """BM25 over the text of some nodes of one graph."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], types: Sequence[str]) -> None:
        self.ids = list(ids)
        self.types = np.asarray(types)
        self.retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        corpus = [terms(t) or ["∅"] for t in texts]  # bm25s needs a token in every document
        if self.ids:
            self.retriever.index(corpus, show_progress=False)

    @classmethod
    def of_graph(cls, kg: KnowledgeGraph, types: Iterable[NodeType]) -> LexicalIndex:
        """The index of ``kg``'s nodes of ``types``, each document led by its section's title."""
        nodes = [n for n in kg.nodes(*types) if n.text.strip()]
        titles = _section_titles(kg)
        texts = [f"{titles[n.id]}\n{n.text}" if n.id in titles else n.text for n in nodes]
        return cls([n.id for n in nodes], texts, [n.type.value for n in nodes])

    def query(self, text: str, k: int, node_types: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """Up to ``k`` (node id, BM25 score) with a positive score, best first (ties by node id)."""
        words = terms(text)
        if not self.ids or not words:
            return []
        scores = np.asarray(self.retriever.get_scores(words), dtype=np.float64)
        if node_types:
            scores = np.where(np.isin(self.types, list(node_types)), scores, 0.0)
        hits = [(self.ids[i], float(scores[i])) for i in np.flatnonzero(scores > 0)]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits[:k]


def _section_titles(kg: KnowledgeGraph) -> dict[str, str]:
    """Node id → title of the nearest section holding it (document graphs; ``contains`` edges)."""
    parent = {e.target: e.source for e in kg.edges() if e.type == EdgeType.CONTAINS}
    kinds = {n.id: n for n in kg.nodes(NodeType.SECTION)}
    out: dict[str, str] = {}
    for node_id in parent:
        up = parent.get(node_id)
        for _ in range(64):  # nesting depth bound: a malformed graph cannot loop
            if up is None or up in kinds:
                break
            up = parent.get(up)
        if up is not None and up in kinds and kinds[up].text.strip():
            out[node_id] = kinds[up].text.strip()
    return out


def fuse(*rankings: Sequence[str], k: int, weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion of rankings (best first); the ``k`` best (id, fused score), ties by id.

    >>> [i for i, _ in fuse(["a", "b", "c"], ["c", "a"], k=3)]
    ['a', 'c', 'b']
    >>> [i for i, _ in fuse(["b", "a"], ["a", "b"], k=2, weights=[0.5, 1.0])]
    ['a', 'b']
    """
    score: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, node_id in enumerate(ranking, start=1):
            score[node_id] = score.get(node_id, 0.0) + weight / (RRF_K + rank)
    return sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:k]

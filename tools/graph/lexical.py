"""Lexical retrieval (BM25, ``bm25s``) over a graph's text nodes, and its fusion with vector search.

Embeddings find passages by meaning but blur exact terms (a function name, an argument, a
dataset); BM25 finds exact terms but not paraphrases. Hybrid search runs both and fuses them by a
**convex combination of normalised scores** (Bruch et al., 2023, "An Analysis of Fusion Functions
for Hybrid Retrieval"): a node scores ``VECTOR_WEIGHT · vector + (1 − VECTOR_WEIGHT) · lexical``,
0 in a list that does not hold it. Unlike reciprocal rank fusion it keeps how far apart scores
are, so a passage one ranker puts far ahead is not outvoted by passages both rank middling.

The two lists are normalised differently, because their tails differ. BM25 ranks exactly, so its
scores are min-max normalised over its top hits. The vector list comes from an approximate (HNSW)
index whose last hits may differ between an embedded store and a Chroma server, so its lowest
score is no anchor: a cosine is divided by the list's best, with 0 as its floor (Bruch et al.'s
*theoretical* min-max). A hit's fused score then depends only on its own scores and each list's
best, and the same graph gives the same hybrid ranking on either store.

On ``bench/search.py`` this gave hybrid MRR 0.769 and recall@10 0.981 when chosen (reciprocal rank fusion,
k = 60: 0.744 and 0.944; with chunks cut at paragraphs and code found by its terms only, 0.774, and 0.629 on
its 40 held-out questions); choosing the weight on four of the five PDFs and scoring the fifth
picks 0.5 every time.

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

import numpy as np
import snowballstemmer

from .model import EdgeType, KnowledgeGraph, NodeType

__all__ = ["VECTOR_WEIGHT", "terms", "LexicalIndex", "fuse"]

#: The vector score's share in hybrid fusion; the lexical score takes the rest (chosen with bench/search.py, see above).
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
        import bm25s  # here, not at the top: with SciPy it takes 0.3 s to import, which every CLI command would pay

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


def fuse(vector: Sequence[tuple[str, float]], lexical: Sequence[tuple[str, float]], k: int, weight: float = VECTOR_WEIGHT) -> list[tuple[str, float]]:
    """The ``k`` best (id, fused score) of two scored lists (best first), ties by id: ``weight`` of the vector score (over the list's best) plus the rest of the lexical one (min-max normalised).

    >>> [i for i, _ in fuse([("a", 0.9), ("b", 0.5)], [("b", 12.0), ("c", 3.0)], k=3)]
    ['b', 'a', 'c']
    >>> fuse([("a", 0.7)], [], k=2)
    [('a', 0.5)]
    """
    vector_score, lexical_score = _over_best(vector), _min_max(lexical)
    score = {i: weight * vector_score.get(i, 0.0) + (1.0 - weight) * lexical_score.get(i, 0.0) for i in {**vector_score, **lexical_score}}
    return sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def _over_best(scored: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Scores divided by the best, negatives as 0 (all 0 when none is positive): independent of the list's tail."""
    best = max((s for _, s in scored), default=0.0)
    return {i: max(s, 0.0) / best if best > 0 else 0.0 for i, s in scored}


def _min_max(scored: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Scores min-max normalised to [0, 1] over the list (all 1 when they are equal)."""
    if not scored:
        return {}
    low, high = min(s for _, s in scored), max(s for _, s in scored)
    return {i: (s - low) / (high - low) if high > low else 1.0 for i, s in scored}

"""Embed a graph's text nodes into its chroma collection, and link similar ones."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ..llm.embedders import Embedder
from ..settings import Settings
from .ingest.similarity import link_similar
from .model import KnowledgeGraph, NodeType
from .vectors import VectorStore

__all__ = ["embed_graph", "type_counts"]

ProgressFn = Callable[[float, float, str], None]


def embed_graph(
    kg: KnowledgeGraph,
    settings: Settings,
    vectors: VectorStore,
    embedder: Embedder,
    types: Iterable[NodeType],
    similarity_types: Iterable[NodeType] = (),
    progress: ProgressFn | None = None,
) -> int:
    """Embed nodes of ``types`` that have text, replace the graph's vectors, return how many.

    Nodes of ``similarity_types`` (prose with at least 8 words) also get
    ``semantic_similar`` edges. Texts are sorted by length once for the whole graph,
    so every slice pads little; the slices exist only to report progress.
    """
    nodes = [n for n in kg.nodes(*types) if n.text.strip()]
    order = sorted(range(len(nodes)), key=lambda i: len(nodes[i].text))
    matrix = np.zeros((len(nodes), embedder.dim), dtype=np.float32)
    step = max(64, settings.embed_batch_size)
    for start in range(0, len(order), step):
        idx = order[start : start + step]
        matrix[idx] = embedder.embed([nodes[i].text for i in idx])
        if progress:
            done = min(start + step, len(nodes))
            progress(done, len(nodes), f"embedded {done}/{len(nodes)} nodes")
    similar_types = set(similarity_types)
    similar = [i for i, n in enumerate(nodes) if n.type in similar_types and not n.attrs.get("code") and len(n.text.split()) >= 8]
    if similar:
        link_similar(kg, [nodes[i].id for i in similar], matrix[similar], settings.similarity_threshold, settings.similarity_top_k)
    vectors.delete(kg.id)
    if nodes:
        vectors.upsert(kg.id, [n.id for n in nodes], matrix, [n.text for n in nodes], [n.type.value for n in nodes], embedder.name, embedder.variant)
    kg.meta.embedder, kg.meta.embedding_dim = embedder.name, embedder.dim
    return len(nodes)


def type_counts(kg: KnowledgeGraph) -> tuple[dict[str, int], dict[str, int]]:
    """Node counts and edge counts by type, sorted by name."""
    nodes: dict[str, int] = {}
    edges: dict[str, int] = {}
    for _, data in kg.g.nodes(data=True):
        nodes[data["type"]] = nodes.get(data["type"], 0) + 1
    for _, _, key in kg.g.edges(keys=True):
        edges[key] = edges.get(key, 0) + 1
    return dict(sorted(nodes.items())), dict(sorted(edges.items()))

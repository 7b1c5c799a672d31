"""VectorStore.replace: an unchanged collection is kept, anything else is written anew (real Chroma in tmp_path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from taskloom.tools.graph.vectors import VectorStore


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


IDS = ["a", "b", "c"]
TYPES = ["paragraph", "heading", "paragraph"]


@pytest.fixture
def vs(tmp_path: Path) -> VectorStore:
    return VectorStore(tmp_path / "chroma")


@pytest.fixture
def emb() -> np.ndarray:
    return np.stack([unit(1, 0, 0, 0.3), unit(0, 1, 0.2, 0), unit(0.1, 0, 1, 0)])


def test_same_vectors_are_kept_and_still_found(vs: VectorStore, emb: np.ndarray) -> None:
    assert vs.replace("g1", IDS, emb, TYPES, "hashing", "v1") == 3
    assert vs.replace("g1", IDS, emb.copy(), TYPES, "hashing", "v1") == 0
    assert vs.collection_info("g1")["count"] == 3
    assert [i for i, _ in vs.query("g1", emb[1], k=1)] == ["b"]


@pytest.mark.parametrize(
    "change",
    ["vector", "type", "fewer ids", "variant", "embedder"],
)
def test_any_difference_rewrites_the_collection(vs: VectorStore, emb: np.ndarray, change: str) -> None:
    vs.replace("g1", IDS, emb, TYPES, "hashing", "v1")
    ids, types, name, variant, new = list(IDS), list(TYPES), "hashing", "v1", emb.copy()
    if change == "vector":
        new[2] = unit(0.1, 0, 1, 0.001)  # a small change, far above Chroma's rounding
    elif change == "type":
        types[0] = "list"
    elif change == "fewer ids":
        ids, types, new = ids[:2], types[:2], new[:2]
    elif change == "variant":
        variant = "v2"
    else:
        name = "other"
    assert vs.replace("g1", ids, new, types, name, variant) == len(ids)
    info = vs.collection_info("g1")
    assert (info["count"], info["embedder"], info["variant"]) == (len(ids), name, variant)
    stored = vs.get_embeddings("g1")
    assert sorted(stored) == sorted(ids)
    for k, node_id in enumerate(ids):
        assert np.allclose(stored[node_id], new[k], atol=1e-6)
    wanted = [i for i, t in zip(ids, types) if t == types[0]]
    assert sorted(i for i, _ in vs.query("g1", new[0], k=10, node_types=[types[0]])) == sorted(wanted)

"""Tests of taskloom.tools.graph.vectors against a real Chroma in tmp_path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from taskloom.tools.errors import EmbedderError, InputError, NotFoundError
from taskloom.tools.graph.vectors import VectorStore, collection_name


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def vs(tmp_path: Path) -> VectorStore:
    return VectorStore(tmp_path / "chroma")


def fill(vs: VectorStore, graph_id: str = "g1") -> None:
    emb = np.stack([unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0), unit(1, 1, 0, 0)])
    vs.upsert(graph_id, ["a", "b", "c", "ab"], emb, ["A", "B", "C", "AB"],
              ["paragraph", "heading", "paragraph", "table"], "hashing", "v1")


def test_query_order_and_similarity(vs: VectorStore) -> None:
    fill(vs)
    q = unit(1, 0.2, 0, 0)
    got = vs.query("g1", q, k=3)
    assert [i for i, _ in got] == ["a", "ab", "b"]
    expected = {
        "a": float(q @ unit(1, 0, 0, 0)),
        "ab": float(q @ unit(1, 1, 0, 0)),
        "b": float(q @ unit(0, 1, 0, 0)),
    }
    for node_id, sim in got:
        assert sim == pytest.approx(expected[node_id], abs=1e-5)
    assert vs.query("g1", q.reshape(1, -1), k=1)[0][0] == "a"


def test_k_capped_and_type_filter(vs: VectorStore) -> None:
    fill(vs)
    q = unit(1, 0.2, 0, 0)
    assert len(vs.query("g1", q, k=100)) == 4
    assert [i for i, _ in vs.query("g1", q, k=10, node_types=["paragraph"])] == ["a", "c"]
    assert [i for i, _ in vs.query("g1", q, k=10, node_types=["heading", "table"])] == ["ab", "b"]
    assert vs.query("g1", q, k=10, node_types=["figure"]) == []
    with pytest.raises(InputError):
        vs.query("g1", q, k=0)


def test_upsert_replaces(vs: VectorStore) -> None:
    fill(vs)
    vs.upsert("g1", ["c"], unit(1, 0, 0, 0.01)[None, :], ["C2"], ["paragraph"], "hashing", "v1")
    assert vs.collection_info("g1")["count"] == 4
    top = vs.query("g1", unit(1, 0, 0, 0), k=2, node_types=["paragraph"])[0]
    assert top[1] == pytest.approx(1.0, abs=1e-3)


def test_get_embeddings_and_info(vs: VectorStore) -> None:
    fill(vs)
    got = vs.get_embeddings("g1", ["a", "ab", "missing"])
    assert set(got) == {"a", "ab"}
    np.testing.assert_allclose(got["ab"], unit(1, 1, 0, 0), atol=1e-6)
    assert got["a"].dtype == np.float32 and got["a"].shape == (4,)
    assert set(vs.get_embeddings("g1")) == {"a", "b", "c", "ab"}
    info = vs.collection_info("g1")
    assert {k: info[k] for k in ("count", "embedder", "variant", "dim")} == {
        "count": 4, "embedder": "hashing", "variant": "v1", "dim": 4}


def test_persistence_across_instances(tmp_path: Path) -> None:
    fill(VectorStore(tmp_path / "chroma"))
    again = VectorStore(tmp_path / "chroma")
    assert again.has("g1")
    assert again.query("g1", unit(0, 0, 1, 0), k=1)[0][0] == "c"


def test_persistence_across_processes(tmp_path: Path) -> None:
    fill(VectorStore(tmp_path / "chroma"))
    code = (
        "import sys; from pathlib import Path\n"
        "from taskloom.tools.graph.vectors import VectorStore\n"
        "vs = VectorStore(Path(sys.argv[1]))\n"
        "print(vs.query('g1', [0, 0, 1, 0], k=1)[0][0], vs.collection_info('g1')['embedder'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "chroma")],
                         capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["c", "hashing"]


def test_graphs_are_separate_and_delete(vs: VectorStore) -> None:
    fill(vs, "g1")
    vs.upsert("g2", ["x"], unit(0, 0, 0, 1)[None, :], ["X"], ["chunk"], "hashing", "v1")
    assert [i for i, _ in vs.query("g2", unit(1, 0, 0, 0), k=5)] == ["x"]
    assert vs.delete("g1") is True
    assert not vs.has("g1") and vs.has("g2")
    assert vs.delete("g1") is False
    assert vs.delete("never") is False
    with pytest.raises(NotFoundError, match="g1"):
        vs.query("g1", unit(1, 0, 0, 0), k=1)
    with pytest.raises(NotFoundError):
        vs.collection_info("g1")


def test_embedder_and_dim_mismatch(vs: VectorStore) -> None:
    fill(vs)
    with pytest.raises(EmbedderError, match="hashing"):
        vs.query("g1", np.ones(8, dtype=np.float32), k=1)
    with pytest.raises(EmbedderError, match="re-ingest"):
        vs.upsert("g1", ["z"], np.ones((1, 8)), ["Z"], ["chunk"], "hashing", "v1")
    with pytest.raises(EmbedderError, match="minilm"):
        vs.upsert("g1", ["z"], unit(1, 0, 0, 0)[None, :], ["Z"], ["chunk"], "minilm", "int8")
    with pytest.raises(EmbedderError):
        vs.query("g1", unit(1, 0, 0, 0), k=1, embedder_name="minilm")
    assert vs.query("g1", unit(1, 0, 0, 0), k=1, embedder_name="hashing")[0][0] == "a"


def test_bad_upsert_input(vs: VectorStore) -> None:
    with pytest.raises(InputError):
        vs.upsert("g1", ["a", "b"], np.ones((1, 4)), ["A"], ["chunk"], "hashing", "v1")
    with pytest.raises(InputError):
        vs.upsert("g1", ["a", "a"], np.ones((2, 4)), ["A", "A"], ["chunk"] * 2, "hashing", "v1")
    with pytest.raises(InputError):
        vs.upsert("g1", ["a"], np.full((1, 4), np.nan), ["A"], ["chunk"], "hashing", "v1")
    assert not vs.has("g1")


def test_upsert_larger_than_batch(vs: VectorStore) -> None:
    n = 6000
    assert vs.max_batch_size() < n
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(n, 8)).astype(np.float32)
    ids = [f"n{i}" for i in range(n)]
    vs.upsert("big", ids, emb, [""] * n, ["chunk"] * n, "hashing", "v1")
    assert vs.collection_info("big")["count"] == n
    assert len(vs.get_embeddings("big")) == n
    best = vs.query("big", emb[4321], k=1)[0]
    assert best[0] == "n4321" and best[1] == pytest.approx(1.0, abs=1e-4)


def test_collection_name() -> None:
    assert collection_name("report-1a2b3c4d") == "g_report-1a2b3c4d"
    odd = ["a.", "a..b", "x" * 128, "a_", "b-"]
    names = [collection_name(g) for g in odd]
    assert len(set(names)) == len(odd)
    for name in names:
        assert 3 <= len(name) <= 63 and name[-1].isalnum() and ".." not in name

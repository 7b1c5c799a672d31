"""OpenAIEmbedder against the local OpenAI-compatible TEST DOUBLE, over real HTTP."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import openai_double  # noqa: E402

from taskloom.tools.errors import EmbedderError  # noqa: E402
from taskloom.tools.llm import Embedder, OpenAIEmbedder  # noqa: E402

TEXTS = ["the quick brown fox", "jumps over", "the lazy dog", "fox", "", "quick brown fox the"]


@pytest.fixture
def double() -> Iterator[openai_double.OpenAIDouble]:
    with openai_double.OpenAIDouble(embed_dim=24) as d:
        yield d


def test_unit_vectors_in_order_with_learned_dim(double):
    emb = OpenAIEmbedder(double.base_url, "embed-double", batch_size=4)
    assert emb.dim == 24 and len(double.log) == 1  # one probe request learned the dim
    assert isinstance(emb, Embedder) and len(double.log) == 1
    assert emb.name == "embed-double" and emb.variant == f"openai-compatible {double.base_url}"
    out = emb.embed(TEXTS)
    assert out.dtype == np.float32 and out.shape == (len(TEXTS), 24)
    assert emb.dim == 24
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    for row, text in zip(out, TEXTS):
        want = np.asarray(openai_double.double_embedding(text, 24))
        np.testing.assert_allclose(row, want / np.linalg.norm(want), rtol=1e-5, atol=1e-6)
    # same words, different order → same bag-of-words vector
    np.testing.assert_allclose(out[0], out[5], atol=1e-6)
    bodies = [e.body for e in double.log]
    assert [len(b["input"]) for b in bodies] == [1, 4, 2]  # probe, then batches of 4
    assert all(b["model"] == "embed-double" and b["encoding_format"] == "float" for b in bodies)


def test_empty_input_and_unreachable_endpoint(double):
    emb = OpenAIEmbedder(double.base_url, "e", dim=24)
    assert emb.embed([]).shape == (0, 24) and not double.log
    url = double.base_url
    double.stop()
    with pytest.raises(EmbedderError, match="embedding endpoint"):
        OpenAIEmbedder(url, "e", max_retries=0)


def test_given_dim_mismatch_raises(double):
    emb = OpenAIEmbedder(double.base_url, "e", dim=8)
    assert emb.dim == 8 and not double.log
    with pytest.raises(EmbedderError, match="24-d vectors.*expected 8"):
        emb.embed(["a b"])


def test_errors_become_embedder_errors(double):
    emb = OpenAIEmbedder(double.base_url, "e", dim=24, max_retries=0)
    double.fail_next(5, status=503)
    with pytest.raises(EmbedderError, match="embedding endpoint"):
        emb.embed(["x"])
    with pytest.raises(EmbedderError, match="not a single string"):
        emb.embed("x")


def test_transient_failure_retried_by_client(double):
    emb = OpenAIEmbedder(double.base_url, "e", dim=24, max_retries=2)
    double.fail_next(1, status=503)
    assert emb.embed(["x y"]).shape == (1, 24)

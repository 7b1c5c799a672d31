"""Embedding less: distinct texts once, chunks derived from their members, long texts in pieces, a per-workspace cache."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from taskloom.tools.graph.embedding import EMBED_MAX_TOKENS, SECTION_WEIGHT, EmbeddingCache, Splitter
from taskloom.tools.graph.ingest.pipeline import EMBEDDED_TYPES, IngestReport
from taskloom.tools.graph.service import GraphService
from taskloom.tools.llm.embedders import _TOKENIZER_PATH, MiniLMEmbedder
from taskloom.tools.settings import Settings


def _norm(text: str) -> str:
    """Texts as ingestion compares them: dot leaders ("Intro . . . . 3") dropped, whitespace collapsed."""
    return " ".join(re.sub(r"(?:\.\s?){4,}|(?:…\s?){2,}", " ", text).split())


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(_TOKENIZER_PATH))
    tok.no_padding()
    tok.no_truncation()
    return tok


def test_splitter_pieces_fit_and_tokenise_like_the_whole(tokenizer: Tokenizer) -> None:
    words = "Mixed models estimate fixed and random effects; lmer() fits them by REML or maximum likelihood."
    texts = ["short text", words * 3, words * 9, "x" * 400, "supercalifragilisticexpialidocious " * 60]
    spans = Splitter(64).spans(texts)
    assert spans[0] == [(0, len(texts[0]))]
    for text, pieces in zip(texts, spans):
        whole = tokenizer.encode(text, add_special_tokens=False).ids
        parts = [tokenizer.encode(text[a:b], add_special_tokens=False).ids for a, b in pieces]
        assert max(len(p) for p in parts) <= 62
        assert pieces[0][0] == 0 and not text[pieces[-1][1] :].strip()
        assert all(not text[b:c].strip() for (_, b), (c, _) in zip(pieces, pieces[1:]))  # nothing left out between pieces
        if text != "x" * 400:  # one 400-letter word cannot end at a word boundary
            assert sum(parts, []) == whole
    lengths = [len(p) for p in (tokenizer.encode(texts[2][a:b], add_special_tokens=False).ids for a, b in spans[2])]
    assert max(lengths) - min(lengths) <= 12  # about equal pieces, not a full one and a stub


def test_each_distinct_text_once_and_chunks_derived(real_pdfs: dict[str, Path], tmp_path: Path) -> None:
    svc = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    report = svc.ingest_document(real_pdfs["lmer"])
    kg = svc.load(report.graph_id)
    nodes = [n for n in kg.nodes(*EMBEDDED_TYPES) if n.text.strip()]
    chunks = [n for n in nodes if n.type.value == "chunk"]
    others = {_norm(n.text) for n in nodes if n.type.value != "chunk"}
    assert report.embedding.derived == len(chunks) > 50
    assert report.embedding.computed == report.embedding.inputs == len(others) < len(nodes)
    assert report.embedded == report.embedding.nodes == len(nodes) == svc.vectors.collection_info(kg.id)["count"]
    vectors = svc.vectors.get_embeddings(kg.id)
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-4 for v in vectors.values())
    titles = {_norm(n.text): vectors[n.id].astype(np.float64) for n in nodes if n.type.value == "heading"}
    mixed = 0
    for chunk in chunks:  # the members' vectors weighted by the characters of the chunk each holds
        texts = [_norm(kg.node(m).text) for m in chunk.attrs["members"]]
        joined, window = " ".join(texts), _norm(chunk.text)
        start = joined.index(window)
        covered = set(range(start, start + len(window)))
        weights, pos = [], 0
        for text in texts:
            weights.append(len(covered & set(range(pos, pos + len(text)))))
            pos += len(text) + 1
        mean = sum(w * vectors[m].astype(np.float64) for w, m in zip(weights, chunk.attrs["members"]))
        expected = mean / np.linalg.norm(mean)
        section = chunk.attrs["section"]
        if kg.node_type(section) == "section":  # a fifth of the section title's vector (its heading's) is mixed in
            title = titles[_norm(kg.node(section).text)]
            expected = (1 - SECTION_WEIGHT) * expected + SECTION_WEIGHT * title
            expected /= np.linalg.norm(expected)
            mixed += 1
        assert np.allclose(vectors[chunk.id], expected, atol=1e-5)
    assert mixed > 50


@dataclass
class MiniLMIngest:
    """One MiniLM ingest of countreg (it has paragraphs longer than the model's window), shared by the tests below."""

    workspace: Path
    service: GraphService
    report: IngestReport
    stored: dict[str, np.ndarray]


@pytest.fixture(scope="module")
def minilm_countreg(real_pdfs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> MiniLMIngest:
    ws = tmp_path_factory.mktemp("minilm") / "ws"
    svc = GraphService(Settings(workspace=ws, embedder="minilm"))
    report = svc.ingest_document(real_pdfs["countreg"])
    return MiniLMIngest(ws, svc, report, svc.vectors.get_embeddings(report.graph_id))


def test_reingest_reads_every_vector_from_the_cache(real_pdfs: dict[str, Path], tmp_path: Path, minilm_countreg: MiniLMIngest) -> None:
    svc, first, stored = minilm_countreg.service, minilm_countreg.report, minilm_countreg.stored
    again = svc.ingest_document(real_pdfs["countreg"])  # the same document again: the same graph and vectors
    assert first.embedding.cached == 0 and first.embedding.computed == first.embedding.inputs > 100
    assert again.embedding.computed == 0 and again.embedding.cached == first.embedding.inputs
    assert len(EmbeddingCache.of_workspace(minilm_countreg.workspace)) == first.embedding.inputs
    reread = svc.vectors.get_embeddings(again.graph_id)
    assert stored.keys() == reread.keys() and all(np.array_equal(stored[k], reread[k]) for k in stored)
    # A fresh workspace computes bitwise the same vectors: batches do not change MiniLM's output.
    fresh = GraphService(Settings(workspace=tmp_path / "fresh", embedder="minilm"))
    report = fresh.ingest_document(real_pdfs["countreg"])
    computed = fresh.vectors.get_embeddings(report.graph_id)
    assert report.embedding.computed == first.embedding.inputs
    assert all(np.array_equal(stored[k], computed[k]) for k in stored)


def test_long_text_is_the_mean_of_its_pieces(minilm_countreg: MiniLMIngest) -> None:
    svc, report = minilm_countreg.service, minilm_countreg.report
    assert report.embedding.split > 0 and report.embedding.inputs > report.embedding.texts
    kg = svc.load(report.graph_id)
    splitter = Splitter(EMBED_MAX_TOKENS)
    long = [n for n in kg.nodes("paragraph") if len(splitter.spans([_norm(n.text)])[0]) > 1][:3]
    assert long
    model = MiniLMEmbedder()
    stored = svc.vectors.get_embeddings(kg.id, [n.id for n in long])
    for node in long:
        text = _norm(node.text)
        spans = splitter.spans([text])[0]
        pieces = model.embed([text[a:b] for a, b in spans])
        mean = np.array([b - a for a, b in spans], dtype=np.float64) @ pieces.astype(np.float64)
        assert np.allclose(stored[node.id], mean / np.linalg.norm(mean), atol=1e-5)
        assert float(stored[node.id] @ model.embed([text])[0]) > 0.8  # still close to the truncated whole


def test_unreadable_cache_is_left_out(real_pdfs: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = EmbeddingCache.of_workspace(tmp_path / "ws")
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(b"this is not a database" * 100)
    svc = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing"))
    with caplog.at_level(logging.WARNING, logger="taskloom.tools.graph.embedding"):
        report = svc.ingest_document(real_pdfs["countreg"])
    assert report.embedded > 100 and report.embedding.computed == report.embedding.inputs
    assert any("embedding cache" in r.getMessage() for r in caplog.records)
    assert len(svc.search(report.graph_id, "hurdle model", k=3, mode="vector")) == 3

"""Vectors on a real Chroma server (`chroma run` on loopback): the same search results as the embedded store."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.graph.embedding import EmbeddingCache
from taskloom.tools.graph.service import GraphService
from taskloom.tools.graph.vectors import VectorStore, VectorStoreUnavailable
from taskloom.tools.settings import Settings

pytestmark = pytest.mark.integration

CHROMA = Path(sys.executable).parent / "chroma"
QUERIES = [
    "hurdle model for excess zeros",
    "negative binomial dispersion parameter",
    "number of physician office visits",
    "zero-inflated count data regression",
    "likelihood ratio test",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(path: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    log = open(path.parent / f"chroma-{port}.log", "wb")  # noqa: SIM115 - closed with the process below
    proc = subprocess.Popen([str(CHROMA), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.close()
            raise RuntimeError(f"chroma run exited with {proc.returncode}: {(path.parent / f'chroma-{port}.log').read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                log.close()
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    _stop(proc)
    log.close()
    raise RuntimeError(f"chroma run did not answer at {url} within 60 s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `chroma run` server on a free loopback port, in a temporary directory; stopped after the module."""
    if not CHROMA.is_file():
        pytest.skip(f"no chroma CLI at {CHROMA}")
    proc, url = _start(tmp_path_factory.mktemp("chroma-server") / "db")
    yield url
    _stop(proc)


def _ingest(workspace: Path, pdf: Path, embedder: str, url: str | None) -> tuple[GraphService, str]:
    svc = GraphService(Settings(workspace=workspace, embedder=embedder, chroma_url=url))
    return svc, svc.ingest_document(pdf).graph_id


def _results(svc: GraphService, graph_id: str, mode: str) -> list[list[tuple[str, float]]]:
    return [[(h.node_id, h.score) for h in svc.search(graph_id, q, k=10, mode=mode)] for q in QUERIES]  # type: ignore[arg-type]


def _same(a: list[list[tuple[str, float]]], b: list[list[tuple[str, float]]]) -> None:
    assert [[i for i, _ in hits] for hits in a] == [[i for i, _ in hits] for hits in b]
    for x, y in zip(a, b):
        assert [s for _, s in x] == pytest.approx([s for _, s in y], abs=1e-4)


def test_server_search_equals_embedded(chroma_url: str, real_pdfs: dict[str, Path], tmp_path: Path) -> None:
    local, gid = _ingest(tmp_path / "local", real_pdfs["countreg"], "hashing", None)
    remote, rid = _ingest(tmp_path / "remote", real_pdfs["countreg"], "hashing", chroma_url)
    assert gid == rid and not local.vectors.remote and remote.vectors.remote
    assert not list((tmp_path / "remote" / "chroma").glob("*.sqlite3"))  # nothing stored in the workspace
    for mode in ("vector", "hybrid"):
        a, b = _results(local, gid, mode), _results(remote, rid, mode)
        assert all(len(hits) == 10 for hits in a)
        _same(a, b)
    mine, theirs = local.vectors.get_embeddings(gid), remote.vectors.get_embeddings(rid)
    assert mine.keys() == theirs.keys() and len(mine) == local.vectors.collection_info(gid)["count"]
    assert all(np.allclose(mine[k], theirs[k], atol=1e-6) for k in mine)


def test_minilm_through_the_server(chroma_url: str, real_pdfs: dict[str, Path], tmp_path: Path) -> None:
    """The real embedder end to end; the server workspace starts from a copy of the first one's embedding cache.

    countreg, not lmer: half the texts to run through MiniLM, the same end-to-end path."""
    local, gid = _ingest(tmp_path / "local", real_pdfs["countreg"], "minilm", None)
    cache = EmbeddingCache.of_workspace(tmp_path / "remote")
    cache.path.parent.mkdir(parents=True)
    shutil.copy(EmbeddingCache.of_workspace(tmp_path / "local").path, cache.path)
    remote = GraphService(Settings(workspace=tmp_path / "remote", embedder="minilm", chroma_url=chroma_url))
    report = remote.ingest_document(real_pdfs["countreg"])
    assert report.embedding.computed == 0 and report.embedding.cached == report.embedding.inputs > 0
    info = remote.vectors.collection_info(report.graph_id)
    assert info["embedder"] == "all-MiniLM-L6-v2" and info["dim"] == 384 and info["count"] == report.embedded
    _same(_results(local, gid, "vector"), _results(remote, report.graph_id, "vector"))
    hits = remote.search(report.graph_id, "How does a hurdle model handle excess zeros in count data?", k=5, mode="vector")
    assert hits[0].score > 0.5


def test_workspaces_share_a_server_without_colliding(chroma_url: str, real_pdfs: dict[str, Path], tmp_path: Path) -> None:
    one, gid = _ingest(tmp_path / "one", real_pdfs["countreg"], "hashing", chroma_url)
    two, gid2 = _ingest(tmp_path / "two", real_pdfs["countreg"], "hashing", chroma_url)
    assert gid == gid2
    names = {c.name for c in one.vectors.collections()}, {c.name for c in two.vectors.collections()}
    assert len(names[0]) == len(names[1]) == 1 and names[0] != names[1]
    two.delete(gid2)
    assert not two.vectors.has(gid2) and two.vectors.collections() == []
    assert one.vectors.has(gid) and len(one.search(gid, QUERIES[0], k=3, mode="vector")) == 3
    with pytest.raises(InputError, match="not one of this workspace"):
        two.vectors.drop(names[0].pop())
    # The workspace id survives a new process (a new VectorStore reads it back).
    assert VectorStore(tmp_path / "one" / "chroma", chroma_url).prefix == one.vectors.prefix


def test_unreachable_server_is_a_clear_error(tmp_path: Path, real_pdfs: dict[str, Path]) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    svc = GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing", chroma_url=url))
    with pytest.raises(VectorStoreUnavailable) as err:
        svc.ingest_document(real_pdfs["countreg"])
    assert url in str(err.value) and "chroma run --path DIR --host 127.0.0.1 --port" in str(err.value)
    with pytest.raises(InputError, match="TASKLOOM_CHROMA_URL"):
        GraphService(Settings(workspace=tmp_path / "ws", embedder="hashing", chroma_url="127.0.0.1:8000"))


def test_server_lost_after_connecting(tmp_path: Path) -> None:
    proc, url = _start(tmp_path / "db")
    try:
        store = VectorStore(tmp_path / "ws", url)
        store.upsert("g1", ["a"], np.ones((1, 4), dtype=np.float32) / 2, ["A"], ["paragraph"], "hashing", "v1")
        assert store.query("g1", np.ones(4, dtype=np.float32) / 2, k=1)[0][0] == "a"
    finally:
        _stop(proc)
    with pytest.raises(VectorStoreUnavailable, match="lost the Chroma server"):
        store.query("g1", np.ones(4, dtype=np.float32) / 2, k=1)

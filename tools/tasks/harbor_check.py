"""The verifier a Harbor task directory ships in ``tests/check.py``: standard library only.

Harbor runs ``tests/test.sh`` inside the task's container after the agent finishes; that
script runs this file, which reads ``tests/expected.json`` (the gold answer or success
criteria, hidden from the agent), the files the agent left in the working directory, and
writes ``reward.txt`` (1 or 0) and ``details.json`` to the verifier's log folder.

Answers are judged with Taskloom's answer-success rule (see
:mod:`taskloom.tools.evaluate.metrics`; ``tests/tools/tasks/test_harbor_export.py`` checks
that both agree): exact match after SQuAD normalisation always succeeds; otherwise number
answers need every gold number matched (relative tolerance 1 %), boolean answers the same
polarity, list answers the same item set, text answers token F1 ≥ 0.8.

Web criteria are judged from files: ``url_matches``, ``page_is`` and ``query_has`` against
the URL the agent wrote to ``final_url.txt``. Criteria on the live page or on the agent's
actions (text, element state, items, storage, clicks) cannot be judged from files; each is
reported as unchecked and the reward is 0, so a Harbor score never claims more than was
checked. Nothing in this file executes what the agent wrote.

Usage: ``python3 check.py EXPECTED_JSON WORKDIR LOGDIR``.
"""

from __future__ import annotations

import json
import math
import re
import string
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlparse, urlunparse

__all__ = ["normalize", "answer_ok", "url_ok", "verdict", "main"]

TEXT_F1_THRESHOLD = 0.8
URL_KINDS = ("url_matches", "page_is", "query_has")

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_MINUS = re.compile(r"(?<![\w.])-(?=\.?\d)")
_DOT, _NEG = "\x00", "\x01"
_NUMBER = re.compile(
    r"(?<![\w.])([-+\u2212]?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d+))?(\s*(?:%|per\s?cent\b))?", re.IGNORECASE
)
_ITEM_SPLIT = re.compile(r";|\n|(?<!\d),|,(?!\d)|\band\b|&", re.IGNORECASE)
_YES = frozenset({"yes", "true", "correct", "supported"})
_NO = frozenset({"no", "false", "incorrect", "refuted", "unsupported"})


def normalize(text: str) -> str:
    """SQuAD normalisation keeping decimal points and minus signs of numbers.

    >>> normalize("The Cat's  1,234.5 -2 apples!")
    'cats 1234.5 -2 apples'
    """
    s = unicodedata.normalize("NFKC", text).replace("\u2212", "-").lower()
    s = _MINUS.sub(_NEG, _DECIMAL.sub(_DOT, _THOUSANDS.sub("", s)))
    s = "".join(ch for ch in s if not (ch in string.punctuation or unicodedata.category(ch).startswith("P")))
    s = _ARTICLES.sub(" ", s.replace(_DOT, ".").replace(_NEG, "-"))
    return " ".join(s.split())


def _f1(same: int, n_pred: int, n_gold: int) -> float:
    if same == 0:
        return 0.0
    precision, recall = same / n_pred, same / n_gold
    return 2 * precision * recall / (precision + recall)


def _token_f1(pred: str, gold: str) -> float:
    p, g = normalize(pred).split(), normalize(gold).split()
    if not p or not g:
        return 1.0 if p == g else 0.0
    return _f1(sum((Counter(p) & Counter(g)).values()), len(p), len(g))


def _numbers(text: str) -> list[tuple[float, ...]]:
    out: list[tuple[float, ...]] = []
    for m in _NUMBER.finditer(unicodedata.normalize("NFKC", text)):
        sign, digits, exponent, percent = m.groups()
        value = float(("-" if sign in ("-", "\u2212") else "") + digits.replace(",", "") + (f"e{exponent}" if exponent else ""))
        if math.isfinite(value):
            out.append((value, value / 100.0) if percent else (value,))
    return out


def _numeric(pred: str, gold: str) -> float | None:
    wanted, have = _numbers(gold), _numbers(pred)
    if not wanted:
        return None
    close = lambda a, b: any(math.isclose(x, y, rel_tol=1e-2, abs_tol=1e-6) for x in a for y in b)  # noqa: E731
    return sum(1 for g in wanted if any(close(p, g) for p in have)) / len(wanted)


def _polarity(text: str) -> bool | None:
    tokens = normalize(text).split()
    for i, tok in enumerate(tokens):
        if tok in _YES:
            return not (i > 0 and tokens[i - 1] == "not")
        if tok in _NO:
            return False
    return None


def _items(text: str) -> set[str]:
    return {i for i in (normalize(part) for part in _ITEM_SPLIT.split(text)) if i}


def answer_ok(pred: str, gold: str, answer_kind: str = "text") -> bool:
    """Taskloom's answer-success rule for a document answer (the kind-specific scores count only for their own kind).

    >>> answer_ok("about 1,200 metres", "1200", "number")
    True
    >>> answer_ok("No.", "yes", "boolean")
    False
    """
    if normalize(pred) == normalize(gold):
        return True
    if answer_kind == "number":
        numeric = _numeric(pred, gold)
        if numeric is not None:
            return numeric >= 1.0
    if answer_kind == "boolean":
        want = _polarity(gold)
        if want is not None:
            return _polarity(pred) == want
    if answer_kind == "list":
        p, g = _items(pred), _items(gold)
        return p == g
    return _token_f1(pred, gold) >= TEXT_F1_THRESHOLD


def _url_key(url: str, fragment: bool) -> tuple[str, str]:
    parts = urlparse(url)
    scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    netloc = host if port is None or (scheme, port) in (("http", 80), ("https", 443)) else f"{host}:{port}"
    path = parts.path or "/"
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if v != ""))
    normal = urlparse(urlunparse((scheme, netloc, path, "", query, "")))
    base = f"{normal.scheme}://{normal.netloc}{unquote(normal.path).rstrip('/') or '/'}"
    frag = parts.fragment if fragment else ""
    return base + (f"#{frag}" if frag else ""), normal.query


def url_ok(kind: str, value: str, url: str) -> bool:
    """A URL criterion (``url_matches``, ``page_is``, ``query_has``) on the final URL.

    >>> url_ok("page_is", "http://a.org/docs?a=1&b=2", "HTTP://a.org:80/docs/index.html?b=2&a=1#x")
    True
    >>> url_ok("query_has", "http://a.org/s?genre=poetry", "http://a.org/s?genre=nature")
    False
    """
    if kind == "url_matches":
        return re.search(value, url) is not None
    if kind == "page_is":
        fragment = bool(urlparse(value).fragment)
        return _url_key(url, fragment) == _url_key(value, fragment)
    if _url_key(url, False)[0] != _url_key(value, False)[0]:
        return False
    have = parse_qsl(urlparse(url).query, keep_blank_values=True)
    for pair in parse_qsl(urlparse(value).query, keep_blank_values=True):
        if pair not in have:
            return False
        have.remove(pair)
    return True


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def verdict(expected: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The reward (1 or 0) and one entry per check, from ``expected.json`` and the agent's files in ``workdir``."""
    checks: list[dict[str, Any]] = []
    answer = expected.get("answer")
    if answer is not None:
        got = _read(workdir / expected.get("answer_file", "answer.txt"))
        ok = got is not None and answer_ok(got, answer["gold"], answer.get("answer_kind", "text"))
        checks.append({"check": "answer", "ok": ok, "detail": "no answer file" if got is None else f"answer {got[:200]!r}"})
    final_url = _read(workdir / expected.get("final_url_file", "final_url.txt"))
    for criterion in expected.get("criteria", []):
        kind, value = criterion["kind"], criterion["value"]
        name = f"{kind}: {value}"
        if kind not in URL_KINDS:
            checks.append({"check": name, "ok": None, "detail": "needs the live page or the recorded actions; not checkable from files"})
        elif final_url is None:
            checks.append({"check": name, "ok": False, "detail": "no final_url.txt"})
        else:
            checks.append({"check": name, "ok": url_ok(kind, value, final_url), "detail": f"final URL {final_url}"})
    reward = 1 if checks and all(c["ok"] is True for c in checks) else 0
    return {"task_id": expected.get("task_id"), "reward": reward, "checks": checks}


def main(argv: list[str]) -> int:
    """Check once and write ``reward.txt`` and ``details.json`` to the log folder."""
    if len(argv) != 3:
        print("usage: check.py EXPECTED_JSON WORKDIR LOGDIR", file=sys.stderr)
        return 2
    expected = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    result = verdict(expected, Path(argv[1]))
    logs = Path(argv[2])
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "details.json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    (logs / "reward.txt").write_text(f"{result['reward']}\n", encoding="utf-8")
    print(f"reward {result['reward']}: " + "; ".join(f"{c['check']} -> {c['ok']}" for c in result["checks"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

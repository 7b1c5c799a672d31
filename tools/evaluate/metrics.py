"""Rule-based answer metrics for document tasks (Graph2Eval, Appendix A.1): EM, F1, ROUGE-L, numbers, booleans, lists.

All metrics compare a predicted answer with a task's gold answer after
:func:`normalize_answer` and return a score in [0, 1]. They are pure and fast.

Choices where the paper is open
-------------------------------
* **Normalisation** is SQuAD's (lower-case, drop punctuation, drop the articles
  *a/an/the*, collapse whitespace), after Unicode NFKC, with three changes for
  numbers: a thousands comma (``1,234``) is dropped, a decimal point between digits
  (``3.5``) is kept, and a minus sign starting a number (``-5``, ``−5``) is kept —
  plain SQuAD would turn ``3.5`` into ``35`` and ``-5`` into ``5``. Unicode
  punctuation (categories P*) is dropped as well as ASCII punctuation.
* **F1** is SQuAD's token F1 over multisets (``Counter & Counter``); **ROUGE-L** the
  LCS F-measure of the paper's Eq. 3, β = 1 by default, computed by Google's
  ``rouge-score`` with its own tokeniser (:func:`rouge_tokens`: ASCII letters and digits,
  articles kept), so it equals the ROUGE-L Graph2Eval reports. Both empty → 1.0;
  exactly one empty → 0.0.
* **Numbers** (:func:`numeric_match`) are read as digits (no number words): signs,
  thousands commas, decimals, scientific notation (``1.2e3``) and percentages. A
  percentage matches both its face value and its fraction, so ``12%`` equals ``12``
  and ``0.12`` (but a bare ``12`` does not equal ``0.12``). Two numbers match when
  ``math.isclose(a, b, rel_tol, abs_tol)``. The score is the fraction of the gold
  answer's numbers that some predicted number matches (recall): extra numbers in the
  prediction (a year, a unit like "CO2") are not penalised — the text metrics and the
  judge see those. ``None`` when the gold answer holds no number.
* **Booleans** (:func:`boolean_match`): yes/true/correct/supported vs
  no/false/incorrect/refuted; the first polarity word of the answer decides, and
  ``not`` before a positive word flips it ("not true" → false).
* **Lists** (:func:`list_f1`): items split on ``;``, newlines, commas (except a comma
  inside a number) and the word *and*, normalised, de-duplicated; set F1. Order is
  ignored.
* **Success** (:func:`answer_success`): exact match always succeeds; otherwise a
  number answer needs every gold number matched (``numeric == 1``), a boolean answer
  the same polarity, a list answer the same item set (``list_f1 == 1``), and a text
  answer token F1 ≥ 0.8 (:data:`TEXT_F1_THRESHOLD`). When a kind-specific score is
  missing (gold is not a number / not yes-no), the text rule applies.
"""

from __future__ import annotations

import functools
import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Mapping
from typing import Any, NamedTuple

from rouge_score import tokenize as rouge_tokenize

from ..errors import InputError
from ..tasks.model import Task

__all__ = [
    "TEXT_F1_THRESHOLD",
    "Number",
    "normalize_answer",
    "answer_tokens",
    "exact_match",
    "token_f1",
    "rouge_tokens",
    "rouge_l",
    "extract_numbers",
    "numeric_match",
    "boolean_value",
    "boolean_match",
    "list_items",
    "list_f1",
    "answer_scores",
    "answer_success",
]

#: Token F1 at or above which a text answer counts as a success.
TEXT_F1_THRESHOLD = 0.8

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_MINUS = re.compile(r"(?<![\w.])-(?=\.?\d)")
_DOT, _NEG = "\x00", "\x01"  # placeholders that survive punctuation removal
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation, keeping decimal points and minus signs of numbers (see the module notes).

    >>> normalize_answer("The Cat's  1,234.5 -2 apples!")
    'cats 1234.5 -2 apples'
    """
    s = unicodedata.normalize("NFKC", text).replace("\u2212", "-").lower()
    s = _THOUSANDS.sub("", s)
    s = _DECIMAL.sub(_DOT, s)
    s = _MINUS.sub(_NEG, s)
    s = "".join(ch for ch in s if not _is_punct(ch))
    s = s.replace(_DOT, ".").replace(_NEG, "-")
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def answer_tokens(text: str) -> list[str]:
    """The normalised tokens of ``text``."""
    return normalize_answer(text).split()


def exact_match(pred: str, gold: str) -> float:
    """1.0 when the normalised answers are equal, else 0.0."""
    return 1.0 if normalize_answer(pred) == normalize_answer(gold) else 0.0


def _f_measure(precision: float, recall: float, beta: float = 1.0) -> float:
    if precision <= 0.0 or recall <= 0.0:
        return 0.0
    b2 = beta * beta
    return (1.0 + b2) * precision * recall / (recall + b2 * precision)


def token_f1(pred: str, gold: str) -> float:
    """SQuAD token F1: multiset overlap of normalised tokens; both empty → 1.0, one empty → 0.0."""
    p, g = answer_tokens(pred), answer_tokens(gold)
    if not p or not g:
        return 1.0 if p == g else 0.0
    same = sum((Counter(p) & Counter(g)).values())
    return _f_measure(same / len(p), same / len(g))


@functools.cache
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer  # imports nltk (~0.4 s), so only on the first ROUGE-L

    return rouge_scorer.RougeScorer(["rougeL"])


def rouge_tokens(text: str) -> list[str]:
    """The tokens ROUGE-L compares: ``rouge-score``'s (lower-cased ASCII letters and digits; anything else splits).

    >>> rouge_tokens("The café's 3.5%!")
    ['the', 'caf', 's', '3', '5']
    """
    return list(rouge_tokenize.tokenize(text, None))


def rouge_l(pred: str, gold: str, beta: float = 1.0) -> float:
    """ROUGE-L F-measure (Eq. 3): ``(1+β²)·P·R / (R + β²·P)`` with P = LCS/|pred|, R = LCS/|gold|.

    Google's ``rouge-score`` (``RougeScorer(["rougeL"])``: its tokeniser, no stemming) computes
    the LCS, P, R and, for β = 1, the F-measure, so the value is the one Graph2Eval reports.
    Its tokens are :func:`rouge_tokens`, not :func:`answer_tokens`. The one difference: when
    neither answer has a token the score is 1.0 (rouge-score gives 0.0).

    >>> round(rouge_l("police killed the gunman", "the gunman was killed by police"), 4)
    0.4
    """
    if beta < 0:
        raise InputError(f"rouge_l beta must be ≥ 0, got {beta}")
    score = _rouge_scorer().score(gold, pred)["rougeL"]
    if score.fmeasure == 0.0 and not rouge_tokens(pred) and not rouge_tokens(gold):
        return 1.0
    if beta == 1.0:
        return float(score.fmeasure)
    return _f_measure(score.precision, score.recall, beta)


# --- numbers ------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.])([-+\u2212]?)"
    r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE]([-+]?\d+))?"
    r"(\s*(?:%|per\s?cent\b))?",
    re.IGNORECASE,
)


class Number(NamedTuple):
    """A number read from text; ``percent`` when it was written with ``%`` or *percent*."""

    value: float
    percent: bool = False

    @property
    def readings(self) -> tuple[float, ...]:
        """The values it may stand for: a percentage both as written and as a fraction."""
        return (self.value, self.value / 100.0) if self.percent else (self.value,)


def extract_numbers(text: str) -> list[Number]:
    """The numbers written in ``text``, in order (finite values only).

    >>> [n.value for n in extract_numbers("1,234.5 items, -3 left, 1.2e3 total, 12% off")]
    [1234.5, -3.0, 1200.0, 12.0]
    """
    out: list[Number] = []
    for m in _NUMBER.finditer(unicodedata.normalize("NFKC", text)):
        sign, digits, exponent, percent = m.groups()
        literal = ("-" if sign in ("-", "\u2212") else "") + digits.replace(",", "") + (f"e{exponent}" if exponent else "")
        value = float(literal)
        if math.isfinite(value):
            out.append(Number(value, bool(percent)))
    return out


def _numbers_match(a: Number, b: Number, rel_tol: float, abs_tol: float) -> bool:
    return any(math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol) for x in a.readings for y in b.readings)


def numeric_match(pred: str, gold: str, rel_tol: float = 1e-2, abs_tol: float = 1e-6) -> float | None:
    """Fraction of the gold answer's numbers matched (within tolerance) by a number of the prediction.

    ``None`` when the gold answer contains no number; 0.0 when the prediction contains none.
    """
    wanted = extract_numbers(gold)
    if not wanted:
        return None
    have = extract_numbers(pred)
    hits = sum(1 for g in wanted if any(_numbers_match(p, g, rel_tol, abs_tol) for p in have))
    return hits / len(wanted)


# --- booleans ---------------------------------------------------------------------------------

_YES = frozenset({"yes", "true", "correct", "supported"})
_NO = frozenset({"no", "false", "incorrect", "refuted", "unsupported"})


def boolean_value(text: str) -> bool | None:
    """The polarity of ``text``: its first yes/no word decides; "not <yes word>" is False; None when there is none."""
    tokens = answer_tokens(text)
    for i, tok in enumerate(tokens):
        if tok in _YES:
            return not (i > 0 and tokens[i - 1] == "not")
        if tok in _NO:
            return False
    return None


def boolean_match(pred: str, gold: str) -> float | None:
    """1.0 when the answers have the same polarity, 0.0 otherwise; None when the gold answer has none."""
    want = boolean_value(gold)
    if want is None:
        return None
    return 1.0 if boolean_value(pred) == want else 0.0


# --- lists --------------------------------------------------------------------------------------

_ITEM_SPLIT = re.compile(r";|\n|(?<!\d),|,(?!\d)|\band\b|&", re.IGNORECASE)


def list_items(text: str) -> list[str]:
    """Normalised, de-duplicated, sorted items of a list answer."""
    items = {normalize_answer(part) for part in _ITEM_SPLIT.split(text)}
    return sorted(i for i in items if i)


def list_f1(pred: str, gold: str) -> float:
    """Set F1 over the answers' items (:func:`list_items`); both empty → 1.0, one empty → 0.0."""
    p, g = set(list_items(pred)), set(list_items(gold))
    if not p or not g:
        return 1.0 if p == g else 0.0
    same = len(p & g)
    return _f_measure(same / len(p), same / len(g))


# --- per task -------------------------------------------------------------------------------------


def answer_scores(task: Task, answer: str | None) -> dict[str, float]:
    """The rule-based scores of ``answer`` to a document task.

    Always ``exact_match``, ``f1`` and ``rouge_l``; ``numeric`` for number answers (or
    when ``task.metrics`` names ``number``/``numeric``) whose gold holds a number;
    ``boolean`` for boolean answers whose gold is yes/no; ``list_f1`` for list answers
    (or when ``task.metrics`` names it). Other metric names (e.g. a judge's) are not
    rule-based and are left to their own scorers. No answer scores as the empty string.

    Raises
    ------
    InputError
        The task has no gold answer.
    """
    if task.gold_answer is None:
        raise InputError(f"Task {task.id!r} has no gold answer, so its answer cannot be scored; score web tasks by their success criteria.")
    gold, pred = task.gold_answer, answer or ""
    scores = {"exact_match": exact_match(pred, gold), "f1": token_f1(pred, gold), "rouge_l": rouge_l(pred, gold)}
    named = set(task.metrics)
    if task.answer_kind == "number" or named & {"number", "numeric"}:
        numeric = numeric_match(pred, gold)
        if numeric is not None:
            scores["numeric"] = numeric
    if task.answer_kind == "boolean" or "boolean" in named:
        polarity = boolean_match(pred, gold)
        if polarity is not None:
            scores["boolean"] = polarity
    if task.answer_kind == "list" or "list_f1" in named:
        scores["list_f1"] = list_f1(pred, gold)
    return scores


def answer_success(task: Task, scores: Mapping[str, float], f1_threshold: float = TEXT_F1_THRESHOLD) -> bool:
    """Whether scores from :func:`answer_scores` make the answer a success (the rule is in the module notes)."""
    missing = [k for k in ("exact_match", "f1") if k not in scores]
    if missing:
        raise InputError(f"Scores for task {task.id!r} lack {', '.join(missing)}; compute them with answer_scores(task, answer).")
    if scores["exact_match"] >= 1.0:
        return True
    if task.answer_kind == "number" and "numeric" in scores:
        return scores["numeric"] >= 1.0
    if task.answer_kind == "boolean" and "boolean" in scores:
        return scores["boolean"] >= 1.0
    if task.answer_kind == "list" and "list_f1" in scores:
        return scores["list_f1"] >= 1.0
    return scores["f1"] >= f1_threshold

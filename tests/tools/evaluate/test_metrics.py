"""Answer metrics against hand-computed values (the arithmetic is in the comments)."""

from __future__ import annotations

import pytest

from taskloom.tools.errors import InputError
from taskloom.tools.evaluate.metrics import (
    answer_scores,
    answer_success,
    boolean_match,
    boolean_value,
    exact_match,
    extract_numbers,
    list_f1,
    list_items,
    normalize_answer,
    numeric_match,
    rouge_l,
    token_f1,
)
from taskloom.tools.tasks.model import Provenance, Task

# --- normalisation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Cat, sat!", "cat sat"),  # lower-case, punctuation and the article dropped
        ("  An   apple\n\tpie ", "apple pie"),  # whitespace collapsed, "an" dropped
        ("Theatre and thereby", "theatre and thereby"),  # articles only as whole words
        ("rock-and-roll", "rockandroll"),  # SQuAD removes punctuation without a space
        ("\u201cQuoted\u201d \u2014 text\u2026", "quoted text"),  # Unicode quotes, dash, ellipsis are punctuation
        ("1,234.50 USD", "1234.50 usd"),  # thousands comma dropped, decimal point kept
        ("3.5", "3.5"),  # SQuAD proper would give "35"
        ("end.", "end"),  # a full stop after a word is punctuation
        ("\u221212 and -7", "-12 and -7"),  # Unicode minus becomes "-", minus signs of numbers kept
        ("the", ""),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_after_normalisation() -> None:
    assert exact_match("The  PARIS!", "paris") == 1.0
    assert exact_match("Paris, France", "Paris") == 0.0
    assert exact_match("3.5", "35") == 0.0  # decimal point kept, unlike SQuAD
    assert exact_match("1,234", "1234") == 1.0


# --- token F1 -----------------------------------------------------------------------------------


def test_token_f1_squad_example() -> None:
    # pred "the cat sat on the mat" -> [cat, sat, on, mat] (4); gold "a cat on a mat" -> [cat, on, mat] (3)
    # overlap 3: P = 3/4, R = 3/3 = 1, F1 = 2 * 0.75 * 1 / 1.75 = 6/7
    assert token_f1("the cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)


def test_token_f1_counts_multisets() -> None:
    # pred [cat, cat, cat], gold [cat]: Counter & Counter = {cat: 1}; P = 1/3, R = 1, F1 = (2/3) / (4/3) = 0.5
    assert token_f1("cat cat cat", "cat") == pytest.approx(0.5)


def test_token_f1_empty_and_disjoint() -> None:
    assert token_f1("The", "a") == 1.0  # both normalise to no tokens
    assert token_f1("", "cat") == 0.0
    assert token_f1("cat", "") == 0.0
    assert token_f1("dog", "cat") == 0.0


# --- ROUGE-L --------------------------------------------------------------------------------------


def test_rouge_l_when_lcs_differs_from_overlap() -> None:
    # pred [police, killed, gunman]; gold [gunman, was, killed, by, police]
    # token overlap = 3 -> P = 1, R = 3/5, F1 = 2 * 0.6 / 1.6 = 0.75
    # ROUGE-L keeps articles (rouge-score's tokens): [police, killed, the, gunman] vs [the, gunman, was, killed, by, police]
    # LCS = 2 ("the gunman") -> P = 2/4, R = 2/6, F = 2 * (1/6) / (5/6) = 0.4
    pred, gold = "police killed the gunman", "the gunman was killed by police"
    assert token_f1(pred, gold) == pytest.approx(0.75)
    assert rouge_l(pred, gold) == pytest.approx(0.4)
    # reordering only: overlap 3/3 -> F1 = 1; LCS of [y, x, z] and [x, y, z] = 2 -> P = R = 2/3 -> F = 2/3
    assert token_f1("y x z", "x y z") == 1.0
    assert rouge_l("y x z", "x y z") == pytest.approx(2 / 3)


def test_rouge_l_beta() -> None:
    # pred [cat, sat, on, mat], gold [cat, on, mat]: LCS 3, P = 3/4, R = 1
    # beta=1: 2 * 0.75 / (1 + 0.75) = 6/7; beta=2: 5 * 0.75 / (1 + 4 * 0.75) = 3.75 / 4 = 0.9375; beta=0: = P = 0.75
    pred, gold = "cat sat on mat", "cat on mat"
    assert rouge_l(pred, gold) == pytest.approx(6 / 7)
    assert rouge_l(pred, gold, beta=2.0) == pytest.approx(0.9375)
    assert rouge_l(pred, gold, beta=0.0) == pytest.approx(0.75)
    # articles count: [the, cat, sat, on, the, mat] vs [a, cat, on, a, mat]: LCS 3, P = 1/2, R = 3/5 -> F = 6/11
    assert rouge_l("the cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 11)
    assert rouge_l("Same words here", "same words, here.") == 1.0
    assert rouge_l("", "") == 1.0 and rouge_l("", "cat") == 0.0
    with pytest.raises(InputError):
        rouge_l("a", "b", beta=-1.0)


# --- numbers --------------------------------------------------------------------------------------


def test_extract_numbers_formats() -> None:
    found = extract_numbers("1,234.5 items, -3 left, \u22127 lost, 1.2e3 total, 12% off, .5 cup, 2019-2020, CO2, 7 percent")
    assert [(n.value, n.percent) for n in found] == [
        (1234.5, False), (-3.0, False), (-7.0, False), (1200.0, False), (12.0, True), (0.5, False),
        (2019.0, False), (2020.0, False),  # the hyphen of a range is not a minus sign
        (7.0, True),  # "CO2" holds no number: a digit glued to a word is part of the word
    ]


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("1,234", "1234", 1.0),
        ("The total is 1,234.5 units.", "1234.5", 1.0),
        ("In 2019 the count was 42", "42", 1.0),  # extra numbers are not penalised (recall)
        ("-3", "3", 0.0),
        ("\u22123", "-3", 1.0),
        # percentages: "12%" reads as 12 or 0.12
        ("12%", "0.12", 1.0),
        ("12%", "12", 1.0),
        ("0.12", "12%", 1.0),
        ("12 percent", "0.12", 1.0),
        ("0.12", "12", 0.0),  # no percent sign anywhere: 0.12 and 12 differ
        ("13%", "0.12", 0.0),  # |0.13 - 0.12| = 0.01 > 0.01 * 0.13 = 0.0013
        # scientific notation
        ("1.2e3", "1200", 1.0),
        ("1.2E-3", "0.0012", 1.0),
        # relative tolerance 1e-2 of the larger magnitude
        ("101", "100", 1.0),  # |1| <= 0.01 * 101 = 1.01
        ("98.9", "100", 0.0),  # |1.1| > 0.01 * 100 = 1.0
        ("101.5", "100", 0.0),  # |1.5| > 0.01 * 101.5 = 1.015
        # absolute tolerance 1e-6 near zero
        ("0.0000005", "0", 1.0),  # 5e-7 <= 1e-6
        ("0.00001", "0", 0.0),  # 1e-5 > max(1e-2 * 1e-5, 1e-6)
        # several gold numbers: the fraction matched
        ("3", "3 and 5", 0.5),
        ("5, 3", "3 and 5", 1.0),
        ("many", "42", 0.0),
        ("CO2 levels", "2", 0.0),
    ],
)
def test_numeric_match(pred: str, gold: str, expected: float) -> None:
    assert numeric_match(pred, gold) == pytest.approx(expected)


def test_numeric_match_tolerance_arguments_and_no_gold_number() -> None:
    assert numeric_match("100.5", "100", rel_tol=0.0) == 0.0
    assert numeric_match("100.5", "100") == 1.0  # 0.5 <= 0.01 * 100.5
    assert numeric_match("42", "Paris") is None


# --- booleans and lists ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("True.", True), ("Yes, it is", True), ("No, it is false", False), ("That is not true", False),
     ("FALSE", False), ("It is correct", True), ("maybe", None), ("The statement", None)],
)
def test_boolean_value(text: str, value: bool | None) -> None:
    assert boolean_value(text) is value


def test_boolean_match() -> None:
    assert boolean_match("False \u2014 the document says 12, not 13.", "false") == 1.0
    assert boolean_match("yes", "false") == 0.0
    assert boolean_match("maybe", "true") == 0.0
    assert boolean_match("true", "Paris") is None


def test_list_items_and_set_f1() -> None:
    assert list_items("q; p, P\nthe r and s") == ["p", "q", "r", "s"]  # "the" is dropped, duplicates collapse
    assert list_f1("apples, pears and plums", "plums; apples; pears") == 1.0  # order ignored
    # pred {apples, kiwis}, gold {apples, pears, plums}: P = 1/2, R = 1/3, F = 2 * (1/6) / (5/6) = 0.4
    assert list_f1("apples, kiwis", "apples; pears; plums") == pytest.approx(0.4)
    assert list_f1("Apples, the apples", "apples") == 1.0  # duplicates collapse
    assert list_f1("1,234; 5", "1234 and 5") == 1.0  # a thousands comma does not split an item
    assert list_f1("", "") == 1.0 and list_f1("", "a b") == 0.0


# --- per task ------------------------------------------------------------------------------------------


def _task(gold: str | None, kind: str = "text", metrics: list[str] | None = None) -> Task:
    return Task(id="t1", kind="document", type="table_qa", instruction="Q?", gold_answer=gold, answer_kind=kind,  # type: ignore[arg-type]
                metrics=metrics or ["exact_match", "f1"], provenance=Provenance(graph_id="g", generator="template"))


def test_answer_scores_text() -> None:
    task = _task("a cat on a mat", metrics=["f1", "rouge_l"])
    scores = answer_scores(task, "the cat sat on the mat")
    assert scores == pytest.approx({"exact_match": 0.0, "f1": 6 / 7, "rouge_l": 6 / 11})  # ROUGE-L keeps the articles
    assert answer_success(task, scores)  # f1 6/7 >= 0.8
    # [cat, on, rug] vs [cat, on, mat]: P = R = 2/3 -> F1 = 2/3 < 0.8
    assert not answer_success(task, answer_scores(task, "cat on rug"))
    assert answer_scores(task, None) == {"exact_match": 0.0, "f1": 0.0, "rouge_l": 0.0}


def test_answer_scores_number() -> None:
    task = _task("42", kind="number", metrics=["exact_match", "number"])
    scores = answer_scores(task, "There are 42 rows.")
    assert scores["numeric"] == 1.0 and scores["exact_match"] == 0.0
    # [there, are, 42, rows] vs [42]: P = 1/4, R = 1 -> F1 = 2 * (1/4) / (5/4) = 0.4 (below 0.8, yet a success)
    assert scores["f1"] == pytest.approx(0.4)
    assert answer_success(task, scores)
    miss = answer_scores(task, "41")  # |1| > 0.01 * 42 = 0.42
    assert miss["numeric"] == 0.0 and not answer_success(task, miss)
    # gold without digits: no numeric score, the text rule applies
    words = _task("twelve", kind="number")
    assert "numeric" not in answer_scores(words, "twelve") and answer_success(words, answer_scores(words, "Twelve."))
    # a text task whose metrics name "number" also gets the numeric score
    assert answer_scores(_task("3.5 kg", metrics=["number"]), "3.5")["numeric"] == 1.0


def test_answer_scores_boolean_and_list() -> None:
    task = _task("false", kind="boolean", metrics=["exact_match"])
    scores = answer_scores(task, "False \u2014 the document says 12, not 13.")
    assert scores["boolean"] == 1.0 and scores["exact_match"] == 0.0 and answer_success(task, scores)
    assert not answer_success(task, answer_scores(task, "true"))

    lst = _task("3.2; 4.5", kind="list")
    scores = answer_scores(lst, "4.5 and 3.2")
    assert scores["list_f1"] == 1.0 and scores["exact_match"] == 0.0 and answer_success(lst, scores)
    half = answer_scores(lst, "3.2")  # P = 1, R = 1/2 -> 2/3
    assert half["list_f1"] == pytest.approx(2 / 3) and not answer_success(lst, half)


def test_answer_success_threshold_and_errors() -> None:
    task = _task("anything")
    assert answer_success(task, {"exact_match": 0.0, "f1": 0.8})
    assert not answer_success(task, {"exact_match": 0.0, "f1": 0.79})
    assert answer_success(task, {"exact_match": 1.0, "f1": 0.0})
    with pytest.raises(InputError, match="lack f1"):
        answer_success(task, {"exact_match": 0.0})
    with pytest.raises(InputError, match="no gold answer"):
        answer_scores(_task(None), "x")

"""Our ROUGE-L equals Google's ``rouge-score`` (the reference Graph2Eval's numbers come from) on 50 fixed pairs.

``rouge_l`` delegates tokenisation and the LCS F-measure to ``rouge-score``, so they are equal by
construction; this test pins it (argument order: ``score(target=gold, prediction=pred)``).
"""

from __future__ import annotations

import pytest
from rouge_score import rouge_scorer

from taskloom.tools.evaluate.metrics import rouge_l, rouge_tokens

# (prediction, gold): plain text, case, punctuation, numbers, unicode, reordering, repeats, partial and no overlap.
PAIRS: list[tuple[str, str]] = [
    ("The cat sat on the mat.", "A cat was sitting on the mat"),
    ("police killed the gunman", "the gunman was killed by police"),
    ("Paris", "paris"),
    ("PARIS, France!", "Paris (France)"),
    ("It is 42.", "42"),
    ("3.5 million", "3,500,000"),
    ("-5 degrees", "minus 5 degrees"),
    ("12%", "12 percent"),
    ("1.2e3 units", "1200 units"),
    ("The year was 1969; Apollo 11 landed.", "Apollo 11 landed in 1969."),
    ("yes", "Yes, it is supported."),
    ("No.", "no"),
    ("café crème", "cafe creme"),
    ("naïve Bayes", "naive bayes"),
    ("Zürich and Genève", "Zurich, Geneva"),
    ("東京 Tokyo", "Tokyo 東京都"),
    ("Straße 5", "strasse 5"),
    ("résumé — CV", "resume / CV"),
    ("x y z", "y x z"),
    ("a b c d e f", "f e d c b a"),
    ("the the the", "the"),
    ("one two two three", "two one three two"),
    ("alpha beta gamma delta", "alpha gamma"),
    ("alpha gamma", "alpha beta gamma delta"),
    ("completely different words", "nothing in common here"),
    ("don't stop", "do not stop"),
    ("e-mail address", "email address"),
    ("state-of-the-art model", "state of the art model"),
    ("U.S.A.", "USA"),
    ("C++ and C#", "C and C"),
    ("Section 3.1, Table 2", "see Table 2 in Section 3.1"),
    ("The answer: (b) 7/8", "b 7 8"),
    ("Revenue grew 15% in Q3 2023", "In Q3 2023, revenue grew by 15 percent"),
    ("The transformer uses self-attention.", "Self-attention is what the Transformer uses"),
    ("Gradient descent minimises the loss", "the loss is minimised by gradient descent"),
    ("BERT, GPT-2 and T5", "T5; GPT-2; BERT"),
    ("  spaced   out  ", "spaced out"),
    ("tab\tseparated\nlines", "tab separated lines"),
    ("Mixed CASE Words", "mixed case words"),
    ("emoji 🙂 smile", "emoji smile"),
    ("quote “curly” marks", 'quote "curly" marks'),
    ("α-helix and β-sheet", "alpha helix and beta sheet"),
    ("Ⅻ chapter", "XII chapter"),
    ("ﬁnal ﬂow", "final flow"),
    ("The quick brown fox jumps over the lazy dog", "The quick brown dog jumps on the log."),
    ("a long answer that repeats the question and then gives the value 17 at the very end", "17"),
    ("17", "a long answer that repeats the question and then gives the value 17 at the very end"),
    ("first second third fourth fifth sixth seventh eighth ninth tenth", "tenth ninth first third fifth seventh"),
    ("The method improves accuracy by 2.3 points on SQuAD.", "Accuracy on SQuAD improves by 2.3 points with the method."),
    ("Chapter 1: Introduction", "1 introduction chapter"),
]


@pytest.fixture(scope="module")
def reference() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(["rougeL"])


def test_fifty_distinct_pairs_with_tokens() -> None:
    assert len(PAIRS) == 50 and len(set(PAIRS)) == 50
    assert all(rouge_tokens(p) or rouge_tokens(g) for p, g in PAIRS)  # the both-empty convention is tested apart


@pytest.mark.parametrize(("pred", "gold"), PAIRS)
def test_rouge_l_equals_rouge_score(reference: rouge_scorer.RougeScorer, pred: str, gold: str) -> None:
    assert rouge_l(pred, gold) == reference.score(gold, pred)["rougeL"].fmeasure


def test_the_pairs_cover_the_whole_range(reference: rouge_scorer.RougeScorer) -> None:
    values = [rouge_l(p, g) for p, g in PAIRS]
    assert min(values) == 0.0 and max(values) == 1.0 and sum(0.0 < v < 1.0 for v in values) >= 30


def test_beta_weights_recall_of_the_gold(reference: rouge_scorer.RougeScorer) -> None:
    # pred [alpha, gamma] vs gold [alpha, beta, gamma, delta]: LCS 2, P = 1, R = 1/2
    score = reference.score("alpha beta gamma delta", "alpha gamma")["rougeL"]
    assert (score.precision, score.recall) == (1.0, 0.5)
    assert rouge_l("alpha gamma", "alpha beta gamma delta", beta=2.0) == pytest.approx(5 * 0.5 / (0.5 + 4 * 1.0))
    assert rouge_l("alpha beta gamma delta", "alpha gamma", beta=2.0) == pytest.approx(5 * 0.5 / (1.0 + 4 * 0.5))


def test_no_tokens_on_either_side_is_a_match(reference: rouge_scorer.RougeScorer) -> None:
    assert reference.score("…", "東京")["rougeL"].fmeasure == 0.0
    assert rouge_l("東京", "…") == 1.0 and rouge_l("", "") == 1.0 and rouge_l("", "cat") == 0.0

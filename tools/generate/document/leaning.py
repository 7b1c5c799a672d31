"""Sentences that do not stand alone: they introduce what follows, lean on what came before, or are taken back.

A key statement of a summary and a statement to verify must say something by themselves; these rules say which do not.
"""

from __future__ import annotations

import re

#: A sentence that only introduces what follows it ("… looks as follows.", "… with the following call:"): no key statement.
#: "Below" alone is no sign: "… we show the correlation matrix, reported below." states what is done; "… the utility
#: functions listed below." points at a list.
INTRODUCES = re.compile(r"(?:as follows|the following(?:\s+\w+){0,3})\s*[.:]$|\bthe following (?!years?|days?|weeks?|months?|sections?|chapters?)\w+\s+(?:which|that)\b|\b(?:shown|given|listed|printed|defined|described|presented)\s+below\s*\.$|:$")
#: A second sentence that takes the first back or qualifies it ("This is not true as …", "However, …"): the first alone misleads.
TAKES_BACK = re.compile(r"(?:however|but|yet|nevertheless|in fact|actually|this is not|that is not|this is untrue)\b", re.I)
#: An opening that leans on a sentence before it ("Second, …", "As well, …", "Neither of these graphs …", "The first
#: routine copies …" after a listing of two).
LEANS_BACK = re.compile(r"(?:second|third|fourth|finally|also|as well|neither|both of these|however|moreover|furthermore|in addition|alternatively|where"
                        r"|otherwise|then|here|the (?:first|second|third|last|former|latter|above|previous|preceding)\b)\b", re.I)
#: A statement that opens by pointing at the sentence before it: checked alone, it says nothing.
POINTS_BACK = re.compile(r"(?:this|these|those|it|they|here|such)\b", re.I)
#: … unless it points at the text itself ("This section describes …", "This vignette shows …").
_POINTS_AT_TEXT = re.compile(r"(?:this|these)\s+(?:\w+\s+)?(?:page|section|chapter|paper|article|document|vignette|manual|guide|note|package|report"
                             r"|appendix|tutorial|introduction|book)s?\b", re.I)


def leans_back(s: str) -> bool:
    """Whether ``s`` opens on what came before it ("Then …", "The last routine …", "These routines …", "It …").
    An ordinal opening is taken to lean back even where it does not ("The first step …"): a statement lost, none wrong.

    >>> leans_back("These routines move to another HDU."), leans_back("This vignette shows how to fit models.")
    (True, False)
    >>> leans_back("This help page documents abbreviate."), leans_back("This function returns 0.")
    (False, True)
    >>> leans_back("The first routine copies the HDU."), leans_back("The first step of any analysis is a plot.")
    (True, True)
    >>> leans_back("Thesis work is long."), leans_back("The routine reads a file.")
    (False, False)
    >>> leans_back("All components will be then retained."), leans_back("If k is 0, then all components are kept.")
    (True, False)
    """
    then = re.search(r"\bthen\b", s, re.I)  # "All components will be then retained" (once the size was set to zero)
    if_then = then is not None and re.search(r"\b(?:if|when|whenever|once|after|before|first)\b", s[: then.start()], re.I)
    return bool(LEANS_BACK.match(s) or (POINTS_BACK.match(s) and not _POINTS_AT_TEXT.match(s)) or (then and not if_then))

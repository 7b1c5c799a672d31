"""Sentences that do not stand alone: they introduce what follows, lean on what came before, or are taken back.

A key statement of a summary and a statement to verify must say something by themselves; these rules say which do not.
"""

from __future__ import annotations

import re

#: A sentence that only introduces what follows it ("… looks as follows.", "… with the following call:"): no key statement.
#: "Below" alone is no sign: "… we show the correlation matrix, reported below." states what is done; "… the utility
#: functions listed below." points at a list.
INTRODUCES = re.compile(r"\b(?:deserves?|merits?|needs?) (?:a few|some) (?:\w+ )?(?:words|comments|remarks)\b|(?:as follows|the following(?:\s+\w+){0,3})\s*[.:]$|\bthe following (?!years?|days?|weeks?|months?|sections?|chapters?)\w+\s+(?:which|that)\b|\b(?:shown|given|listed|printed|defined|described|presented)\s+below\s*\.$|:$")
#: A second sentence that takes the first back or qualifies it ("This is not true as …", "However, …"): the first alone misleads.
TAKES_BACK = re.compile(r"(?:however|but|yet|nevertheless|in fact|actually|this is not|that is not|this is untrue)\b", re.I)
#: An opening that leans on a sentence before it ("Second, …", "As well, …", "Neither of these graphs …", "The first
#: routine copies …" after a listing of two, "The converse is …"), a note or keywords line, or one that tells the reader
#: to look ("Notice the curvature …", "Consider the model …": nothing true or false).
LEANS_BACK = re.compile(r"(?:second|third|fourth|finally|also|as well|neither|both of these|however|moreover|furthermore|in addition|alternatively|where"
                        r"|otherwise|then|here|now|anyway|so|by the way|as mentioned|at other times|before that|after that|the rest"
                        r"|(?:authors?['’]?s?\s+|editors?['’]?s?\s+)?note(?=\s*:)|keywords(?=\s*:)|notice|observe|consider|recall|compare|remember|imagine"
                        r"|the (?:first|second|third|last|former|latter|above|previous|preceding|converse|opposite|same)\b"
                        r"|the (?:result|output)s?(?= is| are| shows?| gives?))\b", re.I)  # "The result is a vector …": of the command above
#: A statement that opens by pointing at the sentence before it: checked alone, it says nothing.
POINTS_BACK = re.compile(r"(?:this|these|those|it|they|here|such)\b", re.I)
#: … unless it points at the text itself ("This section describes …", "This vignette shows …").
_POINTS_AT_TEXT = re.compile(r"(?:this|these)\s+(?:\w+\s+)?(?:page|section|chapter|paper|article|document|vignette|manual|guide|note|package|report"
                             r"|appendix|tutorial|introduction|book)s?\b", re.I)


#: Words that point at what stands around a sentence wherever they stand ("Each of these directives …", "… implementing
#: the above", "Hence …"), a notation or set-up of its own ("Let p denote …", "Assume you are using …").
_POINTS_AROUND = re.compile(r"\b(?:these|hence|thus|as such|on the other hand)\b|\b(?:equation|model|eq\.|step)\s*\(?\d+\)?|\b(?:above|below)(?=\s*[.,;:)]|\s*$)"
                            r"|\b(?:shown|given|listed|described|defined|mentioned|printed|presented|illustrated|discussed)\s+(?:above|below)\b"
                            r"|\bthe (?:\w+ )?(?:above|below)\b|^(?:let|assume|suppose)\b|\bdenotes?\b", re.I)
#: "This" or "these" within a sentence's first four words ("By default this …", "For this reason …").
_THIS_EARLY = re.compile(r"(?:[\w,]+\s+){1,3}(?:this|these|those|such)\b", re.I)
#: A sentence that only sends the reader elsewhere ("See Chapter 3 [Directives], page 6.", "For more details, see …").
_POINTER = re.compile(r"^\(?(?:please\s+)?(?:(?:for (?:more |further )?(?:details|information)(?: on [\w\s-]{1,40}?)?|more on this),?\s+)?(?:see|read|refer to)\b", re.I)


def question(s: str) -> bool:
    """Whether ``s`` asks rather than states ("But what if we wanted the expansion around another point?"): no key
    statement of a summary and nothing true or false.

    >>> question("But what if we wanted the expansion around a point different from 0?"), question("It is (really) 0.")
    (True, False)
    """
    return bool(re.search(r"\?[\"'”’)\]]*$", s.rstrip()))


def pointer(s: str) -> bool:
    """Whether ``s`` only points elsewhere: "see …" and little more than where to look.

    >>> pointer("See Chapter 3 [Directives], page 6."), pointer("For more details, see Chapter 5."), pointer("Section 3 fits the model.")
    (True, True, False)
    >>> pointer("See Section 2.1 for where each sensor is mounted.")
    False
    >>> pointer("Please see Section 6.1 for more information."), pointer("For more information on the available distributions read Section 6.1.")
    (True, True)
    """
    if not _POINTER.match(s):
        return False
    rest = re.sub(r"\bfor (?:more |further )?(?:details|information)\b|\b(?:chapters?|sections?|appendix|appendices|pages?|tables?|figures?|also|the|and|of|in)\b"
                  r"|\[[^\]]*\]|[\d.,;:()]+", " ", _POINTER.sub("", s), flags=re.I)
    return len(rest.split()) < 3


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
    >>> leans_back("Each of these directives takes one argument."), leans_back("Let p denote the probability.")
    (True, True)
    >>> leans_back("The code below shows how to fit it."), leans_back("Values above 5 are rare."), leans_back("Now we are ready to try it.")
    (True, False, True)
    >>> leans_back("It sits 2 m above short grass."[3:]), leans_back("As shown above, it fails."), leans_back("Stations with a budget outlive those without one.")
    (False, True, False)
    >>> leans_back("By default this option is off."), leans_back("In this paper we fit a model."), leans_back("In this section we fit it.")
    (True, False, False)
    """
    then = re.search(r"\bthen\b", s, re.I)  # "All components will be then retained" (once the size was set to zero)
    if_then = then is not None and re.search(r"\b(?:if|when|whenever|once|after|before|first)\b", s[: then.start()], re.I)
    early = _THIS_EARLY.match(s)
    at = early.end() - len(early.group(0).split()[-1]) if early else 0  # where "this" stands
    pointed = (POINTS_BACK.match(s) and not _POINTS_AT_TEXT.match(s)) or (early and not _POINTS_AT_TEXT.match(s, at))
    return bool(LEANS_BACK.match(s) or pointed or (then and not if_then) or _POINTS_AROUND.search(s))

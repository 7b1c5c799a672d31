"""Canonical action strings, the form consensus graphs merge on: ``click(text='Search', element='button')``."""

from __future__ import annotations

from typing import Any

__all__ = ["canonical"]


def _quote(value: Any) -> str:
    text = " ".join(str(value).split())
    if len(text) > 80:
        text = text[:79] + "…"
    return repr(text)


def canonical(name: str, **fields: Any) -> str:
    """``name(k='v', …)`` over the fields that are not None, in the order given.

    Examples
    --------
    >>> canonical("click", text="Search", element="button")
    "click(text='Search', element='button')"
    >>> canonical("type", text="dune", element="searchbox", submit=None)
    "type(text='dune', element='searchbox')"
    >>> canonical("scroll", direction="down")
    "scroll(direction='down')"
    """
    parts = [f"{k}={_quote(v)}" for k, v in fields.items() if v is not None and v != ""]
    return f"{name}({', '.join(parts)})"

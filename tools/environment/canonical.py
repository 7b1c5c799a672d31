"""Canonical action strings, the form consensus graphs merge on: ``click(text='Search', element='button')``."""

from __future__ import annotations

from typing import Any

__all__ = ["canonical", "element_form"]


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


def element_form(name: str, found_name: str | None, found_text: str | None, role: str | None, args: dict[str, Any], canon: dict[str, str]) -> str:
    """The canonical form of an element action, the element named by its accessible name, its text or the agent's description.

    >>> element_form("click", "Search", None, "button", {}, {})
    "click(text='Search', element='button')"
    >>> element_form("type", None, None, "textbox", {"element": "title field"}, {"typed": "dune"})
    "type(text='dune', element='title field')"
    """
    text = found_name or found_text or args.get("element")
    if name in ("type", "select_option"):
        return canonical("type" if name == "type" else "select", text=canon.get("typed"), option=canon.get("option"), element=text)
    if name == "drop":
        return canonical("drop", text=text, element=role, files=canon.get("files"), data=canon.get("data"))
    if name == "set_checked":
        return canonical("check" if args["checked"] else "uncheck", text=text, element=role)
    return canonical(name.replace("double_click", "dblclick"), text=text, element=role)

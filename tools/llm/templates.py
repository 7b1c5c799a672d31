"""The Jinja2 prompt templates that generation and judging send to an LLM.

They live in ``prompts/templates/<name>.j2`` (package data of ``taskloom.prompts``, read as
files: nothing here imports the MCP prompt modules). One environment renders them all:
``StrictUndefined`` (a missing value is an error, never an empty string), no autoescaping,
``trim_blocks`` and ``lstrip_blocks`` (a line holding only a block tag leaves no blank line),
and a ``repr`` filter (Python's ``repr``). The rendered text is the prompt as sent, so it is
part of the LLM cache key: change a template and every cached reply for it is missed.

>>> render_prompt("web_instruction_system.j2")[:40]
'Rewrite browser task instructions as a n'
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, StrictUndefined, Template

from taskloom.tools.errors import InputError

__all__ = ["TEMPLATE_DIR", "prompt_template", "render_prompt", "template_names"]

#: Where the templates are, relative to the ``taskloom`` package root.
TEMPLATE_DIR = ("prompts", "templates")

_ENV = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)
_ENV.filters["repr"] = repr


def _dir() -> Any:
    root = resources.files("taskloom")
    for part in TEMPLATE_DIR:
        root = root.joinpath(part)
    return root


def template_names() -> list[str]:
    """The names of the shipped templates, sorted.

    >>> "judge_answer.j2" in template_names()
    True
    """
    return sorted(p.name for p in _dir().iterdir() if p.name.endswith(".j2"))


@lru_cache(maxsize=64)
def prompt_template(name: str) -> Template:
    """The compiled template ``prompts/templates/<name>``.

    Raises
    ------
    InputError
        There is no template of that name.
    """
    path = _dir().joinpath(name)
    if not name.endswith(".j2") or not path.is_file():
        raise InputError(f"No prompt template {name!r}; the templates are {', '.join(template_names())}.")
    return _ENV.from_string(path.read_text(encoding="utf-8"))


def render_prompt(name: str, /, **values: Any) -> str:
    """Render the template ``name`` with ``values``; a value it uses but is not given raises ``jinja2.UndefinedError``."""
    return prompt_template(name).render(**values)

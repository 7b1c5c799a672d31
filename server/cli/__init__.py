"""The ``taskloom`` command: one module per command group, all calling the library.

Each command's module is imported only when that command runs (see :mod:`.lazy`), so
``taskloom --help`` and light commands do not pay for fastmcp, Chroma or Playwright.
"""

from __future__ import annotations

import sys

from .common import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``taskloom`` console script."""
    sys.exit(app())

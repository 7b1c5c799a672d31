"""Modal states of a tab: a JavaScript dialog or a file chooser, held until the agent handles it.

A dialog (``alert``, ``confirm``, ``prompt``, ``beforeunload``) is never answered on
the agent's behalf: it is held, shown in every observation (``### Modal state``) and
resolved by ``browser_handle_dialog``. While it is open the page's scripts are
paused, so other actions on that tab are refused with a message that says so. A file
chooser opened by the page is held the same way until ``browser_file_upload``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from playwright.async_api import Dialog, FileChooser, Page
from playwright.async_api import Error as PlaywrightError

from ..errors import TaskloomError

__all__ = ["Modal"]

log = logging.getLogger(__name__)


class Modal:
    """The dialog and file chooser one tab is waiting on, and the action that was cut short by the dialog."""

    def __init__(self, page: Page) -> None:
        self.dialog: Dialog | None = None
        self.chooser: FileChooser | None = None
        self.appeared = asyncio.Event()  # set when a dialog opens, so an action waiting on the page stops waiting
        self.pending: asyncio.Future[Any] | None = None  # the action the dialog interrupted; it ends once the dialog is handled
        page.on("dialog", self._dialog)
        page.on("filechooser", self._chooser)

    def _dialog(self, dialog: Dialog) -> None:
        if self.dialog is not None:  # a second dialog while one is held cannot happen (scripts are paused); keep the first
            return
        self.dialog = dialog
        self.appeared.set()

    def _chooser(self, chooser: FileChooser) -> None:
        self.chooser = chooser

    def take_dialog(self) -> Dialog | None:
        """The held dialog, now no longer held (the caller resolves it)."""
        dialog, self.dialog = self.dialog, None
        self.appeared.clear()
        return dialog

    def take_chooser(self) -> FileChooser | None:
        """The held file chooser, now no longer held."""
        chooser, self.chooser = self.chooser, None
        return chooser

    def describe_dialog(self) -> str | None:
        """``[confirm] 'Delete?'`` for the held dialog (with a prompt's default value), None when none is held."""
        if self.dialog is None:
            return None
        text = f"[{self.dialog.type}] {self.dialog.message!r}"
        if self.dialog.type == "prompt" and self.dialog.default_value:
            text += f" (default {self.dialog.default_value!r})"
        return text

    def describe(self) -> str | None:
        """The ``### Modal state`` lines observations show, or None when nothing is held."""
        lines = []
        dialog = self.describe_dialog()
        if dialog is not None:
            lines.append(f"- {dialog} dialog is open: handle it with browser_handle_dialog (accept true/false, promptText for a prompt)")
        if self.chooser is not None:
            lines.append("- [file chooser] is open: handle it with browser_file_upload (paths to upload, or none to cancel)")
        return "### Modal state\n" + "\n".join(lines) if lines else None

    def blocking(self) -> str | None:
        """Why an action on this tab cannot run now (a dialog pauses the page), or None."""
        dialog = self.describe_dialog()
        if dialog is None:
            return None
        return f"a {dialog} dialog is open and pauses the page; call browser_handle_dialog (accept true or false) first"

    async def dismiss_all(self) -> None:
        """Dismiss whatever is held (the episode is closing); the interrupted action is let finish."""
        dialog = self.take_dialog()
        if dialog is not None:
            await _quietly(dialog.dismiss())
        self.chooser = None
        if self.pending is not None:
            pending, self.pending = self.pending, None
            await _quietly(asyncio.wait_for(pending, 2.0))


async def _quietly(awaitable: Any) -> None:
    """Await something whose failure no longer matters (a page closing under it)."""
    try:
        await awaitable
    except (PlaywrightError, TaskloomError, TimeoutError) as exc:  # the page closing under it changes nothing now
        log.debug("ignored while closing: %s", exc)

"""Browser episodes: one isolated context each, every action recorded, failures told to the agent.

Actions are shaped like Playwright MCP's tools (snapshot refs ``[ref=eN]``; an element is
named by ``target``, a ref or a unique selector, with an optional ``element``
description), so agents that know Playwright MCP work unchanged. A failed action (stale
ref, element gone, timeout, blocked domain, a dialog in the way) is recorded with its
error and raised as :class:`ActionFailed`; the episode stays usable. The episode's tabs,
held dialogs and file choosers, and each tab's console and network log live in
:mod:`.tabs`, :mod:`.modal` and :mod:`.page_log`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from ..browser import GuardedContext
from ..browser.dom import DESCRIBE_JS, draw_marks
from ..errors import InputError, TaskloomError
from ..tasks.model import SuccessCriterion, Task
from . import landing
from .canonical import canonical, element_form
from .limits import EpisodeLimits
from .locate import ActionFailed, TimedOut, aria, explain, find, shown_refs, title_of, until_dialog, while_described
from .modal import Modal
from .observation import FormField, Observation
from .page_log import ConsoleLevel, ConsoleMessages, NetworkRequests, RequestDetail
from .protocols import SuccessChecker
from .snapshot_view import View
from .tabs import Tabs
from .traffic import Traffic
from .trajectory import Recorder, Target

__all__ = ["ActionFailed", "BrowserEpisode", "FormField", "ImageType", "Modifier", "Observation", "TimedOut"]

_INTERACTIVE = re.compile(r"^\s*- (link|button|textbox|searchbox|combobox|checkbox|radio|tab|menuitem|option|switch|slider|spinbutton)\b.*\[ref=((?:f\d+)?e\d+)\]", re.M)
#: Actions that load a document by themselves (the request they start means the page is observed after landing).
_NAVIGATIONS = frozenset({"navigate", "navigate_back"})
#: Seconds the probe after an action waits for the checks a gold replay expects of it (see ``BrowserEpisode.expect``).
EXPECT_WAIT_S = 3.0
ImageType = Literal["png", "jpeg", "webp"]
Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]
Button = Literal["left", "right", "middle"]


@dataclass
class _Label:
    """How an action is recorded (canonical form, target) when its element is described while it runs."""

    form: str
    target: Target


def _given(**fields: Any) -> dict[str, Any]:
    """Arguments as the agent gave them: the ones left out (None) are not recorded."""
    return {k: v for k, v in fields.items() if v is not None}


class BrowserEpisode:
    """One agent's session in its own browser context (one or more tabs)."""

    def __init__(
        self, episode_id: str, guarded: GuardedContext, page: Page, recorder: Recorder, checker: SuccessChecker, screenshots: bool = False, snapshots: bool = True,
        limits: EpisodeLimits = EpisodeLimits(),
    ) -> None:  # fmt: skip
        self.id = episode_id
        self.guarded = guarded
        self.limits = limits
        self.tabs = Tabs(guarded, page, limits)
        self.recorder = recorder
        self.checker = checker
        self.screenshots = screenshots
        self.snapshots = snapshots  # False: actions answer without the page's snapshot (browser_snapshot still gives it)
        self.closed = False
        self.task: Task | None = None  # the full task, server side only: final-state checks at close
        self.watch: list[SuccessCriterion] = []  # state checks probed after every action (composite tasks' subtasks)
        self.expect: set[str] = set()  # keys of watched checks the next action must bring about (a gold replay's subtask end)
        self.start_error: str | None = None  # why the start page did not load in time (the episode is open nonetheless)

    @property
    def page(self) -> Page:
        """The current tab's page."""
        return self.tabs.current.page

    @property
    def traffic(self) -> Traffic:
        return self.tabs.current.traffic

    @property
    def modal(self) -> Modal:
        return self.tabs.current.modal

    # -- observation ------------------------------------------------------------------

    async def snapshot(self, target: str | None = None, depth: int | None = None, max_chars: int | None = None, boxes: bool = False) -> Observation:
        """The page's accessibility snapshot (refs ``[ref=eN]``), whole or of one element, cut to ``max_chars``; recorded as an action."""
        args = _given(target=target, depth=depth, maxChars=max_chars, boxes=boxes or None)
        if target is None:
            return await self._act("snapshot", args, canonical("snapshot"), None, None, view=View(None, depth, boxes, max_chars))
        if (why := self.modal.blocking()) is not None:
            return await self._fail("snapshot", args, canonical("snapshot"), Target(ref=target), why)
        try:
            loc, found = await find(self.page, target)
        except (ActionFailed, PlaywrightError) as exc:
            error = str(exc) if isinstance(exc, ActionFailed) else explain(exc)
            return await self._fail("snapshot", args, canonical("snapshot"), Target(ref=target), error)
        return await self._act("snapshot", args, canonical("snapshot", element=found.name or found.role), found, None, view=View(loc, depth, boxes, max_chars))

    async def observe(
        self, view: View = View(), snapshot: bool = True, title: str | None = None, early: Awaitable[str] | None = None, acted: bool = True
    ) -> Observation:
        """URL, title (read unless given), tabs, modal state and (unless ``snapshot`` is False) snapshot, without recording (for tool responses).

        ``early``: the snapshot, already asked for while the action landed (see :mod:`.landing`).
        The snapshot is cut at ``view.max_chars`` (default: the ``snapshot_max_chars``
        limit) with a marker; one that fails or takes longer than ``snapshot_timeout_ms``
        is replaced by a note saying so and what to do (``acted``: after an action).
        """
        tab = self.tabs.current
        url = tab.page.url  # read first, as the agent is told where the action left it
        await self.tabs.settle_new()
        infos = await self.tabs.infos() if len(self.tabs.tabs) > 1 else None
        read = title_of(tab.page) if title is None else asyncio.sleep(0, title)
        page: str | None = None
        if tab.modal.dialog is not None or not snapshot:
            title = await read
        else:  # both in flight at once: one round trip
            snapshot_taken = early or aria(tab.page, view, self.limits.snapshot_timeout_ms)
            title, page = await asyncio.gather(read, landing.bounded(tab, snapshot_taken, view, self.limits, acted))
            tab.shown.update(shown_refs(page or ""))
        modal = tab.modal.describe()
        parts = [self.tabs.describe(infos)] if infos else []
        if modal:
            parts.append(modal)
        if page is not None:
            parts.append(page)
        elif tab.modal.dialog is not None:
            parts.append("(the page is paused by the dialog; handle it to see the page again)")
        return Observation(url=url, title=title, snapshot="\n\n".join(parts) or None, tabs=infos, modal=modal)

    async def screenshot(
        self, marks: bool = False, full_page: bool = False, target: str | None = None, element: str | None = None, kind: ImageType = "png", scale: Literal["css", "device"] = "css"
    ) -> bytes:
        """A PNG (JPEG, WebP) of the viewport, the full page or one element; with ``marks``, interactive elements boxed and labelled by ref."""
        self._check_open()
        args = _given(marks=marks or None, full_page=full_page or None, target=target, element=element, type=None if kind == "png" else kind, scale=None if scale == "css" else scale)
        form = canonical("screenshot", marks="yes" if marks else None, element=element)
        if (why := self.modal.blocking()) is not None:
            await self._fail("take_screenshot", args, form, None, why)
        if target is not None and (marks or full_page):
            await self._fail("take_screenshot", args, form, None, "a screenshot of one element (target) cannot also be full-page or marked; pass only target, or leave it out")
        try:
            if target is not None:
                loc, _ = await find(self.page, target)
                image: bytes = await loc.screenshot(type=kind, scale=scale)
            else:
                image = await self.page.screenshot(full_page=full_page, type=kind, scale=scale)
            if marks:
                image = await self._marked(image, kind)
        except ActionFailed as exc:
            await self._fail("take_screenshot", args, form, None, str(exc))
        except PlaywrightError as exc:
            await self._fail("take_screenshot", args, form, None, explain(exc))
        path, relative = self.recorder.screenshot_path("marks" if marks else "screen")
        path = path.with_suffix(f".{kind}")
        relative = relative[:-4] + f".{kind}"
        path.write_bytes(image)
        now = time.time()
        self.recorder.action(name="take_screenshot", args=args, canonical=form, url_before=self.page.url, url_after=self.page.url, t_start=now, t_end=now, screenshot=relative)
        return image

    async def _marked(self, png: bytes, kind: ImageType = "png") -> bytes:
        snapshot = await aria(self.page, timeout_ms=self.limits.snapshot_timeout_ms)
        self.tabs.current.shown.update(shown_refs(snapshot))
        boxes = []
        for _, ref in _INTERACTIVE.findall(snapshot):
            box = await self.page.locator(f"aria-ref={ref}").bounding_box()
            if box:
                boxes.append((ref, (box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"])))
        return draw_marks(png, boxes, kind)

    async def console_messages(self, level: ConsoleLevel = "info", all: bool = False) -> ConsoleMessages:  # noqa: A002 - Playwright MCP's name
        """The current tab's console messages (recorded as a look, like a snapshot)."""
        found = self.tabs.current.log.console_messages(level, all)
        self.record_look("console_messages", _given(level=level, all=all or None), canonical("console", level=level))
        return found

    async def network_requests(self, static: bool = False, filter: str | None = None) -> NetworkRequests:  # noqa: A002 - Playwright MCP's name
        """The current page's network requests (recorded as a look)."""
        self._check_open()
        args, form = _given(static=static or None, filter=filter), canonical("network", filter=filter)
        try:
            found = self.tabs.current.log.network_requests(static, filter)
        except InputError as exc:
            await self._fail("network_requests", args, form, None, str(exc))
        self.record_look("network_requests", args, form)
        return found

    async def network_request(self, index: int) -> RequestDetail:
        """One request of the current tab in full (recorded as a look)."""
        self._check_open()
        args, form = {"index": index}, canonical("network_request", index=index)
        try:
            found = await self.tabs.current.log.request_detail(index)
        except (InputError, PlaywrightError) as exc:
            await self._fail("network_request", args, form, None, str(exc) if isinstance(exc, InputError) else explain(exc))
        self.record_look("network_request", args, form)
        return found

    def record_look(self, name: str, args: dict[str, Any], form: str) -> None:
        """Record a look at the page or its logs (nothing acted on); refused once the episode is closed or its step limit is used up."""
        self._check_open()
        self.recorder.check_limit()
        now = time.time()
        self.recorder.action(name=name, args=args, canonical=form, url_before=self.page.url, url_after=self.page.url, t_start=now, t_end=now)

    # -- element actions --------------------------------------------------------------

    async def click(self, element: str | None, target: str, double: bool = False, button: Button = "left", modifiers: list[Modifier] | None = None) -> Observation:
        keys = list(modifiers) if modifiers else None

        async def run(loc: Locator) -> None:
            await (loc.dblclick(button=button, modifiers=keys) if double else loc.click(button=button, modifiers=keys))

        args = _given(element=element, target=target, button=button, modifiers=keys)
        return await self._element_action("double_click" if double else "click", args, target, run, pointer=True)

    async def type(self, element: str | None, target: str, text: str, submit: bool = False, slowly: bool = False) -> Observation:
        async def run(loc: Locator) -> None:
            await (loc.press_sequentially(text) if slowly else loc.fill(text))
            if submit:
                await loc.press("Enter")

        args = _given(element=element, target=target, text=text, submit=submit, slowly=slowly or None)
        return await self._element_action("type", args, target, run, typed=text)

    async def select_option(self, element: str | None, target: str, values: list[str]) -> Observation:
        if not values:
            await self._fail("select_option", _given(element=element, target=target, values=values), canonical("select", element=element), Target(ref=target), "values is empty; pass the option label(s) or value(s) to select")

        async def run(loc: Locator) -> None:
            options: list[dict[str, str]] = await loc.evaluate("(s) => Array.from(s.options || []).map(o => ({label: o.label || o.text, value: o.value}))")
            chosen = []
            for wanted in values:
                match = next((o["value"] for o in options if wanted in (o["label"], o["value"])), None)
                if match is None:
                    raise ActionFailed(f"no option {wanted!r}; the options are {[o['label'] for o in options]}")
                chosen.append(match)
            await loc.select_option(chosen)

        return await self._element_action("select_option", _given(element=element, target=target, values=values), target, run, option=", ".join(values))

    async def hover(self, element: str | None, target: str) -> Observation:
        return await self._element_action("hover", _given(element=element, target=target), target, lambda loc: loc.hover(), pointer=True)

    async def set_checked(self, element: str | None, target: str, checked: bool) -> Observation:
        """Check or uncheck a checkbox or radio button (browser_fill_form's checkbox and radio fields)."""
        return await self._element_action("set_checked", _given(element=element, target=target, checked=checked), target, lambda loc: loc.set_checked(checked), pointer=True)

    async def fill_form(self, fields: list[FormField]) -> Observation:
        """Fill several fields in order, each recorded as its own action (type, select_option or set_checked)."""
        given = {"fields": [f.model_dump() for f in fields]}
        if not fields:
            await self._fail("fill_form", given, canonical("fill_form"), None, "fields is empty; pass the fields to fill, e.g. [{name, type: 'textbox', target: 'e12', value}]")
        for field in fields:
            if field.type in ("checkbox", "radio") and field.value not in ("true", "false"):
                await self._fail("fill_form", given, canonical("fill_form"), None, f"field {field.name!r} is a {field.type}: its value must be 'true' or 'false', not {field.value!r}")
        observation: Observation | None = None
        done: list[str] = []
        for field in fields:
            if field.type in ("textbox", "slider"):
                observation = await self.type(field.name, field.target, field.value)
            elif field.type == "combobox":
                observation = await self.select_option(field.name, field.target, [field.value])
            else:
                observation = await self.set_checked(field.name, field.target, field.value == "true")
            done.append(observation.action or "")
        assert observation is not None
        observation.action = "; ".join(done)
        return observation

    async def drag(self, start_element: str | None, start_target: str, end_element: str | None, end_target: str) -> Observation:
        """Drag one element onto another."""
        args = _given(startElement=start_element, startTarget=start_target, endElement=end_element, endTarget=end_target)
        self._check_open()
        self.recorder.check_limit()
        if (why := self.modal.blocking()) is not None:
            return await self._fail("drag", args, canonical("drag", element=start_element), Target(ref=start_target), why)
        try:
            source, start = await find(self.page, start_target)
            goal, end = await find(self.page, end_target)
        except (ActionFailed, PlaywrightError) as exc:
            error = str(exc) if isinstance(exc, ActionFailed) else explain(exc)
            return await self._fail("drag", args, canonical("drag", element=start_element), Target(ref=start_target), error)
        form = canonical("drag", text=start.name or start.text or start_element, to=end.name or end.text or end_element)
        return await self._act("drag", args, form, start, lambda: source.drag_to(goal))

    async def drop(self, element: str | None, target: str, paths: list[str] | None, data: dict[str, str] | None, resolve: Callable[[str], Path]) -> Observation:
        """Drop files (each checked by ``resolve``: allowed roots only) and/or MIME-typed text onto an element, as if dragged in from outside."""
        self._check_open()
        args = _given(element=element, target=target, paths=paths, data=data)
        form = canonical("drop", element=element, files=", ".join(Path(p).name for p in paths or []), data=", ".join(data or {}))
        try:
            if not paths and not data:
                raise InputError("nothing to drop; pass paths (files) and/or data (MIME type to text, e.g. {'text/plain': 'hello'})")
            files = [resolve(p) for p in paths or []]
        except InputError as exc:
            return await self._fail("drop", args, form, Target(ref=target), str(exc))
        payload: Any = {"files": files or None, "data": data or None}
        return await self._element_action("drop", args, target, lambda loc: loc.drop(payload), files=", ".join(f.name for f in files), data=", ".join(data or {}))

    # -- page, tab and dialog actions -------------------------------------------------

    async def press_key(self, key: str) -> Observation:
        if not key.strip():
            await self._fail("press_key", {"key": key}, canonical("press", key=key), None, "key is empty; pass a key name such as 'Enter', 'ArrowDown' or 'Control+a'")
        return await self._act("press_key", {"key": key}, canonical("press", key=key), None, lambda: self.page.keyboard.press(key))

    async def navigate(self, url: str) -> Observation:
        if not url.startswith(("http://", "https://")):
            return await self._fail("navigate", {"url": url}, canonical("navigate", url=url), None, f"{url!r} is not an http(s) URL; pass a full address such as http://host/path")
        if not self.guarded.allows(url):
            return await self._fail("navigate", {"url": url}, canonical("navigate", url=url), None, f"{url} is outside this episode's allowed domains (origins {self.guarded.describe()})")
        return await self._act("navigate", {"url": url}, canonical("navigate", url=url), None, lambda: self.page.goto(url, wait_until="domcontentloaded"))

    async def navigate_back(self) -> Observation:
        return await self._act("navigate_back", {}, canonical("go_back"), None, lambda: self.page.go_back(wait_until="domcontentloaded"))

    async def wait_for(self, seconds: float | None = None, text: str | None = None, text_gone: str | None = None) -> Observation:
        args = {"seconds": seconds, "text": text, "text_gone": text_gone}
        form = canonical("wait", text=text, text_gone=text_gone, seconds=seconds)
        if seconds is None and text is None and text_gone is None:
            await self._fail("wait_for", args, form, None, "pass time (seconds), text or textGone")
        if seconds is not None and not 0 <= seconds <= 30:
            await self._fail("wait_for", args, form, None, "time must be between 0 and 30 seconds")

        limit = 2 * self.limits.action_timeout_ms  # 10 s with the default action_timeout_ms

        async def run() -> None:
            if seconds:
                await self.page.wait_for_timeout(seconds * 1000)
            try:
                if text:
                    await self.page.get_by_text(text).first.wait_for(state="visible", timeout=limit)
                if text_gone:
                    await self.page.get_by_text(text_gone).first.wait_for(state="hidden", timeout=limit)
            except PlaywrightError:
                what = f"text {text!r} did not appear" if text else f"text {text_gone!r} did not disappear"
                raise ActionFailed(f"{what} within {limit / 1000:g} s (twice action_timeout_ms); take a browser_snapshot to see the page") from None

        return await self._act("wait_for", args, form, None, run)

    async def scroll(self, direction: Literal["up", "down"] = "down", amount: int = 600) -> Observation:
        delta = amount if direction == "down" else -amount
        return await self._act("scroll", {"direction": direction, "amount": amount}, canonical("scroll", direction=direction), None, lambda: self.page.mouse.wheel(0, delta))

    async def resize(self, width: int, height: int) -> Observation:
        """Resize the viewport of the current tab."""
        size = {"width": width, "height": height}

        async def run() -> None:
            await self.page.set_viewport_size(size)  # type: ignore[arg-type]
            # the page hears of it (a resize event) at its next rendering: let two frames pass so what it redraws is observed
            await self.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")

        return await self._act("resize", size, canonical("resize", width=width, height=height), None, run)

    async def tab_action(self, action: Literal["list", "new", "close", "select"], index: int | None = None, url: str | None = None) -> Observation:
        """List, open, close or select a tab; the observation lists the tabs (and, unless listing, shows the current one)."""
        args = _given(action=action, index=index, url=url)
        form = canonical("tabs", action=action, index=index)
        run: Callable[[], Awaitable[Any]] | None = None
        if action == "select":
            if index is None:
                await self._fail("tabs", args, form, None, "action 'select' needs index: the tab's position from browser_tabs action 'list'")
            run = self._select(index)
        elif action == "close":
            run = self._close_tab(index)
        elif action == "new":
            if url is not None and not (url.startswith(("http://", "https://")) and self.guarded.allows(url)):
                return await self._fail("tabs", args, form, None, f"{url!r} is not an http(s) URL inside this episode's allowed domains (origins {self.guarded.describe()})")
            run = self._new_tab(url)
        elif index is not None or url is not None:
            await self._fail("tabs", args, form, None, "action 'list' takes no index or url")
        observation = await self._act("tabs", args, form, None, run, land=False, allow_modal=True, look=action == "list")
        observation.tabs = await self.tabs.infos()
        return observation

    def _select(self, index: int) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            self.tabs.select(index)
            await self.tabs.front()

        return run

    def _close_tab(self, index: int | None) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            await self.tabs.close(index)
            await self.tabs.front()

        return run

    def _new_tab(self, url: str | None) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            tab = await self.tabs.new()
            if url is not None:
                await tab.page.goto(url, wait_until="domcontentloaded")

        return run

    async def handle_dialog(self, accept: bool, prompt_text: str | None = None) -> Observation:
        """Accept or dismiss the dialog the current tab holds; the action it interrupted then finishes."""
        tab = self.tabs.current
        args = _given(accept=accept, promptText=prompt_text)
        if tab.modal.dialog is None:
            return await self._fail("handle_dialog", args, canonical("dialog", accept="yes" if accept else "no"), None, "no dialog is open on the current tab; there is nothing to handle")
        dialog = tab.modal.take_dialog()
        assert dialog is not None
        form = canonical("dialog", kind=dialog.type, message=dialog.message, accept="yes" if accept else "no", text=prompt_text)

        async def run() -> None:
            await (dialog.accept(prompt_text) if accept and prompt_text is not None else dialog.accept() if accept else dialog.dismiss())
            pending, tab.modal.pending = tab.modal.pending, None
            if pending is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(pending), 10.0)
                except TimeoutError:
                    raise ActionFailed("the dialog was handled but the action it interrupted did not finish within 10 s; take a browser_snapshot") from None

        return await self._act("handle_dialog", args, form, None, run, allow_modal=True)

    async def file_upload(self, paths: list[str] | None, resolve: Callable[[str], Path]) -> Observation:
        """Give the held file chooser ``paths`` (each checked by ``resolve``: allowed roots only), or cancel it when None."""
        tab = self.tabs.current
        args = _given(paths=paths)
        form = canonical("upload", files=", ".join(Path(p).name for p in paths) if paths else None)
        if tab.modal.chooser is None:
            return await self._fail("file_upload", args, form, None, "no file chooser is open; click the page's file input or upload button first, then call browser_file_upload")
        try:
            files = [resolve(p) for p in paths or []]
        except InputError as exc:
            return await self._fail("file_upload", args, form, None, str(exc))
        chooser = tab.modal.take_chooser()
        assert chooser is not None
        target = None
        with contextlib.suppress(PlaywrightError):  # the input may be gone already; the upload below reports what matters
            info = await chooser.element.evaluate(DESCRIBE_JS)
            target = Target(role=info["role"] or info["tag"], name=info["name"] or None, selector=info["selector"])

        async def run() -> None:
            if files:
                await chooser.set_files(files)

        return await self._act("file_upload", args, form, target, run)

    # -- machinery --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise InputError(f"episode {self.id} is closed; call env_start for a new one")

    async def _capture(self, path: Any) -> bool:
        """Screenshot to ``path``; a page caught mid-navigation is retried once after it loads."""
        for attempt in range(2):
            try:
                path.write_bytes(await self.page.screenshot())
                return True
            except PlaywrightError:
                if attempt == 0:
                    try:
                        await self.page.wait_for_load_state("load", timeout=5_000)
                    except PlaywrightError:
                        return False
        return False

    async def _element_action(self, name: str, args: dict[str, Any], target: str, run: Callable[[Locator], Awaitable[Any]], pointer: bool = False, **canon: str) -> Observation:
        """Act on the element ``target`` names, recorded with its description; a pointer action on a shown ref is described while it runs."""
        self._check_open()
        self.recorder.check_limit()
        if (why := self.modal.blocking()) is not None:
            return await self._fail(name, args, canonical(name, element=args.get("element")), Target(ref=target), why)
        if pointer and target in self.tabs.current.shown:
            label = _Label(canonical(name, element=args.get("element")), Target(ref=target))  # until the description arrives

            def on_described(found: Target) -> None:
                label.form, label.target = element_form(name, found.name, found.text, found.role, args, canon), found

            return await self._act(name, args, label.form, label.target, lambda: while_described(self.page, target, run, on_described, self.tabs.current.shown[target]), label=label)
        try:
            loc, found = await find(self.page, target)
        except ActionFailed as exc:
            return await self._fail(name, args, canonical(name, element=args.get("element")), Target(ref=target), str(exc))
        except PlaywrightError as exc:
            return await self._fail(name, args, canonical(name, element=args.get("element")), Target(ref=target), explain(exc))
        form = element_form(name, found.name, found.text, found.role, args, canon)
        return await self._act(name, args, form, found, lambda: run(loc))

    async def _fail(self, name: str, args: dict[str, Any], form: str, target: Target | None, error: str) -> NoReturn:
        now = time.time()
        holds = await self._probe()
        self.recorder.action(name=name, args=args, canonical=form, target=target, url_before=self.page.url, url_after=self.page.url, t_start=now, t_end=now, error=error, holds=holds)
        raise ActionFailed(error)

    async def _probe(self) -> list[str] | None:
        """Which watched state checks hold now (None when nothing is watched, or while a dialog pauses the page); probed
        again every 0.2 s for up to ``EXPECT_WAIT_S`` while checks ``expect`` names do not (a page rendering late)."""
        if not self.watch or self.modal.dialog is not None:
            return None
        deadline = time.monotonic() + EXPECT_WAIT_S
        while True:
            try:
                held = await self.checker.probe(self.page, self.watch)
            except PlaywrightError:
                held = []  # the page is mid-navigation; nothing is counted as holding
            if self.expect <= set(held) or time.monotonic() >= deadline:
                return held
            await asyncio.sleep(0.2)

    async def _act(
        self,
        name: str,
        args: dict[str, Any],
        form: str,
        target: Target | None,
        run: Callable[[], Awaitable[Any]] | None,
        *,
        land: bool = True,
        allow_modal: bool = False,
        look: bool = False,
        view: View = View(),
        label: _Label | None = None,
    ) -> Observation:
        """Run one action, record it (with its error, if any), and observe the page after it.

        An action a dialog interrupts (a click that calls ``confirm()``) is recorded as done;
        the observation shows the dialog, and the action finishes once it is handled.
        ``look`` observes without a snapshot (browser_tabs list); ``label``, when given, holds
        the form and target to record (filled in while ``run`` runs).
        """
        self._check_open()
        self.recorder.check_limit()
        tab = self.tabs.current
        if not allow_modal and (why := tab.modal.blocking()) is not None:
            return await self._fail(name, args, form, target, why)
        url_before, t_start = tab.page.url, time.time()
        error: str | None = None
        timed_out = False
        landed = landing.Landed(tab)
        wants = not look and (self.snapshots or name == "snapshot")  # the observation will show the page's snapshot
        if run is not None:
            tab.traffic.watch()
            opened = self.tabs.opened

            async def whole() -> bool:
                nonlocal landed
                await run()
                if land:
                    if tab.traffic.navigations != tab.traffic.navigations_before:  # a document the action committed is parsed first
                        await tab.page.wait_for_load_state("domcontentloaded", timeout=self.limits.navigation_timeout_ms)
                    # a navigation always started requests, so a snapshot taken while it lands is never used: on a huge page it would cost a second one
                    early = view if wants and name not in _NAVIGATIONS else None
                    landed = await landing.land(tab, self.tabs, opened, early)
                return True

            try:
                await until_dialog(tab, whole(), keep=True)
            except TaskloomError as exc:  # ActionFailed, or an InputError found only now (no such tab)
                error = str(exc)
            except PlaywrightError as exc:
                error, timed_out = explain(exc), isinstance(exc, PlaywrightTimeout)
            finally:
                tab.traffic.watching = False
            now = self.tabs.current
            back_to = url_before if now is tab else None
            if error is None and now.modal.dialog is None:
                error = await self.guarded.refuse_outside(now.page, back_to)
                if error is None and now.page.url.startswith("chrome-error://"):
                    error = "the page could not be loaded: it is outside this episode's allowed domains or unreachable; went back"
                    await self.guarded.restore(now.page, back_to)
        paused = self.modal.dialog is not None
        relative = None
        if self.screenshots and error is None and name != "snapshot" and not paused and not look:
            path, relative = self.recorder.screenshot_path(name)
            relative = relative if await self._capture(path) else None
        t_end = time.time()
        holds = await self._probe()
        if label is not None:
            form, target = label.form, label.target
        fields: dict[str, Any] = {
            "name": name, "args": args, "canonical": form, "target": target, "url_before": url_before, "url_after": self.page.url,
            "t_start": t_start, "t_end": t_end, "screenshot": relative, "error": error, "holds": holds,
        }  # fmt: skip
        if error is not None:
            self.recorder.action(**fields)
            raise (TimedOut if timed_out else ActionFailed)(error)
        # The record is written (and fsynced) in a thread while the page is observed; both finish before the agent hears back.
        written = asyncio.ensure_future(asyncio.to_thread(self.recorder.action, **fields))
        try:
            if look:
                observation = Observation(url=self.page.url, title=await title_of(self.page))
            else:
                same = self.tabs.current is tab
                observation = await self.observe(view, snapshot=wants, title=landed.title if same else None, early=landed.snapshot() if same else None, acted=name != "snapshot")
        finally:
            await written
        observation.action = form
        return observation


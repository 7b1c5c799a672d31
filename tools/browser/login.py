"""Log in to a site through its own login form, once, and hand out the cookies it set.

The form is found the way a person finds it, never by a site's names: a visible password
input together with a text or e-mail input in the same form (a form with a single password
field first, so a sign-up form's "repeat password" loses to the login box). Hints from
:class:`~taskloom.tools.settings.SiteLogin` (a field's name, id, label or placeholder; the
submit button's text) narrow the choice when a page has several. The login happens in a
context of its own, unrecorded, so the password is typed nowhere an agent, a trajectory or a
HAR file could see it; what comes back is the context's storage state (cookies, local
storage), which :meth:`.pool.BrowserPool.new_context` starts other contexts with.

It took when the login form is gone from the page after submitting and the site set a
cookie (or local storage); otherwise :class:`InputError` says what the page showed, never
the password.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, StorageState

from ..errors import InputError
from ..settings import SiteLogin
from .pool import BrowserPool, OriginFence

__all__ = ["LoginFailed", "is_logout", "log_in"]

#: Text of a control that ends the session: never followed or clicked while logged in.
_LOGOUT_TEXT = re.compile(r"^\W*(log|sign)[\s_-]*(out|off)\b", re.I)
#: The same in a URL's path or query (``/logout``, ``?@action=logout``, ``/users/sign_out``).
_LOGOUT_URL = re.compile(r"(log|sign)[_-]?(out|off)\b", re.I)

#: Marks the login form's user field, password field and submit button (``data-taskloom-login``), or says what the page has.
FIND_FORM_JS = """(hints) => {
  const visible = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const words = (el) => [el.name, el.id, el.getAttribute('aria-label'), el.placeholder, el.getAttribute('autocomplete'),
    ...Array.from(el.labels || [], (l) => l.textContent)].filter(Boolean).map((s) => s.trim().toLowerCase());
  const fits = (el, hint) => !hint || words(el).some((w) => w === hint.toLowerCase() || w.includes(hint.toLowerCase()));
  document.querySelectorAll('[data-taskloom-login]').forEach((el) => el.removeAttribute('data-taskloom-login'));
  const passwords = Array.from(document.querySelectorAll('input[type=password]')).filter(visible);
  const scopeOf = (pw) => pw.form || document.body;
  const single = (pw) => Array.from(scopeOf(pw).querySelectorAll('input[type=password]')).filter(visible).length === 1;
  const ranked = passwords.filter((pw) => fits(pw, hints.password)).sort((a, b) => single(b) - single(a));
  const seen = { forms: document.forms.length, passwords: passwords.length };
  for (const pw of ranked) {
    const scope = scopeOf(pw);
    const texts = Array.from(scope.querySelectorAll('input')).filter((i) => ['text', 'email', 'tel'].includes(i.type) && visible(i) && !i.readOnly);
    const before = texts.filter((i) => i.compareDocumentPosition(pw) & Node.DOCUMENT_POSITION_FOLLOWING);
    const user = hints.username ? texts.find((i) => fits(i, hints.username)) : (before[before.length - 1] || texts[0]);
    if (!user) continue;
    const buttons = Array.from(scope.querySelectorAll('button, input[type=submit], input[type=image]'))
      .filter((b) => visible(b) && (b.tagName !== 'BUTTON' || b.type === 'submit'));
    const label = (b) => (b.innerText || b.value || b.getAttribute('aria-label') || '').trim().toLowerCase();
    const submit = hints.submit ? buttons.find((b) => label(b).includes(hints.submit.toLowerCase())) : buttons[0];
    user.setAttribute('data-taskloom-login', 'user');
    pw.setAttribute('data-taskloom-login', 'password');
    if (submit) submit.setAttribute('data-taskloom-login', 'submit');
    return { found: true, submit: !!submit, ...seen };
  }
  return { found: false, ...seen };
}"""

#: What a page says after a failed login: its alerts and error boxes.
ALERTS_JS = """() => Array.from(document.querySelectorAll('[role=alert], .error, .errors, .alert, .error-message, .flash, .message, #error'))
  .map((el) => (el.innerText || '').trim()).filter(Boolean).join(' | ').slice(0, 300)"""


class LoginFailed(InputError):
    """The site's login form was not found, or submitting it did not log in."""


def is_logout(text: str | None, url: str | None = None) -> bool:
    """True for a link or button that logs out: its text ("Log out", "Sign out", "Logout") or its URL (``/logout``, ``@action=logout``)."""
    if text and _LOGOUT_TEXT.search(text.strip()):
        return True
    return bool(url) and bool(_LOGOUT_URL.search(str(url).split("#", 1)[0].split("//", 1)[-1].partition("/")[2]))


async def log_in(pool: BrowserPool, login: SiteLogin, start_url: str, fence: OriginFence | None = None, timeout_s: float = 15.0) -> StorageState:
    """Log in through the form on ``login.url`` (default ``start_url``) in a context of its own; its storage state (cookies)."""
    url = login.url or start_url
    secret = login.password.get_secret_value()
    guarded = await pool.new_context(fence=fence)
    try:
        page = await guarded.new_page()
        page.set_default_timeout(timeout_s * 1000)
        try:
            await page.goto(url, wait_until="load")
        except PlaywrightError as exc:
            raise LoginFailed(f"the login page {url} did not load: {_first_line(exc, secret)}") from None
        if not guarded.allows(page.url):
            raise LoginFailed(f"the login page {url} ended outside the allowed origins ({guarded.describe()}) at {page.url}")
        hints = {"username": login.username_field, "password": login.password_field, "submit": login.submit}
        seen: dict[str, Any] = await page.evaluate(FIND_FORM_JS, hints)
        if not seen["found"]:
            named = ", ".join(f"{k}={v!r}" for k, v in hints.items() if v)
            raise LoginFailed(
                f"no login form on {page.url} (title {await page.title()!r}): {seen['forms']} form(s), {seen['passwords']} visible password field(s)"
                + (f", none matching {named}" if named else ", none with a text or e-mail field beside it")
                + "; set site_login.url to the page that has the form"
            )
        before = await guarded.context.storage_state()
        await page.locator("[data-taskloom-login=user]").fill(login.username)
        password = page.locator("[data-taskloom-login=password]")
        await password.fill(secret)
        navigated = asyncio.Event()

        def on_nav(frame: Any) -> None:
            if frame == page.main_frame:
                navigated.set()

        page.on("framenavigated", on_nav)  # before submitting: the click may wait until the navigation has begun
        try:
            if seen["submit"]:
                await page.locator("[data-taskloom-login=submit]").click()
            else:
                await password.press("Enter")
            gone = await _form_gone(page, hints, navigated, timeout_s)
        except PlaywrightError as exc:
            raise LoginFailed(f"submitting the login form on {url} failed: {_first_line(exc, secret)}") from None
        finally:
            page.remove_listener("framenavigated", on_nav)
        after = await guarded.context.storage_state()
        if not gone:
            said = await _alerts(page)
            raise LoginFailed(
                f"logging in as {login.username!r} did not take: the login form is still shown on {page.url} (title {await page.title()!r})"
                + (f"; the page says: {said.replace(secret, '***')}" if said else "")
                + "; check site_login's username and password"
            )
        if after == before:
            raise LoginFailed(f"logging in as {login.username!r} set no cookie or local storage (the form went away, ending on {page.url}); the site may log in some other way")
        return after
    finally:
        await guarded.context.close()


async def _form_gone(page: Page, hints: dict[str, str | None], navigated: asyncio.Event, timeout_s: float) -> bool:
    """Whether the login form went away after submitting (a navigation that loads, or a page that hides it), within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        loaded = navigated.is_set()
        if loaded:
            await page.wait_for_load_state("load")
        try:
            shown = (await page.evaluate(FIND_FORM_JS, hints))["found"]
        except PlaywrightError:  # the page navigated while it was read: read the new one
            await asyncio.sleep(0.05)
            continue
        if not shown:
            return True
        if loaded:
            return False  # a new page that shows the form again: the login was refused
        await asyncio.sleep(0.1)
    return False


async def _alerts(page: Page) -> str:
    try:
        text: str = await page.evaluate(ALERTS_JS)
    except PlaywrightError:
        return ""
    return text


def _first_line(exc: BaseException, secret: str) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0].replace(secret, "***")

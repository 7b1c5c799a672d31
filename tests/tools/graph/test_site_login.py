"""Logging in to a site (issue 33, item 1): the crawl and every browser episode start logged in, with credentials from settings.

Roundup's classic tracker (the session's ``roundup_site``) shows its login box in the sidebar of
every page; logged in it greets the user ("Hello, admin") and offers "Logout" instead. The
admin's password is the one tests/data/build-roundup.py sets. One small crawl and two
episodes per module; the password must reach no file of the workspace (graph, vectors,
trajectories, HAR files).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from taskloom.tools.browser.login import LoginFailed, is_logout, log_in
from taskloom.tools.errors import InputError
from taskloom.tools.graph.web.crawl import CrawlOptions, CrawlResult, crawl
from taskloom.tools.graph.web.pipeline import WebIngestReport
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings, SiteLogin

pytestmark = [pytest.mark.integration]

PASSWORD = "taskloom-admin"  # tests/data/build-roundup.py's ADMIN_PASSWORD
GREETING = "Hello, admin"


@dataclass
class LoginRun:
    workspace: Path
    report: WebIngestReport
    pages: dict[str, str]  # URL -> text of every page the logged-in crawl stored
    links: list[tuple[str, str]]  # (text, href) of every link node of the logged-in crawl
    anonymous: CrawlResult
    snapshots: list[str]  # the first snapshot of each episode: without, then with a state reset
    refused: str  # a wrong password's error
    no_form: str  # a page without a login form's error


@pytest.fixture(scope="module")
def run(roundup_site: Any, tmp_path_factory: pytest.TempPathFactory) -> LoginRun:
    roundup_site.state.reset()
    workspace = tmp_path_factory.mktemp("login") / "ws"
    login = SiteLogin.model_validate({"username": "admin", "password": PASSWORD})
    settings = Settings(workspace=workspace, embedder="hashing", crawl_delay=0, record_screenshots=False, record=["har"], site_login=login)
    start = roundup_site.url + "/"

    async def go() -> LoginRun:
        async with Runtime(settings) as rt:
            report = await rt.graphs.ingest_website(start, max_pages=8, max_depth=1, contexts=2, max_states=0, click_budget=2)
            kg = rt.graphs.load(report.graph_id)
            pages = {str(n.attrs["url"]): n.text for n in kg.nodes("page")}
            links = [(n.text, str(n.attrs.get("href"))) for n in kg.nodes("link")]
            anonymous = await crawl(CrawlOptions(start_url=start, max_pages=1, max_depth=0, max_states=0, click_budget=0, screenshots=False, delay=0), rt.browsers)
            snapshots = []
            for reset in (None, roundup_site.state.reset):
                rt.episodes.state_reset = reset
                _, started = await rt.episodes.start(url=start)
                snapshots.append(started.snapshot)
                await rt.episodes.close(started.episode_id)
            rt.episodes.state_reset = None
            wrong = SiteLogin.model_validate({"username": "admin", "password": "not-" + PASSWORD})
            with pytest.raises(LoginFailed) as refused:
                await log_in(rt.browsers, wrong, start)
            with pytest.raises(LoginFailed) as no_form:
                await log_in(rt.browsers, login, roundup_site.url + "/@@file/style.css")
        return LoginRun(workspace, report, pages, links, anonymous, snapshots, str(refused.value), str(no_form.value))

    try:
        return asyncio.run(go())
    finally:
        roundup_site.state.reset()  # drops the sessions the logins opened


def test_the_crawl_is_logged_in_and_anonymous_is_not(run: LoginRun) -> None:
    assert len(run.pages) >= 4, run.report.skipped
    shown = {u: t for u, t in run.pages.items() if "An error has occurred" not in t}  # Roundup's error page has no sidebar
    assert len(shown) >= 4 and all(GREETING in text for text in shown.values()), {u: t[:200] for u, t in shown.items() if GREETING not in t}
    assert any(text == "Your Details" for text, _ in run.links)  # a link only a logged-in user has
    anonymous = run.anonymous.pages[0]
    assert GREETING not in anonymous.text and "Your Details" not in anonymous.text
    assert any(e.input_type == "password" for e in anonymous.elements)  # the login box a logged-in page no longer has


def test_logout_links_are_seen_but_never_followed(run: LoginRun) -> None:
    assert any(is_logout(text, href) for text, href in run.links), "the logged-in pages offer a Logout link"
    followed = [u for u in [*run.pages, *run.report.skipped] if is_logout(None, u)]
    assert followed == []


def test_logout_words_and_urls() -> None:
    for text in ("Logout", "Log out", "  sign out", "Sign-Off", "log_out"):
        assert is_logout(text), text
    for url in ("http://h/tracker/?@action=logout", "http://h/users/sign_out", "http://h/logoff.php"):
        assert is_logout(None, url), url
    for text, url in (("Login", "http://h/login"), ("Catalog outlines", "http://h/catalog/outline"), ("Blog outreach", "http://logout.example/")):
        assert not is_logout(text, url), (text, url)


def test_every_episode_starts_logged_in(run: LoginRun) -> None:
    assert len(run.snapshots) == 2  # the second one after a state reset (which ends the sessions): logged in again
    for snapshot in run.snapshots:
        assert GREETING in snapshot, snapshot[:500]


def test_a_wrong_password_or_a_missing_form_is_a_clear_error(run: LoginRun) -> None:
    assert "did not take" in run.refused and "'admin'" in run.refused and "login form is still shown" in run.refused, run.refused
    assert "no login form" in run.no_form and "style.css" in run.no_form, run.no_form
    for message in (run.refused, run.no_form):
        assert PASSWORD not in message


def test_the_password_reaches_no_file_of_the_workspace(run: LoginRun) -> None:
    files = [p for p in run.workspace.rglob("*") if p.is_file()]
    assert any(p.name == "trajectory.jsonl" for p in files) and any(p.name == "network.har" for p in files)
    assert any(p.suffix == ".json" and "graphs" in p.parts for p in files)
    leaked = [str(p) for p in files if PASSWORD.encode() in p.read_bytes()]
    assert leaked == []


def test_site_login_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no taskloom.toml around
    monkeypatch.setenv("TASKLOOM_SITE_LOGIN", '{"username": "ann", "password": "s3cret-pw", "url": "http://127.0.0.1:1/login"}')
    settings = Settings()
    assert settings.site_login is not None and settings.site_login.password.get_secret_value() == "s3cret-pw"
    assert "s3cret-pw" not in repr(settings) and "s3cret-pw" not in settings.model_dump_json()
    assert '"password": "s3cret-pw"' in settings.to_env()["TASKLOOM_SITE_LOGIN"]  # a server started with these settings logs in too
    monkeypatch.setenv("TASKLOOM_SITE_LOGIN", 'username = "ann"\npassword = "s3cret-pw"')
    assert Settings().site_login == SiteLogin.model_validate({"username": "ann", "password": "s3cret-pw"})
    for broken in ('{"username": "ann", "password": "s3cret-pw"', 'password = "s3cret-pw"\nuser = "ann"'):
        monkeypatch.setenv("TASKLOOM_SITE_LOGIN", broken)
        with pytest.raises(InputError) as error:
            Settings()
        assert "site_login" in str(error.value) and "s3cret-pw" not in str(error.value)

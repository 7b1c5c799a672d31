"""An application with state is held by one browser episode at a time: reset, act, final check, then the next.

Two episodes run at once against one application would reset each other's state and read each
other's changes; with a ``state_reset`` the second waits until the first has closed (its final state
checked), also when it comes through another episode manager of the same runtime (the harness gives
each episode's server its own). Without one, episodes open side by side as before.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskloom.tools.environment.appstate import StateFolder
from taskloom.tools.errors import InputError
from taskloom.tools.runtime import Runtime
from taskloom.tools.settings import Settings

from .browser_site import Site

pytestmark = pytest.mark.integration


def test_a_second_episode_waits_until_the_first_has_closed(site: Site, settings: Settings) -> None:
    events: list[str] = []

    async def go() -> None:
        async with Runtime(settings) as rt:
            rt.episodes.state_reset = lambda: events.append("reset")
            first, _ = await rt.episodes.start(url=site.base + "index.html", session="a")
            events.append("first open")
            with pytest.raises(InputError, match="one episode runs at a time"):
                await rt.episodes.start(url=site.base + "index.html", session="a")
            other_manager = rt.episode_manager(root=settings.workspace / "other")  # as the harness makes one per episode's server
            second = asyncio.create_task(other_manager.start(url=site.base + "index.html", session="b"))
            await asyncio.sleep(0.3)  # the second start has run as far as it can
            events.append("first closing")
            await rt.episodes.close(first.id)
            opened, _ = await second
            events.append("second open")
            await other_manager.close(opened.id)

    asyncio.run(go())
    assert events == ["reset", "first open", "first closing", "reset", "second open"]


def test_without_state_episodes_open_side_by_side(site: Site, settings: Settings) -> None:
    async def go() -> int:
        async with Runtime(settings) as rt:
            one, _ = await rt.episodes.start(url=site.base + "index.html", session="a")
            two, _ = await asyncio.wait_for(rt.episodes.start(url=site.base + "index.html", session="b"), 60)
            both = len(rt.episodes.episodes)
            for episode in (one, two):
                await rt.episodes.close(episode.id)
            return both

    assert asyncio.run(go()) == 2


def test_the_app_state_setting_resets_the_live_folder_before_each_episode(site: Site, tmp_path: Path) -> None:
    pristine, live = tmp_path / "pristine", tmp_path / "live"
    pristine.mkdir()
    (pristine / "notes.txt").write_text("seeded")
    StateFolder.copy_of(pristine, live)
    settings = Settings(workspace=tmp_path / "ws", embedder="hashing", app_state=(pristine, live))

    async def go() -> str:
        async with Runtime(settings) as rt:
            (live / "notes.txt").write_text("changed by an earlier episode")
            manager = rt.episode_manager(root=tmp_path / "eps")
            episode, _ = await manager.start(url=site.base + "index.html")
            seen = (live / "notes.txt").read_text()
            await manager.close(episode.id)
            return seen

    assert asyncio.run(go()) == "seeded"

"""The build's site queue: the main lane takes sites from the front, the documents' lane from the end."""

from __future__ import annotations

import threading
from pathlib import Path

from taskloom.tools.build.manifest import parse_manifest
from taskloom.tools.build.pipeline import SiteQueue, Unit, plan


def _sites(n: int) -> list[Unit]:
    text = '[dataset]\nname = "q"\nversion = "1"\n' + "".join(
        f'[[source]]\nname = "s{i}"\nkind = "site"\nstart_url = "http://127.0.0.1:{8700 + i}/"\n' for i in range(n)
    )
    return plan(parse_manifest(text, Path(".")))


def test_each_site_is_taken_once_from_its_own_end() -> None:
    queue = SiteQueue(_sites(5), stealing=True)
    front, end = queue.drain(from_end=False), queue.drain(from_end=True)
    taken = [next(front).name, next(end).name, next(front).name, next(end).name, next(front).name]
    assert taken == ["s0", "s4", "s1", "s3", "s2"]
    assert list(front) == [] and list(end) == []


def test_without_stealing_or_once_closed_the_end_takes_nothing() -> None:
    queue = SiteQueue(_sites(3), stealing=False)
    assert list(queue.drain(from_end=True)) == []
    assert [u.name for u in queue.drain(from_end=False)] == ["s0", "s1", "s2"]
    queue = SiteQueue(_sites(3), stealing=True)
    end = queue.drain(from_end=True)
    assert next(end).name == "s2"
    queue.close()  # the main lane failed: what is left stays for it
    assert list(end) == []
    assert [u.name for u in queue.drain(from_end=False)] == ["s0", "s1"]


def test_two_threads_share_the_sites_without_a_loss_or_a_repeat() -> None:
    queue = SiteQueue(_sites(200), stealing=True)
    seen: list[list[str]] = [[], []]

    def take(i: int) -> None:
        seen[i].extend(u.name for u in queue.drain(from_end=bool(i)))

    threads = [threading.Thread(target=take, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen[0] + seen[1]) == sorted(f"s{i}" for i in range(200))

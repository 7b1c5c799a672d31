"""Objects that outlive an event loop (a build runs each unit in its own) wait on their locks in the next loop too.

The full build's R manuals unit failed with "<asyncio.locks.Lock …> is bound to a different event loop": the runtime's
browser pool and episode manager were made once and used from one ``anyio.run`` per unit, and an
:class:`asyncio.Lock` binds to the first loop that waits on it.
"""

from __future__ import annotations

import asyncio

import pytest

from taskloom.tools.browser import BrowserPool
from taskloom.tools.environment.appstate import StateTurns
from taskloom.tools.looplock import LoopLock


async def _contend(lock: asyncio.Lock | LoopLock) -> list[int]:
    order: list[int] = []

    async def hold(n: int) -> None:
        async with lock:
            order.append(n)
            await asyncio.sleep(0.01)  # the other one waits meanwhile

    await asyncio.gather(hold(1), hold(2))
    return order


def test_a_lock_waited_on_in_one_loop_is_waited_on_in_the_next() -> None:
    plain = asyncio.Lock()
    assert asyncio.run(_contend(plain)) == [1, 2]
    with pytest.raises(RuntimeError, match="different event loop"):  # what LoopLock is for
        asyncio.run(_contend(plain))
    lock = LoopLock()
    assert asyncio.run(_contend(lock)) == [1, 2] and asyncio.run(_contend(lock)) == [1, 2]
    turns = StateTurns()
    assert asyncio.run(_contend(turns.lock)) == [1, 2] and asyncio.run(_contend(turns.lock)) == [1, 2]


def test_one_browser_pool_launches_in_one_loop_after_another() -> None:
    pool = BrowserPool()

    async def launch_twice() -> bool:
        try:
            first, second = await asyncio.gather(pool.browser(), pool.browser())  # the second waits on the first's launch
            return first is second and first.is_connected()
        finally:
            await pool.close()

    assert asyncio.run(launch_twice()) and asyncio.run(launch_twice())

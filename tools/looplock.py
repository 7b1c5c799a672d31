"""A lock for long-lived objects that several event loops use, one after another.

An :class:`asyncio.Lock` binds to the loop that first waits on it; used later from another loop
(the build runs each unit in its own ``anyio.run``, sharing one runtime's browser pool and episode
manager), a wait on it raises "is bound to a different event loop". :class:`LoopLock` keeps one
:class:`asyncio.Lock` per running loop instead. A loop that ends holding it takes its lock along.
"""

from __future__ import annotations

import asyncio
import weakref

__all__ = ["LoopLock"]


class LoopLock:
    """An :class:`asyncio.Lock` of whichever loop is running when it is used.

    >>> lock = LoopLock()
    >>> async def twice() -> bool:
    ...     async with lock:
    ...         held = lock.locked()
    ...     return held and not lock.locked()
    >>> asyncio.run(twice()), asyncio.run(twice())
    (True, True)
    """

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def acquire(self) -> bool:
        return await self._lock().acquire()

    def release(self) -> None:
        self._lock().release()

    def locked(self) -> bool:
        return self._lock().locked()

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

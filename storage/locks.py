"""The in-process half of a room's lock, shared by the backends.

Units of one room in this process queue on an asyncio lock (FIFO: rooms keep
their order); a backend shared by several processes then takes its own
cluster-wide lock as well. An entry lives while a unit holds or awaits it, so
a room never keeps memory, and whether anyone holds or awaits it is known
without waiting (`try_hold`): storing a message may take its room when it is
free, never wait for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class RoomLocks:
    def __init__(self) -> None:
        # room id -> its lock and how many units hold or await it
        self._rooms: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    def busy(self, room_id: str) -> bool:
        """A unit of the room holds its lock here or waits for it."""
        return room_id in self._rooms

    def _enter(self, room_id: str) -> tuple[asyncio.Lock, list[int]]:
        entry = self._rooms.get(room_id)
        if entry is None:
            entry = self._rooms[room_id] = (asyncio.Lock(), [0])
        entry[1][0] += 1
        return entry

    def _leave(self, room_id: str, entry: tuple[asyncio.Lock, list[int]]) -> None:
        entry[1][0] -= 1
        if entry[1][0] == 0 and self._rooms.get(room_id) is entry:
            del self._rooms[room_id]

    @asynccontextmanager
    async def hold(self, room_id: str) -> AsyncIterator[None]:
        """The room's lock, after the units that asked before."""
        entry = self._enter(room_id)
        try:
            async with entry[0]:
                yield
        finally:
            self._leave(room_id, entry)

    async def try_hold(self, room_id: str) -> Callable[[], None] | None:
        """The room's lock if no unit holds or awaits it, without waiting: the
        function that releases it; None when the room is busy."""
        if room_id in self._rooms:
            return None
        entry = self._enter(room_id)
        # A new lock nobody waits for: acquired at once, without suspending,
        # so no other unit can slip in between the look and the take.
        await entry[0].acquire()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                entry[0].release()
                self._leave(room_id, entry)

        return release

"""Pacing of platform calls shared by every instance on the database.

A platform limits the bot's calls per app, not per process: Slack takes about
one `chat.postMessage` a second into a channel, whichever instance sends it.
An adapter's own pacer keeps one process's calls in order and spaced; this
adds a reservation in storage (`Storage.reserve_slot`, one statement), so the
calls of every instance into the same channel are spaced as well. Each call
takes the key's next free moment, waits for it and, when it ends, pushes
the next free moment to at least its end plus the spacing (`push_slot`).

Moments are wall-clock time (instances on several machines share it, to the
precision of their clock synchronisation). A reservation the database cannot
make is not a reason to stop posting: the call then goes by the adapter's
own pacing alone, and a 429 is still retried by the platform client.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from storage.base import Storage

log = logging.getLogger(__name__)


def wall_clock() -> datetime:
    return datetime.now(UTC)


class SharedPacing:
    def __init__(self, storage: Storage, now: Callable[[], datetime] = wall_clock) -> None:
        self.storage = storage
        self.now = now

    async def reserve(self, key: str, spacing: float) -> datetime | None:
        """Take the next moment of `key` for one call (None: no shared moment
        could be had; the caller paces alone)."""
        try:
            return await self.storage.reserve_slot(key, self.now(), timedelta(seconds=spacing))
        except Exception as exc:
            log.warning("shared pacing of %s unavailable (%s); pacing locally", key, exc)
            return None

    def until(self, moment: datetime) -> float:
        """Seconds from now to `moment` (0 when it has passed). Asked just
        before waiting: the reservation itself takes time."""
        return max(0.0, (moment - self.now()).total_seconds())

    async def done(self, key: str, spacing: float) -> None:
        """A call of `key` ended now: the next may start `spacing` seconds later."""
        try:
            await self.storage.push_slot(key, self.now() + timedelta(seconds=spacing))
        except Exception as exc:
            log.warning("shared pacing of %s not updated (%s)", key, exc)

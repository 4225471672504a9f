"""Keeping each chat platform running on its own (`tribunal run`).

A platform that cannot start or drops (network refused, gateway down) is
started again with exponential backoff, and each attempt is logged, while the
other platforms keep working. One whose credentials are refused stops for good
with a message naming the variable: retrying a wrong token only hides it.
`tribunal run` ends when every platform has stopped for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Literal, Protocol

from bot.models import OutgoingMessage, RoomKey
from bot.ports import (
    ChecksAdmins,
    FindsPosts,
    PlatformFatal,
    RepliesPrivately,
    ReportsPace,
    Transport,
    TransportError,
)

log = logging.getLogger("tribunal.platforms")

Sleep = Callable[[float], Awaitable[None]]

BASE_DELAY = 1.0  # seconds before the first retry; doubles on every failure
MAX_DELAY = 60.0
STABLE_AFTER = 60.0  # a run this long resets the backoff: that outage is over
STOP_TIMEOUT = 2.5  # per adapter at shutdown; the whole stop must fit in 5 s

__all__ = ["Adapter", "GatedTransport", "PlatformFatal", "PlatformRunner", "cancel_all"]


class Adapter(Protocol):
    @property
    def transport(self) -> Transport: ...

    async def start(self) -> None:
        """Connect; raise PlatformFatal when retrying cannot help, anything else when it may."""
        ...

    async def wait_closed(self) -> None:
        """Return (or raise why) when the connection is lost for good; cancellable."""
        ...

    async def stop(self) -> None: ...


class GatedTransport:
    """What the engine posts through: refuses while its platform is down.

    The outbox then backs off with one warning line per attempt instead of
    calling a client that is closed or was never logged in.
    """

    def __init__(self, platform: str, adapter: Adapter) -> None:
        self.platform = platform
        self._adapter = adapter
        self.up = False

    def _inner(self) -> Transport:
        if not self.up:
            raise TransportError(f"{self.platform} is not connected")
        return self._adapter.transport

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        return await self._inner().post(room, message)

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        await self._inner().edit(room, message_id, message)

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        await self._inner().post_private(room, user_id, text)

    async def find_post(
        self, room: RoomKey, message: OutgoingMessage, since: datetime
    ) -> str | None:
        inner = self._inner()
        if isinstance(inner, FindsPosts):
            return await inner.find_post(room, message, since)
        return None

    async def post_reply(self, room: RoomKey, user_id: str, text: str,
                         route: dict[str, str]) -> None:
        inner = self._inner()
        if isinstance(inner, RepliesPrivately):
            await inner.post_reply(room, user_id, text, route)
        else:
            await inner.post_private(room, user_id, text)

    def expected_wait(self, call: Literal["post", "edit"], room: RoomKey) -> float | None:
        """The adapter's transport's own estimate (None when it has none)."""
        inner = self._adapter.transport
        return inner.expected_wait(call, room) if isinstance(inner, ReportsPace) else None

    async def is_platform_admin(self, user_id: str) -> bool:
        """Asked of the adapter's transport even while the platform is down (a
        read; at start, stored commands are applied before the platform is up)."""
        inner = self._adapter.transport
        if isinstance(inner, ChecksAdmins):
            return await inner.is_platform_admin(user_id)
        return False


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class PlatformRunner:
    """Runs one adapter until it stops for good (`failure` says why) or is cancelled."""

    def __init__(
        self,
        platform: str,
        adapter: Adapter,
        *,
        sleep: Sleep = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        base_delay: float = BASE_DELAY,
        max_delay: float = MAX_DELAY,
    ) -> None:
        self.platform = platform
        self.adapter = adapter
        self.transport = GatedTransport(platform, adapter)
        self.failure: str | None = None
        self._sleep = sleep
        self._monotonic = monotonic
        self._base_delay = base_delay
        self._max_delay = max_delay

    async def run(self) -> None:
        failures = 0
        while True:
            started: float | None = None
            try:
                await self.adapter.start()
                started = self._monotonic()
                self.transport.up = True
                await self.adapter.wait_closed()
                reason = "connection lost"
            except PlatformFatal as exc:
                self.failure = str(exc)
                log.error("%s: stopped: %s", self.platform, exc)
                return
            except Exception as exc:
                reason = describe(exc)
            finally:
                self.transport.up = False
                await self.stop_adapter()
            if started is not None and self._monotonic() - started >= STABLE_AFTER:
                failures = 0
            delay = min(self._max_delay, self._base_delay * 2**failures)
            failures += 1
            log.warning(
                "%s: not available (%s); retrying in %g s (attempt %d)",
                self.platform, reason, delay, failures,
            )
            await self._sleep(delay)

    async def stop_adapter(self) -> None:
        """Stop the adapter, bounded: shutdown must not wait on a peer that hangs."""
        try:
            await asyncio.wait_for(self.adapter.stop(), STOP_TIMEOUT)
        except TimeoutError:
            log.warning("%s: did not stop within %g s; abandoned", self.platform, STOP_TIMEOUT)
        except Exception as exc:
            log.warning("%s: error while stopping: %s", self.platform, describe(exc))


async def cancel_all(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task

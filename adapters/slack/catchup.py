"""Catch-up for Slack: what the watched channels said while the bot was away.

Run in the background after every start of the adapter (and after Socket
Mode comes back from a drop), so the bot answers live events at once. For
each watched channel, `conversations.history` from its latest stored message
finds the threads started since; `conversations.replies` reads those threads
and the rooms with an open task, most recently active first, from each
room's latest stored message. The two run side by side: they are separate
rate buckets at Slack, so the rooms people are waiting in are read while
the channels' histories are still being paged (a new thread joins the
queue when its channel is read, at its latest reply's place). Every call
goes through the transport's pacer at the method's tier (Tier 3), so a long
outage does not turn into a 429 storm. The core stores what is new
(deduplicated by room and message id) and applies it in ts order, before
the room's live messages.

On a database several instances share, the catch-up is held by the lease
`catchup:slack` (`bot.catchup_leases`): one instance reads, the others do
not repeat it, and every history call first checks the lease is still held.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import AsyncIterator
from typing import Any

from adapters.slack import translate
from adapters.slack.transport import SlackTransport
from bot.catchup import RoomMark
from bot.catchup_leases import CatchUpRun
from bot.models import IncomingMessage, RoomKey
from bot.ports import Core, TransportError

log = logging.getLogger("tribunal.slack")

LEASE = "catchup:slack"  # the lease of Slack's catch-up, on a shared database
PAGE = 200  # messages a call (Slack's recommended page size is at most 200)
MAX_PAGES = 50  # per channel or thread: an outage longer than this is cut, and logged


class SlackCatchUp:
    def __init__(self, core: Core, transport: SlackTransport,
                 identity: translate.Identity) -> None:
        self.core = core
        self.transport = transport
        self.identity = identity
        self.lease = CatchUpRun([LEASE])  # unleased until `run` is given one

    async def run(self, lease: CatchUpRun | None = None) -> int:
        """Catch every watched channel up; returns how many messages were new.
        Held by `lease` (on a shared database), it stops with `CatchUpLost` at
        the first read after the lease was lost."""
        if lease is not None:
            self.lease = lease
        plan = await self.lease.plan(await self.core.catch_up_plan(translate.PLATFORM))
        queue = _RoomQueue()
        for mark in plan.rooms:
            if mark.room.thread:
                _, oldest = translate.split_message_id(mark.last_message_id, mark.room.channel)
                queue.put(mark.room, mark.last_ts.timestamp(), oldest)
        histories = asyncio.create_task(self._new_threads(plan.channels, queue))
        new = read = 0
        try:
            while (item := await queue.get(until=histories)) is not None:
                room, since = item
                read += 1

                async def fetch(room: RoomKey = room, oldest: str | None = since
                                ) -> list[IncomingMessage]:
                    return await self._replies(room, oldest)

                try:
                    new += await self.core.catch_up(room, fetch)
                except TransportError as exc:
                    log.warning("slack catch-up of %s failed: %s; next start tries again",
                                room.id, exc)
            await histories  # its failure, if any, is the caller's
        finally:
            histories.cancel()
            if histories.done() and not histories.cancelled():
                histories.exception()  # retrieved: raised above, or `CatchUpLost` first
        log.info("slack catch-up done: %d room(s) read, %d missed message(s)", read, new)
        return new

    async def _new_threads(self, channels: dict[str, RoomMark], queue: _RoomQueue) -> None:
        """Each channel's threads started since its latest stored message, queued
        whole (a new thread: all of it)."""
        for channel, mark in channels.items():
            _, oldest = translate.split_message_id(mark.last_message_id, channel)
            try:
                async for parent in self._pages("conversations.history", RoomKey(
                        translate.PLATFORM, channel, None), {"oldest": oldest}):
                    ts = str(parent.get("ts") or "")
                    if ts:
                        room = RoomKey(translate.PLATFORM, channel, ts)
                        queue.put(room, float(parent.get("latest_reply") or ts), None)
            except TransportError as exc:
                log.warning("slack catch-up of channel %s failed: %s; next start tries again",
                            channel, exc)

    async def _replies(self, room: RoomKey, oldest: str | None) -> list[IncomingMessage]:
        args: dict[str, Any] = {"ts": room.thread}
        if oldest:
            args["oldest"] = oldest
        out: list[IncomingMessage] = []
        async for item in self._pages("conversations.replies", room, args):
            message = translate.incoming_message(
                {"type": "message", **item, "channel": room.channel}, self.identity)
            if message is not None and message.room == room:
                out.append(message)
        return out

    async def _pages(self, method: str, room: RoomKey,
                     args: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            kwargs = {"channel": room.channel, "limit": PAGE, **args}
            if cursor:
                kwargs["cursor"] = cursor
            self.lease.check(LEASE)  # fencing: no read once the lease is another's
            response = await self.transport.read(method, room, kwargs)
            for item in response.get("messages") or []:
                if isinstance(item, dict):
                    yield item
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return
        log.warning("slack catch-up: %s of %s cut after %d pages", method, room.id, MAX_PAGES)


class _RoomQueue:
    """Rooms to read, most recently active first; a room queued again keeps its
    place if it has one and reads from the earlier point (None: all of it)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._items: dict[str, tuple[RoomKey, str | None]] = {}
        self._done: set[str] = set()
        self._changed = asyncio.Event()

    def put(self, room: RoomKey, activity: float, since: str | None) -> None:
        if room.id in self._done:
            return
        queued = self._items.get(room.id)
        if queued is not None:
            if since is None or (queued[1] is not None and float(since) < float(queued[1])):
                self._items[room.id] = (room, since)
            return
        self._items[room.id] = (room, since)
        heapq.heappush(self._heap, (-activity, room.id))
        self._changed.set()

    async def get(self, *, until: asyncio.Task[None]) -> tuple[RoomKey, str | None] | None:
        """The most recently active room left; None once `until` is done and
        nothing is left."""
        while not self._heap:
            if until.done():
                return None
            self._changed.clear()
            changed = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({changed, until}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
        _, room_id = heapq.heappop(self._heap)
        self._done.add(room_id)
        return self._items.pop(room_id)

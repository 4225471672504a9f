"""Delivering the bot's posts: written to storage first, sent after.

A post survives a crash or a platform outage: it stays `pending` until the
transport confirms it, and `tick()` retries it. Posts of one room go out in
order; an edit whose original never made it is posted as a new message.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import defaultdict

from bot.clock import Clock
from bot.models import OutgoingMessage, RoomKey
from bot.ports import Transport, TransportError
from storage.base import OutboxRow, Storage

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 8


class Outbox:
    def __init__(self, storage: Storage, transports: dict[str, Transport], clock: Clock) -> None:
        self.storage = storage
        self.transports = transports
        self.clock = clock
        self._dirty: set[str] = set()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def note(self, room_id: str) -> None:
        """Something was enqueued for this room; the next `flush(room_id)` looks."""
        self._dirty.add(room_id)

    async def flush(self, room_id: str | None = None) -> None:
        """Send what is pending (for one room, or everywhere)."""
        if room_id is not None:
            if room_id not in self._dirty:
                return  # nothing enqueued here since the last flush: skip the query
            self._dirty.discard(room_id)
        rows = await self.storage.pending_outbox(limit=500)
        by_room: dict[str, list[OutboxRow]] = defaultdict(list)
        for row in rows:
            if room_id is None or row.room_id == room_id:
                by_room[row.room_id].append(row)
        await asyncio.gather(*(self._flush_room(rid, items) for rid, items in by_room.items()))

    async def _flush_room(self, room_id: str, rows: list[OutboxRow]) -> None:
        lock = self._locks.get(room_id)
        if lock is None:
            lock = self._locks[room_id] = asyncio.Lock()
        async with lock:
            for row in rows:
                fresh = await self.storage.get_outbox(row.id)
                if fresh is None or fresh.status != "pending":
                    continue
                if not await self._send(fresh):
                    break  # keep order: later posts wait for this one

    async def _send(self, row: OutboxRow) -> bool:
        room = RoomKey.parse(row.room_id)
        transport = self.transports.get(room.platform)
        if transport is None:
            return False
        message = OutgoingMessage.model_validate(row.payload)
        try:
            if row.kind == "private":
                await transport.post_private(room, row.payload["user_id"], message.text)
                platform_id = None
            else:
                platform_id = await self._post_or_edit(transport, room, row, message)
        except TransportError as exc:
            permanent = exc.permanent or row.attempts + 1 >= MAX_ATTEMPTS
            log.warning(
                "outbox %s for room %s failed (%s): %s",
                row.id,
                row.room_id,
                "giving up" if permanent else "will retry",
                exc,
            )
            async with self.storage.transaction() as tx:
                await tx.mark_outbox(row.id, "failed" if permanent else "pending", error=str(exc))
            return permanent  # a dropped post must not block the ones after it
        except Exception as exc:  # an adapter bug must not lose the post nor crash the bot
            log.exception("outbox %s for room %s: unexpected transport error", row.id, row.room_id)
            async with self.storage.transaction() as tx:
                await tx.mark_outbox(row.id, "pending", error=repr(exc)[:500])
            return False
        async with self.storage.transaction() as tx:
            await tx.mark_outbox(
                row.id, "sent", platform_message_id=platform_id, at=self.clock.now()
            )
        return True

    async def _post_or_edit(
        self, transport: Transport, room: RoomKey, row: OutboxRow, message: OutgoingMessage
    ) -> str:
        if row.edit_of is not None:
            original = await self.storage.get_outbox(row.edit_of)
            if original is not None and original.platform_message_id:
                try:
                    await transport.edit(room, original.platform_message_id, message)
                    return original.platform_message_id
                except TransportError as exc:
                    if not exc.permanent:
                        raise
                    log.warning("edit of %s impossible (%s); posting anew", row.edit_of, exc)
            elif original is not None and original.status == "pending":
                raise TransportError("original post not sent yet")
        return await transport.post(room, message)

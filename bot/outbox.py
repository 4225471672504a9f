"""Delivering the bot's posts: written to storage first, sent after.

A post survives a crash or a platform outage: it stays `pending` until the
transport confirms it, and `tick()` retries it with exponential backoff for
up to a day. Posts of one room go out in order; an edit whose original never
made it is posted as a new message; a permanent failure (no such channel, no
permission) is logged and skipped so the room's later posts still go out.

Exactly once where the platform allows it: every post carries an idempotency
key (`tribunal:<outbox id>`, in Slack message metadata, as a Discord nonce).
A post that may have reached the platform before a crash or a failed call
(created before this process started, or tried before) is first looked for
among the room's recent messages (`FindsPosts`); when found it is recorded
as sent instead of being posted again.

An edit that only replaces a progress post ("the arbiter is reviewing…")
with its verdict is not waited for when the platform would send it much
later than a new post (`ReportsPace`): on Slack every edit of the workspace
shares one bucket (`chat.update`, about 50 a minute), while new posts are
paced per channel, so after a burst of verdicts (a start resuming many
arbitrations, many rooms deadlocking at once) the verdict is posted anew
into its thread, below the progress post, which is left as it is.
Only a row that cannot have reached the platform before (see below) is
posted anew this way; one that may have is looked for first and, not found,
edited as usual, so a crash in between never shows a verdict twice.

Several instances on one database: a room's due posts are claimed for this
instance (`Storage.claim_outbox`, a lease of `TRIBUNAL_LEASE_SECONDS`) before
they are sent, so two processes never send the same row; recording a send
attempt releases the row's claim. The lease is renewed while the room's posts
go out (waiting for the platform's pace can outlast it), so it runs out only
when the instance died or stalled; a post taken over from another instance's
claim may have reached the platform before that instance could record it, so
it is looked for before it is posted, as after a crash.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from datetime import timedelta

from bot import faults, telemetry
from bot.clock import Clock
from bot.instances import MAX_BEAT_SECONDS
from bot.models import OutgoingMessage, RoomKey
from bot.ports import FindsPosts, RepliesPrivately, ReportsPace, Transport, TransportError
from storage.base import OutboxRow, Storage

log = logging.getLogger(__name__)

BASE_BACKOFF = 1.0  # seconds; doubles on every failure
MAX_BACKOFF = 300.0
GIVE_UP_AFTER = timedelta(days=1)  # transient failures are retried this long
# How far before a row's creation the lookup starts: platform clocks and ours
# may disagree by a little.
LOOKUP_MARGIN = timedelta(minutes=2)
# An edit of a progress post that would go out this many seconds later than a
# new post is not waited for: the verdict is posted anew (`ReportsPace`).
EDIT_PATIENCE = 5.0


class Outbox:
    def __init__(
        self,
        storage: Storage,
        transports: dict[str, Transport],
        clock: Clock,
        *,
        instance_id: str,
        lease_seconds: float,
    ) -> None:
        self.storage = storage
        self.instance_id = instance_id
        self.lease = timedelta(seconds=lease_seconds)
        self.renew_every = min(MAX_BEAT_SECONDS, lease_seconds / 3)
        self.transports = transports
        self.clock = clock
        # Rows created before this moment may have been posted by a process
        # that died before recording it.
        self.started_at = clock.now()
        self._dirty: set[str] = set()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def note(self, room_id: str) -> None:
        """Something was enqueued for this room; the next `flush(room_id)` looks."""
        self._dirty.add(room_id)

    async def flush(self, room_id: str | None = None) -> None:
        """Send what is due (for one room, or for every room with pending posts)."""
        if room_id is not None:
            if room_id not in self._dirty:
                return  # nothing enqueued here since the last flush: skip the query
            self._dirty.discard(room_id)
            rooms = [room_id]
        else:
            # Rooms of a platform with no transport (adapter not running) wait,
            # and do not hold up the others.
            rooms = await self.storage.pending_rooms(sorted(self.transports))
        rooms = [r for r in rooms if RoomKey.parse(r).platform in self.transports]
        await asyncio.gather(*(self._flush_room(r) for r in rooms))

    async def _flush_room(self, room_id: str) -> None:
        lock = self._locks.get(room_id)
        if lock is None:
            lock = self._locks[room_id] = asyncio.Lock()
        async with lock:
            now = self.clock.now()
            # Due posts only, up to the first backing off (later posts keep
            # their order behind it) or held by another instance.
            claimed = await self.storage.claim_outbox(
                room_id, self.instance_id, now, now + self.lease
            )
            if not claimed:
                return
            renewing = asyncio.create_task(self._renew(room_id))
            try:
                for row in claimed:
                    if not await self._send(row):
                        break
            finally:
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)

    async def _renew(self, room_id: str) -> None:
        """Keep this instance's claims on the room's posts while they go out."""
        while True:
            await asyncio.sleep(self.renew_every)
            try:
                async with self.storage.transaction() as tx:
                    await tx.renew_outbox(room_id, self.instance_id,
                                          self.clock.now() + self.lease)
            except Exception as exc:
                log.warning("outbox claims of room %s not renewed (%s); trying again",
                            room_id, exc)

    async def _send(self, row: OutboxRow) -> bool:
        """Try one post; True when the room may go on to its next post."""
        room = RoomKey.parse(row.room_id)
        transport = self.transports[room.platform]
        message = OutgoingMessage.model_validate(row.payload).model_copy(
            update={"idempotency_key": f"tribunal:{row.id}"}
        )
        try:
            if row.kind == "private":
                # Ephemeral messages cannot be looked up, so a crash between
                # the platform call and the record below shows one again
                # (Slack keeps no trace of them; a Discord click's refusal is
                # a new follow-up). A Discord command's reply does not repeat:
                # it replaces the interaction's original response.
                faults.hit("before_post")
                await self._post_private(transport, room, row, message.text)
                faults.hit("after_post_before_record")
                platform_id = None
            else:
                original = (None if row.edit_of is None
                            else await self.storage.get_outbox(row.edit_of))
                platform_id = await self._already_posted(transport, room, row, message,
                                                         original)
                if platform_id is None:
                    faults.hit("before_post")
                    platform_id = await self._post_or_edit(transport, room, row, message,
                                                           original)
                    faults.hit("after_post_before_record")
        except TransportError as exc:
            return await self._failed(row, str(exc), permanent=exc.permanent)
        except Exception as exc:  # an adapter bug must not lose the post nor crash the bot
            log.exception("outbox %s for room %s: unexpected transport error", row.id, row.room_id)
            return await self._failed(row, repr(exc)[:500], permanent=False)
        async with self.storage.transaction() as tx:
            await tx.mark_outbox(
                row.id, "sent", platform_message_id=platform_id, at=self.clock.now()
            )
        faults.hit("after_record")
        return True

    @staticmethod
    async def _post_private(transport: Transport, room: RoomKey, row: OutboxRow,
                            text: str) -> None:
        route = row.payload.get("route")
        user_id = str(row.payload["user_id"])
        if isinstance(route, dict) and route and isinstance(transport, RepliesPrivately):
            await transport.post_reply(room, user_id, text, route)
        else:
            await transport.post_private(room, user_id, text)

    def _maybe_sent_before(self, row: OutboxRow) -> bool:
        """Whether an earlier attempt at this row may have reached the platform:
        a row from before this start, one tried before, or one taken over from
        another instance."""
        return not (row.attempts == 0 and row.created_at >= self.started_at
                    and row.taken_from is None)

    @staticmethod
    def _may_post_anew(transport: Transport, room: RoomKey, original: OutboxRow | None) -> bool:
        """Whether this edit may go out as a new post when edits are busy: the
        edit of a progress post, through a transport that reports its pace."""
        return (original is not None and original.kind == "progress"
                and isinstance(transport, ReportsPace)
                and transport.expected_wait("edit", room) is not None)

    async def _already_posted(
        self, transport: Transport, room: RoomKey, row: OutboxRow, message: OutgoingMessage,
        original: OutboxRow | None,
    ) -> str | None:
        """Our post of this row, if an earlier attempt reached the platform.

        Asked only when that can be (`_maybe_sent_before`), and of new posts
        and of the edits that may have been posted anew: an edit says the same
        thing however often it is made.
        """
        if not isinstance(transport, FindsPosts) or not self._maybe_sent_before(row):
            return None
        if row.edit_of is not None and not self._may_post_anew(transport, room, original):
            return None
        found = await transport.find_post(room, message, row.created_at - LOOKUP_MARGIN)
        if found is not None:
            log.info("outbox %s (%s) for room %s was posted before (%s); not posting again",
                     row.id, row.kind, row.room_id, found)
            telemetry.outbox_found_posted(row.kind)
        return found

    async def _failed(self, row: OutboxRow, error: str, *, permanent: bool) -> bool:
        now = self.clock.now()
        expired = now - row.created_at > GIVE_UP_AFTER
        if permanent or expired:
            # Dropping a post is loud: a lost verdict leaves humans without options.
            level = logging.ERROR if row.kind in ("verdict", "decided") else logging.WARNING
            log.log(
                level,
                "outbox %s (%s) for room %s dropped%s: %s",
                row.id,
                row.kind,
                row.room_id,
                "" if permanent else " after retrying for a day",
                error,
            )
            async with self.storage.transaction() as tx:
                await tx.mark_outbox(row.id, "failed", error=error)
            telemetry.outbox_dropped(row.kind)
            return True  # a dropped post must not block the ones after it
        delay = min(MAX_BACKOFF, BASE_BACKOFF * 2 ** min(row.attempts, 16))
        log.warning(
            "outbox %s (%s) for room %s failed, retry in %.0f s: %s",
            row.id,
            row.kind,
            row.room_id,
            delay,
            error,
        )
        async with self.storage.transaction() as tx:
            await tx.mark_outbox(
                row.id, "pending", error=error, next_attempt_at=now + timedelta(seconds=delay)
            )
        telemetry.outbox_retry(row.kind)
        return False

    def _post_instead(self, transport: Transport, room: RoomKey, row: OutboxRow,
                      original: OutboxRow) -> bool:
        """Whether this edit of a progress post goes out as a new post: it would
        reach the room more than EDIT_PATIENCE seconds after a new post would,
        and no earlier attempt at it can have reached the platform (an edit
        made then and a new post now would show the verdict twice)."""
        if (not isinstance(transport, ReportsPace) or original.kind != "progress"
                or self._maybe_sent_before(row)):
            return False
        edit = transport.expected_wait("edit", room)
        post = transport.expected_wait("post", room)
        if edit is None or post is None or edit - post <= EDIT_PATIENCE:
            return False
        log.info("outbox %s (%s) for room %s: edits are busy (%.0f s to wait, a new post"
                 " %.0f s); posted below the progress post instead", row.id, row.kind,
                 row.room_id, edit, post)
        return True

    async def _post_or_edit(
        self, transport: Transport, room: RoomKey, row: OutboxRow, message: OutgoingMessage,
        original: OutboxRow | None,
    ) -> str:
        if row.edit_of is not None:
            if original is not None and original.platform_message_id:
                if self._post_instead(transport, room, row, original):
                    return await transport.post(room, message)
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

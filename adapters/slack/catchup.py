"""Catch-up for Slack: what the watched channels said while the bot was away.

Run in the background after every start of the adapter (and after Socket
Mode comes back from a drop), so the bot answers live events at once. For
each watched channel, `conversations.history` from its latest stored message
finds the threads started since; then `conversations.replies` reads those
threads and the rooms with an open task, most recently active first, from
each room's latest stored message. Every call goes through the transport's
pacer at the method's tier (Tier 3), so a long outage does not turn into a
429 storm. The core stores what is new (deduplicated by room and message
id) and applies it in ts order, before the room's live messages.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from adapters.slack import translate
from adapters.slack.transport import SlackTransport
from bot.models import IncomingMessage, RoomKey
from bot.ports import Core, TransportError

log = logging.getLogger("tribunal.slack")

PAGE = 200  # messages a call (Slack's recommended page size is at most 200)
MAX_PAGES = 50  # per channel or thread: an outage longer than this is cut, and logged


class SlackCatchUp:
    def __init__(self, core: Core, transport: SlackTransport,
                 identity: translate.Identity) -> None:
        self.core = core
        self.transport = transport
        self.identity = identity

    async def run(self) -> int:
        """Catch every watched channel up; returns how many messages were new."""
        plan = await self.core.catch_up_plan(translate.PLATFORM)
        # room id -> (room, latest activity ts for the order, replies from)
        targets: dict[str, tuple[RoomKey, float, str | None]] = {}
        for channel, mark in plan.channels.items():
            _, oldest = translate.split_message_id(mark.last_message_id, channel)
            async for parent in self._pages("conversations.history", RoomKey(
                    translate.PLATFORM, channel, None), {"oldest": oldest}):
                ts = str(parent.get("ts") or "")
                if not ts:
                    continue
                room = RoomKey(translate.PLATFORM, channel, ts)
                activity = float(parent.get("latest_reply") or ts)
                targets[room.id] = (room, activity, None)  # a new thread: all of it
        for mark in plan.rooms:
            if mark.room.id not in targets and mark.room.thread:
                _, oldest = translate.split_message_id(mark.last_message_id, mark.room.channel)
                targets[mark.room.id] = (mark.room, mark.last_ts.timestamp(), oldest)
        new = 0
        for room, _, since in sorted(targets.values(), key=lambda t: t[1], reverse=True):

            async def fetch(room: RoomKey = room, oldest: str | None = since
                            ) -> list[IncomingMessage]:
                return await self._replies(room, oldest)

            try:
                new += await self.core.catch_up(room, fetch)
            except TransportError as exc:
                log.warning("slack catch-up of %s failed: %s; next start tries again",
                            room.id, exc)
        log.info("slack catch-up done: %d room(s) read, %d missed message(s)",
                 len(targets), new)
        return new

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
            response = await self.transport.read(method, room, kwargs)
            for item in response.get("messages") or []:
                if isinstance(item, dict):
                    yield item
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return
        log.warning("slack catch-up: %s of %s cut after %d pages", method, room.id, MAX_PAGES)

"""Catching up after downtime: what the rooms missed while the bot was away.

Adapters fetch (they know the platform's history calls and rate tiers); the
core says where each channel's and room's stored history ends (`plan`) and
takes a room's missed messages (`room`): stored like live ones (deduplicated
by room and platform message id), then applied in the platform's order. The
room is held for the whole of its catch-up, fetch included, so its live
messages that arrive meanwhile are stored at once and applied after it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from bot import telemetry
from bot.channels import ChannelDirectory
from bot.ingest import store_incoming
from bot.models import IncomingMessage, RoomKey
from storage.base import Storage

if TYPE_CHECKING:  # the outbox sees the platforms' ports, which see this module's types
    from bot.outbox import Outbox

log = logging.getLogger(__name__)

Fetch = Callable[[], Awaitable[list[IncomingMessage]]]


@dataclass(frozen=True, slots=True)
class RoomMark:
    room: RoomKey
    last_message_id: str  # the platform id of the room's latest stored message
    last_ts: datetime


@dataclass(slots=True)
class CatchUpPlan:
    """Where to look. `channels`: each watched channel's latest stored message
    (new threads since then are missed rooms); `rooms`: rooms with an open
    task, most recently active first (their replies since then)."""

    channels: dict[str, RoomMark] = field(default_factory=dict)
    rooms: list[RoomMark] = field(default_factory=list)

    def to_json(self) -> str:
        """The plan as JSON text (a catch-up's lease records it: `bot.catchup_leases`)."""
        return json.dumps({
            "channels": {channel: _mark_out(mark) for channel, mark in self.channels.items()},
            "rooms": [_mark_out(mark) for mark in self.rooms],
        }, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CatchUpPlan:
        data = json.loads(text)
        return cls(channels={str(channel): _mark_in(mark)
                             for channel, mark in data.get("channels", {}).items()},
                   rooms=[_mark_in(mark) for mark in data.get("rooms", [])])

    def merged(self, other: CatchUpPlan) -> CatchUpPlan:
        """Both plans in one, the earlier mark of each channel and room winning:
        where an earlier catch-up that did not finish was to read from comes
        before what it (or live messages) stored since. Rooms stay most
        recently active first."""
        channels = dict(self.channels)
        for channel, mark in other.channels.items():
            mine = channels.get(channel)
            if mine is None or _order(mark) < _order(mine):
                channels[channel] = mark
        rooms: dict[str, RoomMark] = {}
        activity: dict[str, tuple[datetime, str]] = {}
        for mark in [*self.rooms, *other.rooms]:
            known = rooms.get(mark.room.id)
            if known is None or _order(mark) < _order(known):
                rooms[mark.room.id] = mark
            activity[mark.room.id] = max(activity.get(mark.room.id, _order(mark)), _order(mark))
        ordered = sorted(rooms, key=lambda room_id: activity[room_id], reverse=True)
        return CatchUpPlan(channels, [rooms[room_id] for room_id in ordered])

    def part(self, keep: Callable[[str], bool]) -> CatchUpPlan:
        """The marks of the channels `keep` says yes to."""
        return CatchUpPlan({c: m for c, m in self.channels.items() if keep(c)},
                           [m for m in self.rooms if keep(m.room.channel)])


def _order(mark: RoomMark) -> tuple[datetime, str]:
    return mark.last_ts, mark.last_message_id


def _mark_out(mark: RoomMark) -> list[str]:
    return [mark.room.id, mark.last_message_id, mark.last_ts.isoformat()]


def _mark_in(raw: list[str]) -> RoomMark:
    room_id, message_id, ts = raw
    return RoomMark(RoomKey.parse(room_id), message_id, datetime.fromisoformat(ts))


async def plan(storage: Storage, channels: ChannelDirectory, platform: str) -> CatchUpPlan:
    out = CatchUpPlan()
    for mark in await storage.catch_up_marks(platform):
        room = RoomKey.parse(mark.room_id)
        channel = await channels.get(room.platform, room.channel)
        if not channel.watched or channel.paused:
            continue
        here = RoomMark(room, mark.last_message_id, mark.last_ts)
        latest = out.channels.get(room.channel)
        if latest is None or (here.last_ts, here.last_message_id) > (
            latest.last_ts, latest.last_message_id
        ):
            out.channels[room.channel] = here
        if mark.open_task:
            out.rooms.append(here)
    return out


async def catch_up_room(
    room: RoomKey, fetch: Fetch, *, storage: Storage, channels: ChannelDirectory,
    outbox: Outbox, catching_up: set[str], apply_stored: Callable[[RoomKey], Awaitable[None]],
) -> int:
    """Store and apply what `fetch` finds for the room; returns how many were new.

    While the room catches up (its id in `catching_up`), its live messages are
    stored but not applied (`Engine.receive` looks); afterwards
    `apply_stored` applies everything unapplied in the platform's order,
    missed and live together.
    """
    catching_up.add(room.id)
    new = 0
    try:
        found = await fetch()
        for message in found:
            if message.is_self or message.room != room:
                continue
            if await store_incoming(storage, channels, message) is not None:
                new += 1
    finally:
        catching_up.discard(room.id)
    await apply_stored(room)
    if new:
        log.info("catch-up: %d missed message(s) in %s", new, room.label)
        telemetry.caught_up(room.platform, new)
    await outbox.flush(room.id)
    return new

"""Storing an incoming message: the first thing that happens to it.

The platform is told we have a message only after this; applying it to its
room comes later, from storage (`bot.transitions`, driven by the engine), so
a crash in between loses nothing; or, when the room is free, in the same
transaction (`Engine.on_message`). Storing never waits for a room's lock: a
room busy with a minutes-long arbitration never delays an acknowledgement.
"""

from __future__ import annotations

from bot import telemetry
from bot.channels import ChannelDirectory, ChannelInfo
from bot.models import IncomingMessage, Role, RoomKey
from storage.base import MessageRow, Storage

MAX_TEXT = 40_000  # longer messages are stored cut, with a marker


def clip(text: str) -> str:
    """Oversized messages are kept, cut, with a visible marker."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n[…truncated]"


def role_of(channel: ChannelInfo, message: IncomingMessage) -> Role:
    """The role a message is stored with: its hint, else the channel's bindings;
    a bot bound to no role is `other`."""
    role = message.role_hint or channel.role_of([message.author_id, *message.author_alt_ids])
    return Role.OTHER if role is Role.USER and message.is_bot else role


async def incoming_row(channels: ChannelDirectory, message: IncomingMessage) -> MessageRow | None:
    """The message as it is stored (unapplied), or None when it is not ours
    (unwatched or paused channel, unbound bot, the arbiter)."""
    room = message.room
    channel = await channels.get(room.platform, room.channel)
    role = role_of(channel, message)
    if not channel.watched or channel.paused or role in (Role.OTHER, Role.ARBITER):
        return None  # unwatched channels and unbound bots are never stored
    return MessageRow(
        platform=room.platform,
        message_id=message.message_id,
        room_id=room.id,
        author=message.author_id,
        role=role.value,
        text=clip(message.text),
        ts=message.ts,
        processed=False,
    )


async def store_row(storage: Storage, row: MessageRow) -> int | None:
    """Store an incoming row unprocessed; its seq, or None for a redelivery."""
    async with storage.transaction() as tx:
        seq = await tx.insert_message(row)
    if seq is None:
        telemetry.redelivered(RoomKey.parse(row.room_id), row.message_id)
    return seq


async def store_incoming(
    storage: Storage, channels: ChannelDirectory, message: IncomingMessage
) -> int | None:
    """Store a message unprocessed; its seq.

    None when it is not ours (unwatched or paused channel, unbound bot, the
    arbiter) or is a redelivery of a stored message.
    """
    row = await incoming_row(channels, message)
    return None if row is None else await store_row(storage, row)

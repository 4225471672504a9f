"""Storing an incoming message: the first thing that happens to it.

The platform is told we have a message only after this; applying it to its
room comes later, from storage (`bot.transitions`, driven by the engine), so
a crash in between loses nothing. Storing takes no room lock: a room busy
with a minutes-long arbitration never delays an acknowledgement.
"""

from __future__ import annotations

from bot import telemetry
from bot.channels import ChannelDirectory, ChannelInfo
from bot.models import IncomingMessage, Role
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


async def store_incoming(
    storage: Storage, channels: ChannelDirectory, message: IncomingMessage
) -> int | None:
    """Store a message unprocessed; its seq.

    None when it is not ours (unwatched or paused channel, unbound bot, the
    arbiter) or is a redelivery of a stored message.
    """
    room = message.room
    channel = await channels.get(room.platform, room.channel)
    role = role_of(channel, message)
    if not channel.watched or channel.paused or role in (Role.OTHER, Role.ARBITER):
        return None  # unwatched channels and unbound bots are never stored
    row = MessageRow(
        platform=room.platform,
        message_id=message.message_id,
        room_id=room.id,
        author=message.author_id,
        role=role.value,
        text=clip(message.text),
        ts=message.ts,
        processed=False,
    )
    async with storage.transaction() as tx:
        seq = await tx.insert_message(row)
    if seq is None:
        telemetry.redelivered(room, message.message_id)
    return seq

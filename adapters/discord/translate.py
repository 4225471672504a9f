"""Pure translation of discord.py objects into core types (no I/O).

Rooms: a thread is `(discord, parent_id, thread_id)`; a plain channel is
`(discord, channel_id, None)`. Whether a room is watched is the core's call,
so nothing here filters on bindings; it only drops what can never matter
(our own posts, system messages, DMs).
"""

from __future__ import annotations

from datetime import UTC

import discord

from bot.models import ButtonClick, CommandRequest, IncomingMessage, Platform

PLATFORM = Platform.DISCORD.value

# Message types an agent or human can author; joins, pins, thread starters are not chat.
_CHAT_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})

_THREAD_TYPES = frozenset(
    {
        discord.ChannelType.public_thread,
        discord.ChannelType.private_thread,
        discord.ChannelType.news_thread,
    }
)


def is_thread(channel: object) -> bool:
    if isinstance(channel, discord.Thread):
        return True
    return getattr(channel, "type", None) in _THREAD_TYPES


def room_of(channel: object, parent_id: int | None = None) -> tuple[str, str | None] | None:
    """(channel, thread) of a room, or None if a thread's parent is unknown.

    `parent_id` comes from the adapter's cache or a REST lookup when the
    gateway did not give us the thread (e.g. a thread the cache never saw).
    """
    channel_id = getattr(channel, "id", None)
    if channel_id is None:
        return None
    if is_thread(channel):
        parent = getattr(channel, "parent_id", None) or parent_id
        if parent is None:
            return None
        return str(parent), str(channel_id)
    if getattr(channel, "type", None) is None and parent_id is not None:
        # PartialMessageable of a thread resolved through the cache.
        return str(parent_id), str(channel_id)
    return str(channel_id), None


def message_text(message: discord.Message) -> str:
    """The text the core sees: content plus a line per attachment (agents attach logs)."""
    lines = [message.content] if message.content else []
    lines.extend(f"[attachment: {a.filename}] {a.url}" for a in message.attachments)
    return "\n".join(lines)


def to_incoming(
    message: discord.Message,
    *,
    self_id: int | None,
    room: tuple[str, str | None],
) -> IncomingMessage | None:
    """An IncomingMessage, or None for messages the core must never see."""
    if message.guild is None:
        return None  # DMs are not rooms
    if self_id is not None and message.author.id == self_id:
        return None  # our own posts (progress, verdicts, confirmations)
    if message.type not in _CHAT_TYPES:
        return None
    text = message_text(message)
    if not text.strip():
        return None
    alt_ids = [str(message.webhook_id)] if message.webhook_id else []
    channel, thread = room
    created = message.created_at
    return IncomingMessage(
        platform=PLATFORM,
        channel=channel,
        thread=thread,
        message_id=str(message.id),
        author_id=str(message.author.id),
        author_name=message.author.display_name,
        author_alt_ids=alt_ids,
        text=text,
        ts=created if created.tzinfo else created.replace(tzinfo=UTC),
        is_bot=message.author.bot,
        is_self=False,
    )


def is_platform_admin(permissions: discord.Permissions | None) -> bool:
    """Manage Server or Manage Channels, from the interaction's resolved perms."""
    if permissions is None:
        return False
    return bool(
        permissions.administrator or permissions.manage_guild or permissions.manage_channels
    )


def to_click(
    interaction: discord.Interaction,
    *,
    escalation_id: int,
    option: int,
    room: tuple[str, str | None],
) -> ButtonClick:
    channel, thread = room
    return ButtonClick(
        platform=PLATFORM,
        channel=channel,
        thread=thread,
        escalation_id=escalation_id,
        option=option,
        user_id=str(interaction.user.id),
        is_platform_admin=is_platform_admin(interaction.permissions),
    )


def to_command(
    interaction: discord.Interaction, *, text: str, room: tuple[str, str | None]
) -> CommandRequest:
    channel, thread = room
    return CommandRequest(
        platform=PLATFORM,
        channel=channel,
        thread=thread,
        user_id=str(interaction.user.id),
        text=text,
        is_platform_admin=is_platform_admin(interaction.permissions),
    )


def command_text(name: str, *args: object) -> str:
    """`/arbiter threshold 3` -> "threshold 3": the same text a Slack user types."""
    return " ".join([name, *(str(a) for a in args if a is not None and a != "")]).strip()


def interaction_delivery_key(interaction: discord.Interaction) -> str:
    """One interaction (a command, a click): Discord's id for it, never reused."""
    return f"interaction:{interaction.id}"

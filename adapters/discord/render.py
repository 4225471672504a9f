"""Render an OutgoingMessage for Discord: chunks, allowed mentions, buttons (no I/O).

`text` is untrusted (model and room text), so pings are controlled with
`AllowedMentions`: never @everyone/@here or roles, users only from
`mention_user_ids`. Discord enforces that server-side whatever the text says.
"""

from __future__ import annotations

from dataclasses import dataclass

import discord

from adapters.discord.components import MAX_BUTTONS, EscalationButton, button_label
from bot import markup
from bot.chunking import split_text
from bot.models import OutgoingMessage, RoomKey

MESSAGE_LIMIT = 2000


@dataclass
class Rendered:
    """What to send: one or more chunks; the view goes on the last chunk."""

    chunks: list[str]
    allowed_mentions: discord.AllowedMentions
    view: discord.ui.View | None


def allowed_mentions(message: OutgoingMessage) -> discord.AllowedMentions:
    users = [discord.Object(id=int(uid)) for uid in message.mention_user_ids if uid.isdigit()]
    return discord.AllowedMentions(
        everyone=False, roles=False, users=users or False, replied_user=False
    )


def no_mentions() -> discord.AllowedMentions:
    return discord.AllowedMentions.none()


def core_text(text: str) -> str:
    """The core's mention, time and thread markers (`bot.markup`) as Discord
    markup: `<@id>` shows the member's name (pings stay governed by
    AllowedMentions), `<t:…:f>` a time in each reader's own time zone, `<#id>`
    the thread's (or channel's) name as a link."""
    return markup.render(
        text,
        user=lambda uid: f"<@{uid}>" if uid.isdigit() else uid,
        time=lambda at: f"<t:{int(at.timestamp())}:f>",
        room=thread_link,
    )


def thread_link(room_id: str) -> str:
    """`<#thread>` (or `<#channel>` for a channel's own room): Discord shows its name."""
    try:
        room = RoomKey.parse(room_id)
    except ValueError:
        return markup.room_label(room_id)
    target = room.thread or room.channel
    return f"<#{target}>" if target.isdigit() else markup.room_label(room_id)


def message_text(message: OutgoingMessage) -> str:
    """The text with requested pings in front (if the core did not place them)."""
    text = core_text(message.text)
    missing = [
        f"<@{uid}>"
        for uid in message.mention_user_ids
        if uid.isdigit() and f"<@{uid}>" not in text and f"<@!{uid}>" not in text
    ]
    if missing:
        text = " ".join(missing) + "\n" + text
    return text


def chunks(message: OutgoingMessage, limit: int = MESSAGE_LIMIT) -> list[str]:
    text = message_text(message)
    if message.decided is not None and message.decided_note:
        # The confirmation is posted separately; the note only rides along if it fits.
        parts = split_text(text, limit)
        tail = parts[-1] + "\n\n" + core_text(message.decided_note)
        if len(tail) <= limit:
            parts[-1] = tail
        return parts
    return split_text(text, limit) if text.strip() else ["\u200b"]


def build_view(message: OutgoingMessage) -> discord.ui.View | None:
    """Buttons for an escalation: live while pending, disabled once decided."""
    if message.escalation_id is None or not message.options:
        return None
    view = discord.ui.View(timeout=None)
    decided = message.decided
    for option in message.options[:MAX_BUTTONS]:
        view.add_item(
            EscalationButton(
                message.escalation_id,
                option.n,
                label=button_label(option.n, option.label),
                disabled=decided is not None,
                chosen=decided is not None and decided.n == option.n,
            )
        )
    return view


def render(message: OutgoingMessage, limit: int = MESSAGE_LIMIT) -> Rendered:
    return Rendered(chunks(message, limit), allowed_mentions(message), build_view(message))

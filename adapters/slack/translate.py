"""Slack payloads -> core types (pure functions, no I/O).

Choices (see docs/slack.md):
- a room is a thread: `(slack, channel, thread_ts)`; a top-level message opens
  its own room with `thread = ts`;
- the message id is `"<channel>:<ts>"` everywhere (incoming and our own posts),
  so a Slack retry or a duplicate delivery of the same message has the same id
  and the core stores it once;
- edits (`message_changed`) and deletions (`message_deleted`) are not fed to
  the core: the arbiter judges what was posted when it was posted, and an agent
  that changes its mind posts a new message. Joins, topic changes and other
  housekeeping subtypes are ignored too.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot import buttons
from bot.models import ButtonClick, CommandRequest, IncomingMessage, Platform

PLATFORM = Platform.SLACK.value
# Subtypes that carry a real message; everything else is housekeeping or an edit.
MESSAGE_SUBTYPES = {None, "bot_message", "thread_broadcast", "file_share", "me_message"}
_USER_MENTION = re.compile(r"<@([UWB][A-Z0-9]+)(?:\|[^>]*)?>")


@dataclass(frozen=True)
class Identity:
    """Who we are (from auth.test), to drop our own messages."""

    user_id: str | None
    bot_id: str | None
    team_id: str | None = None

    def is_me(self, event: dict[str, Any]) -> bool:
        user, bot = event.get("user"), event.get("bot_id")
        return bool((user and user == self.user_id) or (bot and bot == self.bot_id))


def message_id(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"


def split_message_id(value: str, channel: str) -> tuple[str, str]:
    """(channel, ts) from our id; a bare ts is accepted for robustness."""
    if ":" in value:
        chan, ts = value.rsplit(":", 1)
        return chan or channel, ts
    return channel, value


def _str(value: Any) -> str | None:
    """A non-empty string field, or None: a signed body can still carry any JSON type."""
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def ts_to_datetime(ts: str | None) -> datetime:
    try:
        return datetime.fromtimestamp(float(ts or ""), UTC)
    except (TypeError, ValueError, OverflowError):
        return datetime.now(UTC)


def unescape(text: str) -> str:
    """Slack sends `&amp; &lt; &gt;`; the core wants the characters."""
    return html.unescape(text) if "&" in text else text


def _blocks_text(blocks: list[Any]) -> str:
    """Text of rich_text/section blocks, for messages that carry no `text`."""

    def walk(node: Any, out: list[str]) -> None:
        if isinstance(node, dict):
            if node.get("type") in ("text", "mrkdwn", "plain_text") and isinstance(
                node.get("text"), str
            ):
                out.append(node["text"])
                return
            for value in node.values():
                walk(value, out)
        elif isinstance(node, list):
            for item in node:
                walk(item, out)

    lines = []
    for block in blocks:
        parts: list[str] = []
        walk(block, parts)
        if parts:
            lines.append("".join(parts))
    return "\n".join(lines)


def message_text(event: dict[str, Any]) -> str:
    text = event.get("text")
    if not isinstance(text, str) or not text.strip():
        blocks = event.get("blocks")
        text = _blocks_text(blocks if isinstance(blocks, list) else [])
    if not text.strip():
        attachments = event.get("attachments")
        text = "\n".join(
            _str(a.get("fallback")) or _str(a.get("text")) or ""
            for a in (attachments if isinstance(attachments, list) else [])
            if isinstance(a, dict)
        )
    return unescape(text)


def _author_name(event: dict[str, Any]) -> str | None:
    profile = _dict(event.get("user_profile"))
    bot_profile = _dict(event.get("bot_profile"))
    return (_str(profile.get("display_name")) or _str(profile.get("real_name"))
            or _str(bot_profile.get("name")) or _str(event.get("username")))


def incoming_message(event: dict[str, Any], me: Identity) -> IncomingMessage | None:
    """A `message` event as the core sees it, or None when it is not for the core.

    Fields of the wrong JSON type make it None (or are left out), never an
    exception: the body was signed by Slack, not necessarily well formed.
    """
    if not isinstance(event, dict) or event.get("type") != "message":
        return None
    subtype = event.get("subtype")
    if not (subtype is None or isinstance(subtype, str)) or subtype not in MESSAGE_SUBTYPES:
        return None
    if event.get("hidden") or me.is_me(event):
        return None
    channel, ts = _str(event.get("channel")), _str(event.get("ts"))
    user, bot_id = _str(event.get("user")), _str(event.get("bot_id"))
    author = user or bot_id
    if not (channel and ts and author):
        return None
    alt_ids = [i for i in (bot_id, _str(event.get("app_id"))) if i and i != author]
    is_bot = bool(bot_id) or subtype == "bot_message" or "bot_profile" in event
    return IncomingMessage(
        platform=PLATFORM,
        channel=channel,
        thread=_str(event.get("thread_ts")) or ts,
        message_id=message_id(channel, ts),
        author_id=author,
        author_name=_author_name(event),
        author_alt_ids=alt_ids,
        text=message_text(event),
        ts=ts_to_datetime(ts),
        is_bot=is_bot,
    )


def unusable_fields(event: Any) -> list[str]:
    """Why a `message` event that carries a real message cannot become one, if it cannot:
    the fields that are missing or of the wrong JSON type (for a log line)."""
    if not isinstance(event, dict):
        return []
    subtype = event.get("subtype")
    if not (subtype is None or isinstance(subtype, str)):
        return ["subtype"]
    if subtype not in MESSAGE_SUBTYPES:
        return []
    missing = [name for name in ("channel", "ts") if _str(event.get(name)) is None]
    if _str(event.get("user")) is None and _str(event.get("bot_id")) is None:
        missing.append("user/bot_id")
    return missing


def button_click(body: dict[str, Any], action: dict[str, Any], *,
                 is_platform_admin: bool) -> ButtonClick | None:
    """A `block_actions` click on one of our escalation buttons, or None."""
    action = _dict(action)
    decoded = buttons.decode(_str(action.get("value")) or _str(action.get("action_id")) or "")
    if decoded is None:
        return None
    message, container = _dict(body.get("message")), _dict(body.get("container"))
    channel = _str(_dict(body.get("channel")).get("id")) or _str(container.get("channel_id"))
    thread = (_str(message.get("thread_ts")) or _str(container.get("thread_ts"))
              or _str(message.get("ts")) or _str(container.get("message_ts")))
    user = _str(_dict(body.get("user")).get("id"))
    if not channel or not user:
        return None
    return ButtonClick(platform=PLATFORM, channel=channel, thread=thread,
                       escalation_id=decoded[0], option=decoded[1], user_id=user,
                       is_platform_admin=is_platform_admin)


def action_delivery_key(body: dict[str, Any], action: dict[str, Any]) -> str:
    """What tells one click from a redelivery of it: Slack's trigger id, unique per
    interaction (else the action's timestamp and the clicker)."""
    trigger = _str(body.get("trigger_id"))
    if trigger:
        return f"trigger:{trigger}"
    action = _dict(action)
    user = _str(_dict(body.get("user")).get("id")) or ""
    return f"action:{_str(action.get('action_ts')) or ''}:{user}:{_str(action.get('value')) or ''}"


def command_text(text: str) -> str:
    """`<@U123|name>` -> `U123` so role bindings get plain ids; entities unescaped."""
    return unescape(_USER_MENTION.sub(r"\1", text or "")).strip()


def command_request(body: dict[str, Any], *, is_platform_admin: bool) -> CommandRequest:
    return CommandRequest(platform=PLATFORM, channel=_str(body.get("channel_id")) or "",
                          thread=_str(body.get("thread_ts")),
                          user_id=_str(body.get("user_id")) or "",
                          text=command_text(_str(body.get("text")) or ""),
                          is_platform_admin=is_platform_admin)


def command_delivery_key(body: dict[str, Any]) -> str | None:
    """What tells one slash command from a redelivery of it (a Socket Mode
    envelope sent again): Slack's trigger id, unique per invocation."""
    trigger = _str(body.get("trigger_id"))
    return f"command:{trigger}" if trigger else None


def response_url(body: dict[str, Any]) -> str | None:
    """Where a slash command's reply goes (30 minutes, five uses)."""
    return _str(body.get("response_url"))


def user_id(body: dict[str, Any]) -> str:
    """Who clicked (`user.id` of an interaction), or "" when the body does not say."""
    return _str(_dict(body.get("user")).get("id")) or ""


def delivery_key(body: dict[str, Any]) -> str | None:
    """The Events API's id of one delivery (the same on Slack's retries)."""
    return _str(body.get("event_id"))


def is_admin_user(user: Any) -> bool:
    """Workspace admins and owners (users.info) count as platform admins."""
    user = _dict(user)
    return bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))

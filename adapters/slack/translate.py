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
  housekeeping subtypes are ignored too;
- slash commands cannot be used in threads, so `/arbiter` takes a thread link
  (`https://<team>.slack.com/archives/C…/p…`) and the bot also takes commands
  from a message shortcut and an in-thread mention (`@tribunal status`); a
  message that is such a mention is a command, not room talk.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from bot import buttons
from bot.commands import HELP, NAMES
from bot.models import ButtonClick, CommandRequest, IncomingMessage, Platform, RoomKey

PLATFORM = Platform.SLACK.value
# Subtypes that carry a real message; everything else is housekeeping or an edit.
MESSAGE_SUBTYPES = {None, "bot_message", "thread_broadcast", "file_share", "me_message"}
_USER_MENTION = re.compile(r"<@([UWB][A-Z0-9]+)(?:\|[^>]*)?>")
# A message's permalink, as "Copy link" gives it (a reply's carries its
# thread in `thread_ts`), bare or in Slack's `<url>` / `<url|label>` markup.
_THREAD_LINK = re.compile(
    r"<?https?://[^\s<>|/]+/archives/(?P<channel>[CGD][A-Z0-9]+)/p(?P<ts>\d{16})"
    r"(?:\?(?P<query>[^\s<>|]*))?(?:\|[^>]*)?>?")
_TS = re.compile(r"^\d{10}\.\d{6}$")
_CHANNEL = re.compile(r"^[CGD][A-Z0-9]+$")
_WORKSPACE = re.compile(r"^https?://[^\s<>|]+$")
SHORTCUT = "tribunal_arbitrate"  # the message shortcut "Arbitrate this thread"


@dataclass(frozen=True)
class Identity:
    """Who we are (from auth.test), to drop our own messages."""

    user_id: str | None
    bot_id: str | None
    team_id: str | None = None
    url: str | None = None  # the workspace's (`https://<team>.slack.com/`), for links

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
    if mention_command(event, me) is not None:
        return None  # `@tribunal status`: a command for the bot, answered as one
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


@dataclass(frozen=True)
class ThreadLink:
    channel: str
    thread: str
    rest: str  # the command's text without the link


def ts_of(digits: str) -> str:
    """A permalink's `p1700000000000100` digits -> the ts `1700000000.000100`."""
    return f"{digits[:10]}.{digits[10:]}"


def thread_link(text: str) -> ThreadLink | None:
    """The first Slack message link in `text`: its channel and thread (a reply's
    `thread_ts`, else the message itself, which opens its own thread)."""
    match = _THREAD_LINK.search(text)
    if match is None:
        return None
    thread = ts_of(match.group("ts"))
    given = parse_qs(match.group("query") or "").get("thread_ts", [])
    if given and _TS.match(given[0]):
        thread = given[0]
    rest = " ".join((text[: match.start()] + " " + text[match.end():]).split())
    return ThreadLink(match.group("channel"), thread, rest)


def permalink(workspace: str | None, room_id: str) -> str:
    """A link to the room's thread (Slack markup), or to its channel when the
    workspace's address is unknown."""
    try:
        room = RoomKey.parse(room_id)
    except ValueError:
        return "?"
    if not _CHANNEL.match(room.channel):
        return "?"  # not a Slack channel id: nothing to link (and nothing to inject)
    if workspace and _WORKSPACE.match(workspace) and room.thread and _TS.match(room.thread):
        return f"<{workspace.rstrip('/')}/archives/{room.channel}/p{room.thread.replace('.', '')}>"
    return f"<#{room.channel}>"


def _request(channel: str, thread: str | None, user: str, raw: str) -> CommandRequest:
    """`/arbiter`'s words, said anywhere: a thread link among them names the
    thread (and, if it is in another channel, where it was typed)."""
    text = command_text(raw)
    typed_in = None
    link = thread_link(text)
    if link is not None:
        text = link.rest
        typed_in = channel if link.channel != channel else None
        channel, thread = link.channel, link.thread
    return CommandRequest(platform=PLATFORM, channel=channel, thread=thread, user_id=user,
                          text=text, typed_in=typed_in)


def command_request(body: dict[str, Any], *, is_platform_admin: bool) -> CommandRequest:
    """A slash command (typed in a channel: Slack has them nowhere else)."""
    request = _request(_str(body.get("channel_id")) or "", _str(body.get("thread_ts")),
                       _str(body.get("user_id")) or "", _str(body.get("text")) or "")
    request.is_platform_admin = is_platform_admin
    return request


def mention_command(event: dict[str, Any], me: Identity) -> str | None:
    """What follows the bot's mention when a message starts with it and goes on
    with a subcommand (or nothing: help); else None. `@tribunal 2` or
    `@tribunal, what now?` stay room talk."""
    if not me.user_id:
        return None
    text = event.get("text")
    if not isinstance(text, str):
        return None
    match = re.match(rf"\s*<@{re.escape(me.user_id)}(?:\|[^>]*)?>[\s:,]*", text)
    if match is None:
        return None
    rest = text[match.end():].strip()
    first = rest.split(maxsplit=1)[0].lower().replace("_", "-") if rest else ""
    return rest if not first or first in NAMES or first in HELP else None


def mention_request(event: dict[str, Any], me: Identity) -> CommandRequest | None:
    """`@tribunal status` in a thread: a command about that thread (at the top
    of a channel: about the channel, as a slash command would be)."""
    command = mention_command(event, me)
    channel, ts, user = _str(event.get("channel")), _str(event.get("ts")), _str(event.get("user"))
    if command is None or not (channel and ts and user):
        return None
    thread = _str(event.get("thread_ts"))
    return _request(channel, thread if thread and thread != ts else None, user, command)


def shortcut_request(body: dict[str, Any]) -> CommandRequest | None:
    """The message shortcut "Arbitrate this thread": `summon` on the thread of
    the message it was used on (the message opens one if it is not in one)."""
    message = _dict(body.get("message"))
    channel = _str(_dict(body.get("channel")).get("id"))
    user = user_id(body)
    thread = _str(message.get("thread_ts")) or _str(message.get("ts")) or _str(
        body.get("message_ts"))
    if not (channel and user and thread):
        return None
    return CommandRequest(platform=PLATFORM, channel=channel, thread=thread, user_id=user,
                          text="summon")


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

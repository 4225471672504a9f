"""A platform-neutral way for the core to say "this user" and "this moment".

The core writes `mention(user_id)`, `moment(at)` and `thread(room_id)` into
the text it posts; each adapter renders them its own way (`render`): Slack
`<@U…>`, `<!date^…>` and a thread's permalink, Discord `<@…>`, `<t:…:f>` and
`<#…>`, the console plain text. So the core never learns a platform's syntax,
and nobody reads a raw id or a UTC time.

The markers are two private-use characters, and only the core writes them:
`prompts.strings.t` strips them from every field that is not `Marked` (room
text, free-text answers, model text quoted in a message), and the arbiter
strips them from the model's answer, so a forged marker can never make an
adapter ping someone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

OPEN = "\ue000"
CLOSE = "\ue001"
MARKER_CHARS = OPEN + CLOSE
_MARKER = re.compile(f"{OPEN}([@t#]):([^{OPEN}{CLOSE}]*){CLOSE}")


class Marked(str):
    """Text the core built with markers on purpose (the only text that keeps them)."""

    __slots__ = ()


def mention(user_id: str) -> Marked:
    """The user, as the platform names them."""
    return Marked(f"{OPEN}@:{strip(user_id)}{CLOSE}")


def mentions(user_ids: list[str], sep: str = ", ") -> Marked:
    return Marked(sep.join(mention(uid) for uid in user_ids) or "-")


def moment(at: datetime) -> Marked:
    """The moment, in each reader's own time zone where the platform can do it."""
    return Marked(f"{OPEN}t:{int(at.timestamp())}{CLOSE}")


def thread(room_id: str) -> Marked:
    """The room (`RoomKey.id`: platform, channel, thread), as a link where the platform has one."""
    return Marked(f"{OPEN}#:{strip(room_id)}{CLOSE}")


def room_label(room_id: str) -> str:
    """A room named without a platform's link syntax: `#channel/thread`."""
    parts = room_id.split(":")
    if len(parts) < 3:
        return room_id
    channel, thread = ":".join(parts[1:-1]), parts[-1]
    return f"#{channel}/{thread}" if thread else f"#{channel}"


def strip(text: str) -> str:
    """`text` without marker characters: what outside text becomes on entry."""
    if OPEN not in text and CLOSE not in text:
        return text
    return text.replace(OPEN, "").replace(CLOSE, "")


def utc_text(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def render(
    text: str,
    *,
    user: Callable[[str], str],
    time: Callable[[datetime], str],
    room: Callable[[str], str] = room_label,
) -> str:
    """`text` with every marker replaced by the adapter's own syntax."""
    if OPEN not in text:
        return text

    def one(match: re.Match[str]) -> str:
        kind, value = match.group(1), match.group(2)
        if kind == "@":
            return user(value)
        if kind == "#":
            return room(value)
        try:
            return time(datetime.fromtimestamp(int(value), UTC))
        except (ValueError, OverflowError, OSError):
            return "?"

    return strip(_MARKER.sub(one, text))


def plain(text: str) -> str:
    """Rendering for places without mentions or local times (the console, logs)."""
    return render(text, user=lambda uid: f"@{uid}", time=utc_text)

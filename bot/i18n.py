"""Which language a room speaks (one voice per room).

A room's language is fixed when its task starts, at the first human message:
that message's language when a catalog ships it, else the global
`TRIBUNAL_LANGUAGE`. A `language` set on the room or its channel (a
transcript's room line) beats both. Everything the bot writes into the room,
and the arbiter's answer, is in that one language.
"""

from __future__ import annotations

import re

from bot.arbiter.language import LANG_OF_SCRIPT, main_script, word_scripts
from bot.channels import ChannelDirectory
from bot.models import RoomKey
from bot.state import RoomState
from prompts.strings import DEFAULT_LANGUAGE, supported, t
from storage.base import Storage

# Fewer prose words than this ("2", "ok", a bare path) say nothing about a language.
_MIN_WORDS = 2


def text_language(text: str) -> str | None:
    """The shipped language `text` is written in, or None when it is too short,
    or written in a language no catalog ships."""
    if sum(word_scripts(text).values()) < _MIN_WORDS:
        return None
    script = main_script(text)
    return supported(LANG_OF_SCRIPT.get(script or "")) if script else None


def resolve(configured: str | None, state: RoomState | None, default: str) -> str:
    """Configured room/channel language, else the task's, else the global one."""
    for candidate in (configured, state.language if state else None, default):
        lang = supported(candidate)
        if lang:
            return lang
    return DEFAULT_LANGUAGE


async def room_language(storage: Storage, channels: ChannelDirectory, default: str,
                        room: RoomKey) -> str:
    """The language everything the bot writes into `room` is in (`default`:
    `TRIBUNAL_LANGUAGE`)."""
    raw = await storage.load_room_state(room.id)
    state = None if raw is None else RoomState.model_validate_json(raw)
    return resolve(await channels.configured_language(room), state, default)


def trigger_name(trigger: str, lang: str) -> str:
    """A deadlock trigger (`no_progress`, ...) as the room's readers call it."""
    from prompts.strings import catalog

    key = f"trigger_{trigger}"
    return t(key, lang) if key in catalog(DEFAULT_LANGUAGE) else trigger


# A finding's history entries are stored as short English notes ("R2:
# declined, repeated"), which the arbiter reads in the evidence; people read
# them in the room's language (`/arbiter status`).
_HISTORY = re.compile(
    r"R(?P<n>\d+): (?:(?P<owner>fix_reported|declined|untouched), )?(?P<event>.+)"
)
_EVENTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), key) for p, key in (
        (r"raised", "hist_raised"),
        (r"acknowledged", "hist_acknowledged"),
        (r"withdrawn", "hist_withdrawn"),
        (r"fixed", "hist_fixed"),
        (r"repeated", "hist_repeated"),
        (r"repeated \(fix rejected\)", "hist_fix_rejected"),
        (r"repeated \(reopened\)", "hist_reopened"),
        (r"repeated against a ruling", "hist_repeated_ruling"),
        (r"unmentioned", "hist_unmentioned"),
        (r"withdrawn \(reversed by its author in (?P<label>F\d+)\)", "hist_reversed"),
        (r"contested by (?P<label>F\d+)", "hist_contested"),
        (r"fixed \(superseded by (?P<label>F\d+)\)", "hist_superseded"),
        (r"retired by a ruling \((?P<label>F\d+) stands\)", "hist_retired"),
        (r"upheld by a ruling \((?P<label>F\d+) no longer applies\)", "hist_upheld"),
    )
]


def history_text(entry: str, lang: str) -> str:
    """One ledger history entry in the room's language; an entry this does not
    know (written by a later release) is shown as stored rather than dropped."""
    match = _HISTORY.fullmatch(entry)
    if match is None:
        return entry
    for pattern, key in _EVENTS:
        event = pattern.fullmatch(match["event"])
        if event is not None:
            parts = [t(key, lang, **event.groupdict())]
            break
    else:
        return entry
    if match["owner"]:
        parts.insert(0, t(f"hist_{match['owner']}", lang))
    return t("hist_round", lang, n=match["n"]) + ": " + ", ".join(parts)

"""Parsing and validating `/arbiter ...`. Pure.

The same grammar serves Slack and Discord; adapters pass the raw text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.config import MAX_ROUNDS_RANGE, STALL_THRESHOLD_RANGE
from prompts.strings import t

CHANGING = frozenset({"threshold", "max-rounds", "summon", "pause", "resume", "roles"})
# The subcommands that are about one room (the thread they name, else the
# channel's latest room).
ROOM_SUBCOMMANDS = frozenset({"status", "summon", "history"})
NAMES = CHANGING | ROOM_SUBCOMMANDS
HELP = frozenset({"help", "도움말", "-h", "--help"})
_RANGES = {"threshold": STALL_THRESHOLD_RANGE, "max-rounds": MAX_ROUNDS_RANGE}
_MENTION = re.compile(r"^<[@#]!?(?P<id>[A-Za-z0-9_.-]+)(?:\|[^>]*)?>$")
_PLAIN_ID = re.compile(r"^@?(?P<id>[A-Za-z0-9_.-]{1,64})$")
# What a user looks like on each platform, once its adapter has turned a
# mention into an id: Slack member ids (U…, W…) and bot ids (B…), Discord
# snowflakes. Anything else there is a name, not a user (`owner:alice`).
_PLATFORM_USER = {
    "slack": re.compile(r"^[UWB][A-Z0-9]+$"),
    "discord": re.compile(r"^\d{1,20}$"),
}


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    number: int | None = None
    owner: list[str] = field(default_factory=list)
    reviewer: list[str] = field(default_factory=list)

    @property
    def changes_state(self) -> bool:
        return self.name in CHANGING


@dataclass(frozen=True, slots=True)
class CommandError:
    """A refused command: a catalog key and its fields, so the reply can be
    written in the room's language (`text`). No key: the usage alone."""

    key: str | None = None
    fields: dict[str, object] = field(default_factory=dict)

    def text(self, lang: str, platform: str = "") -> str:
        use = usage(lang, platform)
        if self.key is None:
            return use
        return t("cmd_error", lang, detail=t(self.key, lang, **self.fields), usage=use)


def usage(lang: str, platform: str = "") -> str:
    """The subcommands as they are typed on `platform` (Slack: a thread link or a
    mention; Discord: named options, inside the thread); elsewhere the plain list."""
    (t_low, t_high), (m_low, m_high) = STALL_THRESHOLD_RANGE, MAX_ROUNDS_RANGE
    key = f"usage_{platform}" if platform in ("slack", "discord") else "usage"
    return t(key, lang, t_low=t_low, t_high=t_high, m_low=m_low, m_high=m_high)


def normalize_user(token: str) -> str | None:
    """`<@U123>`, `<@U123|name>`, `<@!123>`, `@U123` or `U123` -> `U123`."""
    token = token.strip()
    match = _MENTION.match(token) or _PLAIN_ID.match(token)
    return match.group("id") if match else None


def _error(key: str, **fields: object) -> CommandError:
    return CommandError(key, fields)


def parse_command(text: str, platform: str | None = None) -> Command | CommandError:
    """`platform` (slack, discord) makes `roles` take only what is a user there."""
    words = (text or "").strip().split()
    if words and words[0].lower() in ("/arbiter", "arbiter"):
        words = words[1:]
    if not words or words[0].lower() in HELP:
        return CommandError()
    name, args = words[0].lower().replace("_", "-"), words[1:]
    if name in ("status", "summon", "pause", "resume", "history"):
        if args:
            return _error("err_no_args", name=name)
        return Command(name)
    if name in _RANGES:
        low, high = _RANGES[name]
        if len(args) != 1 or not re.fullmatch(r"\d{1,3}", args[0]):
            return _error("err_one_number", name=name)
        number = int(args[0])
        if not low <= number <= high:
            return _error("err_range", name=name, low=low, high=high)
        return Command(name, number=number)
    if name == "roles":
        return _parse_roles(args, platform)
    return _error("err_unknown", name=name[:40])


def _parse_roles(args: list[str], platform: str | None) -> Command | CommandError:
    found: dict[str, list[str]] = {"owner": [], "reviewer": []}
    is_user = _PLATFORM_USER.get(platform or "")
    for arg in args:
        role, sep, value = arg.partition(":")
        role = role.lower()
        if not sep or role not in found:
            return _error("err_roles_format")
        for part in filter(None, value.split(",")):
            user = normalize_user(part)
            if user is None:
                return _error("err_user_id", part=part[:40])
            if is_user is not None and (part.lstrip().startswith("<#")
                                        or not is_user.match(user)):
                # A plain name (or a channel) where a user belongs: the hint
                # says how this platform's people name a user.
                return _error(f"err_not_a_user_{platform}", part=part[:40])
            found[role].append(user)
    if not found["owner"] or not found["reviewer"]:
        return _error("err_roles_both")
    if set(found["owner"]) & set(found["reviewer"]):
        return _error("err_roles_same")
    return Command("roles", owner=found["owner"], reviewer=found["reviewer"])

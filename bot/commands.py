"""Parsing and validating `/arbiter ...` (DESIGN §6). Pure.

The same grammar serves Slack and Discord; adapters pass the raw text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.config import MAX_ROUNDS_RANGE, STALL_THRESHOLD_RANGE

_T, _M = STALL_THRESHOLD_RANGE, MAX_ROUNDS_RANGE
USAGE_KO = (
    "사용법: `/arbiter <명령>`\n"
    "• `status` — 방 상태, 카운터, 임계값, 마지막 판정, 대기 중인 결정\n"
    f"• `threshold <n>` — 진전 없는 라운드 임계값 ({_T[0]}..{_T[1]})\n"
    f"• `max-rounds <n>` — 작업당 최대 라운드 ({_M[0]}..{_M[1]})\n"
    "• `summon` — 지금 중재 요청\n"
    "• `pause` / `resume` — 이 채널 감시 중지/재개\n"
    "• `roles owner:<사용자> reviewer:<사용자>` — 에이전트 지정\n"
    "• `history` — 최근 판정\n"
    f"(Usage: /arbiter status | threshold <{_T[0]}-{_T[1]}> | max-rounds <{_M[0]}-{_M[1]}>"
    " | summon | pause | resume | roles owner:<user> reviewer:<user> | history)"
)

CHANGING = frozenset({"threshold", "max-rounds", "summon", "pause", "resume", "roles"})
_RANGES = {"threshold": STALL_THRESHOLD_RANGE, "max-rounds": MAX_ROUNDS_RANGE}
_MENTION = re.compile(r"^<[@#]!?(?P<id>[A-Za-z0-9_.-]+)(?:\|[^>]*)?>$")
_PLAIN_ID = re.compile(r"^@?(?P<id>[A-Za-z0-9_.-]{1,64})$")


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
    message: str


def normalize_user(token: str) -> str | None:
    """`<@U123>`, `<@U123|name>`, `<@!123>`, `@U123` or `U123` -> `U123`."""
    token = token.strip()
    match = _MENTION.match(token) or _PLAIN_ID.match(token)
    return match.group("id") if match else None


def _error(detail_ko: str, detail_en: str) -> CommandError:
    return CommandError(f"⚠️ {detail_ko} ({detail_en})\n\n{USAGE_KO}")


def parse_command(text: str) -> Command | CommandError:
    words = (text or "").strip().split()
    if words and words[0].lower() in ("/arbiter", "arbiter"):
        words = words[1:]
    if not words or words[0].lower() in ("help", "도움말", "-h", "--help"):
        return CommandError(USAGE_KO)
    name, args = words[0].lower().replace("_", "-"), words[1:]
    if name in ("status", "summon", "pause", "resume", "history"):
        if args:
            return _error(f"`{name}`에는 인자가 없습니다.", f"`{name}` takes no arguments")
        return Command(name)
    if name in _RANGES:
        low, high = _RANGES[name]
        if len(args) != 1 or not re.fullmatch(r"\d{1,3}", args[0]):
            return _error(f"`{name}`에는 숫자 하나가 필요합니다.", f"`{name}` needs one number")
        number = int(args[0])
        if not low <= number <= high:
            return _error(
                f"`{name}` 값은 {low}부터 {high} 사이여야 합니다.",
                f"`{name}` must be between {low} and {high}",
            )
        return Command(name, number=number)
    if name == "roles":
        return _parse_roles(args)
    return _error(f"알 수 없는 명령입니다: `{name[:40]}`", f"unknown subcommand `{name[:40]}`")


def _parse_roles(args: list[str]) -> Command | CommandError:
    found: dict[str, list[str]] = {"owner": [], "reviewer": []}
    for arg in args:
        role, sep, value = arg.partition(":")
        role = role.lower()
        if not sep or role not in found:
            return _error("`roles owner:<사용자> reviewer:<사용자>` 형식이어야 합니다.",
                          "expected `roles owner:<user> reviewer:<user>`")
        for part in filter(None, value.split(",")):
            user = normalize_user(part)
            if user is None:
                return _error(f"사용자 ID를 읽을 수 없습니다: `{part[:40]}`",
                              f"cannot read user id `{part[:40]}`")
            found[role].append(user)
    if not found["owner"] or not found["reviewer"]:
        return _error("owner와 reviewer를 모두 지정해야 합니다.",
                      "both owner and reviewer are required")
    if set(found["owner"]) & set(found["reviewer"]):
        return _error("같은 사용자가 owner와 reviewer를 겸할 수 없습니다.",
                      "one user cannot be both owner and reviewer")
    return Command("roles", owner=found["owner"], reviewer=found["reviewer"])

"""Two names the owner says are one setting: "`REDIS_DEFAULT_EXPIRE`와
`CACHE_TTL`은 같은 설정입니다", "`UPLOAD_LIMIT_BYTES` overrides
`upload.max_bytes`". A value asked of one name is then asked of the other, so
two reviewers asking the two names different values reverse each other.
Pure: `aliases_said` reads an owner turn; `teach` gives each finding that
names one of a pair the other name and its values under it (the room state
keeps the pairs for the task, `bot.detection`).
"""

from __future__ import annotations

import re

from bot.finding import Finding
from bot.textscan import message_lines

_NAME = r"`([A-Za-z_][\w.-]{2,60})`"
# "`A`와 `B`은 같은 설정입니다", "`A` and `B` are the same setting",
# "`A` is an alias of `B`", "`A` overrides `B`", "`A`가 `B`를 덮어씁니다".
_SAID = [
    re.compile(_NAME + r"\s*(?:와|과|하고|랑|and|&)\s*" + _NAME
               + r"\s*(?:은|는|이|가)?\s*(?:(?:are|name|is)\s+)?(?:the\s+)?"
               r"(?:같은|동일한|하나의|한|same|one)\s*(?:설정|값|변수|키|setting|value|knob|variable)"
               # (Not "같은 설정이 아닙니다", nor "같은 값으로 맞췄습니다": two settings.)
               r"(?!\s*(?:이|가|은|는)?\s*아니|\s*(?:으로|로)|[^.\n]{0,12}(?:아닙|아니|않))",
               re.I),
    re.compile(_NAME + r"\s*(?:is\s+(?:an\s+|just\s+an\s+)?alias\s+(?:of|for)|overrides"
               r"|is\s+read\s+into)\s+" + _NAME, re.I),
    re.compile(_NAME + r"\s*(?:가|이|은|는)\s*" + _NAME + r"\s*(?:를|을)\s*(?:덮어|오버라이드)"),
]
# "환경 변수 `UPLOAD_LIMIT_BYTES` 가 이 값을 덮어씁니다" right after naming
# `upload.max_bytes`: the name before, in the same clause.
_OVERRIDES_IT = re.compile(_NAME + r"[^`]{0,40}?" + _NAME + r"\s*(?:가|이)\s*이\s*값을\s*덮어")
# "`REDIS_DEFAULT_EXPIRE = CACHE_TTL`로 묶여": one name set to the other.
_BOUND = re.compile(r"`([A-Za-z_][\w.-]{2,60})\s*=\s*([A-Za-z_][\w.-]{2,60})`\s*(?:로|으로)?\s*묶")


def aliases_said(messages: list[str]) -> list[tuple[str, str]]:
    """The pairs of setting names an owner turn says are one, lowercased as
    anchors keep them (the last part of a dotted name: `max_bytes`)."""
    out: list[tuple[str, str]] = []
    # (Whole lines, not clauses: "…의 `upload.max_bytes` 이고, 운영에서는
    # `UPLOAD_LIMIT_BYTES` 가 이 값을 덮어씁니다" says it across a "고,".)
    lines = [line.text for m in messages for line in message_lines(m) if not line.quoted]
    for text in lines:
        for pattern in (*_SAID, _OVERRIDES_IT, _BOUND):
            for match in pattern.finditer(text):
                a, b = (_key(match.group(1)), _key(match.group(2)))
                if a != b and (a, b) not in out and (b, a) not in out:
                    out.append((a, b))
    return out


def _key(name: str) -> str:
    return name.lower().rsplit(".", 1)[-1]


def teach(findings: list[Finding], pairs: list[tuple[str, str]] | list[list[str]]) -> None:
    """Each finding naming one name of a pair (in code, or as the setting of a
    value it asks) learns the other, with the same values."""
    for pair in pairs:
        a, b = pair[0], pair[1]
        for finding in findings:
            for one, other in ((a, b), (b, a)):
                values = [v.rpartition("@")[0] for v in finding.values
                          if v.rpartition("@")[2] == one]
                if "code:" + one not in finding.anchors and not values:
                    continue
                for value in values:
                    if value + "@" + other not in finding.values:
                        finding.learn_setting(value + "@" + other, "code:" + other)
                if "code:" + other not in finding.anchors:
                    finding.learn_setting(None, "code:" + other)

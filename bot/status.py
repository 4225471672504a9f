"""Status-line parsing. Pure functions.

Agents announce where they are with a status word at the start of a line near
the top of their turn; everything hidden from a reader (closed code fences,
`<internal>` blocks, blank lines) is skipped and quoted lines are never a
status, so quoted logs, examples or another agent's words cannot fake one.
The quote and fence rule itself lives in `bot.textscan`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.models import Status
from bot.textscan import message_lines, turn_lines

VISIBLE_LINE_LIMIT = 12

# Longest alternatives first so DONE_WITH_CONCERNS is not read as DONE.
_WORDS: list[tuple[str, Status]] = [
    ("DONE_WITH_CONCERNS", Status.DONE_WITH_CONCERNS),
    ("NEEDS_CONTEXT", Status.NEEDS_CONTEXT),
    ("TASK_DONE", Status.TASK_DONE),
    ("STEP_DONE", Status.STEP_DONE),
    ("BLOCKED", Status.BLOCKED),
    ("ESCALATE", Status.ESCALATE),
    ("APPROVED", Status.APPROVED),
    ("LGTM", Status.APPROVED),
    ("DONE", Status.TASK_DONE),
]
_STATUS_LINE = re.compile(
    r"^\s{0,3}(?:#{1,6}\s*)?(?:[*_]{1,3}\s*)?(?P<word>"
    + "|".join(word for word, _ in _WORDS)
    + r")(?![\w])",
    re.IGNORECASE,
)
_LOOKUP = {word: status for word, status in _WORDS}


def visible_lines(text: str, limit: int = VISIBLE_LINE_LIMIT) -> list[str]:
    """The first `limit` lines a reader sees in one message (quoted ones included)."""
    return [line.text for line in message_lines(text)[:limit]]


def parse_status(turn: str | Sequence[str]) -> Status:
    """Status of a turn (its messages, or one text); `Status.CONTINUE` without one.

    Quoted lines count among the first visible lines but are never a status:
    a reviewer quoting the owner's `> TASK_DONE` has approved nothing.
    """
    messages = [turn] if isinstance(turn, str) else turn
    for line in turn_lines(messages)[:VISIBLE_LINE_LIMIT]:
        if line.quoted:
            continue
        match = _STATUS_LINE.match(line.text)
        if match:
            return _LOOKUP[match.group("word").upper()]
    return Status.CONTINUE


def status_reason(turn: str | Sequence[str]) -> str | None:
    """What a turn says after its status word (`BLOCKED: no API key` -> `no API key`),
    or the line after a bare status word; None without a status or a reason.

    The deterministic ESCALATE names a blocker with it, in place of quoting
    the agent's whole turn.
    """
    messages = [turn] if isinstance(turn, str) else turn
    lines = [line for line in turn_lines(messages)[:VISIBLE_LINE_LIMIT] if not line.quoted]
    for i, line in enumerate(lines):
        match = _STATUS_LINE.match(line.text)
        if match is None:
            continue
        rest = line.text[match.end():].strip(" \t:-—–*_")
        if not rest and i + 1 < len(lines):
            rest = lines[i + 1].text.strip()
        return rest or None
    return None

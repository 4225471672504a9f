"""Status-line parsing (DESIGN §2). Pure functions.

Agents announce where they are with a status word at the start of a line near
the top of their turn; everything hidden from a reader (code fences,
`<internal>` blocks, blank lines) is skipped so that quoted logs or examples
cannot fake a status.
"""

from __future__ import annotations

import re

from bot.models import Status

VISIBLE_LINE_LIMIT = 12

_INTERNAL = re.compile(r"<internal>.*?(</internal>|\Z)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")

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
    r"^\s{0,3}(?:>\s*)?(?:#{1,6}\s*)?(?:[*_]{1,3}\s*)?(?P<word>"
    + "|".join(word for word, _ in _WORDS)
    + r")(?![\w])",
    re.IGNORECASE,
)
_LOOKUP = {word: status for word, status in _WORDS}


def strip_internal(text: str) -> str:
    return _INTERNAL.sub("", text)


def visible_lines(text: str, limit: int = VISIBLE_LINE_LIMIT) -> list[str]:
    """The first `limit` lines a reader sees: no blanks, fences or internal notes."""
    out: list[str] = []
    fence: str | None = None
    for line in strip_internal(text).splitlines():
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if not line.strip():
            continue
        out.append(line)
        if len(out) >= limit:
            break
    return out


def parse_status(text: str) -> Status:
    """Status of a turn's text; `Status.CONTINUE` when no status word leads a line."""
    for line in visible_lines(text):
        match = _STATUS_LINE.match(line)
        if match:
            return _LOOKUP[match.group("word").upper()]
    return Status.CONTINUE

"""What a reader sees in an agent's message: one rule for quotes and fences.

Status lines, findings, fix reports and the guardrails all read agent text
through this module, so they can never disagree about what is
quoted or fenced:

- `<internal>…</internal>` notes are not visible at all;
- a code fence (``` or ~~~) hides its lines only when it is closed within the
  same message: an agent that opens a fence and never closes it has not hidden
  the rest of its message (a log cut short, a forgotten fence);
- quoted text is every line that starts with `>` plus everything after a line
  starting with `>>>` to the end of that message (Slack's block quote); it is
  someone's words being quoted, never a status, a finding or a fix report;
- blank lines are not lines.

Pure functions; a turn is a list of messages, because fences never span two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_INTERNAL = re.compile(r"<internal>.*?(</internal>|\Z)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BLOCK_QUOTE = re.compile(r"^\s{0,3}>>>")
_LINE_QUOTE = re.compile(r"^\s{0,3}>")


@dataclass(frozen=True, slots=True)
class Line:
    """One visible line of a message, and whether it is quoted."""

    text: str
    quoted: bool
    after_blank: bool = False  # a blank line (or a fence) stands just above it


def strip_internal(text: str) -> str:
    return _INTERNAL.sub("", text)


def _closed_fences(lines: list[str]) -> set[int]:
    """Indexes of lines inside (or delimiting) a fence closed within the message."""
    hidden: set[int] = set()
    start: int | None = None
    marker = ""
    for i, line in enumerate(lines):
        match = _FENCE.match(line)
        if start is None:
            if match:
                start, marker = i, match.group(1)
            continue
        if match and match.group(1)[0] == marker[0] and len(match.group(1)) >= len(marker):
            hidden.update(range(start, i + 1))
            start = None
    return hidden  # an unclosed opener (start still set) hides nothing


def message_lines(text: str) -> list[Line]:
    """The visible lines of one message, in order, each marked quoted or not."""
    raw = strip_internal(text).splitlines()
    hidden = _closed_fences(raw)
    out: list[Line] = []
    in_block_quote = False
    gap = False
    for i, line in enumerate(raw):
        if i in hidden or not line.strip():
            gap = True
            continue
        if not in_block_quote and _BLOCK_QUOTE.match(line):
            in_block_quote = True
        quoted = in_block_quote or bool(_LINE_QUOTE.match(line))
        out.append(Line(line, quoted, gap))
        gap = False
    return out


def turn_lines(messages: Iterable[str]) -> list[Line]:
    """The visible lines of a turn (its messages in order)."""
    out: list[Line] = []
    for message in messages:
        out.extend(message_lines(message))
    return out


def own_text(messages: Iterable[str]) -> str:
    """The turn's own words: visible lines that are not quotations, one per line."""
    return "\n".join(line.text for line in turn_lines(messages) if not line.quoted)


# An error's name in test output: `IntegrityError`, `AssertionError`,
# `UnicodeEncodeError`, `TimeoutException`.
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Failure))\b")


@lru_cache(maxsize=256)  # asked for every clause of the message
def _fenced_lines(message: str) -> tuple[tuple[str, ...], frozenset[int]]:
    raw = strip_internal(message).splitlines()
    return tuple(raw), frozenset(_closed_fences(raw))


def _line_of(message: str, text: str) -> tuple[Sequence[str], frozenset[int], int | None]:
    """The message's lines, those inside closed fences, and the visible line
    that holds `text` (None when the message has no fence: nothing to look at
    beside it, and most clauses ask)."""
    if "```" not in message and "~~~" not in message:
        return (), frozenset(), None
    raw, hidden = _fenced_lines(message)
    at = next((i for i, line in enumerate(raw) if text[:60] in line and i not in hidden), None)
    return raw, hidden, at


def errors_beside(message: str, text: str) -> frozenset[str]:
    """The error names of the fence just below or just above the line that
    holds `text` in `message` (a closed fence): the output a point shows."""
    raw, hidden, at = _line_of(message, text)
    if at is None:
        return frozenset()
    out: set[str] = set()
    for step in (1, -1):
        i = at + step
        while 0 <= i < len(raw) and not raw[i].strip():
            i += step
        delimiters = 0
        while 0 <= i < len(raw) and i in hidden and delimiters < 2:
            if _FENCE.match(raw[i]):
                delimiters += 1  # the fence's two ends: one fence only
            else:
                out.update(_ERROR_NAME.findall(raw[i]))
            i += step
    return frozenset(out)


def after_output(message: str, text: str) -> bool:
    """The line that holds `text` in `message` comes right after a closed
    fence: a conclusion drawn from the output just shown."""
    raw, hidden, at = _line_of(message, text)
    if at is None:
        return False
    i = at - 1
    while i >= 0 and not raw[i].strip():
        i -= 1
    return i >= 0 and i in hidden


# A failing run in test output: "FAILED tests/…", "2 failed, 303 passed", a traceback.
_FAILING_RUN = re.compile(r"\bFAILED\b|\b\d+\s+failed\b|^Traceback\b|\bE\s+\w*Error\b")


def shows_failure(messages: Iterable[str]) -> bool:
    """Some message shows a failing run inside a closed fence."""
    for message in messages:
        if "```" not in message and "~~~" not in message:
            continue
        raw = strip_internal(message).splitlines()
        if any(_FAILING_RUN.search(raw[i]) for i in _closed_fences(raw)):
            return True
    return False

"""Word-list patterns compiled so `re` tries them fast, with the same matches.

A vocabulary pattern is a long alternation: `\\bstill\\b|\\bagain\\b|여전히|…`.
Python's `re` tries every alternative at every position of the text, and one
that opens with a boundary (`\\b…`) costs a boundary test each time; on the
detector's hot path these searches were most of a reviewer turn's cost. Here
the top-level alternatives that open with `\\b` are gathered into one
`\\b(?:…|…)` group, so the boundary is tested once per position and the group
dispatches on the next character.

The matches stay the same, spans included: within the group the alternatives
keep their order, and the group moves before another alternative only when
the two can never match at the same position (the other opens with a Hangul
syllable, where a `\\b` alternative opens with an ASCII letter).
Anything else ends the group where it stands. `tests/core/test_core_alternation.py`
checks it on random patterns and on every vocabulary pattern over the
labelled rooms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# What each factored pattern was written as (for the test that compares them).
SOURCES: dict[re.Pattern[str], str] = {}

# Opens with a Hangul syllable (after a line start or a "|" and spaces, maybe).
_HANGUL_FIRST = re.compile(r"(?:\^|\(\?:\^\|\\\|\))?(?:\\s\*)?(?:\(\?:)*[\uac00-\ud7a3]")
_ASCII_AFTER_BOUNDARY = re.compile(r"\\b(?:\(\?:)*[A-Za-z]")


def words(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, with its `\\b` alternatives grouped."""
    pattern = re.compile(factor(source), flags)
    SOURCES[pattern] = source
    return pattern


def factor(source: str) -> str:
    """The alternation `source` with its `\\b` alternatives gathered (see above)."""
    out: list[str | list[str]] = []  # alternatives, and groups of `\b` ones (without the `\b`)
    group: list[str] | None = None  # the group later `\b` alternatives may still join
    for alternative in split_alternatives(source):
        if _ASCII_AFTER_BOUNDARY.match(alternative) and _first_group_closed(alternative):
            if group is None:
                group = []
                out.append(group)
            group.append(alternative[2:])
        else:
            out.append(alternative)
            if not _HANGUL_FIRST.match(alternative):
                group = None  # it might match where a `\b` one does: keep the order
    return "|".join(
        item if isinstance(item, str) else
        ("\\b" + item[0] if len(item) == 1 else "\\b(?:" + "|".join(item) + ")")
        for item in out
    )


def _first_group_closed(alternative: str) -> bool:
    """Every alternative of a leading `(?:…)` opens with an ASCII letter too
    (`\\b(?:we're|it's)`), so none of them can start on a Hangul syllable."""
    body = alternative[2:]
    if not body.startswith("(?:"):
        return not re.match(r"[A-Za-z](?:\?|\*|\{0)", body)  # (`\ba?…` may open otherwise)
    i = next((i for i, ch, depth in _scan(body) if ch == ")" and depth == 1), len(body))
    if body[i + 1:i + 2] in ("?", "*") or body[i + 1:i + 3] == "{0":
        return False  # an optional first group: what follows it may open the match
    inner = split_alternatives(body[3:i])
    return all(re.match(r"(?:\(\?:)*[A-Za-z]", alt) for alt in inner)


def split_alternatives(source: str) -> list[str]:
    """The top-level alternatives of a pattern (not those inside groups or sets)."""
    parts: list[str] = []
    start = 0
    for i, ch, depth in _scan(source):
        if ch == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
    parts.append(source[start:])
    return parts


def _scan(source: str) -> Iterator[tuple[int, str, int]]:
    """Each character of a pattern that is not escaped nor in a set, with the
    depth of groups it stands in (before it opens or closes one)."""
    depth, i = 0, 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _set_end(source, i)
            continue
        yield i, ch, depth
        depth += (ch == "(") - (ch == ")")
        i += 1


def _set_end(source: str, i: int) -> int:
    """The index just after the character set that opens at `i`."""
    j = i + 1
    if j < len(source) and source[j] == "^":
        j += 1
    if j < len(source) and source[j] == "]":
        j += 1  # a "]" first in a set is a member
    while j < len(source) and source[j] != "]":
        j += 2 if source[j] == "\\" else 1
    return j + 1

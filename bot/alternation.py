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

_ASCII_LETTER = re.compile(r"[A-Za-z]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# What may stand before a Hangul opener and match no ASCII letter: a line start,
# or a "|", then spaces ("(?:^|\|)\s*유지").
_NO_LETTER_PREFIX = re.compile(r"(?:\^|\(\?:\^\|\\\|\))?(?:\\s\*)?")


def words(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, with its `\\b` alternatives grouped."""
    # (Compiled once: factoring keeps the capture groups, so the pattern
    # compiled as if it had none says whether it has; start-up compiles them all.)
    pattern = re.compile(factor(source, may_move=True), flags)
    if pattern.groups:
        pattern = re.compile(factor(source, may_move=False), flags)
    SOURCES[pattern] = source
    return pattern


def factor(source: str, may_move: bool | None = None) -> str:
    """The alternation `source` with its `\\b` alternatives gathered (see above).
    `may_move`: whether it has no capture groups, if the caller knows."""
    out: list[str | list[str]] = []  # alternatives, and groups of `\b` ones (without the `\b`)
    group: list[str] | None = None  # the group later `\b` alternatives may still join
    # With capture groups, moving an alternative would renumber them: group
    # only `\b` alternatives that stand next to each other.
    if may_move is None:
        may_move = re.compile(source).groups == 0
    for alternative in split_alternatives(source):
        if alternative.startswith("\\b") and _opens_with(alternative[2:], _ASCII_LETTER):
            if group is None:
                group = []
                out.append(group)
            group.append(alternative[2:])
        else:
            out.append(alternative)
            prefix = _NO_LETTER_PREFIX.match(alternative)
            rest = alternative[prefix.end():] if prefix else alternative
            if not (may_move and _opens_with(rest, _HANGUL)):
                group = None  # it might match where a `\b` one does: keep the order
    return "|".join(
        item if isinstance(item, str) else
        ("\\b" + item[0] if len(item) == 1 else "\\b(?:" + "|".join(item) + ")")
        for item in out
    )


def _opens_with(piece: str, first: re.Pattern[str]) -> bool:
    """Whatever `piece` matches starts with a character `first` matches: it
    opens with such a literal, or with a non-capturing group every branch of
    which does (recursively), and that opener is not optional (`a?`, `(?:…)*`)."""
    if piece.startswith("(?:"):
        end = next((i for i, ch, depth in _scan(piece) if ch == ")" and depth == 1), None)
        if end is None or _optional(piece, end + 1):
            return False
        branches = split_alternatives(piece[3:end])
        return all(branch and _opens_with(branch, first) for branch in branches)
    return bool(piece) and bool(first.fullmatch(piece[0])) and not _optional(piece, 1)


def _optional(piece: str, at: int) -> bool:
    """What stands before `at` may match nothing (`?`, `*`, `{0,…}`)."""
    return piece[at:at + 1] in ("?", "*") or piece[at:at + 2] == "{0"


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

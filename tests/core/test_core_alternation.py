"""Grouping a word list's `\\b` alternatives changes no match: on random
alternations and texts, and for every vocabulary pattern over the labelled rooms."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import bot.wording  # noqa: F401  (fills SOURCES with the vocabulary's patterns)
from bot.alternation import SOURCES, factor, split_alternatives
from bot.points import clauses

DETECTION = Path(__file__).parent.parent / "detection"

ASCII_WORDS = st.sampled_from(["as", "ask", "asked", "still", "st", "keep", "keeping", "it", "a"])
HANGUL_WORDS = st.sampled_from(["여전히", "아직", "여전", "유지", "유지합니다", "다시"])


@st.composite
def alternatives(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return r"\b" + draw(ASCII_WORDS) + draw(st.sampled_from(["", r"\b", r"\s+it", "s?"]))
    if kind == 1:
        group = "|".join(draw(st.lists(ASCII_WORDS, min_size=1, max_size=3)))
        return r"\b(?:" + group + ")" + draw(st.sampled_from(["", r"\s+", r"\b"]))
    if kind == 2:
        return draw(HANGUL_WORDS) + draw(st.sampled_from(["", r"\s*", "(?:합니다|했)"]))
    if kind == 3:
        return r"(?:^|\|)\s*" + draw(HANGUL_WORDS)
    if kind == 4:
        return r"\b(?:as\s+)?" + draw(ASCII_WORDS)  # an optional first group
    # Shapes whose first character is not what it looks like: optional or
    # mixed openers, nested groups, capture groups.
    return draw(st.sampled_from([
        r"\d+", r"[a-z]+ed\b", r"(?:it|한)", r"\ba?유지", r"유?as", r"(?:유|s)t", r"(?:다만)?as",
        r"\b(?:(?:a|가)sk)", r"여(s)", r"\bas(k)", r"\b(?:as)*k", r"[a가]s",
    ]))


TEXT = st.text(alphabet=st.sampled_from(list("asktilepdASK 여전히아직유지합니다|.\n5")),
               max_size=40)


def _same(source: str, flags: int, texts: list[str]) -> None:
    original, grouped = re.compile(source, flags), re.compile(factor(source), flags)
    for text in texts:
        a, b = original.search(text), grouped.search(text)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (source, text)
        assert original.sub("_", text) == grouped.sub("_", text), (source, text)
        assert [m.span() for m in original.finditer(text)] == [
            m.span() for m in grouped.finditer(text)], (source, text)


@settings(max_examples=400, deadline=None)
@given(st.lists(alternatives(), min_size=1, max_size=8), st.lists(TEXT, min_size=1, max_size=5),
       st.booleans())
def test_grouping_keeps_every_match(parts: list[str], texts: list[str], ignore_case: bool) -> None:
    _same("|".join(parts), re.I if ignore_case else 0, texts)


def test_the_grouping_is_done_where_it_is_safe() -> None:
    assert factor(r"\bstill\b|\bagain\b") == r"\b(?:still\b|again\b)"
    # A Hangul alternative never starts where a `\b` one does: the group may pass it.
    assert factor(r"\bstill\b|여전히|\bagain\b") == r"\b(?:still\b|again\b)|여전히"
    # Anything else keeps the order.
    assert factor(r"\bstill\b|\d+|\bagain\b") == r"\bstill\b|\d+|\bagain\b"
    assert factor(r"\b(?:as\s+)?said|\bagain") == r"\b(?:as\s+)?said|\bagain"
    # Openers that only look Hangul or ASCII, and capture groups, keep the order.
    for source in (r"\bz|유?abc|\bab", r"\bz|(?:유|s)x|\bs", r"\bz|(?:다만)?ab|\ba",
                   r"\bz|가x|\b(?:(?:a|가)xy)", r"\ba(x)|가(y)|\bb(z)"):
        assert factor(source) == source, source
    assert split_alternatives(r"a(?:b|c)|[|]|\||d") == ["a(?:b|c)", "[|]", r"\|", "d"]


def test_every_vocabulary_pattern_matches_as_written_on_the_labelled_rooms() -> None:
    texts: list[str] = []
    for transcript in sorted(DETECTION.glob("*/*.jsonl")):
        for line in transcript.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("type") == "message":
                texts.append(record["text"])
    pieces = clauses(texts) + texts
    assert len(SOURCES) >= 20 and len(pieces) > 10_000
    for pattern, source in SOURCES.items():
        _same(source, pattern.flags, pieces)

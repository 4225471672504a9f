"""Which language a verdict must be written in, and whether a text is in it.

Pure functions. The check is about the *prose*: code blocks, inline code,
URLs, paths and identifiers are removed first, because a Korean verdict
legitimately quotes `src/login.py` or `TypeError`.
"""

from __future__ import annotations

import re

from bot.arbiter.base import ArbitrationContext
from bot.textscan import strip_internal

# Language code -> script its prose is mostly written in.
_SCRIPT_OF = {
    "ko": "hangul",
    "ja": "kana",
    "zh": "han",
    "ru": "cyrillic",
    "uk": "cyrillic",
    "bg": "cyrillic",
}
_NAMES = {
    "ko": "Korean (한국어)",
    "en": "English",
    "ja": "Japanese (日本語)",
    "zh": "Chinese (中文)",
    "ru": "Russian (русский)",
}
# Script -> language code assumed when the humans wrote in it.
LANG_OF_SCRIPT = {"hangul": "ko", "kana": "ja", "han": "zh", "cyrillic": "ru", "latin": "en"}

_FENCED = re.compile(r"^\s{0,3}(```|~~~).*?(^\s{0,3}\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_PATHISH = re.compile(r"\S*[/\\]\S*|\S+\.[A-Za-z0-9]{1,6}\b")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z]+_[A-Za-z0-9_]*|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}\d*)\b"
)


def script_of(ch: str) -> str | None:
    """The writing system of one letter, or None for digits/punctuation."""
    o = ord(ch)
    if 0xAC00 <= o <= 0xD7A3 or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
        return "hangul"
    if 0x3040 <= o <= 0x30FF:
        return "kana"
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
        return "han"
    if 0x0400 <= o <= 0x04FF:
        return "cyrillic"
    if (ch.isascii() and ch.isalpha()) or 0x00C0 <= o <= 0x024F:
        return "latin"
    return None


def prose_only(text: str) -> str:
    """Text without code, URLs, paths and identifiers: what a reader reads as prose."""
    text = strip_internal(text)
    text = _FENCED.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _PATHISH.sub(" ", text)
    return _IDENTIFIER.sub(" ", text)


def word_scripts(text: str) -> dict[str, int]:
    """How many prose words are (mainly) in each script.

    Words, not letters: one Hangul syllable carries as much as three Latin
    letters, so counting letters would be unfair to Korean.
    """
    counts: dict[str, int] = {}
    for word in prose_only(text).split():
        letters = [s for s in (script_of(c) for c in word) if s]
        if not letters:
            continue
        # A word with any CJK letter counts for that script ("login은" is Korean).
        main = next((s for s in letters if s != "latin"), "latin")
        if main == "han" and "kana" in letters:
            main = "kana"
        counts[main] = counts.get(main, 0) + 1
    return counts


def main_script(text: str) -> str | None:
    counts = word_scripts(text)
    if not counts:
        return None
    # Japanese mixes kanji and kana: any kana makes the han words Japanese.
    if "kana" in counts and "han" in counts:
        counts["kana"] += counts.pop("han")
    return max(counts.items(), key=lambda kv: kv[1])[0]


def expected_script(language: str) -> str:
    return _SCRIPT_OF.get(language.split("-")[0].lower(), "latin")


def language_name(language: str) -> str:
    return _NAMES.get(language.split("-")[0].lower(), language)


def expected_language(ctx: ArbitrationContext) -> str:
    """The room's language: one voice per room (`bot.i18n` fixes it when the
    task starts, from the first human message or the room's setting)."""
    from prompts.strings import DEFAULT_LANGUAGE, supported

    return supported(ctx.language) or DEFAULT_LANGUAGE


def is_in_language(text: str, language: str, *, min_share: float = 0.5) -> bool:
    """True when the expected script is the main script of the prose."""
    counts = word_scripts(text)
    total = sum(counts.values())
    if total == 0:
        return False
    want = expected_script(language)
    got = counts.get(want, 0)
    if want == "kana":
        got += counts.get("han", 0)
    return got / total >= min_share

"""Is this turn materially new compared with the previous one? (DESIGN §3)

Deterministic and language-agnostic. A turn is reduced to
- a set of character n-grams per word (bigrams for Hangul words, whose
  endings change with politeness, trigrams for Latin), so word order does not
  matter and light rephrasing keeps most of the set, and
- a set of fingerprints: file paths, `code identifiers`, line numbers and
  finding ids, which name *what* a finding is about.

A new fingerprint is new evidence. Otherwise the n-gram similarity decides.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from bot.models import Status
from bot.textscan import strip_internal

_WORD = re.compile(r"[0-9a-z_]+|[\uac00-\ud7a3]+|[\u3040-\u30ff\u4e00-\u9fff]+")
_PATH = re.compile(r"(?<![\w/])(?:[\w.-]+/)*[\w-]+\.(?:[a-z]{1,5})\b(?::\d+)?")
_CODE = re.compile(r"`([^`\n]{1,80})`")
# `:42` counts only after a file path (in _PATH), so times (10:31) and ports
# (localhost:8080) are not mistaken for line numbers.
_LINE = re.compile(
    r"(?:\bline\s*|\bL)(\d{1,6})\b|(\d{1,6})\s*(?:번째\s*)?(?:번\s*)?(?:줄|행|라인)"
)
_FINDING = re.compile(r"(?<![\w#])(?:[A-Z]{1,6}-?\d{1,5}|#\d{1,6})\b")
_STATUS_WORDS = {s.value.lower() for s in Status} | {"done", "lgtm"}
# Words that carry no finding on their own; they would inflate similarity.
_STOP = {"the", "a", "an", "is", "are", "to", "of", "in", "and", "or", "it", "this", "that"}


@dataclass(frozen=True, slots=True)
class Features:
    grams: frozenset[str]
    fingerprints: frozenset[str]


# Common Korean particles and polite endings: stripped so that "체크가" and
# "체크를", or "합니다" and "해요", reduce to the same stem.
_KO_SUFFIXES = sorted(
    """습니다 입니다 합니다 했습니다 됩니다 있습니다 없습니다 니다 에서 으로 에게 까지 부터 이다
    어요 아요 해요 세요 지만 는데 하고 이고 이며 하여 해서 하게 되어 돼요 예요 이에요
    이 가 을 를 은 는 의 에 로 도 만 와 과 요 다""".split(),
    key=len,
    reverse=True,
)


_KO_BY_LENGTH = [
    (n, frozenset(x for x in _KO_SUFFIXES if len(x) == n))
    for n in sorted({len(x) for x in _KO_SUFFIXES}, reverse=True)
]


def _stem(word: str) -> str:
    if not ("\uac00" <= word[0] <= "\ud7a3"):
        return word
    for n, suffixes in _KO_BY_LENGTH:  # longest suffix first
        if len(word) > n + 1 and word[-n:] in suffixes:
            return word[:-n]
    return word


def _grams(word: str) -> list[str]:
    word = _stem(word)
    n = 2 if "\uac00" <= word[0] <= "\ud7a3" else 3
    if len(word) <= n:
        return [word]
    return [word[i : i + n] for i in range(len(word) - n + 1)]


@lru_cache(maxsize=256)  # each turn is compared twice: as the new one, then as the old
def features(text: str) -> Features:
    raw = unicodedata.normalize("NFKC", strip_internal(text))
    fingerprints: set[str] = set()
    for match in _PATH.finditer(raw):
        fingerprints.add("path:" + match.group(0).lower())
        if ":" in match.group(0):
            fingerprints.add("line:" + match.group(0).rsplit(":", 1)[1])
    for match in _CODE.finditer(raw):
        fingerprints.add("code:" + match.group(1).strip().lower())
    for match in _LINE.finditer(raw):
        fingerprints.add("line:" + (match.group(1) or match.group(2)))
    for match in _FINDING.finditer(raw):
        fingerprints.add("id:" + match.group(0).lower())
    grams: set[str] = set()
    for word in _WORD.findall(raw.lower()):
        if word in _STATUS_WORDS or word in _STOP:
            continue
        grams.update(_grams(word))
    return Features(frozenset(grams), frozenset(fingerprints))


def similarity(a: Features, b: Features) -> float:
    """Blend of Jaccard and containment of the n-gram sets, in [0, 1].

    Containment forgives a turn that repeats the old points plus filler;
    Jaccard keeps a short turn from matching everything it is part of.
    """
    if not a.grams or not b.grams:
        return 1.0 if a.grams == b.grams else 0.0
    inter = len(a.grams & b.grams)
    jaccard = inter / len(a.grams | b.grams)
    containment = inter / min(len(a.grams), len(b.grams))
    return round(0.5 * jaccard + 0.5 * containment, 4)


@dataclass(frozen=True, slots=True)
class Comparison:
    similarity: float
    new_fingerprints: tuple[str, ...]
    is_new: bool


def compare(previous: str | None, current: str, threshold: float) -> Comparison:
    """Compare two turns of the same role; `is_new` = materially new."""
    if previous is None:
        return Comparison(0.0, (), True)
    old, new = features(previous), features(current)
    added = tuple(sorted(new.fingerprints - old.fingerprints))
    sim = similarity(old, new)
    return Comparison(sim, added, bool(added) or sim < threshold)

"""What a piece of review text is about, and how alike two such are.

A `Topic` holds a clause's anchors (paths, `identifiers`, numbers, finding
ids) and key terms (Korean particles and endings stripped, common words in
either language mapped to one concept, so "캐시" and "cache" meet).
`score()` compares two topics in [0, 1]; the thresholds in `bot.finding`
(documented there) turn scores into "the same finding" or "a new one". Pure;
the words it reads with are in `bot.wording`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from bot import wording as w


@dataclass(frozen=True, slots=True)
class Topic:
    """What a clause is about."""

    anchors: frozenset[str]  # path:, code:, num:, id:
    terms: frozenset[str]  # stems, Hangul bigrams and concepts
    # Every anchor but line numbers, and the kinds of those anchors but numbers
    # (path, code, id); computed once (scoring reads them a lot).
    strong: frozenset[str] = field(init=False, compare=False)
    kinds: frozenset[str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        strong = frozenset(a for a in self.anchors if not a.startswith("line:"))
        object.__setattr__(self, "strong", strong)
        object.__setattr__(self, "kinds", frozenset(
            a.split(":", 1)[0] for a in strong if not a.startswith("num:")
        ))


@lru_cache(maxsize=65536)  # words repeat across clauses, turns and rooms
def word_stem(word: str) -> str:
    if "\uac00" <= word[0] <= "\ud7a3":
        for suffix in w.KO_SUFFIXES:
            if len(word) > len(suffix) + 1 and word.endswith(suffix):
                return word[: -len(suffix)]
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=4096)
def topic(text: str) -> Topic:
    raw = w.ungrouped(unicodedata.normalize("NFKC", w.URL.sub(" ", text)))
    anchors: set[str] = set()
    for match in w.PATH.finditer(raw):
        path = match.group(1).lower()
        if re.fullmatch(r"\d+(\.\d+)+", path):
            continue  # a version number, not a path
        if "/" not in path and not w.is_file(path):
            # `record.args`, `limits.memory`: a name, as `x.y` in code is named.
            anchors.add("code:" + path.rsplit(".", 1)[-1])
            continue
        anchors.add("path:" + path.rsplit("/", 1)[-1])
        if match.group(2):
            anchors.add("line:" + match.group(2))
    for match in w.CODE.finditer(raw):
        code = match.group(1).strip().lower().rstrip("()").strip()
        if w.COMMIT.fullmatch(code):
            continue  # a commit names the owner's change, not what the finding is about
        if code and not w.PATH.fullmatch(code):
            header = w.HEADER_SPAN.match(code)
            if header:
                # `Idempotency-Key: invoice-{id}` names the header as
                # `Idempotency-Key` alone does.
                anchors.add("code:" + header.group(1))
            if re.fullmatch(r"[\w.:/{}-]+", code):  # (`home:feed:{user_id}`: one name)
                # A name. An expression (`(created_at, id) < (:ts, :id)`) is
                # named by its tokens only: written again another way, it is
                # the same point.
                anchors.add("code:" + code.rsplit(".", 1)[-1])
            # `(created_at, id)` names `created_at` and `id` too; the words of a
            # value (`"20/minute"`, `5/minute`) name nothing.
            for token in re.findall(r"[a-z_][a-z0-9_]+", w.CODE_VALUE.sub(" ", code)):
                # (`maskAllInputs: true` and `recordCanvas: true` share a value,
                # not a name.)
                if token not in w.STOP_EN and not (token in _LITERALS and token != code):
                    anchors.add("code:" + token)
    for match in w.IDENT.finditer(raw):
        anchors.add("code:" + match.group(1).lower().rstrip("()"))
    for match in w.NUMBER.finditer(w.CODE.sub(" ", w.PATH.sub(" ", raw))):
        value, unit = match.group(1), (match.group(2) or "").lower()
        if unit == "k" and value.isdigit():
            # "cap the row count at 100k" and "after 100,000 rows": one number.
            value, unit = str(int(value) * 1000), ""
        if len(value) >= 2 or unit:
            anchors.add("num:" + value + unit)
    for match in w.FINDING_ID.finditer(raw):
        anchors.add("id:" + match.group(1).lower())
    terms: set[str] = set()
    lowered = raw.lower()
    # The Korean concept words the text holds at all: each word is then looked
    # up among these few, not among all of them (the same answer, as a word's
    # substring is the text's).
    concepts_ko = [(key, concept) for key, concept in w.KO_CONCEPT if key in lowered]
    for word in w.WORD.findall(lowered):
        if word in w.STOP_EN or w.COMMIT.fullmatch(word):
            continue  # a commit hash names the change, not the point
        concept = w.EN_CONCEPT.get(word) or w.EN_CONCEPT.get(word_stem(word))
        if concept:
            terms.add("~" + concept)
        if "\uac00" <= word[0] <= "\ud7a3":
            for key, concept_ko in concepts_ko:
                if key in word and not any(x in word for x in w.KO_CONCEPT_EXCEPT.get(key, ())):
                    terms.add("~" + concept_ko)
            stem = word_stem(word)
            if stem in w.STOP_KO or len(stem) < 2:
                continue
            terms.update(
                g for g in (stem[i : i + 2] for i in range(len(stem) - 1)) if g not in w.KO_GRAMMAR
            )
        else:
            stem = word_stem(word)
            if len(stem) >= 3 and stem not in w.STOP_EN:
                terms.add(stem)
    # (A key of two words, "풀 크기", is in the text, not in one of its words.)
    terms.update("~" + concept for key, concept in concepts_ko if " " in key)
    return Topic(frozenset(anchors), frozenset(terms))


# Booleans, not names, inside a longer span (`maskAllInputs: true`); a span
# that is only `true` still names what it says. (Not `none` nor `on`: `p=none`
# and `gzip on;` are what a DMARC or an nginx point is about.)
_LITERALS = frozenset({"true", "false"})


def concepts(t: Topic) -> frozenset[str]:
    """The concepts a topic says in words, and in the parts of the names it
    gives in code (`autoretry_for`, `max_retries`: ~retry). (Kept out of
    `topic`: more terms for every name would thin every score.)"""
    return frozenset(x for x in t.terms if x.startswith("~")) | frozenset(
        "~" + c for a in t.strong if a.startswith("code:") and "_" in a
        for c in _part_concepts(a[5:]))


@lru_cache(maxsize=4096)
def _part_concepts(name: str) -> tuple[str, ...]:
    found = (w.EN_CONCEPT.get(part) or w.EN_CONCEPT.get(word_stem(part))
             for part in name.split("_") if len(part) >= 3)
    return tuple(c for c in found if c)


def score(a: Topic, b: Topic) -> float:
    """How likely two clauses name the same finding, in [0, 1].

    A shared anchor (same file, function, number) is strong evidence but not
    proof: a new concern about the same file shares the path and little else.
    Without anchors on one side (a paraphrase, a summary) the terms decide.
    """
    terms = _overlap(a.terms, b.terms)
    sa, sb = a.strong, b.strong
    shared = sa & sb
    if shared:
        # Same file or function is not enough: a new concern there shares the
        # anchor and little else.
        anchor = len(shared) / min(len(sa), len(sb))
        return min(1.0, 0.12 + 0.15 * anchor + 0.8 * terms)
    kinds = a.kinds & b.kinds
    if "path" in kinds:
        # Another file: the same complaint about another place is another point.
        # Never a sure match; at most an uncertain one.
        return min(0.35, 0.7 * terms)
    if kinds:
        return 0.7 * terms  # another function: likely another point, terms decide
    return terms


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    # (The union's size by arithmetic: this runs millions of times a bench.)
    return 0.5 * inter / (len(a) + len(b) - inter) + 0.5 * inter / min(len(a), len(b))


_ANCHOR_KINDS = ("path:", "code:", "num:", "id:", "line:")


def stored(t: Topic) -> list[str]:
    """A topic as a list a room's state can keep (`restored` reads it back)."""
    return sorted(t.anchors | t.terms)


def restored(items: list[str]) -> Topic:
    """The topic `stored` kept: anchors by their kind's prefix, terms the rest."""
    anchors = frozenset(i for i in items if i.startswith(_ANCHOR_KINDS))
    return Topic(anchors, frozenset(items) - anchors)

"""Reading review text: clauses, what each one does, and what it is about.

Pure functions, no state; the words it reads with are in `bot.wording`.
`bot.ledger` (reviewer turns) and `bot.owner_turn` (owner turns) decide what
the clauses mean for the task's findings; this module only reads text:

- a turn's own words are cut into clauses by `bot.points`;
- each reviewer clause is a *finding* (something is wrong, missing or must
  change), an *acknowledgement* (it is fixed), a *withdrawal* (the reviewer
  drops it), a *reference* (a repeat without content: "as I said last time",
  "지난번 지적이 아직 해결되지 않았습니다"), or a plain *fact* ("42 tests pass");
- each owner clause is a *fix report*, a *refusal* or a *promise* (a promise
  leaves the finding untouched);
- what a clause is about is its `Topic` (`bot.topics`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from bot import wording as w
from bot.topics import Topic, topic


class Act(StrEnum):
    FINDING = "finding"
    ACK = "ack"
    WITHDRAW = "withdraw"
    REFERENCE = "reference"
    FACT = "fact"
    FIX = "fix"
    DECLINE = "decline"
    PROMISE = "promise"


@dataclass(slots=True)
class Clause:
    text: str
    act: Act
    topic: Topic
    ordinals: tuple[int, ...] = ()
    remaining: bool = False  # "the other one", "나머지"
    everything: bool = False  # "both", "all", "두 가지"
    labels: tuple[str, ...] = field(default_factory=tuple)  # explicit F<n>
    # A finding only because a reviewer who is not approving states it, with no
    # request in it: in a point that repeats a finding it is the argument.
    asserted: bool = False


def selectors(text: str) -> tuple[tuple[int, ...], bool, bool, tuple[str, ...]]:
    ordinals: tuple[int, ...] = ()
    if w.MAYBE_ORDINAL.search(text):
        # (Not in code: "`first` has no upper bound" is about the argument `first`.)
        prose = w.CODE.sub(" ", text) if "`" in text else text
        ordinals = tuple(n for pattern, n in w.ORDINALS if pattern.search(prose))
        listed = w.NUMBER_LIST.search(text)
        if listed:
            ordinals += tuple(int(d) for d in re.findall(r"[1-9]", listed.group(0)))
        ordinals += tuple(int(a or b) for a, b in w.ON_NUMBER.findall(text))
        ordinals = tuple(dict.fromkeys(ordinals))
        renumbered = w.WAS_NUMBER.search(text)
        if renumbered:
            ordinals = (int(renumbered.group(1)),)  # "1. (was #2)": the point raised second
        # "1번 외에 나머지 두 건": every point but that one.
        but = {int(a or b) for a, b in w.BUT_NUMBER.findall(text)}
        ordinals = tuple(n for n in ordinals if n not in but)
    labels = tuple(m.upper() for m in w.LABEL.findall(text))
    return ordinals, bool(w.REMAINING.search(text)), _all_points(text), labels


def _all_points(text: str) -> bool:
    for match in w.ALL.finditer(text):
        if not match.group(0).isascii():
            # ("호출 경로 세 곳을 모두 확인했습니다": all the places, not all the points.)
            if match.group(0) in ("모두", "전부") and _PLACES_BEFORE.search(text, 0, match.start()):
                continue
            return True  # 모두, 둘 다, 두 가지
        rest = text[match.end():]
        if rest[:1] in ("-", "_"):
            continue  # "the all-day key": a word of its own, not "all of them"
        after = re.match(r"\s*([a-z]+)", rest.lower())
        if after is None or after.group(1) in w.ALL_OF:
            return True
    return False


# Things counted that are not points: places, files, routes.
_PLACES_BEFORE = re.compile(r"(?:곳|군데|경로|파일|페이지|화면|테이블|엔드포인트|라우트)"
                            r"(?:을|를|이|가|에서|에|은|는)?\s*$")


def _content(text: str) -> Topic:
    """The clause's topic without the words that only say "again" or "fixed"."""
    stripped = w.REFERENCE.sub(" ", w.NEG_ACK.sub(" ", text))
    return topic(stripped)


def restates(text: str) -> bool:
    """The clause says it is saying something again ("still", "여전히", "거듭").
    (Not "again" beside a verb of putting back: "restore the class and route
    `/v1/orders` through it again" asks the old way back.)"""
    return any(m.group(0).lower() != "again" or not _RESTORE.search(text)
               for m in w.REFERENCE.finditer(text))


_RESTORE = re.compile(r"\b(?:restore|reinstate|(?:bring|put|add)\s+(?:[\w`-]+\s+){0,3}?back"
                      r"|re-?enable|revert)", re.I)


def starts_new_point(text: str) -> bool:
    """"Also, …" / "또한 …": the clause opens a point of its own. (Not "또한
    … 문제도 그대로입니다", "Also, X is still …": an "also" that only joins
    it to the point before, about what is still there.)"""
    also = w.ALSO.search(text)
    if also is None:
        return False
    return not (_JOINS.match(also.group(0)) and w.STILL_AT.search(text, also.end()))


# The "also" that only joins two sentences (not "another", "new:", "하나 더").
_JOINS = re.compile(r"\s*(?:also|additionally|plus|또한)\b", re.I)


def only_joins(text: str) -> bool:
    """Whether what makes `text` open a point is a bare "also" / "또한",
    which may as well join it to the sentence before."""
    also = w.ALSO.search(text)
    return also is not None and bool(_JOINS.match(also.group(0)))


def _named(t: Topic) -> bool:
    """The clause names something besides a run or ticket number ("CI #4820
    결과입니다" names nothing a point could be about; "풀 크기는 20으로" does)."""
    return any(not a.startswith("id:") and "id:#" + a[4:] not in t.strong for a in t.strong)


@lru_cache(maxsize=8192)  # a turn's clauses are read once per round, and again for contradictions
def reviewer_clause(text: str) -> Clause:
    ordinals, remaining, everything, labels = selectors(text)
    t = topic(text)
    says_nothing = (w.ANNOUNCE.match(text.strip()) or w.HEDGE.search(text)
                    or w.NO_CONCERN.search(text) or w.NO_CONFLICT.search(text)
                    or w.NO_FINDINGS.search(text))
    if ((says_nothing and not _named(t)) or text.startswith(w.CHECKED_MARK)
            or w.NO_OBJECTION.search(text) or (w.LEAD_IN.match(text) and not w.ASKS.search(text))
            or w.REVIEW_HEADING.match(text.strip())):
        return Clause(text, Act.FACT, t, ordinals, remaining, everything, labels)
    content = _content(text)
    thin = not content.strong and len(content.terms) <= 6
    if w.WITHDRAW.search(text) and not w.NEG_ACK.search(text):
        act = Act.WITHDRAW
    elif _closes_point(text):
        act = Act.ACK  # "For the changelog, this closes my earlier comment:"
    elif w.REBUTTAL.search(text) and not content.kinds:
        act = Act.REFERENCE  # (it may cite a figure: "over-charged by about 7%")
    elif w.SAME_FAILURE.search(text) and all(a.startswith("num:") for a in content.strong):
        act = Act.REFERENCE  # ("3회 중 2회": how often, not what)
    elif (w.NEG_ACK.search(text) or w.FIX_REJECTED.search(text)
          or (w.REFERENCE.search(text) and thin)):
        act = Act.REFERENCE if thin or ordinals or remaining or everything else Act.FINDING
    elif w.ONLY_WORKS.search(text) and not (w.REQUEST.search(text) or w.IMPERATIVE.match(text)
                                            or w.AS_INTENDED.search(text)):
        # "It passes in CI only.": a success somewhere is what is wrong elsewhere.
        return Clause(text, Act.FINDING, t, ordinals, remaining, everything, labels, asserted=True)
    elif (w.ACK.search(text) or w.NOW_WORKS.search(text)) and (not w.REQUEST.search(
        # (A name in code is no request: "`NOT NULL` 제약 확인했습니다".)
        w.WEAK.sub(" ", w.NOW_WORKS.sub(" ", w.ACK.sub(" ", w.CODE.sub(" ", text))))
    ) or _verified(text)) and not w.READ_REPLY.search(text) and not _IF_PASSES.search(text):
        act = Act.ACK
    elif w.REQUEST.search(w.NO_PROBLEM.sub(" ", text)) or w.IMPERATIVE.match(text):
        # "두 가지 모두 고쳐져야 합니다", "the rest must be fixed": asks again
        # for what is open, naming nothing new.
        act = Act.REFERENCE if (everything or remaining) and thin else Act.FINDING
    elif (w.REFERENCE.search(text) and (ordinals or remaining or everything or labels)) or (
        remaining and thin
    ):
        act = Act.REFERENCE
    elif not w.POSITIVE.search(text) and (
        t.strong or (len(t.terms) >= 4 and len(text.split()) >= 3)
    ):
        # A reviewer who is not approving mostly states what is wrong, often
        # without "must" or "해야": "DEBUG level hardcoded in `setup.py`". (One
        # or two words are not a statement, however many bigrams they make.)
        return Clause(text, Act.FINDING, t, ordinals, remaining, everything, labels, asserted=True)
    else:
        act = Act.FACT
    return Clause(text, act, t, ordinals, remaining, everything, labels)


def _closes_point(text: str) -> bool:
    """"This closes my earlier comment", not "once …, that resolves my
    concern" (a condition) nor "does not close it"."""
    closes = w.CLOSES_POINT.search(text)
    if closes is None:
        return False
    return not w.NEG_ACK.search(text) and not _CONDITION_BEFORE.search(text[:closes.start()])


_CONDITION_BEFORE = re.compile(r"\b(?:if|once|when|until|unless|would|as\s+soon\s+as)\b", re.I)


# "두 요청이 동시에 들어오면 … 둘 다 통과합니다": what would get through, if.
_IF_PASSES = re.compile(r"[가-힣]면\s[^.;\n]{0,40}?통과(?:합|하)")


def _verified(text: str) -> bool:
    """"Verified `9c3e77a`: no email in the payload": what follows the colon
    is what was checked, unless it asks or fails ("Verified locally: `x`
    fails on 3.12, please pin it")."""
    lead = w.VERIFIED_LEAD.match(text)
    rest = text[lead.end():] if lead else ""
    return bool(lead) and not (w.ASKS.search(rest) or w.FAILING.search(rest)
                               or w.IMPERATIVE.match(rest.strip()))


@lru_cache(maxsize=8192)
def owner_clause(text: str) -> Clause:
    ordinals, remaining, everything, labels = selectors(text)
    if w.DECLINE.search(text) or (w.REBUTS.search(text) and not (
            w.CHANGED_NOW.search(text) or w.COMMIT.search(text) or w.FIX_PAST.search(text))):
        # ("해당 상황이 발생하지 않습니다": a rebuttal refuses, unless the clause
        # says the change made it so.)
        act = Act.DECLINE
    elif w.TODO.search(text) or (
        w.PROMISE.search(text) and not w.COMMIT.search(text) and not w.FIX_PAST.search(text)
    ) or (w.LATER.search(text) and not (w.COMMIT.search(text) or w.FIX.search(text))):
        act = Act.PROMISE  # "3번은 다음 커밋에 넣겠습니다": not done yet
    elif w.FIX.search(text) or w.FIX_NOUN.search(text) or (
        w.COMMIT.search(text) and not w.STILL_AT.search(text)
    ):
        act = Act.FIX
    else:
        act = Act.FACT
    return Clause(text, act, topic(text), ordinals, remaining, everything or bool(
        w.GENERAL.search(text)), labels)


def summary(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"

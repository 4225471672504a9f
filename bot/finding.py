"""A reviewer finding as the ledger keeps it, and how a clause is matched to one.

Matching thresholds (scores from `bot.topics.score`, in [0, 1]):
- `MATCH` (0.40) and above: the clause names that finding (a repeat, an
  acknowledgement, a fix report about it);
- `UNCERTAIN` (0.28) up to `MATCH`: the rules still decide (a finding clause
  becomes a new finding; an owner clause does not address it) but the
  finding is marked uncertain in the evidence, for the optional judge;
- below: unrelated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, Field, PrivateAttr

from bot.findings import Clause
from bot.topics import Topic, score

MATCH = 0.40

UNCERTAIN = 0.28

STRONG = 0.70  # a match this close is a repeat even when introduced as "also …"

LOOSE = 0.12  # enough for a restatement that says it is one, or a refused point

TOUCH = 0.05  # one finding open: an owner clause sharing any content answers it

MAX_TERMS = 160  # a finding's topic grows with its restatements, within reason

class FindingStatus(StrEnum):
    OPEN = "open"
    FIXED = "fixed"
    WITHDRAWN = "withdrawn"
    CONTESTED = "contested"  # a fixed finding another reviewer reversed
    RETIRED = "retired"  # an arbiter's ruling retired it for the rest of the task

# A finding another can still reverse: open, fixed in this task, or contested.
REVERSIBLE = frozenset({FindingStatus.OPEN, FindingStatus.FIXED, FindingStatus.CONTESTED})


class OwnerAction(StrEnum):
    FIX = "fix_reported"
    DECLINE = "declined"
    UNTOUCHED = "untouched"

class Finding(BaseModel):
    label: str
    author: str
    summary: str
    anchors: list[str] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)
    status: FindingStatus = FindingStatus.OPEN
    stall: int = 0
    raised_round: int = 0
    direction: int = 0  # -1 "lower / remove", +1 "raise / restore" (contradictions)
    # Values it asks for, each with the setting it gives it to ("30s@ttl";
    # states saved before settings were read hold bare values: "30s").
    values: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)
    # Its number in its author's latest numbered list: "#1" may mean it after
    # the reviewer renumbered what is left.
    number: int | None = None
    # What it asks not to do ("만들", "create"): another author asking for
    # that very thing on the same anchor reverses it.
    prohibits: list[str] = Field(default_factory=list)
    asks: list[str] = Field(default_factory=list)  # what it asks to do, in the same words
    # The reviewers whose requests it says it is against ("perf-bot의 `gzip`
    # 요청에는 반대합니다"): on a shared anchor, it reverses theirs.
    opposes: list[str] = Field(default_factory=list)
    # The reviewers it says it does not conflict with ("perf-bot의 1번은 `/static/`
    # 대상이라 이것과 겹치지 않습니다"): it never reverses theirs. And, as
    # `~stem`, what it says it is fine with being done ("I'm fine with
    # dropping the body": `~drop`): it never reverses a request to do that.
    agrees: list[str] = Field(default_factory=list)
    # The files and routes its request names (`prod.env`, `/api/`): the same
    # setting asked otherwise in another place is no reversal.
    places: list[str] = Field(default_factory=list)
    # The errors of the test output shown with it (`AssertionError`): the same
    # test failing with none of them is a new finding, and this one is fixed.
    errors: list[str] = Field(default_factory=list)
    _topic: Topic | None = PrivateAttr(default=None)

    @property
    def is_open(self) -> bool:
        return self.status in (FindingStatus.OPEN, FindingStatus.CONTESTED)

    def topic(self) -> Topic:
        # Built once and kept until the finding absorbs a restatement: a round
        # scores every clause against every finding of its author. Read from
        # the private store itself: pydantic's attribute fallback costs more
        # than the scoring on this path.
        private = self.__pydantic_private__
        cached = private.get("_topic") if private is not None else None
        if cached is None:
            cached = self._topic = Topic(frozenset(self.anchors), frozenset(self.terms))
        return cached

    def absorb(self, t: Topic) -> None:
        self.anchors = sorted(set(self.anchors) | t.anchors)
        merged = set(self.terms) | t.terms
        if len(merged) <= MAX_TERMS:
            self.terms = sorted(merged)
        self._topic = None

    def learn_setting(self, value: str | None, anchor: str) -> None:
        """The owner's fix named the setting this finding asked a value of
        (`bot.fix_values.names_set`), or said its setting has another name
        (`bot.setting_aliases`): the value keyed by it (if any), and its name."""
        if value:
            self.values = sorted({*self.values, value})
        self.anchors = sorted({*self.anchors, anchor})
        self._topic = None  # (its topic holds the anchors)

@dataclass(frozen=True, slots=True)
class Question:
    """A reading the rules are not sure of (a score between UNCERTAIN and MATCH),
    for the optional progress judge. `key` finds it again in `decisions`."""

    key: str
    side: str  # "reviewer": is the clause a repeat of `label`? "owner": what did it do to `label`?
    author: str
    text: str
    label: str
    label_summary: str
    rules_answer: str  # reviewer: "new" or the label; owner: an OwnerAction value

def question_key(side: str, author: str, text: str) -> str:
    return f"{side}:{author}:" + " ".join(text.split())[:300]

@dataclass(slots=True)
class RoundOutcome:
    """What a reviewer turn did, finding by finding."""

    events: dict[str, str] = field(default_factory=dict)  # label -> raised/repeated/...
    raised: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    uncertain: list[str] = field(default_factory=list)
    contradictions: list[tuple[str, str]] = field(default_factory=list)  # (earlier, new)
    questions: list[Question] = field(default_factory=list)
    comparisons: list[dict[str, object]] = field(default_factory=list)

    @property
    def progress(self) -> bool:
        return bool(self.raised or self.fixed or self.withdrawn)

def match_targets(
    clause: Clause,
    pool: list[Finding],
    threshold: float = MATCH,
    order: list[Finding] | None = None,
) -> tuple[list[Finding], float]:
    """The findings a clause points at: by label, by ordinal, or by content.

    Ordinals ("2번", "the second point") count in `order` (the findings in the
    order they were raised), not in what is left of the pool.
    """
    if clause.labels:
        return [f for f in pool if f.label in clause.labels], 1.0
    if clause.ordinals:
        numbered = order if order is not None else pool
        picked = [numbered_finding(numbered, n) for n in clause.ordinals if 0 < n <= len(numbered)]
        picked = [f for f in picked if f in pool]
        if picked:
            return picked, 1.0
    best, best_score = closest_finding(clause.topic, pool)
    if best is not None and best_score >= threshold:
        return [best], best_score
    return [], best_score

def numbered_finding(findings: list[Finding], n: int) -> Finding:
    """Point `n`: the finding its author last listed as n, else the n-th raised."""
    for finding in findings:
        if finding.number == n:
            return finding
    return findings[n - 1]

def closest_finding(mine: Topic, pool: list[Finding]) -> tuple[Finding | None, float]:
    """The finding of `pool` whose topic scores highest against `mine`."""
    best, best_score = None, 0.0
    terms, strong = mine.terms, mine.strong
    for finding in pool:
        theirs = finding.topic()
        if terms.isdisjoint(theirs.terms) and strong.isdisjoint(theirs.strong):
            continue  # `score` is 0 without a shared term or anchor
        s = score(mine, theirs)
        if s > best_score:
            best, best_score = finding, s
    return best, best_score

def apply_round(
    finding: Finding,
    action: OwnerAction | None,
    repeated: set[str],
    acked: set[str],
    dropped: set[str],
    round_no: int,
    out: RoundOutcome,
) -> None:
    """What a reviewer turn did to one of its author's findings: its status,
    stall count and history, given what the owner's turn before did to it."""
    label = finding.label
    owner_part = f"{action.value}, " if action is not None else ""
    if label in dropped and finding.is_open:
        finding.status, finding.stall = FindingStatus.WITHDRAWN, 0
        event = "withdrawn"
        out.withdrawn.append(label)
    elif label in acked and finding.is_open:
        finding.status, finding.stall = FindingStatus.FIXED, 0
        event = "acknowledged"
        out.fixed.append(label)
    elif label in repeated:
        event = "repeated"
        if finding.status is FindingStatus.RETIRED:
            finding.stall += 1  # raised again against a ruling: never new
            event = "repeated against a ruling"
        elif not finding.is_open:
            finding.status = FindingStatus.OPEN  # a fix that did not hold
            event = "repeated (reopened)"
        elif action is OwnerAction.FIX:
            event = "repeated (fix rejected)"  # stall count unchanged
        else:
            finding.stall += 1
    elif finding.is_open and action is OwnerAction.FIX:
        finding.status, finding.stall = FindingStatus.FIXED, 0
        event = "fixed"
        out.fixed.append(label)
    else:
        if finding.is_open and action is not None:
            finding.history.append(f"R{round_no}: {action.value}, unmentioned")
        return
    finding.history.append(f"R{round_no}: {owner_part}{event}")
    out.events[label] = event

def supersede(
    new: Finding, mine: list[Finding], repeated: set[str], round_no: int, out: RoundOutcome
) -> None:
    """A new error in the same test is a new finding, and the old one is fixed."""
    tests = test_anchors(new)
    if not tests:
        return
    for old in mine:
        if old.is_open and old.label not in repeated and tests & set(old.anchors):
            old.status, old.stall = FindingStatus.FIXED, 0
            old.history.append(f"R{round_no}: fixed (superseded by {new.label})")
            out.events[old.label] = "fixed"
            out.fixed.append(old.label)


def is_made(finding: Finding, reported: frozenset[str]) -> bool:
    """The change it asked for is made: it is fixed, or the owner's turn
    before just reported a fix for it (whoever has confirmed it)."""
    return finding.status is FindingStatus.FIXED or finding.label in reported


def agreed(a: Finding, b: Finding) -> bool:
    """Either says it does not conflict with the other's author ("agree with
    sec-bot"), or that it is fine with what the other asks done ("I'm fine
    with dropping the body" beside "Drop `request_body`"): never a reversal."""
    if b.author in a.agrees or a.author in b.agrees:
        return True
    for one, other in ((a, b), (b, a)):
        fine = [x[1:] for x in one.agrees if x.startswith("~")]
        if fine and not _keys(one) & _keys(other) and any(
                ask.startswith(verb) or (verb.startswith(ask) and len(ask) >= 3)
                for verb in fine for ask in other.asks if not ask.startswith("~")):
            # (Not when it asks a value of its own for the other's setting:
            # "I'm fine with raising the timeout. `IDLE_TIMEOUT` should be 90s"
            # against 300s agrees on the way, not on the value.)
            return True
    return False


def _keys(finding: Finding) -> set[str]:
    """The settings it asks a value of."""
    return {key for v in finding.values if (key := v.rpartition("@")[2])}


def test_anchors(finding: Finding) -> set[str]:
    """Its anchors that name a test (`test_backfill`, `test_legacy.py`,
    `tests/payments`; not `pytest`, `latest`, `contest`)."""
    return {a for a in finding.anchors if _TEST_NAME.search(a)}


_TEST_NAME = re.compile(r"^(?:code|path):(?:.*[/_.])?tests?(?:[_./]|$)")

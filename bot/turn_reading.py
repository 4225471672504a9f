"""One reviewer's part of a turn as the ledger reads it (`Reading`): its
clauses, points and numbers, what each point is about, and what the reading
has done so far to the author's findings. `bot.reviewer_turn` reads the
clauses in order, step by step, over one `Reading`. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot import wording as w
from bot.finding import REVERSIBLE, Finding, OwnerAction
from bot.findings import Act, Clause, reviewer_clause
from bot.points import items, point_numbers, replies
from bot.textscan import after_output, errors_beside, shows_failure
from bot.topics import Topic, topic


@dataclass
class Reading:
    """One author's part of a turn, as its clauses are read in order: what
    the turn has done to the ledger so far, and what every step reads."""

    author: str
    mine: list[Finding]  # the author's findings, in the order raised
    others: set[str]  # the other reviewers
    open_before: list[Finding]  # the author's findings open before this turn
    rivals: list[Finding]  # other reviewers' points this turn could reverse
    owner: dict[str, OwnerAction]  # what the owner's turn before did to each finding
    decisions: dict[str, str]  # the progress judge's answers, by question key
    parsed: list[tuple[int, str, Clause]]
    numbers: dict[int, int]  # the number each numbered point carries
    by_number: dict[int, int]  # points that answer a finding under its number
    point_topic: dict[int, Topic]  # what each point is about, all its clauses together
    point_text: dict[int, str]
    quiet: bool
    doubts: bool
    messages: list[str]
    repeated: set[str] = field(default_factory=set)
    acked: set[str] = field(default_factory=set)
    dropped: set[str] = field(default_factory=set)
    new: list[Finding] = field(default_factory=list)
    unsure: list[Finding] = field(default_factory=list)  # new findings close to an old one
    # The finding each point is about.
    point_finding: dict[int, Finding] = field(default_factory=dict)
    # What a point's "아직 해결되지 않았습니다" repeated.
    point_refs: dict[int, list[Finding]] = field(default_factory=dict)
    # The findings a point said again in so many words ("다시 정리하면, … 점이
    # 모두 남아 있습니다"), by point.
    restated: dict[int, set[str]] = field(default_factory=dict)
    taken_back: set[int] = field(default_factory=set)  # points that took back what this turn raised
    point_acked: dict[int, set[str]] = field(default_factory=dict)  # what each point acknowledged
    # New findings from a point's statement without a request ("Account-level
    # settings can be changed by anyone"): if the point then repeats a finding,
    # that statement was the argument for it, not a finding of its own.
    tentative: dict[int, Finding] = field(default_factory=dict)
    # What the owner's turn before said, when it refused or put off a finding.
    reasons: Topic | None = None
    # What the statement itself named (the tentative finding holds its whole
    # point's names, which may belong to the point's other sentences).
    stated: dict[int, Topic] = field(default_factory=dict)
    # New findings from a clause that names a problem without asking for
    # anything ("…한 번만 빠져도 깨집니다"): before a request for a point the
    # owner refused, it was the argument against the refusal.
    unasked: list[Finding] = field(default_factory=list)
    # Points where the turn announced a new one ("그리고 새로 하나
    # 발견했습니다"): what follows there is no argument for an older point.
    announced: set[int] = field(default_factory=set)
    # Points begun in the middle of a paragraph (`split`): what follows there
    # is no argument for the point the paragraph began with.
    split_points: set[int] = field(default_factory=set)

    @classmethod
    def start(cls, findings: list[Finding], author: str, messages: list[str],
              owner: dict[str, OwnerAction], decisions: dict[str, str],
              reasons: Topic | None = None) -> Reading:
        mine = [f for f in findings if f.author == author]
        parsed = [(point, text, reviewer_clause(text)) for point, text in items(messages)]
        numbers = point_numbers(messages)
        point_topic: dict[int, Topic] = {}
        point_text: dict[int, str] = {}
        for point, text, clause in parsed:
            point_text[point] = point_text.get(point, "") + " " + text
            t = point_topic.get(point)
            point_topic[point] = clause.topic if t is None else Topic(
                t.anchors | clause.topic.anchors, t.terms | clause.topic.terms
            )
        for point, quote in replies(messages).items():
            # "> `created_at`을 … 형식으로 변경했습니다 / 이 부분은 받아들이기
            # 어렵습니다. … 원복해 주십시오": what a point answers under a
            # quotation is what the quotation names.
            if point in point_topic:
                named = {a for a in topic(quote).strong if a.startswith(("code:", "path:"))}
                t = point_topic[point]
                point_topic[point] = Topic(t.anchors | named, t.terms)
        return cls(
            author=author, mine=mine, others={f.author for f in findings if f.author != author},
            open_before=[f for f in mine if f.is_open],
            rivals=[f for f in findings if f.author != author and f.status in REVERSIBLE],
            owner=owner, decisions=decisions, reasons=reasons, parsed=parsed, numbers=numbers,
            by_number=_reply_numbers(parsed, numbers, mine),
            point_topic=point_topic, point_text=point_text,
            # "Checked against the partner SDKs: both send `offset`. No findings
            # from me.": a turn that says it asks for nothing states facts.
            quiet=any(c.act is Act.FACT and w.NO_FINDINGS.search(t) for _, t, c in parsed),
            # A turn that finds a reported fix wanting ("변경이 들어가 있지
            # 않습니다"): its statements about the commit, and about what the fix
            # should have changed, are the evidence, not new points.
            # (Or shows a failing run: "FAILED tests/…::test_records_before_value"
            # after a fix was reported says the same.)
            doubts=_doubts(parsed) or (OwnerAction.FIX in owner.values()
                                       and shows_failure(messages)),
            messages=messages,
        )

    def announce(self, point: int, at: int) -> None:
        """The clause `at` announced a new point: the point is what follows it."""
        self.announced.add(point)
        rest = [(t, c) for p, t, c in self.parsed[at + 1:] if p == point]
        if rest:
            self.point_text[point] = " " + " ".join(t for t, _ in rest)
            self.point_topic[point] = Topic(frozenset().union(*(c.topic.anchors for _, c in rest)),
                                            frozenset().union(*(c.topic.terms for _, c in rest)))

    def split(self, point: int, at: int) -> None:
        """A point of its own begins at clause `at`, in the middle of a
        paragraph: the point is what follows, read like any other (it may
        say an older finding again)."""
        self.split_points.add(point)
        self.point_finding.pop(point, None)
        self.point_refs.pop(point, None)
        rest = [(t, c) for p, t, c in self.parsed[at:] if p == point]
        self.point_text[point] = " " + " ".join(t for t, _ in rest)
        self.point_topic[point] = Topic(frozenset().union(*(c.topic.anchors for _, c in rest)),
                                        frozenset().union(*(c.topic.terms for _, c in rest)))

    def errors_of(self, text: str) -> frozenset[str]:
        """The errors in the fenced test output beside a clause."""
        message = next((m for m in self.messages if text[:60] in m), "")
        return errors_beside(message, text)

    def after_output(self, text: str) -> bool:
        """The clause's line comes right after a fenced output."""
        message = next((m for m in self.messages if text[:60] in m), "")
        return after_output(message, text)

    def still(self) -> list[Finding]:
        """The author's open findings this turn has not yet called fixed or dropped."""
        return [f for f in self.open_before
                if f.label not in self.acked and f.label not in self.dropped]


def _doubts(parsed: list[tuple[int, str, Clause]]) -> bool:
    """The turn says a fix did not work ("해결되지 않았습니다", "still fails").
    (Asked only for a bare acknowledgement, not for every clause.)"""
    return any(c.act is not Act.ACK and (w.NEG_ACK.search(t) or w.FIX_REJECTED.search(t)
                                         or w.PRESENT_BUT.search(t))
               for _, t, c in parsed)


def _reply_numbers(
    parsed: list[tuple[int, str, Clause]], numbers: dict[int, int], mine: list[Finding]
) -> dict[int, int]:
    """Numbered points that answer the author's findings by number: a list
    that starts with "(1) confirmed." or does not start at 1 ("(3) looks good.
    (2) still …") replies point by point; a list of new points starts at 1."""
    if not numbers or not mine:
        return {}
    first: dict[int, Clause] = {}
    for point, _, clause in parsed:
        first.setdefault(point, clause)
    answers = any(first[p].act in (Act.ACK, Act.REFERENCE, Act.WITHDRAW)
                  for p in numbers if p in first)
    if not answers and min(numbers.values()) == 1:
        return {}
    return {p: n for p, n in numbers.items() if n <= len(mine) or any(f.number == n for f in mine)}

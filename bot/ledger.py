"""The findings ledger: what each round did to each reviewer finding.

The ledger lives for the task. A new epoch resets the counters (each
finding's stall count included), never the findings. Pure: `read_owner()`
reads an owner turn, `judge_round()` reads a reviewer turn against the ledger
and the owner's turn before it and returns what happened, mutating the
findings it is given.

Matching thresholds (scores from `bot.findings.score`, in [0, 1]):
- `MATCH` (0.40) and above: the clause names that finding (a repeat, an
  acknowledgement, a fix report about it);
- `UNCERTAIN` (0.28) up to `MATCH`: the rules still decide (a finding clause
  becomes a new finding; an owner clause does not address it) but the
  finding is marked uncertain in the evidence, for the optional judge;
- below: unrelated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, Field, PrivateAttr

from bot.demands import (
    declares_conflict,
    direction,
    mentions_conflict,
    prohibited,
    requests,
    setting_values,
)
from bot.findings import (
    Act,
    Clause,
    Topic,
    clauses,
    items,
    owner_clause,
    point_numbers,
    replies,
    restates,
    reviewer_clause,
    score,
    starts_new_point,
    summary,
    topic,
)

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


def _targets(
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
        picked = [_numbered(numbered, n) for n in clause.ordinals if 0 < n <= len(numbered)]
        picked = [f for f in picked if f in pool]
        if picked:
            return picked, 1.0
    best, best_score = _closest(clause.topic, pool)
    if best is not None and best_score >= threshold:
        return [best], best_score
    return [], best_score


def _numbered(findings: list[Finding], n: int) -> Finding:
    """Point `n`: the finding its author last listed as n, else the n-th raised."""
    for finding in findings:
        if finding.number == n:
            return finding
    return findings[n - 1]


def _closest(mine: Topic, pool: list[Finding]) -> tuple[Finding | None, float]:
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


def read_owner(
    findings: list[Finding],
    messages: list[str],
    decisions: dict[str, str] | None = None,
    questions: list[Question] | None = None,
) -> dict[str, OwnerAction]:
    """What the owner's turn did to each open finding.

    A clause that names a finding without a fix or a refusal is a question for
    the optional judge (`questions`); `decisions` are its answers, by key.
    """
    open_findings = [f for f in findings if f.is_open]
    actions = {f.label: OwnerAction.UNTOUCHED for f in open_findings}
    if not open_findings:
        return actions
    general: list[Clause] = []
    numbers = point_numbers(messages)
    addressed: set[str] = set()
    point_targets: dict[int, list[Finding]] = {}  # what each bullet or line answers
    quoted = {point: _quoted_finding(quote, findings) for point, quote in replies(messages).items()}
    # Within a bullet or a row, a bare "반영." / "Done (abc)." answers what the
    # point's other clauses name, wherever it stands in the point.
    for point, text in sorted(items(messages),
                              key=lambda item: (item[0], _thin(owner_clause(item[1]).topic))):
        clause = owner_clause(text)
        if point in quoted and not (clause.ordinals or clause.labels):
            # Written under a quotation of the point it answers.
            answered = quoted[point]
            if answered is None or not answered.is_open or clause.act is Act.FACT:
                continue  # a quote of something else, or a point already settled
            addressed.add(answered.label)
            actions[answered.label] = _stronger(actions[answered.label], clause.act)
            continue
        if clause.act is Act.FACT:
            named, _ = _targets(clause, open_findings)
            if named:
                key = question_key("owner", "", text)
                label = named[0].label
                answer = (decisions or {}).get(key)
                if answer in {a.value for a in OwnerAction}:
                    actions[label] = OwnerAction(answer)
                    addressed.add(label)
                elif questions is not None:
                    questions.append(Question(key, "owner", "", summary(text, 300), label,
                                              named[0].summary, actions[label].value))
            continue
        named = _named_author(text, open_findings)
        if named and (clause.everything or not _targets(clause, named, UNCERTAIN)[0]) and not (
            clause.ordinals or clause.labels
        ):
            # "cost-bot 의견 두 건 반영했습니다", "sec-bot's point: keeping it":
            # the reviewer named is whose findings the clause answers.
            for finding in named:
                addressed.add(finding.label)
                actions[finding.label] = _stronger(actions[finding.label], clause.act)
            continue
        # An owner answering a point rarely restates it: a looser match will do.
        # "2번" counts in the reviewer's list as it was raised, fixed ones included.
        targets, best = _targets(clause, open_findings, UNCERTAIN, order=findings)
        settled = _about_settled(clause, findings, best)
        if settled:
            targets = []
        if not targets and not settled:
            targets = _only_holder(clause.topic, open_findings)
        if not targets and not settled and len(open_findings) == 1 and best >= TOUCH:
            targets = open_findings  # one point open, and the clause touches it
        if not targets and not clause.everything and not clause.topic.strong:
            # "(3) Now returns 400. Commit `9c4d7e0`.": the commit belongs to
            # the point its bullet answers, not to every finding.
            targets = point_targets.get(point, [])
        if not targets and not settled and point in numbers and numbers[point] <= len(findings):
            # "(2) I don't think we need a dedup table.": the answer to point 2.
            by_number = _numbered(findings, numbers[point])
            targets = [by_number] if by_number.is_open else []
        if not targets and clause.act is Act.DECLINE:
            # "On the email matching: not changing it": a refusal without the
            # finding's words is about the point already in dispute.
            disputed_now = [f for f in open_findings if f.stall >= 1 or _last_refused(f)]
            if len(disputed_now) == 1:
                targets = disputed_now
        if not targets:
            general.append(clause)
            continue
        point_targets.setdefault(point, targets)
        for finding in targets:
            addressed.add(finding.label)
            actions[finding.label] = _stronger(actions[finding.label], clause.act)
    for clause in general:
        # "반영했습니다 (abc123)" or "both points: not changing" with nothing
        # more specific: it speaks of every finding the turn did not name.
        thin = _thin(clause.topic)
        if not (clause.everything or thin):
            continue
        # "Left both as they are" also refuses what the turn only promised.
        refuses_all = clause.everything and clause.act is Act.DECLINE
        for finding in open_findings:
            if finding.label not in addressed or (
                refuses_all and actions[finding.label] is OwnerAction.UNTOUCHED
            ):
                actions[finding.label] = _stronger(actions[finding.label], clause.act)
    return actions


def _named_author(text: str, findings: list[Finding]) -> list[Finding]:
    """The open findings of the one reviewer the clause names (none when it
    names none, or several: "sec-bot and perf-bot disagree")."""
    lowered = text.lower()
    authors = {f.author for f in findings if f.author and f.author.lower() in lowered}
    if len(authors) != 1:
        return []
    return [f for f in findings if f.author in authors]


def _thin(t: Topic) -> bool:
    """A clause that names nothing ("반영했습니다 (abc123)", "Done."): it answers
    whatever its bullet or its turn is about."""
    return not t.strong and len(t.terms) <= 3


def _quoted_finding(quote: str, findings: list[Finding]) -> Finding | None:
    """The finding a quotation repeats (the owner quoting the point it answers)."""
    best, score_ = _closest(topic(quote), findings)
    return best if score_ >= MATCH else None


def _about_settled(clause: Clause, findings: list[Finding], best_open: float) -> bool:
    """The clause is closer to a finding already fixed or withdrawn than to any
    open one ("Added a test for the raw-body path" after that point was fixed):
    it says nothing about what is still open."""
    if clause.ordinals or clause.labels:
        return False
    settled = [f for f in findings if not f.is_open]
    if not settled:
        return False
    _, best = _closest(clause.topic, settled)
    return best >= TOUCH and best > best_open


def _only_holder(t: Topic, findings: list[Finding]) -> list[Finding]:
    """The one finding that names the clause's file, identifier or number ("`==`
    stays" when only F1 ever spoke of `==`); none when several or none do."""
    names = {a for a in t.strong if a.startswith(("code:", "path:", "num:"))}
    if not names:
        return []
    holders = [f for f in findings if not names.isdisjoint(f.topic().strong)]
    return holders if len(holders) == 1 else []


def _last_refused(finding: Finding) -> bool:
    return bool(finding.history) and "declined" in finding.history[-1]


def _stronger(current: OwnerAction, act: Act) -> OwnerAction:
    # A refusal anywhere wins over a fix report about the same finding; a
    # promise leaves the finding untouched.
    if act is Act.DECLINE:
        return OwnerAction.DECLINE
    if act is Act.FIX and current is OwnerAction.UNTOUCHED:
        return OwnerAction.FIX
    return current


def judge_round(
    findings: list[Finding],
    turns: Iterable[tuple[str, list[str]]],
    owner: dict[str, OwnerAction] | None,
    round_no: int,
    decisions: dict[str, str] | None = None,
) -> RoundOutcome:
    """Apply one reviewer turn (per author) to the ledger, after the owner's turn.

    `owner` is None when the reviewer turn completes no round (it spoke before
    any owner turn); findings it raises still count, in the next round.
    `decisions`: the optional judge's answers to the rules' questions, by key.
    """
    out = RoundOutcome()
    owner = owner or {}
    for author, messages in turns:
        _judge_author(findings, author, messages, owner, round_no, out, decisions or {})
    _reversals(findings, out, round_no)
    return out


def _reversals(findings: list[Finding], out: RoundOutcome, round_no: int) -> None:
    """A new finding that reverses another: the same anchor, the opposite request
    or another value. Another author's open or fixed finding makes a
    contradiction (a fixed one becomes contested); the author's own is withdrawn."""
    new = {label for label in out.raised}
    for finding in [f for f in findings if f.label in new]:
        for other in findings:
            if other.label == finding.label or other.status not in (
                FindingStatus.OPEN, FindingStatus.FIXED, FindingStatus.CONTESTED
            ):
                continue
            if other.label in new and int(other.label[1:]) > int(finding.label[1:]):
                continue  # each pair of this turn's findings once
            if not _reverses(finding, other):
                continue
            if other.author == finding.author and finding.direction * other.direction != -1:
                continue  # its own finding with another number: a restatement, not a reversal
            if other.author == finding.author:
                other.status, other.stall = FindingStatus.WITHDRAWN, 0
                other.history.append(
                    f"R{round_no}: withdrawn (reversed by its author in {finding.label})"
                )
                out.withdrawn.append(other.label)
                continue
            if other.status is FindingStatus.FIXED:
                other.status = FindingStatus.CONTESTED
                other.history.append(f"R{round_no}: contested by {finding.label}")
            out.contradictions.append((other.label, finding.label))


def _probe(t: Topic, text: str) -> Finding:
    """A clause dressed as a finding, to compare with the ledger's."""
    return Finding(label="F0", author="", summary="", anchors=sorted(t.anchors),
                   direction=direction(text), values=sorted(setting_values(text)),
                   prohibits=sorted(prohibited(text)), terms=sorted(t.terms))


def _reverses(a: Finding, b: Finding) -> bool:
    shared = {x for x in set(a.anchors) & set(b.anchors) if x.startswith(("code:", "path:"))}
    if not shared:
        return False
    if a.direction * b.direction == -1:
        return True
    for one, other in ((a, b), (b, a)):
        # "미리 만들지 말고" against a request that holds "만들어 두어야".
        if any(v in other.terms and v not in other.prohibits for v in one.prohibits):
            return True
    # Another value for the same setting: "30s" against "1s", "365" against "30".
    code = any(x.startswith("code:") for x in shared)
    return code and _other_value(a, b)


def _other_value(a: Finding, b: Finding) -> bool:
    """Both ask a value for one setting, and not the same one. Values given to
    named settings are compared setting by setting; a value given to a setting
    the other finding never names is about something else."""
    for one, other in ((a, b), (b, a)):
        # One asks to remove the very value the other asked to set.
        gone = {v[1:] for v in one.values if v.startswith("!")}
        if gone & {v for v in other.values if "@" in v and not v.endswith("@")}:
            return True
    va = _by_setting([v for v in a.values if not v.startswith("!")])
    vb = _by_setting([v for v in b.values if not v.startswith("!")])
    if not va or not vb:
        return False
    common = (va.keys() & vb.keys()) - {""}
    if common:
        return any(va[k].isdisjoint(vb[k]) for k in common)
    for mine, other in ((va, b), (vb, a)):
        named = mine.keys() - {""}
        if named and not any(f"code:{k}" in other.anchors for k in named):
            return False  # "`LOGIN_LIMIT` to 5" and "`SEARCH_LIMIT` to 120"
    return not {v for vs in va.values() for v in vs} & {v for vs in vb.values() for v in vs}


def _by_setting(stored: list[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item in stored:
        value, _, key = item.rpartition("@") if "@" in item else (item, "", "")
        out.setdefault(key, set()).add(value)
    return out


def _judge_author(
    findings: list[Finding],
    author: str,
    messages: list[str],
    owner: dict[str, OwnerAction],
    round_no: int,
    out: RoundOutcome,
    decisions: dict[str, str],
) -> None:
    mine = [f for f in findings if f.author == author]
    open_before = [f for f in mine if f.is_open]
    repeated: set[str] = set()
    acked: set[str] = set()
    dropped: set[str] = set()
    new: list[Finding] = []
    unsure: list[Finding] = []  # new findings close to an old one (the judge's questions)
    point_finding: dict[int, Finding] = {}  # the finding each point is about
    # New findings from a point's statement without a request ("Account-level
    # settings can be changed by anyone"): if the point then repeats a finding,
    # that statement was the argument for it, not a finding of its own.
    tentative: dict[int, Finding] = {}
    parsed = [(point, text, reviewer_clause(text)) for point, text in items(messages)]
    numbers = point_numbers(messages)
    point_topic: dict[int, Topic] = {}
    point_text: dict[int, str] = {}
    for point, text, _ in parsed:
        point_text[point] = point_text.get(point, "") + " " + text
    by_number = _reply_numbers(parsed, numbers, mine)
    # Other reviewers' points this turn could reverse (several reviewers only).
    rivals = [f for f in findings if f.author != author and f.status in (
        FindingStatus.OPEN, FindingStatus.FIXED, FindingStatus.CONTESTED)]
    for point, _, clause in parsed:
        t = point_topic.get(point)
        point_topic[point] = clause.topic if t is None else Topic(
            t.anchors | clause.topic.anchors, t.terms | clause.topic.terms
        )
    for point, text, clause in parsed:
        if clause.act is Act.FACT:
            continue
        numbered = point in by_number and not (clause.ordinals or clause.labels)
        if numbered and not starts_new_point(text):
            # "(2) unchanged: dedupe on `event.id`": an answer under the number
            # of the point it answers.
            clause = Clause(text, clause.act, clause.topic, (by_number[point],), clause.remaining,
                            clause.everything, clause.labels, clause.asserted)
        if clause.act is Act.REFERENCE:
            referenced = _referenced(clause, open_before, acked | dropped, mine)
            repeated.update(f.label for f in referenced)
            if len(referenced) == 1:
                # "`e72c915` doesn't fix it. X is still Y.": the rest of the
                # point explains the one finding it refers to.
                point_finding.setdefault(point, referenced[0])
            argument = tentative.pop(point, None)
            if referenced and argument is not None and _lone(point_finding, argument):
                # "WAF는 실패 횟수를 모릅니다. …전에는 승인할 수 없습니다": the
                # statement was the argument for the points it refers to.
                new.remove(argument)
                del point_finding[point]
                if len(referenced) == 1:
                    referenced[0].absorb(argument.topic())
                    point_finding[point] = referenced[0]
            continue
        pool = open_before if clause.act in (Act.ACK, Act.WITHDRAW) else mine
        pool = [f for f in pool if f.label not in acked and f.label not in dropped]
        targets, best = _targets(clause, pool, order=mine)
        if clause.act is Act.FINDING and not targets:
            # The point's other sentences may carry its file and function.
            whole = Clause(text, clause.act, point_topic[point], clause.ordinals,
                           clause.remaining, clause.everything, clause.labels, clause.asserted)
            targets, best = _targets(whole, pool, order=mine)
            clause = whole if targets else clause
        reversal = bool(clause.act is Act.FINDING and not clause.asserted and rivals and any(
            _reverses(_probe(clause.topic, text), f) for f in rivals))
        if reversal:
            targets = []  # the opposite of another reviewer's point: a point of its own
        elif clause.act is Act.FINDING and targets and any(
            _reverses(_probe(clause.topic, text), f) for f in targets
        ):
            targets = []  # the opposite of an earlier request: a new finding (a reversal)
        elif clause.act is Act.FINDING and starts_new_point(text) and best < STRONG:
            targets = []  # "Another problem in …": a point of its own
        elif (
            clause.act is Act.FINDING
            and targets
            and best < STRONG
            and not clause.labels
            and not restates(text)
            and all(_other_point(point_topic[point], f) for f in targets)
        ):
            targets = []  # the same function, but a file or name it never named: a new point
        elif clause.act is Act.FINDING and not targets and open_before:
            # "…는 그대로입니다", "still …": said again, in other words. Or a
            # paraphrase of a point the owner just refused or left alone.
            # What this turn already called fixed or dropped is not repeated by it.
            still = [f for f in open_before if f.label not in acked and f.label not in dropped]
            refused = [f for f in still if owner.get(f.label) is not OwnerAction.FIX]
            loose, _ = _targets(clause, still, LOOSE)
            if restates(text):
                # "My view is unchanged: X and Y" may name several points at once.
                close = [f for f in still if score(clause.topic, f.topic()) >= LOOSE]
                # Nothing close enough: a restatement repeats what is still open.
                targets = close or refused or still
            elif loose and loose[0] in refused and not _other_point(clause.topic, loose[0]):
                targets = loose
        if clause.act is Act.ACK:
            if clause.everything and len(targets) < 2:
                targets = open_before  # "both look right", "모두 확인했습니다"
            if not targets:
                fixed_now = [f for f in open_before if owner.get(f.label) is OwnerAction.FIX]
                # "Confirmed" with one point open is about it, unless it names
                # something else (the owner's new event) or the owner refused it.
                lone = (len(open_before) == 1 and not clause.topic.strong
                        and owner.get(open_before[0].label) is not OwnerAction.DECLINE)
                targets = fixed_now or (open_before if lone else [])
            acked.update(f.label for f in targets)
            continue
        if clause.act is Act.WITHDRAW:
            if not targets:
                declined = [f for f in open_before if owner.get(f.label) is OwnerAction.DECLINE]
                targets = declined or (open_before if len(open_before) == 1 else [])
            dropped.update(f.label for f in targets)
            continue
        # A finding clause: a repeat of one of the author's findings, or new.
        if UNCERTAIN <= best < MATCH and mine:
            key = question_key("reviewer", author, text)
            answer = decisions.get(key)
            closest = max(mine, key=lambda f: score(clause.topic, f.topic()))
            if answer == "new":
                targets = []
            elif answer is not None and any(f.label == answer for f in mine):
                targets = [f for f in mine if f.label == answer]
            else:
                out.questions.append(Question(
                    key, "reviewer", author, summary(text, 300), closest.label, closest.summary,
                    targets[0].label if targets else "new",
                ))
        out.comparisons.append(
            {"author": author, "clause": summary(text, 80), "best_score": round(best, 3),
             "matched": [f.label for f in targets]}
        )
        if targets:
            for finding in targets:
                repeated.add(finding.label)
                if len(targets) == 1:  # "2번과 3번은 아직" speaks of two: it teaches neither
                    finding.absorb(clause.topic)
            argument = tentative.pop(point, None)
            if argument is not None and _lone(point_finding, argument):
                new.remove(argument)
                targets[0].absorb(argument.topic())
                point_finding[point] = targets[0]
            point_finding.setdefault(point, targets[0])
            continue
        same_point = point_finding.get(point)
        if same_point is not None and not starts_new_point(text) and not reversal:
            # A second sentence of one point explains it; it is not a new finding.
            same_point.absorb(clause.topic)
            if not clause.asserted and tentative.get(point) is same_point:
                del tentative[point]  # the point asks for something: a finding of its own
            continue
        twin, _ = _targets(clause, new)
        if twin and point in numbers and any(
            p != point and f is twin[0] and p in numbers for p, f in point_finding.items()
        ):
            twin = []  # "1. …" and "2. …" of one list are two points, however alike
        if twin:
            twin[0].absorb(clause.topic)  # the same new point, said again in this turn
            point_finding[point] = twin[0]
            if not clause.asserted and tentative.get(point) is twin[0]:
                del tentative[point]  # the point asks for something: a finding of its own
            continue
        finding = Finding(
            label=f"F{len(findings) + len(new) + 1}",
            author=author,
            summary=_summary(text, point_text[point].strip()),
            anchors=sorted(point_topic[point].anchors),
            terms=sorted(point_topic[point].terms),
            raised_round=round_no,
            direction=direction(point_text[point]),
            prohibits=sorted(prohibited(point_text[point])),
            values=sorted(setting_values(point_text[point])),
        )
        new.append(finding)
        point_finding[point] = finding
        if best >= UNCERTAIN:
            unsure.append(finding)
        if clause.asserted:
            tentative[point] = finding
    for n, finding in enumerate(new, start=len(findings) + 1):
        finding.label = f"F{n}"  # in order, after any argument folded back into its point
    out.uncertain.extend(f.label for f in unsure if f in new)
    for point, n in numbers.items():
        listed = point_finding.get(point)
        if listed is not None:  # this turn's list numbers its points anew
            for finding in [*mine, *new]:
                if finding.number == n and finding is not listed:
                    finding.number = None
            listed.number = n
    for finding in mine:
        _apply(finding, owner.get(finding.label), repeated, acked, dropped, round_no, out)
    for finding in new:
        finding.history.append(f"R{round_no}: raised")
        out.events[finding.label] = "raised"
        out.raised.append(finding.label)
        _supersede(finding, mine, repeated, round_no, out)
    findings.extend(new)


def _lone(point_finding: dict[int, Finding], finding: Finding) -> bool:
    """The finding stands for one point of the turn, not several."""
    return sum(1 for f in point_finding.values() if f is finding) == 1


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


def _other_point(t: Topic, finding: Finding) -> bool:
    """A new point rather than the finding again: the same file or function with
    a name the finding never had, or another file altogether. A
    clause that names nothing the finding could clash with is judged by terms."""
    known = {a for a in finding.anchors if a.startswith(("path:", "code:"))}
    names = {a for a in t.strong if a.startswith(("path:", "code:"))}
    if names & known:
        return bool(names - known)
    # No name in common, but both name files: another place. (Two functions are
    # often the same point named by its caller and by its helper: terms decide.)
    return any(a.startswith("path:") for a in names) and any(
        a.startswith("path:") for a in known
    )


def _referenced(
    clause: Clause, open_before: list[Finding], settled: set[str], order: list[Finding]
) -> list[Finding]:
    if clause.labels:
        return [f for f in open_before if f.label in clause.labels]
    if clause.ordinals and not clause.everything:
        # "2번은 여전히": point 2 of the author's list, as `_targets` counts it.
        picked = [_numbered(order, n) for n in clause.ordinals if 0 < n <= len(order)]
        return [f for f in picked if f in open_before]
    if clause.remaining:
        return [f for f in open_before if f.label not in settled]
    # No selector ("as I said last time"): every finding still open.
    return [f for f in open_before if f.label not in settled]


def _summary(first: str, point: str) -> str:
    """What a finding asks for, where its point says so ("Set X to the list"),
    rather than its first sentence (often the problem found): the summary names
    the demand in rulings, options and `/arbiter status`. A request that names
    nothing ("1분으로 줄여 주십시오") keeps the sentence that says what it is about."""
    asked = requests(point)
    if asked == point:
        return summary(first)
    if any(a.startswith(("path:", "code:")) for a in topic(asked).anchors):
        return summary(asked)
    return summary(first if len(first) > 100 else f"{first} {asked}")


def _apply(
    finding: Finding,
    action: OwnerAction | None,
    repeated: set[str],
    acked: set[str],
    dropped: set[str],
    round_no: int,
    out: RoundOutcome,
) -> None:
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


def _supersede(
    new: Finding, mine: list[Finding], repeated: set[str], round_no: int, out: RoundOutcome
) -> None:
    """A new error in the same test is a new finding, and the old one is fixed."""
    tests = {a for a in new.anchors if "test" in a and not a.startswith("num:")}
    if not tests:
        return
    for old in mine:
        if old.is_open and old.label not in repeated and tests & set(old.anchors):
            old.status, old.stall = FindingStatus.FIXED, 0
            old.history.append(f"R{round_no}: fixed (superseded by {new.label})")
            out.events[old.label] = "fixed"
            out.fixed.append(old.label)


def declared_conflict(findings: list[Finding], messages: list[str]) -> tuple[str, str] | None:
    """An owner turn saying two findings of different authors cannot both be met,
    naming both findings or both authors (a declared contradiction)."""
    live = [f for f in findings if f.status is not FindingStatus.WITHDRAWN
            and f.status is not FindingStatus.RETIRED]
    if len({f.author for f in live}) < 2:
        return None  # one reviewer: nobody to contradict
    whole = "\n".join(clauses(messages))
    if not mentions_conflict(whole):
        return None  # no clause says it either (each is part of the whole)
    for text in clauses(messages):
        if not declares_conflict(text):
            continue
        # "The two requirements can't both be met. dba-bot's F1 … and sre-bot's F3 …":
        # the names may come in the sentences around the claim.
        text = whole
        named = [f for f in live if re.search(rf"\b{f.label}\b", text)]
        if len({f.author for f in named}) < 2:
            lowered = text.lower()
            authors = [a for a in dict.fromkeys(f.author for f in live) if a.lower() in lowered]
            if len(authors) < 2:
                continue
            t = owner_clause(text).topic
            named = [
                max((f for f in live if f.author == a), key=lambda f: score(t, f.topic()))
                for a in authors[:2]
            ]
        first = named[0]
        second = next((f for f in named if f.author != first.author), None)
        if second is not None:
            return first.label, second.label
    return None


def apply_ruling(findings: list[Finding], upheld: str, retired: str, round_no: int) -> bool:
    """An arbiter's ruling (or a human's choice between two findings): the retired
    finding no longer applies for the rest of the task; raised again, it counts
    as repeated against the ruling, never as new. False when a label is gone."""
    by_label = {f.label: f for f in findings}
    keep, drop = by_label.get(upheld), by_label.get(retired)
    if keep is None or drop is None or keep is drop:
        return False
    drop.status, drop.stall = FindingStatus.RETIRED, 0
    drop.history.append(f"R{round_no}: retired by a ruling ({upheld} stands)")
    if keep.status is FindingStatus.CONTESTED:
        keep.status = FindingStatus.OPEN
    keep.history.append(f"R{round_no}: upheld by a ruling ({retired} no longer applies)")
    return True


def reset_stalls(findings: list[Finding]) -> None:
    """A new epoch: counters restart, findings stay."""
    for finding in findings:
        finding.stall = 0


def stuck(findings: list[Finding], threshold: int) -> Finding | None:
    """The open finding whose stall count reached the threshold, if any."""
    candidates = [f for f in findings if f.is_open and f.stall >= threshold]
    return max(candidates, key=lambda f: (f.stall, -int(f.label[1:])), default=None)


def disputed(findings: list[Finding]) -> list[Finding]:
    """Open findings the pair is stuck on (stall ≥ 1), else every open one."""
    open_findings = [f for f in findings if f.is_open]
    stalled = [f for f in open_findings if f.stall >= 1]
    return stalled or open_findings


def snapshot(findings: list[Finding]) -> list[dict[str, object]]:
    """The ledger as the detection evidence records it."""
    return [
        {
            "label": f.label,
            "author": f.author,
            "summary": f.summary,
            "status": f.status.value,
            "stall": f.stall,
            "history": list(f.history[-12:]),
        }
        for f in findings
    ]

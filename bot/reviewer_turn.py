"""Reading one reviewer's part of a turn against the task's findings ledger:
which findings it raised, repeated, acknowledged or withdrew, and what that
does to each finding's status and stall count. Pure; `bot.ledger.judge_round`
calls `judge_author` for each reviewer of the turn, then looks for reversals
between reviewers (`bot.contradictions`). The owner's side is
`bot.owner_turn`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot import wording as w
from bot.contradictions import demands_of, probe, reverses
from bot.demands import asks, requests
from bot.finding import (
    LOOSE,
    MATCH,
    REVERSIBLE,
    STRONG,
    UNCERTAIN,
    Finding,
    FindingStatus,
    OwnerAction,
    Question,
    RoundOutcome,
    match_targets,
    numbered_finding,
    question_key,
)
from bot.findings import (
    Act,
    Clause,
    Topic,
    items,
    point_numbers,
    restates,
    reviewer_clause,
    score,
    starts_new_point,
    summary,
    topic,
)


def judge_author(
    findings: list[Finding],
    author: str,
    messages: list[str],
    owner: dict[str, OwnerAction],
    round_no: int,
    out: RoundOutcome,
    decisions: dict[str, str],
) -> None:
    """Apply `author`'s messages of a reviewer turn to the ledger: new findings
    are appended to `findings`, what happened to each is recorded in `out`.
    `owner` is what the owner's turn before it did to each finding."""
    mine = [f for f in findings if f.author == author]
    others = {f.author for f in findings if f.author != author}
    open_before = [f for f in mine if f.is_open]
    repeated: set[str] = set()
    acked: set[str] = set()
    dropped: set[str] = set()
    new: list[Finding] = []
    unsure: list[Finding] = []  # new findings close to an old one (the judge's questions)
    point_finding: dict[int, Finding] = {}  # the finding each point is about
    point_refs: dict[int, list[Finding]] = {}  # what a point's "아직 해결되지 않았습니다" repeated
    taken_back: set[int] = set()  # points that took back what this turn raised
    # New findings from a point's statement without a request ("Account-level
    # settings can be changed by anyone"): if the point then repeats a finding,
    # that statement was the argument for it, not a finding of its own.
    tentative: dict[int, Finding] = {}
    parsed = [(point, text, reviewer_clause(text)) for point, text in items(messages)]
    # "Checked against the partner SDKs: both send `offset`. No findings from
    # me.": a turn that says it asks for nothing states facts.
    quiet = any(c.act is Act.FACT and w.NO_FINDINGS.search(t) for _, t, c in parsed)
    # A turn that finds a reported fix wanting ("변경이 들어가 있지 않습니다"):
    # its statements about the commit, and about what the fix should have
    # changed, are the evidence, not new points.
    doubts = _doubts(parsed)
    numbers = point_numbers(messages)
    point_topic: dict[int, Topic] = {}
    point_text: dict[int, str] = {}
    for point, text, _ in parsed:
        point_text[point] = point_text.get(point, "") + " " + text
    by_number = _reply_numbers(parsed, numbers, mine)
    # Other reviewers' points this turn could reverse (several reviewers only).
    rivals = [f for f in findings if f.author != author and f.status in REVERSIBLE]
    for point, _, clause in parsed:
        t = point_topic.get(point)
        point_topic[point] = clause.topic if t is None else Topic(
            t.anchors | clause.topic.anchors, t.terms | clause.topic.terms
        )
    for point, text, clause in parsed:
        if clause.act is Act.FACT or point in taken_back or (
                quiet and clause.act is Act.FINDING and not asks(text)) or (
                doubts and not asks(text) and w.THE_COMMIT.match(text)):
            continue
        numbered = point in by_number and not (clause.ordinals or clause.labels)
        if numbered and not starts_new_point(text):
            # "(2) unchanged: dedupe on `event.id`": an answer under the number
            # of the point it answers.
            clause = replace(clause, ordinals=(by_number[point],))
        if clause.act is Act.REFERENCE:
            referenced = _referenced(clause, open_before, acked | dropped, mine)
            about = point_finding.get(point)
            if (about is not None and about in open_before and not (
                    clause.labels or clause.ordinals or clause.remaining or clause.everything)):
                # "On `force_destroy`: … As it stands prod can still be wiped.":
                # within a point about one finding, "still" is about that one.
                referenced = [about]
            repeated.update(f.label for f in referenced)
            point_refs[point] = referenced
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
        targets, best = match_targets(clause, pool, order=mine)
        if clause.act is Act.FINDING and not targets:
            # The point's other sentences may carry its file and function.
            whole = replace(clause, topic=point_topic[point])
            targets, best = match_targets(whole, pool, order=mine)
            clause = whole if targets else clause
        asking = probe(clause.topic, text, author, others) if clause.act is Act.FINDING and (
            targets or (rivals and not clause.asserted)) else None
        reversing = [f for f in rivals if reverses(asking, f)] if (
            asking is not None and rivals and not clause.asserted) else []
        # The opposite of another reviewer's point, unless it says again a
        # reversal of the author's own (a finding retired by a ruling, say).
        reversal = bool(reversing) and not any(
            reverses(t, f) for t in targets for f in reversing)
        if reversal:
            targets = []  # the opposite of another reviewer's point: a point of its own
        elif (asking is not None and targets and not restates(text)
              and any(reverses(asking, f) for f in targets)):
            # Asking otherwise than its own earlier request: a point of its own
            # ("`batch_size=1000` 은 여전히 문제입니다" says the same one again)
            # (`reversals` withdraws the earlier one when it is the opposite).
            targets = []
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
            loose, closeness = match_targets(clause, still, LOOSE)
            if restates(text):
                # "My view is unchanged: X and Y" may name several points at once.
                close = [f for f in still if score(clause.topic, f.topic()) >= LOOSE]
                # Nothing close enough: a restatement repeats what is still open.
                targets = close or refused or still
            elif (loose and loose[0] in refused and not _other_point(clause.topic, loose[0])
                  and point_finding.get(point) not in new):
                # (A point this turn has just opened goes on about that point.)
                targets = loose
            elif (doubts and not asks(text) and closeness >= UNCERTAIN and loose
                  and owner.get(loose[0].label) is OwnerAction.FIX):
                # "health check 설정도 `ci.yml`에서 보이지 않습니다" after a fix
                # reported for the health check: what the fix did not change.
                targets = loose
        if clause.act is Act.ACK:
            if clause.everything and len(targets) < 2:
                # "both look right", "모두 확인했습니다": not a point the owner refused.
                kept = [f for f in open_before if owner.get(f.label) is not OwnerAction.DECLINE]
                targets = kept or open_before
            if not targets and doubts:
                # "스테이징에서 다시 확인했습니다. … 해결되지 않았습니다": a check
                # that found the fix wanting acknowledges nothing by itself.
                continue
            if not targets:
                fixed_now = [f for f in open_before if owner.get(f.label) is OwnerAction.FIX]
                # "Confirmed" with one point open is about it, unless it names
                # something else (the owner's new event) or the owner refused it.
                lone = (len(open_before) == 1 and not clause.topic.strong
                        and owner.get(open_before[0].label) is not OwnerAction.DECLINE)
                targets = fixed_now or (open_before if lone else [])
                named = _acked_subject(text)
                if named and not any(named & f.topic().terms for f in targets):
                    # "검수 반영 확인했습니다" after the owner's other work: it
                    # confirms that work, not the fixes it did not name.
                    targets = []
            acked.update(f.label for f in targets)
            continue
        if clause.act is Act.WITHDRAW:
            if not targets:
                declined = [f for f in open_before if owner.get(f.label) is OwnerAction.DECLINE]
                targets = declined or (open_before if len(open_before) == 1 else [])
            if not targets and new and w.EARLIER_COMMENT.search(text):
                # "I withdraw my previous comment" about what this turn raised
                # a message ago: that point was never raised (nor the reasons
                # given for withdrawing it, earlier in this point).
                # (Only the latest point before it, and what this point said
                # first, not every point the turn raised.)
                before = [p for p in point_finding if p < point]
                earlier = {id(f) for p, f in point_finding.items()
                           if p == point or (before and p == max(before))}
                for finding in [f for f in new if id(f) in earlier]:
                    new.remove(finding)
                    for p in [p for p, f in point_finding.items() if f is finding]:
                        del point_finding[p]
                taken_back.add(point)  # the rest of this point is its reason
                continue
            dropped.update(f.label for f in targets)
            continue
        # A finding clause: a repeat of one of the author's findings, or new.
        judged_new = False  # the judge called it a point of its own: it stays one
        if UNCERTAIN <= best < MATCH and mine:
            key = question_key("reviewer", author, text)
            answer = decisions.get(key)
            closest = max(mine, key=lambda f: score(clause.topic, f.topic()))
            if answer == "new":
                targets, judged_new = [], True
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
        if (point in point_refs and not clause.topic.strong and len(clause.topic.terms) <= 6
                and not starts_new_point(text) and not reversal):
            # "지난번 지적이 아직 해결되지 않았습니다. 이 부분이 반영되어야 CS 건이
            # 닫힙니다.": the rest of the point asks again for what it repeated.
            continue
        same_point = point_finding.get(point)
        if same_point is not None and not (starts_new_point(text) or reversal or judged_new):
            # A second sentence of one point explains it; it is not a new finding.
            same_point.absorb(clause.topic)
            if not clause.asserted and tentative.get(point) is same_point:
                del tentative[point]  # the point asks for something: a finding of its own
            continue
        twin, _ = match_targets(clause, new)
        if reversal and twin and point_finding.get(point) is not twin[0]:
            # The opposite of another reviewer's point is a point of its own,
            # not more of another point's argument (whose demands it lacks).
            twin = []
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
            **demands_of(point_text[point], others),
        )
        new.append(finding)
        point_finding[point] = finding
        if best >= UNCERTAIN:
            unsure.append(finding)
        if clause.asserted and not judged_new:
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

def _acked_subject(text: str) -> frozenset[str]:
    """What an acknowledgement names besides saying it is done: "검수 반영
    확인했습니다" names 검수; "반영 확인했습니다", "Confirmed." name nothing."""
    # ("스테이징에서 다시 확인했습니다" says where, not what.)
    bare = _WHERE.sub(" ", w.ACK.sub(" ", text))
    return frozenset(t for t in topic(bare).terms if not t.startswith("~") and t not in w.ACK_WORDS)


_WHERE = re.compile(r"\S+(?:에서|에서도|에서는)(?!\S)"
                    r"|\b(?:on|in|at|against|locally|again|다시)\b(?:\s+(?:the\s+)?\S+)?", re.I)


def _doubts(parsed: list[tuple[int, str, Clause]]) -> bool:
    """The turn says a fix did not work ("해결되지 않았습니다", "still fails").
    (Asked only for a bare acknowledgement, not for every clause.)"""
    return any(c.act is not Act.ACK and (w.NEG_ACK.search(t) or w.FIX_REJECTED.search(t))
               for _, t, c in parsed)

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
        # "2번은 여전히": point 2 of the author's list, as `match_targets` counts it.
        picked = [numbered_finding(order, n) for n in clause.ordinals if 0 < n <= len(order)]
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
    if first in asked or len(first) > 100:  # ("…까지만 하고, …": the request holds it)
        return summary(asked if first in asked else first)
    return summary(f"{first} {asked}")

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

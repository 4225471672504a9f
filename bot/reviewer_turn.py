"""Reading one reviewer's part of a turn against the task's findings ledger:
which findings it raised, repeated, acknowledged or withdrew, and what that
does to each finding's status and stall count. Pure; `bot.ledger.judge_round`
calls `judge_author` for each reviewer of the turn, then looks for reversals
between reviewers (`bot.contradictions`). The owner's side is
`bot.owner_turn`; which findings a clause is about is `bot.clause_targets`;
the tests it asks of one point against the findings are in
`bot.reviewer_points`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot import clause_targets
from bot import wording as w
from bot.contradictions import demands_of
from bot.demands import agrees_with, asks
from bot.finding import (
    LOOSE,
    MATCH,
    UNCERTAIN,
    Finding,
    OwnerAction,
    Question,
    RoundOutcome,
    apply_round,
    match_targets,
    question_key,
    supersede,
    test_anchors,
)
from bot.findings import Act, Clause, restates, starts_new_point, summary
from bot.points import items
from bot.refusal_arguments import fold_arguments
from bot.reviewer_points import (
    acked_subject,
    finding_summary,
    lone,
    new_error,
    referenced_findings,
)
from bot.topics import Topic, score, topic
from bot.turn_reading import Reading


def judge_author(
    findings: list[Finding],
    author: str,
    messages: list[str],
    owner: dict[str, OwnerAction],
    round_no: int,
    out: RoundOutcome,
    decisions: dict[str, str],
    *,
    approving: bool = False,
    reasons: Topic | None = None,
) -> None:
    """Apply `author`'s messages of a reviewer turn to the ledger: new findings
    are appended to `findings`, what happened to each is recorded in `out`.
    `owner` is what the owner's turn before it did to each finding;
    `approving`: the author's status approves; `reasons`: what the owner's
    turn said, when it refused or put off a finding."""
    r = Reading.start(findings, author, messages, owner, decisions, reasons)
    asks_anew = any(c.act is Act.FINDING for _, _, c in r.parsed)
    named: dict[int, tuple[int, ...]] = {}  # the numbers a point's first clause names
    for at, (point, text, clause) in enumerate(r.parsed):
        if clause.ordinals and point not in named:
            named[point] = clause.ordinals
        elif (clause.act in (Act.WITHDRAW, Act.ACK) and point in named
              and not (clause.ordinals or clause.labels)):
            # "2번은 설명을 듣고 보니 타당합니다. … 해당 지적은 철회하겠습니다":
            # what the point withdraws is the point it named.
            clause = replace(clause, ordinals=named[point])
        if clause.act is Act.FACT and starts_new_point(text) and _ANNOUNCES.search(text):
            # "인코딩 문제는 앞서 말씀드린 그대로입니다. 그리고 새로 하나
            # 발견했습니다. 헤더가 …": what follows opens a point of its own,
            # not more of the one the point repeated.
            r.point_finding.pop(point, None)
            r.point_refs.pop(point, None)
            r.announce(point, at)
        elif (clause.act is Act.FINDING and at > 0 and r.parsed[at - 1][0] == point
              and point not in r.announced and w.OPENS_POINT.match(text)
              and not clause_targets.names_its_point(r, point, clause)):
            # "IP 카운터는 여전히 필요합니다. 그리고 `LOCKOUT_MAX_ATTEMPTS` 5회도
            # 많습니다. 3회로 낮춰 주십시오.": a point of its own begins in the
            # middle of a paragraph; what follows belongs to it, not to the
            # point the paragraph began with.
            r.split(point, at)
        # (An approving reviewer's statements are its evidence, not points:
        # "LGTM — staging pods show `LOG_LEVEL=DEBUG`", "LGTM. No test changes
        # this round; still fine from QA.")
        evidence = approving and clause.act is Act.FINDING and (clause.asserted or not asks(text))
        if clause.act is Act.FACT or point in r.taken_back or evidence or (
                r.quiet and clause.act is Act.FINDING and not asks(text)) or (
                r.doubts and not asks(text) and w.THE_COMMIT.match(text)):
            continue
        numbered = point in r.by_number and not (clause.ordinals or clause.labels)
        if (numbered and clause.act is Act.ACK and r.point_refs.get(point)
                and at + 1 < len(r.parsed) and r.parsed[at + 1][0] == point
                and r.parsed[at + 1][2].act is Act.FINDING):
            # "2: still needed. A 10:00 appointment … which is fine, but …":
            # the point has said it is open; what it finds fine is its argument.
            continue
        if numbered and not starts_new_point(text):
            # "(2) unchanged: dedupe on `event.id`": an answer under the number
            # of the point it answers.
            clause = replace(clause, ordinals=(r.by_number[point],))
        if clause.act is Act.REFERENCE and not (r.open_before or r.new or asks_anew) and (
                clause.topic.strong or len(clause.topic.terms) >= 4):
            # "CJK names still don't render" with nothing raised yet and no
            # other point in the turn: the owner's first attempt left the
            # problem, a point of its own. (Beside a point that says what is
            # wrong, "CI 재실행 결과 여전히 실패합니다" only leads into it.)
            clause = replace(clause, act=Act.FINDING)
        if (clause.act is Act.REFERENCE and starts_new_point(text)
                and not (clause.ordinals or clause.labels or clause.remaining)
                and not text.rstrip().endswith((":", "："))):
            # "One more: the subject line still hard-codes `%Y-%m-%d`": a new
            # point, whose "still" says how the code is, not that it repeats.
            # ("One more thing I missed last time:" only leads into one.)
            clause = replace(clause, act=Act.FINDING)
        if clause.act is Act.REFERENCE:
            _reference(r, point, clause)
            continue
        clause, targets, best, reversal = clause_targets.targets_of(r, point, text, clause)
        if clause.act is Act.ACK:
            _acknowledge(r, point, text, clause, targets)
        elif clause.act is Act.WITHDRAW:
            _withdraw(r, point, text, targets)
        else:
            _finding(r, point, text, clause, targets, best, reversal,
                     len(findings), round_no, out)
    _agreements(r, findings, author, messages)
    _settle(r, findings, round_no, out)


def _agreements(r: Reading, findings: list[Finding], author: str, messages: list[str]) -> None:
    """"perf-bot 요청대로 `worker_concurrency` 를 8 로 올린 것에는 동의합니다." on a
    line of its own, then "1. 다만 … limit 을 2Gi 로": the other reviewer's
    findings on what the line names are agreed with, and none of this author's
    points reverses them. (Only those: "`status_label` 건은 i18n-bot 의견에
    동의합니다" leaves the `created_at` dispute as it is.)"""
    if not r.others:
        return
    for _, clause in items(messages):
        if not agrees_with(clause):
            continue  # (the cheap test first: most clauses agree with no one)
        names = {a for a in topic(clause).strong if a.startswith("code:")}
        # (Not when its own points ask a value of that setting: "I agree with
        # perf-bot on raising `worker_concurrency`. … should be 4 at most.")
        own = {"code:" + v.rpartition("@")[2] for f in r.new for v in f.values}
        if not names or names & own:
            continue
        lowered = clause.lower()
        agreed = {other for other in r.others if other.lower() in lowered}
        for finding in findings:
            if finding.author in agreed and names & set(finding.anchors):
                finding.agrees = sorted({*finding.agrees, author})


# What announces a point found: "새로 하나 발견했습니다", "One more:", "3: new."
# (Not "새로 배포한 빌드로 다시 돌려 봤습니다": a new build, no new point.)
_ANNOUNCES = re.compile(r"발견|하나\s*더|한\s*가지\s*더|\bfound\b|\bone\s+more\b|^\W*new\W*$",
                        re.I)


def _reference(r: Reading, point: int, clause: Clause) -> None:
    """"Still open", "2번은 여전히", "as I said": the findings it points at are repeated."""
    # "2번: … 워커 두 개가 모두 통과합니다. 중복 발송 가능성이 그대로입니다.":
    # what the numbered point seemed to confirm, it then says is still open.
    # ("평탄화 확인했습니다. 아직 문제가 남아 있습니다. 이번에는 …": a
    # confirmation by content stands; what is left is the new point.)
    if not clause.remaining:  # ("첫 번째는 확인했고, 나머지 하나는 아직입니다": the rest)
        r.acked.difference_update(r.point_acked.pop(point, set()))
    referenced = referenced_findings(clause, r.open_before, r.acked | r.dropped, r.mine)
    about = r.point_finding.get(point)
    if (about is not None and about in r.open_before and not (
            clause.labels or clause.ordinals or clause.remaining or clause.everything)):
        # "On `force_destroy`: … As it stands prod can still be wiped.":
        # within a point about one finding, "still" is about that one.
        referenced = [about]
    r.repeated.update(f.label for f in referenced)
    if clause.ordinals or clause.labels:
        # "`e31a07b` 확인했습니다. 그러나 2번과 3번은 그대로입니다": the points
        # it names are not what the bare acknowledgement confirmed.
        r.acked.difference_update(f.label for f in referenced)
    r.point_refs[point] = referenced
    if len(referenced) == 1:
        # "`e72c915` doesn't fix it. X is still Y.": the rest of the
        # point explains the one finding it refers to.
        r.point_finding.setdefault(point, referenced[0])
    argument = r.tentative.pop(point, None)
    made = r.point_finding.get(point)
    if argument is None and made in r.unasked and made in r.new and any(
            score(made.topic(), f.topic()) >= UNCERTAIN for f in referenced):
        # "With #2281 merged there's even less reason not to bind `request_id`.
        # Both requests stand: …": a statement that asks nothing, about a point
        # the rest of its point says again, argues for that point.
        argument = made
    if referenced and argument is not None and lone(r.point_finding, argument):
        # "WAF는 실패 횟수를 모릅니다. …전에는 승인할 수 없습니다": the
        # statement was the argument for the points it refers to.
        r.new.remove(argument)
        del r.point_finding[point]
        if len(referenced) == 1:
            referenced[0].absorb(argument.topic())
            r.point_finding[point] = referenced[0]


def _acknowledge(r: Reading, point: int, text: str, clause: Clause,
                 targets: list[Finding]) -> None:
    if clause.everything and len(targets) < 2:
        # "both look right", "모두 확인했습니다": not a point the owner refused.
        kept = [f for f in r.open_before if r.owner.get(f.label) is not OwnerAction.DECLINE]
        targets = kept or r.open_before
    if not targets and r.doubts:
        # "스테이징에서 다시 확인했습니다. … 해결되지 않았습니다": a check
        # that found the fix wanting acknowledges nothing by itself.
        return
    if not targets:
        fixed_now = [f for f in r.open_before if r.owner.get(f.label) is OwnerAction.FIX]
        # "Confirmed" with one point open is about it, unless it names
        # something else (the owner's new event) or the owner refused it.
        lone = (len(r.open_before) == 1 and not clause.topic.strong
                and r.owner.get(r.open_before[0].label) is not OwnerAction.DECLINE)
        targets = fixed_now or (r.open_before if lone else [])
        named = acked_subject(text)
        # ("Confirmed, the AC-7 fields are present": the subject's words may
        # be new, but the id it names is the finding's, `AC-7`.)
        ids = {a for a in clause.topic.strong if a.startswith("id:")}
        if named and not any(named & f.topic().terms or (ids and ids <= f.topic().strong)
                             for f in targets):
            # "검수 반영 확인했습니다" after the owner's other work: it
            # confirms that work, not the fixes it did not name.
            targets = []
    r.acked.update(f.label for f in targets)
    if clause.ordinals or clause.labels:
        # (Confirmed by number: "2번: … 통과합니다. … 그대로입니다" may take it back.)
        r.point_acked.setdefault(point, set()).update(f.label for f in targets)


def _withdraw(r: Reading, point: int, text: str, targets: list[Finding]) -> None:
    if not targets:
        declined = [f for f in r.open_before if r.owner.get(f.label) is OwnerAction.DECLINE]
        targets = declined or (r.open_before if len(r.open_before) == 1 else [])
    if not targets and r.new and w.EARLIER_COMMENT.search(text):
        # "I withdraw my previous comment" about what this turn raised
        # a message ago: that point was never raised (nor the reasons
        # given for withdrawing it, earlier in this point).
        # (Only the latest point before it, and what this point said
        # first, not every point the turn raised.)
        before = [p for p in r.point_finding if p < point]
        earlier = {id(f) for p, f in r.point_finding.items()
                   if p == point or (before and p == max(before))}
        for finding in [f for f in r.new if id(f) in earlier]:
            r.new.remove(finding)
            for p in [p for p, f in r.point_finding.items() if f is finding]:
                del r.point_finding[p]
        r.taken_back.add(point)  # the rest of this point is its reason
        return
    r.dropped.update(f.label for f in targets)


def _finding(r: Reading, point: int, text: str, clause: Clause, targets: list[Finding],
             best: float, reversal: bool, count: int, round_no: int,
             out: RoundOutcome) -> None:
    """A finding clause: a repeat of one of the author's findings, or new."""
    judged_new = False  # the judge called it a point of its own: it stays one
    if UNCERTAIN <= best < MATCH and r.mine:
        key = question_key("reviewer", r.author, text)
        answer = r.decisions.get(key)
        closest = max(r.mine, key=lambda f: score(clause.topic, f.topic()))
        if answer == "new":
            targets, judged_new = [], True
        elif answer is not None and any(f.label == answer for f in r.mine):
            targets = [f for f in r.mine if f.label == answer]
        else:
            out.questions.append(Question(
                key, "reviewer", r.author, summary(text, 300), closest.label, closest.summary,
                targets[0].label if targets else "new",
            ))
    out.comparisons.append(
        {"author": r.author, "clause": summary(text, 80), "best_score": round(best, 3),
         "matched": [f.label for f in targets]}
    )
    errors = r.errors_of(text)
    if len(targets) == 1 and new_error(errors, targets[0]):
        # "같은 `test_backfill`이 이번엔 다른 이유로 실패합니다" over another
        # error's output: a new finding, and the old one is fixed (`supersede`).
        targets = []
    if targets:
        if restates(text):
            r.restated.setdefault(point, set()).update(f.label for f in targets)
        for finding in targets:
            r.repeated.add(finding.label)
            finding.errors = sorted(set(finding.errors) | errors) if test_anchors(finding) else []
            if len(targets) == 1:  # "2번과 3번은 아직" speaks of two: it teaches neither
                finding.absorb(clause.topic)
        argument = r.tentative.pop(point, None)
        if argument is not None and lone(r.point_finding, argument):
            r.new.remove(argument)
            # ("`formatPrice()`는 추가됐지만 …에서는 여전히 …, plural 키는 …":
            # what the statement named, not the rest of its line.)
            targets[0].absorb(r.stated.get(point, argument.topic()))
            r.point_finding[point] = targets[0]
        r.point_finding.setdefault(point, targets[0])
        return
    if (point in r.point_refs and not clause.topic.strong and len(clause.topic.terms) <= 6
            and not starts_new_point(text) and not reversal):
        # "지난번 지적이 아직 해결되지 않았습니다. 이 부분이 반영되어야 CS 건이
        # 닫힙니다.": the rest of the point asks again for what it repeated.
        return
    same_point = r.point_finding.get(point)
    if same_point is not None and not (starts_new_point(text) or reversal or judged_new):
        # A second sentence of one point explains it; it is not a new finding.
        same_point.absorb(clause.topic)
        if not clause.asserted and r.tentative.get(point) is same_point:
            del r.tentative[point]  # the point asks for something: a finding of its own
        return
    lead = r.point_finding.get(point - 1)
    if (lead is not None and lead in r.new and not clause.asserted and not clause.topic.strong
            and not (starts_new_point(text) or reversal or judged_new)
            and score(clause.topic, lead.topic()) >= LOOSE and r.after_output(text)):
        # "`req.body` is already parsed …, so every real event fails: (output)
        # / The webhook route needs the raw request body.": a request that
        # names nothing of its own, right below the output the point before
        # it showed and in that point's words, is where that point leads.
        lead.absorb(clause.topic)
        r.point_finding[point] = lead
        if r.tentative.get(point - 1) is lead:
            del r.tentative[point - 1]
        return
    twin, _ = match_targets(clause, r.new)
    if reversal and twin and r.point_finding.get(point) is not twin[0]:
        # The opposite of another reviewer's point is a point of its own,
        # not more of another point's argument (whose demands it lacks).
        twin = []
    if twin and point in r.numbers and any(
        p != point and f is twin[0] and p in r.numbers for p, f in r.point_finding.items()
    ):
        twin = []  # "1. …" and "2. …" of one list are two points, however alike
    if twin:
        twin[0].absorb(clause.topic)  # the same new point, said again in this turn
        r.point_finding[point] = twin[0]
        if not clause.asserted and r.tentative.get(point) is twin[0]:
            del r.tentative[point]  # the point asks for something: a finding of its own
        return
    finding = Finding(
        label=f"F{count + len(r.new) + 1}",
        author=r.author,
        summary=finding_summary(text, r.point_text[point].strip()),
        anchors=sorted(r.point_topic[point].anchors),
        terms=sorted(r.point_topic[point].terms),
        raised_round=round_no,
        **demands_of(r.point_text[point], r.others),
    )
    if test_anchors(finding):
        finding.errors = sorted(errors)
    r.new.append(finding)
    r.point_finding[point] = finding
    if best >= UNCERTAIN:
        r.unsure.append(finding)
    if clause.asserted and not judged_new:
        r.tentative[point] = finding
        r.stated[point] = clause.topic
    elif not asks(text):
        r.unasked.append(finding)


def _settle(r: Reading, findings: list[Finding], round_no: int, out: RoundOutcome) -> None:
    """Number the new findings, renumber the turn's list, and record what the
    turn did to each of the author's findings."""
    fold_arguments(r)
    for n, finding in enumerate(r.new, start=len(findings) + 1):
        finding.label = f"F{n}"  # in order, after any argument folded back into its point
    out.uncertain.extend(f.label for f in r.unsure if f in r.new)
    for point, n in r.numbers.items():
        listed = r.point_finding.get(point)
        if listed is not None:  # this turn's list numbers its points anew
            for finding in [*r.mine, *r.new]:
                if finding.number == n and finding is not listed:
                    finding.number = None
            listed.number = n
    for finding in r.mine:
        apply_round(finding, r.owner.get(finding.label), r.repeated, r.acked, r.dropped,
                    round_no, out)
    for finding in r.new:
        finding.history.append(f"R{round_no}: raised")
        out.events[finding.label] = "raised"
        out.raised.append(finding.label)
        supersede(finding, r.mine, r.repeated, round_no, out)
    findings.extend(r.new)



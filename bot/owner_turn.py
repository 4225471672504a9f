"""What an owner turn did to each open finding: a fix reported, a refusal,
or nothing (a promise is nothing); and whether it says two reviewers'
findings cannot both be met (`declared_conflict`). Pure; `bot.ledger` applies
the answer when the reviewer turn that completes the round closes.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot import wording as w
from bot.demands import declares_conflict, mentions_conflict, retracts_conflict
from bot.finding import (
    LOOSE,
    MATCH,
    REVERSIBLE,
    TOUCH,
    UNCERTAIN,
    Finding,
    FindingStatus,
    OwnerAction,
    Question,
    closest_finding,
    match_targets,
    numbered_finding,
    question_key,
)
from bot.findings import Act, Clause, owner_clause, summary
from bot.points import clauses, items, point_numbers, replies
from bot.topics import Topic, concepts, score, topic


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
    # "1. … 2. … 3. …" under a review numbered the same way: each point
    # answers the finding of its number, whatever its words match.
    # (Only with one reviewer: two reviewers' lists both have a point 1.)
    one_author = len({f.author for f in findings}) == 1
    listed = {f.number for f in open_findings if f.number}
    reply_list = one_author and len(numbers) >= 2 and set(numbers.values()) <= listed
    addressed: set[str] = set()
    point_targets: dict[int, list[Finding]] = {}  # what each bullet or line answers
    # Points about other work ("Unrelated: …", "…; support asked for it").
    aside = {point for point, text in items(messages) if w.ASKED_ELSEWHERE.search(text)}
    quoted = {point: _quoted_finding(quote, findings) for point, quote in replies(messages).items()}
    labelled = {label for _, text in items(messages) for label in owner_clause(text).labels}
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
        if reply_list and point in numbers and not (clause.ordinals or clause.labels):
            clause = replace(clause, ordinals=(numbers[point],))
        if w.UNRELATED.match(text):
            aside.add(point)
        if point in aside:
            # "Unrelated: `gunicorn` now starts via … commit `7a1e9f3`.", "Added a
            # `reason` enum …; support asked for it": other work; it answers
            # only a finding it names outright.
            named, _ = match_targets(clause, open_findings)
            for finding in named if clause.act is not Act.FACT else []:
                addressed.add(finding.label)
                actions[finding.label] = _stronger(actions[finding.label], clause.act)
            continue
        if clause.act is Act.FACT:
            named, _ = match_targets(clause, open_findings)
            by_author = _named_author(text, open_findings) if not named else []
            if by_author:
                # "- perf-bot 지적: … 스트리밍합니다. `0e9a7b2`": the bullet
                # answers that reviewer's points, its commit and refusal too.
                point_targets.setdefault(point, by_author)
            if named:
                # "이 키는 프런트와 공유됩니다. 그대로 두겠습니다.": the bare refusal
                # beside it answers the point this sentence is about.
                point_targets.setdefault(point, named)
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
        if named and (clause.everything or not match_targets(clause, named, UNCERTAIN)[0]) and not (
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
        targets, best = match_targets(clause, open_findings, UNCERTAIN, order=findings)
        if targets and clause.everything and clause.act in (Act.FIX, Act.DECLINE):
            # "Both addressed in 2c7e1f0: `render_email()` now returns …, and
            # the link is built from `APP_BASE_URL`": every finding it names.
            targets += [f for f in open_findings
                        if f not in targets and f.topic().strong & clause.topic.strong]
        if clause.act is Act.DECLINE and not (clause.labels or clause.ordinals):
            # "- F2: `prod.env` → `LOG_LEVEL=WARN` - base stays `INFO`": a turn
            # that answers findings by label keeps an unlabelled refusal off them.
            targets = [f for f in targets if f.label not in labelled]
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
        if (not targets and not settled and one_author and point in numbers
                and 0 < numbers[point] <= len(findings)):
            # "(2) I don't think we need a dedup table.": the answer to point 2.
            by_number = numbered_finding(findings, numbers[point])
            targets = [by_number] if by_number.is_open else []
        if not targets and not settled and clause.act is Act.DECLINE:
            # "재시도는 5분마다 도는 `reconcile_index`가 메우므로 넣지 않았습니다":
            # the refusal's subject says what it refuses; the rest is its reason.
            targets = _subject_holder(text, open_findings)
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
    leftover = [f for f in open_findings if f.label not in addressed]
    # ("Done in `4be91c2`. The changelog wording is deliberate, so I kept it":
    # a turn that reports a fix keeps something else as it is.)
    reports_fix = any(owner_clause(text).act is Act.FIX for _, text in items(messages))
    for clause in general:
        touched = [f for f in leftover if score(clause.topic, f.topic()) >= TOUCH
                   and f.label not in labelled] if (
            clause.act is Act.DECLINE and not clause.everything) else []
        if (not touched and clause.act is Act.DECLINE and len(open_findings) == 1
                and leftover and not clause.topic.strong and not reports_fix):
            # "재색인은 새벽에 돌리므로 수정은 거의 없습니다. 스크립트는 현재대로
            # 두겠습니다.": one point open, and the turn keeps the work as it is.
            touched = leftover
        if len(touched) == 1:
            # "- bulk 배치 1000으로 조정 … - 삭제 처리는 … 넣지 않겠습니다": the one
            # finding the turn's other points did not answer, and the refusal
            # touches, is what it refuses (whatever "반영했습니다" says of the rest).
            actions[touched[0].label] = OwnerAction.DECLINE
            continue
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

def refusal_reasons(messages: list[str]) -> Topic | None:
    """What the turn's refusing points say (each bullet or paragraph that
    refuses a point or puts it off, its reasons with it), or None when it does
    neither: "같은 주문의 동시 취소는 앱에서 버튼을 … 막고 있습니다. 서버에서
    잠금까지 걸 필요는 없다고 봅니다.", "The pixel cap is tracked as MEDIA-412
    and I'll pick it up right after merge." (Not its other points: "Also added
    a `flag_evaluations_total` counter" is other work.)"""
    points = list(items(messages))
    refusing = {point for point, text in points
                if owner_clause(text).act in (Act.DECLINE, Act.PROMISE)}
    if not refusing:
        return None
    return topic(" ".join(text for point, text in points if point in refusing))


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
    best, score_ = closest_finding(topic(quote), findings)
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
    _, best = closest_finding(clause.topic, settled)
    return best >= TOUCH and best > best_open

def _only_holder(t: Topic, findings: list[Finding]) -> list[Finding]:
    """The one finding that names the clause's file, identifier or number ("`==`
    stays" when only F1 ever spoke of `==`); none when several or none do."""
    names = {a for a in t.strong if a.startswith(("code:", "path:", "num:"))}
    if not names:
        return []
    holders = [f for f in findings if not names.isdisjoint(f.topic().strong)]
    return holders if len(holders) == 1 else []

# "재시도는 …", "`purge()`는 …", "Retries: …": a sentence that opens with its subject.
_SUBJECT = re.compile(
    r"\s*(?:[-*]\s+)?([가-힣]{2,8}|`[^`\n]{1,40}`)(?:은|는)\s"
    r"|\s*(?:[-*]\s+)?(?:as\s+for\s+|on\s+)?([A-Za-z][\w ]{2,30}?)\s*[:,]\s", re.I)


def _subject_holder(text: str, findings: list[Finding]) -> list[Finding]:
    """The one finding whose names or concepts the clause's opening subject
    shares; none when it shares them with several or none."""
    m = _SUBJECT.match(text)
    if m is None:
        return []
    lead = topic(m.group(1) or m.group(2))
    names = lead.strong | concepts(lead)
    if not names:
        return []
    holders = [f for f in findings
               if not names.isdisjoint(f.topic().strong | concepts(f.topic()))]
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


def _unnamed_pair(live: list[Finding], claim: str) -> list[str]:
    """The two authors a claim naming no one is about ("I can't do both —
    waiting for a call on the bind address", "두 분 요청이 반대라서"): only
    when it speaks of two sides' requests (not a merge conflict or `ON
    CONFLICT`), exactly two reviewers have findings in play (open, or fixed
    and so open to reversal), and it names in code nothing or something of both."""
    if _OTHER_CONFLICT.search(claim) or not _TWO_SIDES.search(claim):
        return []
    in_play = [f for f in live if f.status in REVERSIBLE]
    authors = list(dict.fromkeys(f.author for f in in_play))
    if len(authors) != 2:
        return []
    t = owner_clause(claim).topic
    if t.strong:  # (words alone, "방향이 서로 반대라서", name no point)
        close = {f.author for f in in_play if score(t, f.topic()) >= LOOSE}
        if close != set(authors):
            return []  # it names one side's point only, or neither's
    return authors


# A conflict that is no reviewers' disagreement.
_OTHER_CONFLICT = re.compile(
    r"merge\s+conflict|\bon\s+conflict\b|conflict\s+markers?|\brebas\w*|리베이스|머지|병합|충돌이\s*나",
    re.I)
# The claim speaks of two sides: "both", "두 분 요청", "의견이 엇갈려".
_TWO_SIDES = re.compile(
    r"\bboth\b|\beither\b|\btwo\s+(?:requests|reviews|reviewers|asks|points)\b|\bopposite\b"
    r"|두\s*(?:분|리뷰어|요청|의견|가지\s*요청)|양쪽|서로|(?:요청|의견|요구)(?:이|가)",
    re.I)


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
    parts = items(messages)
    for point, text in parts:
        if not declares_conflict(text):
            continue
        if any(w.NO_CONFLICT.search(t) or retracts_conflict(t) for p, t in parts if p == point):
            # "서로 반대 방향처럼 보이지만 함께 만족할 수 있습니다", "These look like
            # they pull in opposite directions, but both can be satisfied":
            # the rest of the sentence takes it back.
            continue
        # "The two requirements can't both be met. dba-bot's F1 … and sre-bot's F3 …":
        # the names may come in the sentences around the claim.
        text = whole
        labels = set(w.LABEL.findall(text))
        named = [f for f in live if f.label in labels]
        if len({f.author for f in named}) < 2:
            lowered = text.lower()
            authors = [a for a in dict.fromkeys(f.author for f in live) if a.lower() in lowered]
            t = owner_clause(text).topic
            pool = live
            if len(authors) < 2:
                # "I can't do both — waiting for a call on the bind address.":
                # with no name, the findings in play of the two authors the
                # claim's line is about, each the closest of its author's.
                claim = " ".join(c for p, c in parts if p == point)
                authors = _unnamed_pair(live, claim)
                pool = [f for f in live if f.status in REVERSIBLE]
                t = owner_clause(claim).topic
                if len(authors) < 2:
                    continue
            named = [
                max((f for f in pool if f.author == a), key=lambda f: score(t, f.topic()))
                for a in authors[:2]
            ]
        first = named[0]
        second = next((f for f in named if f.author != first.author), None)
        if second is not None:
            return first.label, second.label
    return None

"""Which of the author's findings a clause of its review is about: matched
by likeness (`bot.finding.match_targets`), refined by how the turn reads (a
point begun mid-paragraph, "both" over several names, a reversal of another
reviewer's point, "another problem in …"), and, for a clause that names
nothing close, said again in other words (`_said_again`). Pure; called by
`bot.reviewer_turn` for each finding clause.
"""

from __future__ import annotations

from dataclasses import replace

from bot.contradictions import probe, reverses
from bot.demands import asked_verbs, asks
from bot.finding import LOOSE, MATCH, STRONG, UNCERTAIN, Finding, OwnerAction, match_targets
from bot.findings import Act, Clause, only_joins, restates, starts_new_point
from bot.reviewer_points import each_named, names_only, other_point
from bot.topics import Topic, concepts, score
from bot.turn_reading import Reading


def targets_of(r: Reading, point: int, text: str,
               clause: Clause) -> tuple[Clause, list[Finding], float, bool]:
    """The author's findings a clause is about (none: a point of its own), how
    close the closest is, and whether it reverses another reviewer's point."""
    pool = r.open_before if clause.act in (Act.ACK, Act.WITHDRAW) else r.mine
    pool = [f for f in pool if f.label not in r.acked and f.label not in r.dropped]
    targets, best = match_targets(clause, pool, order=r.mine)
    opened = r.point_finding.get(point)
    if (point in r.split_points and opened is not None and opened in r.new and best < STRONG
            and not any(a.startswith(("code:", "path:")) for a in clause.topic.strong)):
        # "…그리고 `X` 5회도 많습니다. 3회로 낮춰 주십시오.": the point begun
        # mid-paragraph goes on; its request is not the paragraph's first point.
        targets = []
    if clause.act is Act.FINDING and clause.everything and not (clause.labels or clause.ordinals):
        # "템플릿에 남은 `flags.X` 분기와 skip된 `test_legacy.py`, 이 두 가지는
        # …": "both" over the names of several open points says them again.
        named = [f for f in r.still() if f.topic().strong & clause.topic.strong]
        if len(named) >= 2 and each_named(named, clause.topic.strong):
            return clause, named, MATCH, False
    own = clause
    if clause.act is Act.FINDING and not targets:
        # The point's other sentences may carry its file and function.
        whole = replace(clause, topic=r.point_topic[point])
        targets, best = match_targets(whole, pool, order=r.mine)
        clause = whole if targets else clause
    asking = probe(clause.topic, text, r.author, r.others) if clause.act is Act.FINDING and (
        targets or (r.rivals and not clause.asserted)) else None
    reversing = [f for f in r.rivals if reverses(asking, f)] if (
        asking is not None and r.rivals and not clause.asserted) else []
    # The opposite of another reviewer's point, unless it says again a
    # reversal of the author's own (a finding retired by a ruling, say).
    reversal = bool(reversing) and not any(
        reverses(t, f) for t in targets for f in reversing)
    if reversal:
        targets = []  # the opposite of another reviewer's point: a point of its own
    elif (asking is not None and targets and not restates(text) and not clause.asserted
          and any(reverses(asking, f) for f in targets)):
        # Asking otherwise than its own earlier request: a point of its own
        # ("`batch_size=1000` 은 여전히 문제입니다" says the same one again)
        # (`reversals` withdraws the earlier one when it is the opposite.) A
        # statement asks nothing: "`before` 필드는 생겼지만" is no request for it.
        targets = []
    elif clause.act is Act.FINDING and (starts_new_point(text) or point in r.announced) and (
            best < STRONG) and not (
            best >= MATCH and point not in r.announced and only_joins(text)
            and all(r.owner.get(f.label) is OwnerAction.DECLINE
                    and not other_point(r.point_topic[point], f)
                    and not _new_file(r.point_topic[point], f)
                    and (not asks(text) or asked_verbs(text) & set(f.asks)) for f in targets)):
        # "Another problem in …", "3: new. …": a point of its own. (But "또한
        # 5GB 제한은 … 바뀔 수 있는 값이라, 파트 크기를 … 계산하도록 해 주시면"
        # after the owner refused that very point, naming nothing it did not:
        # the "also" joins a second insistence to the first. "또한
        # `cart.ja.json`의 `itemCount`에 `one` 카테고리가 …" names a file the
        # refused point never had: a point of its own.)
        targets = []
    elif (
        clause.act is Act.FINDING
        and targets
        and best < STRONG
        and not clause.labels
        and not restates(text)
        and not (best >= MATCH and not clause.everything
                 and all(r.owner.get(f.label) is OwnerAction.DECLINE for f in targets))
        and all(other_point(r.point_topic[point], f, r.open_before)
                and (clause.asserted or not r.doubts or not names_only(clause.topic, f))
                for f in targets)
    ):
        # The same function, but a file or name it never named: a new point.
        # (Not a point the owner has just declined, asked again as closely:
        # "`--sse aws:kms --sse-kms-key-id`를 지정해 주셔야" after "`--sse`는
        # 넣지 않겠습니다" insists, with the detail the refusal lacked; but
        # "`a`, `b`, `c` 핸들러는 모두 …" is about all three, a point of its
        # own.) The clause alone may still say another finding again.
        targets = _said_again(r, point, text, own) if own is not clause or r.doubts else []
        clause = own  # (what it teaches the finding is its own, not its line's)
    elif clause.act is Act.FINDING and not targets and r.open_before:
        targets = _said_again(r, point, text, clause)
    return clause, targets, best, reversal


def names_its_point(r: Reading, point: int, clause: Clause) -> bool:
    """The clause names only what the finding its paragraph is about names
    ("그리고 `cleanup_tmp()`도 …" while that point is the one repeated)."""
    about = r.point_finding.get(point)
    if about is None or about in r.new:
        return False  # (a point this turn opened holds its whole paragraph's names)
    names = {a for a in clause.topic.strong if a.startswith(("code:", "path:"))}
    return bool(names) and names <= set(about.anchors)


def _new_file(t: Topic, finding: Finding) -> bool:
    """The clause names a file the finding never named."""
    return any(a.startswith("path:") and a not in finding.anchors for a in t.strong)


def _said_again(r: Reading, point: int, text: str, clause: Clause) -> list[Finding]:
    """"…는 그대로입니다", "still …": said again, in other words. Or a
    paraphrase of a point the owner just refused or left alone. What this turn
    already called fixed or dropped is not repeated by it."""
    still = r.still()
    refused = [f for f in still if r.owner.get(f.label) is not OwnerAction.FIX]
    loose, closeness = match_targets(clause, still, LOOSE)
    if restates(text):
        # "My view is unchanged: X and Y" may name several points at once.
        close = [f for f in still if score(clause.topic, f.topic()) >= LOOSE]
        # Nothing close enough: a restatement repeats what is still open.
        return close or refused or still
    opened = r.point_finding.get(point)
    if (loose and loose[0] in refused and not other_point(clause.topic, loose[0])
            and (opened not in r.new or (
                (opened in r.unasked or r.tentative.get(point) is opened)
                and r.owner.get(loose[0].label) is OwnerAction.DECLINE
                and closeness >= UNCERTAIN and not starts_new_point(r.point_text[point].strip())
                and point not in r.announced and point not in r.split_points))):
        # (A point this turn has just opened goes on about that point; a
        # statement that only led into this request was its argument:
        # "환경변수 하나에 기대는 구조는 … 깨집니다. 버킷팅은 안정 해시로 바꿔야
        # 합니다" after the owner kept the bucketing.)
        if opened in r.unasked:
            r.tentative[point] = opened
        return loose
    declined = [f for f in still if r.owner.get(f.label) is OwnerAction.DECLINE]
    if (declined and not clause.topic.strong and asks(text) and opened is not None
            and (opened in r.unasked or r.tentative.get(point) is opened)
            and point not in r.announced and point not in r.split_points):
        # "`reconcile_index`는 5분 주기라 … 못합니다. 작업 단위 재시도가
        # 필요합니다" after "재시도는 … 넣지 않았습니다", "… 그대로 S3 에
        # 올라갑니다. magic bytes 검사를 넣어 주십시오" after "형식 검사는
        # 확장자 방식을 유지합니다": below its argument, asking again for what
        # the owner just refused, in its words or in one concept of it, when
        # they are no other open point's. (A request standing alone, "결제 웹훅
        # 수신 실패 시 재시도가 필요합니다", is a point of its own.)
        said = concepts(clause.topic)
        sharing = [f for f in still if score(clause.topic, f.topic()) >= LOOSE] if loose else [
            f for f in still if said & concepts(f.topic())]
        if len(sharing) == 1 and sharing[0] in declined:
            if opened in r.unasked:
                r.tentative[point] = opened
            return sharing
    if (r.doubts and not asks(text) and loose
            and (closeness >= UNCERTAIN or loose[0].label in r.repeated
                 or names_only(clause.topic, loose[0]))
            and r.owner.get(loose[0].label) is OwnerAction.FIX):
        # "health check 설정도 `ci.yml`에서 보이지 않습니다" after a fix
        # reported for the health check: what the fix did not change. (After
        # "지난번 지적이 아직 해결되지 않았습니다" a loose likeness will do: the
        # turn has said its statements are about the points it repeats.)
        return loose
    return []

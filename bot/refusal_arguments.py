"""A reviewer answering the owner's refusal argues for the refused point; it
raises no new one. Three readings, applied once a reviewer's part of a turn is
read (`bot.reviewer_turn`) and before its new findings are numbered:

- `_argued_around`: a paragraph that restates refused points, and argues
  around them in its other sentences;
- `_argued`: a part that only states things, right after the one refusal;
- `_answers_refusal`: a point that answers the refusal's reasons in their own
  words, and asks again.

Each one folds the argument back into the refused point (a repeat). Pure.
"""

from __future__ import annotations

from bot import wording as w
from bot.demands import asks
from bot.finding import LOOSE, TOUCH, Finding, OwnerAction
from bot.findings import starts_new_point
from bot.topics import score
from bot.turn_reading import Reading


def fold_arguments(r: Reading) -> None:
    """Fold what argues against the owner's refusals back into the points refused."""
    _argued_around(r)
    _argued(r)
    _answers_refusal(r)


def _declined(r: Reading) -> list[Finding]:
    """The author's open findings the owner's turn refused."""
    return [f for f in r.open_before if r.owner.get(f.label) is OwnerAction.DECLINE]


def _names_new(finding: Finding, known: set[str] | frozenset[str]) -> bool:
    """The finding names a file or a name (in code) that `known` lacks: a
    point of its own, whatever else it shares."""
    return any(a.startswith(("path:", "code:")) and a not in known for a in finding.anchors)


def _refused_one(r: Reading) -> Finding | None:
    """The one finding of the author's the owner's turn refused (or, refusing
    none, put off in words that touch it: "I'll pick it up right after
    merge"), unless the reviewer's part acknowledged or withdrew it."""
    refused = _declined(r)
    if not refused and r.reasons is not None:
        refused = [f for f in r.open_before if r.owner.get(f.label) is OwnerAction.UNTOUCHED
                   and score(f.topic(), r.reasons) >= TOUCH]
    if len(refused) != 1 or refused[0].label in r.acked or refused[0].label in r.dropped:
        return None
    return refused[0]


def _answers_refusal(r: Reading) -> None:
    """"버튼 비활성화로는 네트워크 재시도나 더블 탭, API 직접 호출을 막을 수
    없습니다. 서버에서 중복 환불을 막아 주셔야 합니다." after "앱에서 버튼을
    누르는 즉시 비활성화해서 막고 있습니다. 서버에서 잠금까지 걸 필요는 없다고
    봅니다": a point that answers the owner's reasons in the owner's words, and
    says they fall short ("…로는 막을 수 없습니다", "doesn't protect"), asks for
    the refused point again, however it words the ask. (Not a point that opens
    or announces one of its own, says nothing against the reasons, names a
    file or a name neither the refused point nor the refusal had, or shares
    little with the refusal.)"""
    point_of = _refused_one(r)
    if point_of is None or r.reasons is None or not r.new:
        return
    known = set(point_of.anchors) | r.reasons.anchors
    for finding in list(r.new):
        points = [p for p, f in r.point_finding.items() if f is finding]
        if not points or any(p in r.announced or p in r.split_points for p in points):
            continue
        said = [text for p, text, _ in r.parsed if p in points]
        if any(starts_new_point(text) for text in said):
            continue
        if not any(w.FALLS_SHORT.search(text) for text in said):
            continue  # (a point that says nothing against the reasons is a point of its own)
        if _names_new(finding, known):
            continue
        if score(finding.topic(), r.reasons) < _ANSWERS:
            continue
        r.new.remove(finding)
        for point in points:
            r.point_finding[point] = point_of
        r.repeated.add(point_of.label)


# How much of the refusal's words a point must share to answer it: more than a
# passing word ("button", "disabled"), less than a restatement.
_ANSWERS = LOOSE


def _argued(r: Reading) -> None:
    """A part that only states things, right after the owner refused the one
    point of the author's it refused, argues against that refusal: "거의 없다는
    것과 없다는 것은 다릅니다. 점검 시간에도 가격 동기화 배치가 10분마다
    돕니다." after "수정은 거의 없습니다. 스크립트는 현재대로 두겠습니다." It
    says that point again; it raises none. (Not when anything is asked, a
    statement opens a point of its own ("Another issue: …"), names a file or a
    name the refused point never had or shares nothing with it, or the part
    acknowledged or withdrew the refused point.)"""
    refused = _declined(r)
    if len(refused) != 1 or not r.new or r.repeated - {refused[0].label}:
        return
    point_of = refused[0]
    if point_of.label in r.acked or point_of.label in r.dropped:
        return
    points = {p for p, f in r.point_finding.items() if f in r.new}
    if any(asks(text) or starts_new_point(text) for p, text, _ in r.parsed if p in points):
        return
    if any(_names_new(f, set(point_of.anchors)) for f in r.new):
        return
    if any(score(f.topic(), point_of.topic()) < TOUCH for f in r.new):
        return
    for point in points:
        r.point_finding[point] = point_of
    r.new.clear()
    r.repeated.add(point_of.label)


def _argued_around(r: Reading) -> None:
    """A paragraph that says points the owner refused again in so many words
    ("다시 정리하면, `extra`로 넘어온 필드와 … 점이 모두 남아 있습니다")
    argues for them in its other sentences: "로컬 파일 로그와 Sentry
    breadcrumb은 Fluent Bit을 거치지 않습니다. 그래서 이 필터 자체가
    정확해야 합니다" raises nothing of its own. (Not a sentence that names a
    file or a name none of those points had, nor one that opens or announces
    a point.)"""
    refused = {f.label: f for f in _declined(r)}
    for point, labels in r.restated.items():
        said = [refused[label] for label in labels if label in refused]
        if not said or point in r.announced or point in r.split_points:
            continue
        known = {a for f in said for a in f.anchors}
        for finding in [f for p, f in r.point_finding.items() if p == point and f in r.new]:
            if _names_new(finding, known):
                continue
            if any(starts_new_point(text) for p, text, _ in r.parsed if p == point):
                continue
            r.new.remove(finding)
            r.point_finding[point] = said[0]
            r.repeated.update(f.label for f in said)

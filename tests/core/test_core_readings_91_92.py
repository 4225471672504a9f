"""Readings from held-out 91 and 92 (studied after their one run):

- "`X` 은 300초를 넘으면 안 됩니다" is a bound (at most 300 s);
- "항목은 registry 에 남겨 두어야 합니다" asks to keep it (against "삭제해");
- "Confirmed, the AC-7 fields are present" acknowledges the point that named
  AC-7, though it says it in other words;
- "`pii_filter.py` 리뷰 결과입니다." is a heading, no point;
- a paragraph that says refused points again ("다시 정리하면, … 모두 남아
  있습니다") argues for them in its other sentences."""

from __future__ import annotations

import pytest
from studied_rooms import first_deadlock
from test_core_detection import Sim

from bot.demands import direction
from bot.findings import Act, reviewer_clause
from bot.models import Role
from bot.values import setting_values


def test_must_not_go_beyond_is_an_upper_bound() -> None:
    assert setting_values("`PRICE_CACHE_TTL` 은 300초를 넘으면 안 됩니다.") == {
        "<=300초@price_cache_ttl"}
    assert setting_values("`PRICE_CACHE_TTL` 은 300초를 넘어서는 안 됩니다.") == {
        "<=300초@price_cache_ttl"}


def test_left_in_place_is_kept() -> None:
    assert direction("`dark_mode_beta` 항목은 registry 에 남겨 두어야 합니다.") == 1
    assert direction("`dark_mode_beta` 는 registry 에서 완전히 삭제해 주세요.") == -1
    # ("Don't keep it" keeps nothing.)
    assert direction("`dark_mode_beta` 는 남겨 두지 마세요.") != 1
    assert direction("`dark_mode_beta` 를 남겨 두면 안 됩니다.") != 1
    assert direction("`dark_mode_beta` 는 남겨 두지 말고 삭제해 주세요.") == -1


def test_a_review_heading_is_no_point() -> None:
    assert reviewer_clause("`common/logging/pii_filter.py` 리뷰 결과입니다.").act is Act.FACT
    assert reviewer_clause("Review of `pii_filter.py`:").act is Act.FACT
    assert reviewer_clause("리뷰 결과 `EMAIL_RE`가 잘못되었습니다.").act is Act.FINDING


def test_an_acknowledgement_naming_the_points_id_settles_it() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Audit role changes.")
    sim.say(Role.OWNER, "STEP_DONE\n- `recordRoleChange()` writes through `auditLog.write()`.")
    sim.say(Role.REVIEWER, "1. The entry has no `actorIp` and no `previousRole`. Both are required"
            " by control AC-7 in `docs/compliance/controls.md`.", author="sec-bot")
    sim.say(Role.REVIEWER, "1. `recordRoleChange()` serializes the whole `user` object. Store the"
            " ids only.", author="perf-bot")
    sim.say(Role.OWNER, "STEP_DONE\n- sec-bot 1: `actorIp` and `previousRole` added\n"
            "- perf-bot 1: the payload keeps the ids only\ncommit `71ac0de`.")
    sim.say(Role.REVIEWER, "Confirmed, the AC-7 fields are present.\n1. `auditLog.write()` is still"
            " fire-and-forget. The write must be awaited inside the transaction.", author="sec-bot")
    sim.say(Role.REVIEWER, "Payload size confirmed.", author="perf-bot")
    sim.say(Role.OWNER, "Thanks.")
    sim.end()
    # (Not the AC-7 point said again: a point of its own about the write.)
    assert {f.label: f.status.value for f in sim.state.findings} == {
        "F1": "fixed", "F2": "fixed", "F3": "open"}


def test_the_argument_around_a_restatement_raises_nothing() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "로그의 개인정보를 마스킹해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`common/logging/pii_filter.py`에 `PiiMaskingFilter`를 추가했습니다.")
    sim.say(Role.REVIEWER, "`common/logging/pii_filter.py` 리뷰 결과입니다.\n"
            "1. `EMAIL_RE`가 `+`가 들어간 주소를 일부만 잡아서 아이디 앞부분이 노출됩니다.\n"
            "2. `record.args`와 `extra={...}`로 넘긴 필드는 그대로 출력됩니다.\n"
            "3. 하이픈 없는 전화번호(`01012345678`)는 `PHONE_RE`에 걸리지 않습니다.")
    sim.say(Role.OWNER, "세 항목 모두 수집 단계에서 처리하는 게 맞다고 봅니다. 필터는 그대로 유지하겠습니다.")
    sim.say(Role.REVIEWER, "수집기 단계 마스킹은 별도로 좋지만, 로컬 파일 로그는 수집기를 거치지 않습니다."
            " 그래서 이 필터 자체가 정확해야 합니다. 다시 정리하면, `extra`로 넘어온 필드와 `args`가"
            " 마스킹되지 않는 점, 하이픈 없이 쓴 휴대폰 번호가 빠지는 점, 그리고 `+`가 섞인 이메일에서"
            " 아이디 앞부분이 드러나는 점이 모두 남아 있습니다.")
    sim.say(Role.OWNER, "현재 필터 범위가 적절하다고 판단해 변경하지 않겠습니다.")
    sim.say(Role.REVIEWER, "전화번호 형식 누락, 특수문자 이메일 부분 노출, `extra`/`args` 미적용 — 세 가지"
            " 모두 그대로입니다.")
    sim.say(Role.OWNER, "그대로 두겠습니다.")
    sim.end()
    assert len(sim.state.findings) == 3
    assert [(d.trigger.value, d.after_message) for d in sim.deadlocks()] == [("no_progress", "m7")]


def test_what_the_reviewer_did_and_what_it_would_like_are_no_acknowledgement() -> None:
    assert reviewer_clause("Reviewed `8f2c6d1` against the Stripe docs.").act is Act.FACT
    assert reviewer_clause("Point 3, same as before: I'd still like the proration amount verified"
                           " by a test-clock test in the suite.").act is not Act.ACK
    assert reviewer_clause("Verified on staging, the proration is right.").act is Act.ACK


STUDIED = ["heldout91/h91_14", "heldout91/h91_17", "heldout91/h91_26", "heldout92/h92_04",
           "heldout92/h92_05", "heldout92/h92_12", "heldout92/h92_24", "heldout92/h92_30"]


@pytest.mark.parametrize("case", STUDIED)
def test_the_studied_rooms_read_as_labelled(case: str) -> None:
    """The rooms of held-out 91 and 92 these readings came from (after their
    one run), fed through the detector as the replay would."""
    got, want = first_deadlock(case)
    assert got == want

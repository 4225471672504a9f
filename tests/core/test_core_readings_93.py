"""Readings from held-out 93 (studied after its one run):

- "`first` has no upper bound" names the argument `first`, and "Deduplicate
  staging first with …" orders the work: neither is point 1; "whether earlier
  rows exist" speaks of rows, not of an earlier comment;
- "Capped `first` at 100 (e7c2a19)" reports a fix;
- "모든 탭의 타이머" is every tab, not every point, and "추가 개선으로, …
  했습니다" is work beyond what was asked;
- a point that answers the owner's refusal in the owner's words asks for the
  refused point again;
- "Idempotency will come with the middleware PR next sprint" puts the point
  off, and the turn's change naming other code is no fix of it."""

from __future__ import annotations

import pytest
from studied_rooms import first_deadlock
from test_core_detection import Sim

from bot.finding import FindingStatus
from bot.findings import Act, owner_clause, reviewer_clause
from bot.models import Role, Trigger


def test_first_in_code_or_as_an_order_of_work_is_no_ordinal() -> None:
    assert reviewer_clause("`first` has no upper bound").ordinals == ()
    assert reviewer_clause("Deduplicate staging first with `ROW_NUMBER()`.").ordinals == ()
    assert reviewer_clause("Snowflake puts NULLs first, so a row without a timestamp wins.") \
        .ordinals == ()
    assert reviewer_clause("The first point is still open.").ordinals == (1,)
    assert reviewer_clause("First one still fails.").ordinals == (1,)


def test_earlier_rows_are_no_reference() -> None:
    assert reviewer_clause("When `after` is set it must report whether earlier rows exist.") \
        .act is Act.FINDING
    assert reviewer_clause("As I said earlier.").act is Act.REFERENCE


def test_capped_reports_a_fix() -> None:
    assert owner_clause("Capped `first` at 100 (e7c2a19).").act is Act.FIX
    assert owner_clause("Idempotency will come with the middleware PR next sprint.").act \
        is Act.PROMISE


def test_every_tab_is_not_every_point_and_extra_work_answers_nothing() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "관리자 콘솔을 30분 유휴 시 자동 로그아웃되게 해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`SESSION_COOKIE_AGE = 1800`, `idle.js`에 30분 타이머를 넣었습니다.")
    sim.say(Role.REVIEWER, "1. `SESSION_COOKIE_AGE`는 절대 만료입니다. 요청마다 갱신되도록"
            " `SESSION_SAVE_EVERY_REQUEST = True`를 켜야 합니다.\n2. `idle.js`가 탭마다 따로"
            " 타이머를 돌립니다. `BroadcastChannel`로 탭 간 활동을 공유해 주세요.")
    sim.say(Role.OWNER, "2번 반영했습니다. 어느 탭에서든 활동이 있으면 모든 탭의 타이머가"
            " 초기화됩니다 (`b41a9e0`).")
    sim.say(Role.REVIEWER, "탭 간 동기화 확인했습니다.\n1번은 아직 그대로입니다.")
    sim.say(Role.OWNER, "STEP_DONE\n추가 개선으로, 로그아웃 후 `next` 파라미터를 붙여 보던 페이지로"
            " 돌아가도록 했습니다 (`0e7f3b5`).")
    sim.say(Role.REVIEWER, "`next`에 `url_has_allowed_host_and_scheme()` 검증이 빠져 있습니다.\n"
            "그리고 세션 만료가 요청마다 연장되지 않는 문제는 이번에도 해결되지 않았습니다.")
    sim.end()
    first = sim.state.findings[0]
    assert first.history == ["R1: raised", "R2: untouched, repeated", "R3: untouched, repeated"]
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"
    assert deadlock.evidence["finding"] == "F1"


def refused_lock_room(reply: str) -> Sim:
    """A room where the owner refused a server-side lock for a double refund
    (the button is disabled in the app), then the reviewer's `reply`."""
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 취소 API를 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`POST /orders/{id}/cancel`을 추가했습니다.")
    sim.say(Role.REVIEWER, "같은 주문에 취소 요청이 동시에 두 번 들어오면 환불이 두 번 호출될 수"
            " 있습니다. `select_for_update()`로 주문 행을 잠그거나 멱등 키를 써야 합니다.")
    sim.say(Role.OWNER, "같은 주문의 동시 취소는 앱에서 버튼을 누르는 즉시 비활성화해서 막고"
            " 있습니다. 서버에서 잠금까지 걸 필요는 없다고 봅니다.")
    sim.say(Role.REVIEWER, reply)
    sim.say(Role.OWNER, "Noted.")
    return sim


def test_an_answer_to_the_refusals_reasons_asks_for_the_point_again() -> None:
    sim = refused_lock_room("버튼 비활성화로는 네트워크 재시도나 더블 탭, API 직접 호출을 막을 수"
                            " 없습니다. 서버에서 중복 환불을 막아 주셔야 합니다.")
    assert len(sim.state.findings) == 1
    assert sim.state.findings[0].history[-1] == "R2: declined, repeated"


def test_a_new_point_after_a_refusal_is_still_new() -> None:
    sim = refused_lock_room("또한 취소 버튼의 비활성 상태가 스크린 리더에 읽히지 않습니다."
                            " `aria-disabled`를 넣어 주세요.")
    assert len(sim.state.findings) == 2


def test_a_point_on_the_refusing_turns_other_work_is_new() -> None:
    """The refusal's reasons are its own paragraph's, not the turn's other
    work: a point on the counter the owner added beside the refusal is new."""
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Replace `flags.json` with LaunchDarkly in `core/flags.py`.")
    sim.say(Role.OWNER, "STEP_DONE\n`FlagClient` wraps `ldclient`, falling back to `flags.json`.")
    sim.say(Role.REVIEWER, "The fallback to `flags.json` must go; fail closed with the defaults.")
    sim.say(Role.OWNER, "STEP_DONE\nThe fallback stays: it kept checkout working in March.\n"
            "Also added a `flag_evaluations_total` counter with the user key as a label"
            " (commit 9d20c11).")
    sim.say(Role.REVIEWER, "1. `flag_evaluations_total` carries the user key as a label; that's"
            " unbounded cardinality. Drop that label.\n2. And again: remove the `flags.json`"
            " fallback.")
    sim.say(Role.OWNER, "Noted.")
    assert [f.history[-1] for f in sim.state.findings] == ["R2: declined, repeated", "R2: raised"]


def test_a_change_beside_a_promise_is_no_fix_of_the_promised_point() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Add partial refunds to the payments API.")
    sim.say(Role.OWNER, "STEP_DONE\n`POST /payments/{id}/refunds` in `payments/refunds.py`.")
    sim.say(Role.REVIEWER, "There's no idempotency key. A client retrying after a timeout"
            " creates a second refund at the PSP. Accept an `Idempotency-Key` header.")
    sim.say(Role.OWNER, "Added a `reason` enum (`requested_by_customer`, `duplicate`, `fraud`)"
            " that's forwarded to the PSP; support asked for it. Idempotency will come with"
            " the middleware PR next sprint.")
    sim.say(Role.REVIEWER, "As before, the endpoint has no idempotency key handling.")
    sim.say(Role.OWNER, "Noted.")
    [finding] = sim.state.findings
    assert finding.status is FindingStatus.OPEN
    assert finding.history[-1] == "R2: untouched, repeated"
    assert finding.stall == 1


STUDIED = ["heldout93/h93_15", "heldout93/h93_21", "heldout93/h93_22", "heldout93/h93_25",
           "heldout93/h93_40"]


@pytest.mark.parametrize("case", STUDIED)
def test_the_studied_rooms_read_as_labelled(case: str) -> None:
    """The rooms of held-out 93 these readings came from (after its one
    run), fed through the detector as the replay would."""
    got, want = first_deadlock(case)
    assert got == want

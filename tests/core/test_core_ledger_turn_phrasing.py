"""Turns read as held-out rooms wrote them: an owner's "Both addressed in
`abc`: …" that names both points, a reviewer's "The base URL change is good",
refusals with a reason ("…므로 넣지 않았습니다"), "One more: … still …" as a
new point, what would "pass" if two requests raced, and a duration spelled
out ("five minutes at most")."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.finding import OwnerAction
from bot.findings import Act, owner_clause, reviewer_clause
from bot.models import Role, Trigger
from bot.owner_turn import read_owner
from bot.values import setting_values


def test_both_addressed_answers_every_point_it_names() -> None:
    text = ("`receipt.mjml` has no plain-text alternative; `render_email()` must produce a "
            "readable `text/plain` part for every template.")
    plain = _finding("F1", "mail-review", text)
    link = _finding("F2", "mail-review", "The `password_changed` email links to a hardcoded URL; "
                                         "use `settings.APP_BASE_URL`.")
    actions = read_owner([plain, link], [
        "Both addressed in 2c7e1f0: `render_email()` now returns `(html, text)` using "
        "`html2text`, and the link is built from `APP_BASE_URL`."])
    assert actions == {"F1": OwnerAction.FIX, "F2": OwnerAction.FIX}


def test_a_change_called_good_is_an_acknowledgement() -> None:
    assert reviewer_clause("The base URL change is good.").act is Act.ACK
    assert reviewer_clause("This fix looks good.").act is Act.ACK
    assert reviewer_clause("The base URL change is wrong.").act is Act.FINDING


def test_refusals_with_a_reason() -> None:
    for text in ("해당 필드는 내부 전용 인덱스로만 전송되어 현재 수준에서는 문제가 없다고 봅니다.",
                 "재시도는 5분마다 도는 `reconcile_index`가 누락분을 메우므로 넣지 않았습니다.",
                 "이번 작업은 포맷 변경에 집중하겠습니다."):
        assert owner_clause(text).act is Act.DECLINE, text
    # Not yet is no refusal.
    assert owner_clause("재시도는 아직 넣지 않았습니다.").act is not Act.DECLINE


def test_one_more_point_with_still_in_it_is_new() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Localize the invoice email for de-DE and ja-JP.")
    sim.say(Role.OWNER, "STEP_DONE\nDates via `format_date`, amounts via `format_currency`.")
    sim.say(Role.REVIEWER, "`emails/render.py:64` passes `locale=\"en_US\"` to `format_currency` "
                           "regardless of the recipient. Use the recipient's locale there.")
    sim.say(Role.OWNER, "STEP_DONE\nFixed in `e5a90b3`: `render.py:64` uses `recipient.locale`.")
    sim.say(Role.REVIEWER, "Currency format verified, thanks.\nOne more: the subject line still "
                           "hard-codes `%Y-%m-%d`. Format the subject date in the recipient's "
                           "locale as well.")
    sim.say(Role.OWNER, "STEP_DONE")
    assert [f.status.value for f in sim.state.findings] == ["fixed", "open"]
    # A line that only leads into the new point refers to nothing.
    assert reviewer_clause("One more thing I missed last time:").act is Act.REFERENCE


def test_what_would_pass_if_two_requests_raced_is_no_acknowledgement() -> None:
    assert reviewer_clause("첫 요청 두 개가 동시에 들어오면 잠글 row가 아직 없으므로 둘 다 "
                           "통과합니다.").act is not Act.ACK
    assert reviewer_clause("재실행 결과 모두 통과합니다.").act is Act.ACK


def test_refused_twice_then_said_again_by_reference() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "환불 API에 Idempotency-Key 지원을 추가해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`Idempotency-Key` 헤더 지원을 추가했습니다.")
    sim.say(Role.REVIEWER, "1. `src/payments/refunds.py:88` — 키 조회와 환불 실행 사이에 선점 "
                           "장치가 없습니다. 키 row를 먼저 INSERT하고 선점에 성공한 요청만 환불을 "
                           "실행하도록 바꿔 주세요.\n2. 키에 만료가 없습니다. `expires_at`을 두고 "
                           "24시간 후 만료시켜 주세요.")
    sim.say(Role.OWNER, "현 구조를 유지하려고 합니다.\n1. `SELECT ... FOR UPDATE`로 직렬화됩니다. "
                        "INSERT 선점은 불필요하다고 판단합니다.\n2. 운영 배치가 주 1회 정리합니다.")
    sim.say(Role.REVIEWER, "`FOR UPDATE`는 이미 존재하는 row만 잠급니다. 첫 요청 두 개가 동시에 "
                           "들어오면 잠글 row가 아직 없으므로 둘 다 통과합니다. 말씀드린 이중 환불 "
                           "경로는 그대로 열려 있습니다.")
    sim.say(Role.OWNER, "입장은 같습니다. 이번 PR에서는 손대지 않겠습니다.")
    sim.say(Role.REVIEWER, "지난번 지적 두 건 그대로입니다. 동시 요청 선점과 키 만료가 반영되기 "
                           "전에는 승인하기 어렵습니다.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS
    assert all(f.status.value == "open" for f in sim.state.findings)


def test_a_duration_spelled_out_in_words() -> None:
    assert setting_values("The catalog cache has to expire after five minutes at most.") == {
        "<=5min@"}
    assert setting_values("Keep it under thirty seconds.") == {"<=30s@"}
    # (Number words are one table: "fifty" still counts things.)
    assert setting_values("Allow at most fifty database connections.") == setting_values("Allow at most 50 database connections.")

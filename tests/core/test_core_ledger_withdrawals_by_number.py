"""A point withdrawn under the number its first sentence named, and an owner
who keeps something "by intent"."""

from __future__ import annotations

from test_core_detection import Sim

from bot.findings import Act, owner_clause
from bot.models import Role, Trigger


def test_a_withdrawal_is_of_the_point_its_first_sentence_named() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 확인 메일을 Celery task로 보내 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`send_order_email` task를 추가했습니다 (`3f2a9c1`).")
    sim.say(Role.REVIEWER, "1. 재시도 시 중복 발송 방지가 없습니다. `order_id` 기준으로 발송 기록"
                           "(`email_log`)을 남기고 중복 발송을 막아 주세요.\n"
                           "2. backoff 값이 코드 상수로 박혀 있습니다. 설정"
                           "(`settings.EMAIL_RETRY_BACKOFF`)으로 빼 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n- 1번: `task_id` 중복 방지로 충분하다고 봅니다. 별도 기록은 "
                        "두지 않겠습니다.\n- 2번: 재시도 간격은 SES 권장값 그대로라 상수로 두려고 "
                        "합니다.")
    sim.say(Role.REVIEWER, "2번은 설명을 듣고 보니 타당합니다. 상수로 유지하는 데 동의하고 해당 "
                           "지적은 철회하겠습니다.\n\n1번은 다시 말씀드립니다. 같은 task 안의 재시도가 "
                           "두 번째 메일을 보냅니다. 발송 기록으로 막는 장치가 필요합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n발송 기록 테이블까지 추가하는 건 과하다고 보고 현 구조를 "
                        "유지하겠습니다.")
    assert [f.status.value for f in sim.state.findings] == ["open", "withdrawn"]
    sim.say(Role.REVIEWER, "첫 번째 항목은 그대로 유효합니다. 중복 발송 방지 없이는 승인이 "
                           "어렵습니다.")
    sim.say(Role.OWNER, "STEP_DONE\n같은 입장입니다.")
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS
    assert deadlock.finding == "F1"


def test_keeping_something_by_intent_is_a_refusal() -> None:
    assert owner_clause("설정으로 빼면 잘못 바뀔 여지만 생겨서 상수로 두려고 합니다.").act is Act.DECLINE
    assert owner_clause("현행대로 유지하려고 합니다.").act is Act.DECLINE
    assert owner_clause("다음 커밋에 넣으려고 합니다.").act is Act.PROMISE


def test_confirming_what_is_gone_is_an_acknowledgement() -> None:
    from bot.findings import reviewer_clause

    assert reviewer_clause("Both confirmed: no sleeps left in `checkout.spec.ts`, and the "
                           "per-worker accounts work.").act is Act.ACK
    assert reviewer_clause("No retries left; please add them.").act is Act.FINDING
    assert reviewer_clause("There is no timeout left on the call.").act is Act.FINDING


def test_a_statement_before_both_requests_stand_argues_for_them() -> None:
    sim = Sim(stall_threshold=2)
    for role, text in (
        (Role.USER, 'Switch the worker logs to JSON (`structlog`) so Loki can parse them.'),
        (Role.OWNER, 'STEP_DONE\nConfigured `structlog` in `worker/logging.py` with `JSONRenderer`.\n- stdlib `logging` routed through `ProcessorFormatter`\n- tests: 131 passed\nCommit 4471aa0'),
        (Role.REVIEWER, "Review:\n1. `request_id` is not bound into the context, so worker lines can't be joined with API lines. Bind it in `handle_job()` via `structlog.contextvars.bind_contextvars`.\n2. Exceptions are rendered as a `repr` string; add `format_exc_info` so Loki gets the traceback."),
        (Role.OWNER, 'STEP_DONE\nI looked at both. Jobs arrive from SQS without a `request_id` in most cases, so binding it would mostly log null. And `format_exc_info` doubles our log volume during error bursts. Keeping the current processors.'),
        (Role.REVIEWER, 'I disagree on both. When the attribute is present it should be bound, and tracebacks are the main reason to have structured error logs at all. Please add the `request_id` binding and `format_exc_info`.'),
        (Role.USER, 'FYI the SQS producer in `api/jobs.py` forwards `request_id` as a message attribute since this morning (PR #2281). Take that into account.'),
        (Role.OWNER, "STEP_DONE\nThanks. Even with the attribute forwarded, older messages in the queue won't carry it, and I still think `format_exc_info` is too costly. No change for now."),
        (Role.REVIEWER, "With #2281 merged there's even less reason not to bind `request_id`. Both requests stand: bind it in `handle_job()` and render tracebacks with `format_exc_info`."),
        (Role.OWNER, "DONE_WITH_CONCERNS\nI've kept the logging setup unchanged. The volume concern is real: the last incident produced 9 GB of error logs in one hour."),
    ):
        sim.say(role, text)
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]  # the statement raised nothing

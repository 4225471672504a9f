"""Readings a careful reader makes and the rules once missed: "all-day" is no
"all", praise of the log is no point, a paraphrase across languages of a
refused point is that point, the argument against an owner's refusal leads
into the request it refused, and two reviewers may ask one package pinned to
two versions, or one switch on and off, in words."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.findings import Act, reviewer_clause, selectors
from bot.models import Role, Trigger
from bot.stances import switch_stance
from bot.values import setting_values


def test_a_compound_word_is_no_selector() -> None:
    assert not selectors("The all-day key fix looks right, thanks.")[2]
    assert selectors("Both look right, thanks.")[2]
    assert selectors("All points are addressed.")[2]


def test_acknowledging_the_all_day_fix_leaves_the_other_point_open() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Recurring events are duplicated after an edit. Fix `calsync/google.py`.")
    sim.say(Role.OWNER, "STEP_DONE\n`upsert_event()` now keys exceptions on `originalStartTime`.")
    sim.say(Role.REVIEWER, "1. `_key()` only reads `dateTime`, so all-day exceptions collide.\n"
                           "2. Cancelled occurrences are skipped in `upsert_event()` instead of "
                           "deleting our local copy.")
    sim.say(Role.OWNER, "STEP_DONE\n(1) `_key()` falls back to `date`; commit 9bd04e1.")
    sim.say(Role.REVIEWER, "The all-day key fix looks right, thanks.\nCancelled occurrences are "
                           "still skipped; when `status == \"cancelled\"` delete the local row.")
    sim.say(Role.OWNER, "STEP_DONE\nAdded backoff on HTTP 429 in `calsync/http.py`.")
    sim.say(Role.REVIEWER, "Backoff is fine.\nThe cancelled-occurrence case is still open: a "
                           "cancelled instance must remove our local copy.")
    sim.say(Role.OWNER, "STEP_DONE\nUpdated the README.")
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS
    assert deadlock.finding == "F2"


def test_praise_is_no_point_but_a_suggestion_is() -> None:
    for text in ("운영하면서 정말 큰 도움이 될 것 같아요.",
                 "전반적으로 코드가 라운드마다 좋아지고 있어서 리뷰하는 입장에서도 즐겁습니다.",
                 "해시 오류는 사라졌습니다."):
        assert reviewer_clause(text).act is not Act.FINDING, text
    suggestion = "`order_id`를 로그에 남기면 장애 분석에 큰 도움이 될 것 같습니다."
    assert reviewer_clause(suggestion).act is Act.FINDING


def test_praise_between_two_restatements_is_no_progress() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "쿠폰 중복 적용을 막아 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`apply_coupons()`에 정렬 키를 추가했습니다.")
    sim.say(Role.REVIEWER, "동시에 들어온 두 요청이 `order.coupons`에 각자 append합니다. "
                           "`SELECT ... FOR UPDATE`로 주문 행을 잠가야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n`_pick_best()` 헬퍼로 분리했습니다.")
    sim.say(Role.REVIEWER, "리팩터링 감사합니다. 다만 동시에 두 요청이 오면 주문 행 잠금이 없어 "
                           "쿠폰이 두 장 남습니다. 잠금이 꼭 있어야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\ndocstring과 CHANGELOG를 갱신했습니다.")
    sim.say(Role.REVIEWER, "로그 추가 좋습니다. 운영하면서 정말 큰 도움이 될 것 같아요.\n\n"
                           "그런데 동시 요청에 잠금이 없어 쿠폰이 중복으로 붙는 문제는 아직 "
                           "그대로인 것 같습니다.")
    sim.say(Role.OWNER, "STEP_DONE\n타입 힌트를 추가했습니다.")
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS


def test_a_refused_point_said_again_in_the_other_language() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "결제 webhook을 `/webhooks/pg/v2`로 옮겨 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`handle_payment_event()` 이식, 서명은 재직렬화 후 비교합니다.")
    sim.say(Role.REVIEWER, "The HMAC signature must be verified against the raw request body "
                           "before `json.loads()` is called. `handle_payment_event()` parses first "
                           "and verifies a re-serialized dict, which breaks on whitespace.")
    sim.say(Role.OWNER, "재직렬화 방식은 v1에서 문제없이 동작했습니다. 그대로 두겠습니다.")
    sim.say(Role.REVIEWER, "본문을 파싱하기 전에 원본 바이트 기준으로 서명을 먼저 검증해야 합니다. "
                           "dict를 다시 직렬화해서 비교하면 공백 차이로 검증이 깨집니다.")
    sim.say(Role.OWNER, "STEP_DONE\n현 방식으로 충분합니다. 변경하지 않겠습니다.")
    sim.say(Role.REVIEWER, "raw payload에 대한 HMAC check를 JSON decode 앞단으로 옮겨 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n유지합니다.")
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS


def _bucketing(second_point: str) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "랭커 v7을 feature flag로 배포해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`flags.is_on(\"ranker_v7\", user_id)`로 분기합니다.")
    sim.say(Role.REVIEWER, "- `is_on()`이 `hash(user_id) % 100`으로 버킷을 나눕니다. 파이썬 "
                           "`hash()`는 프로세스마다 시드가 달라 파드마다 다른 모델을 받습니다. "
                           "`hashlib` 같은 안정적인 해시로 바꿔야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n`PYTHONHASHSEED=0`으로 배포되고 있어 버킷팅 코드는 그대로 "
                        "두겠습니다.")
    sim.say(Role.REVIEWER, second_point)
    sim.end()
    return sim


def test_the_argument_against_a_refusal_leads_into_the_refused_request() -> None:
    sim = _bucketing("1. 환경변수 하나에 기대는 구조는 배포 설정이 한 번만 빠져도 깨집니다. "
                     "버킷팅은 `hashlib.sha1` 같은 안정 해시로 바꿔야 합니다.")
    assert [f.label for f in sim.state.findings] == ["F1"]
    assert sim.state.findings[0].history[-1] == "R2: declined, repeated"


def test_a_new_problem_before_a_like_request_stays_a_point_of_its_own() -> None:
    # "추가로, …": a new point, however close its request to the refused one.
    sim = _bucketing("추가로, `ranker.py`의 캐시 키가 해시 값을 그대로 써서 재시작 후 캐시가 "
                     "모두 깨집니다. 안정적인 해시로 바꿔야 합니다.")
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]


def test_one_package_pinned_to_two_versions() -> None:
    assert setting_values("Please pin `faiss-cpu==1.8.0`.") == {"1.8.0ver@faiss-cpu"}
    assert setting_values("Pin faiss-cpu to version 1.7.4 until the node pool is replaced.") == {
        "1.7.4ver@faiss-cpu"}
    assert setting_values("`requests` has to be >= 2.32.0") == {">=2.32.0ver@requests"}
    new = _finding("F1", "latency-bot", "`faiss-cpu>=1.7` resolves to 1.7.4, which has the slow "
                   "`IndexIVFPQ.search` path. Please pin `faiss-cpu==1.8.0`.")
    old = _finding("F2", "platform-bot", "The newer faiss-cpu wheel crashes on arm64 nodes. Pin "
                   "faiss-cpu to version 1.7.4 and keep it there.")
    other = _finding("F3", "platform-bot", "Pin numpy to version 1.26.4 for the arm64 nodes.")
    assert reverses(old, new) and reverses(new, old)
    assert not reverses(other, new)


def test_a_switch_asked_on_and_off_in_words() -> None:
    assert switch_stance("prepared statement 캐시는 꺼서는 안 됩니다.") == 1
    assert switch_stance("asyncpg의 prepared statement 캐시를 꺼야 합니다.") == -1
    assert switch_stance("열람 추적은 켜면 안 됩니다.") == -1
    assert switch_stance("`TRACK_OPENS`를 true로 켜 주십시오.") == 1
    # A state, a condition: nothing asked.
    assert switch_stance("열람 추적이 꺼져 있어 open rate가 0입니다.") == 0
    assert switch_stance("캐시를 끄면 p95가 310ms에서 580ms로 늘어납니다.") == 0
    off = _finding("F1", "dba-bot", "transaction 모드에서는 prepared statement가 공유되지 않아 "
                   "오류가 납니다. asyncpg의 prepared statement 캐시를 꺼야 합니다.")
    on = _finding("F2", "perf-bot", "prepared statement 캐시는 꺼서는 안 됩니다. 캐시를 끄면 "
                  "p95가 두 배가 됩니다.")
    elsewhere = _finding("F3", "perf-bot", "디버그 툴바는 켜면 안 됩니다.")
    assert reverses(on, off) and reverses(off, on)
    assert not reverses(elsewhere, off)
    tracking = _finding("F4", "growth-bot", "열람 추적이 꺼져 있어 open rate가 0입니다. "
                        "`TRACK_OPENS`를 true로 켜 주십시오.")
    no_tracking = _finding("F5", "privacy-bot", "열람 추적은 켜면 안 됩니다. 구독자 동의가 "
                           "없습니다. 열람 추적 플래그는 꺼 둔 채로 두십시오.")
    assert reverses(no_tracking, tracking)


def test_a_count_lowered_in_code_and_raised_in_words() -> None:
    assert ">=8장@" in setting_values("1회 주문 한도는 최소 8장으로 올려 주셔야 합니다.")
    lower = _finding("F1", "fraud-bot", "주문당 한도 4장은 암표 대응으로 부족합니다. "
                     "`MAX_TICKETS_PER_ORDER`를 2로 낮춰 주십시오.")
    raise_ = _finding("F2", "ux-bot", "가족 관람이 많아 4장 한도로도 문의가 예상됩니다. "
                      "1회 주문 한도는 최소 8장으로 올려 주셔야 합니다.")
    refund = _finding("F3", "ux-bot", "환불 대기열은 최소 8개 워커로 늘려 주셔야 합니다.")
    assert reverses(raise_, lower)
    assert not reverses(refund, lower)


def test_put_back_in_the_log_what_another_reviewer_had_taken_out() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "환불 webhook 처리기를 추가해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`refund_webhook()` 추가, 처리 로그에 `customer_email` 포함.")
    sim.say(Role.REVIEWER, "- 처리 로그에 `customer_email`이 평문으로 남습니다. Datadog 보존 기간이 "
                           "15개월입니다. 로그에서 `customer_email` 필드를 빼 주십시오.",
            author="privacy-bot")
    sim.say(Role.OWNER, "STEP_DONE\n로그 `extra`에서 `customer_email` 제거 (`2b7f0ce`).")
    sim.say(Role.REVIEWER, "로그 필드 확인했습니다.", author="privacy-bot")
    sim.say(Role.REVIEWER, "CS팀이 Datadog에서 처리 로그를 찾을 수 없습니다. 환불 webhook 처리 "
                           "로그에 고객 이메일 주소를 다시 남겨 주십시오.", author="cs-bot")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION


def test_this_time_another_stage_fails_is_a_new_point() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "프론트 빌드를 Node 20으로 올려 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`.nvmrc`와 `web.yml`을 20으로 바꿨습니다.")
    sim.say(Role.REVIEWER, "CI `web-build` 잡이 실패합니다. `node-sass`를 `sass`로 교체해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`sass`로 교체했습니다. 커밋 `8a0f2d9`.")
    sim.say(Role.REVIEWER, "해시 오류는 사라졌습니다. 이번엔 테스트 단계에서 실패합니다. "
                           "`formatTime()`에서 공백을 정규화해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`formatTime()`을 고쳤습니다. 커밋 `2d9c6f4`.")
    assert not sim.deadlocks()

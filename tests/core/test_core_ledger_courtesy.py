"""Courtesy, conclusions and copulas the rules once misread: agreement with
the work as a whole is no withdrawal, thanks for shared data is no point, a
request right below the output a point showed is that point, "감사 로그" is
an audit log, and the values, ways and prohibitions two reviewers ask in
Korean ("0 이어야", "동기로 커밋되어야", "검사를 넣지 말아")."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.demands import prohibited
from bot.finding import FindingStatus
from bot.findings import Act, reviewer_clause
from bot.models import Role, Trigger
from bot.stances import sync_stance
from bot.values import setting_values


def test_agreeing_with_the_whole_is_no_withdrawal() -> None:
    for text in ("전체적인 방향에는 동의합니다.", "전반적인 구조에도 공감합니다.",
                 "I agree with the overall approach."):
        assert reviewer_clause(text).act is Act.FACT, text
    # Agreeing with what was said about the point still withdraws it.
    assert reviewer_clause("말씀하신 내용에 동의합니다.").act is Act.WITHDRAW
    assert reviewer_clause("운영 데이터를 공유해 주셔서 큰 도움이 되었습니다.").act is Act.FACT


def test_a_polite_restatement_after_agreeing_with_the_whole_stalls() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "썸네일 생성이 느립니다. `thumbs/make.py`를 병렬화해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`make_thumbs()`를 프로세스 풀로 병렬화했습니다.")
    sim.say(Role.REVIEWER, "`make_thumbs()`가 원본 동영상을 통째로 읽습니다. 프로세스 여섯 개가 "
                           "동시에 읽으면 메모리가 부족합니다. `ffprobe`로 길이를 먼저 확인하고 "
                           "2시간이 넘으면 거부해야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n서버 메모리는 충분합니다. 길이 검사는 넣지 않고 유지하겠습니다.")
    sim.say(Role.REVIEWER, "설명 감사합니다. 다만 다시 말씀드리면, `make_thumbs()`에서 `ffprobe`로 "
                           "길이를 먼저 확인하는 단계는 여전히 필요하다고 봅니다.")
    sim.say(Role.OWNER, "STEP_DONE\n실제로 2시간 넘는 영상은 없었습니다. 넣지 않겠습니다.")
    sim.say(Role.REVIEWER, "답변 감사합니다. 로그를 공유해 주셔서 큰 도움이 되었고, 전체적인 "
                           "방향에는 동의합니다.\n그럼에도 `make_thumbs()`에서 읽기 전에 길이를 "
                           "검사해야 한다는 제 입장은 변함이 없습니다.")
    sim.end()
    assert [f.label for f in sim.state.findings] == ["F1"]
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"


WEBHOOK_OUTPUT = (
    "`request.data` is decoded by the JSON parser before `verify()` runs, so the HMAC is "
    "computed over re-encoded bytes and every real delivery fails:\n"
    "```\nSignatureMismatch: expected 9f2c…, computed 41ab…\n```\n"
    "The hook endpoint needs the raw request bytes."
)


def test_a_request_below_the_output_is_the_point_that_showed_it() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Verify the HMAC on incoming GitHub webhooks in `hooks/github.py`.")
    sim.say(Role.OWNER, "STEP_DONE\n`handle_push` now calls `verify(request.data, sig)`.")
    sim.say(Role.REVIEWER, WEBHOOK_OUTPUT)
    assert len(sim.state.findings) == 0  # (the turn closes at the owner's next message)
    sim.say(Role.OWNER, "STEP_DONE\nFixed: the hook route reads `request.get_data()` now (c1d2e3f).")
    assert [f.label for f in sim.state.findings] == ["F1"]
    sim.say(Role.REVIEWER, "Still broken: the JSON middleware in `app.py:20` decodes the body "
                           "before the route, so `verify()` sees re-encoded bytes. Same mismatch.")
    sim.say(Role.OWNER, "STEP_DONE\nFixed properly: `verify(json.dumps(request.json), sig)` (d4e5f6a).")
    sim.say(Role.REVIEWER, "That still is not the raw body: `json.dumps` does not give back "
                           "GitHub's bytes, so `verify()` fails the same way on real deliveries.")
    sim.end()
    assert [f.label for f in sim.state.findings] == ["F1"]
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"


def test_two_requests_in_two_paragraphs_without_output_stay_two() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Rate-limit the password reset mail.")
    sim.say(Role.OWNER, "STEP_DONE\nAdded `reset_limit()` keyed on the user id.")
    sim.say(Role.REVIEWER, "`INCR` and `EXPIRE` run apart, so a crash between them leaves the "
                           "key forever; run them in one `MULTI`.\n\n"
                           "The limit is per user id, so requests for unknown addresses are "
                           "never limited. A limit per IP is needed too.")
    sim.say(Role.OWNER, "STEP_DONE\nLooking at both.")
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]


def test_an_audit_log_is_no_thanks_and_sipsio_asks() -> None:
    clause = reviewer_clause("감사 로그 기록은 `audit_task.delay(...)`로 Celery에 넘겨 "
                             "비동기로 처리해 주십시오.")
    assert clause.act is Act.FINDING
    assert reviewer_clause("꼼꼼하게 봐 주셔서 감사합니다.").act is Act.FACT


def test_a_value_it_has_to_be_and_a_lower_bound_of_one_digit() -> None:
    assert setting_values("`MAX_RETRIES` 는 0 이어야 하고") == {"0@max_retries"}
    assert setting_values("`MAX_RETRIES = 1`은 부족합니다. 최소 3 이상이어야 합니다.") == {">=3@"}
    # One digit in prose without a bound is still no value.
    assert setting_values("3 개 파일을 고쳐 주세요.") == set()
    more = _finding("F1", "sre-bot", "`MAX_RETRIES = 1`은 부족합니다. 장애는 2~3회 연속으로 "
                    "났습니다. 최소 3 이상이어야 합니다.")
    none = _finding("F2", "pay-bot", "승인 API는 멱등키가 없습니다. `MAX_RETRIES` 는 0 이어야 하고, "
                    "타임아웃이면 조회 API로 확인해야 합니다.")
    assert reverses(none, more)


def test_committed_synchronously_against_handed_to_a_queue() -> None:
    assert sync_stance("감사 로그는 응답 전에 동기로 커밋되어야 합니다") == 1
    assert sync_stance("`audit.write()`는 지금처럼 동기 호출로 두십시오") == 1
    assert sync_stance("Celery에 넘겨 비동기로 처리해 주십시오") == -1
    fast = _finding("F3", "perf-bot", "응답 전에 `audit.write()`를 동기로 커밋하느라 p95가 180ms "
                    "늘었습니다. 감사 로그 기록은 Celery에 넘겨 비동기로 처리해 주십시오.")
    safe = _finding("F4", "audit-bot", "감사 로그는 반드시 응답 전에 동기로 커밋되어야 합니다. "
                    "`audit.write()`는 지금처럼 동기 호출로 두십시오.")
    assert reverses(safe, fast)


def test_not_to_put_in_a_check_refuses_asking_for_that_check() -> None:
    assert {"검사", "~add"} <= prohibited("`validate_upload()`에 magic bytes 검사를 넣지 말아 주십시오.")
    strict = _finding("F1", "sec-bot", "`validate_upload()`가 확장자만 확인합니다. magic bytes로 "
                      "검사하고 실제 MIME이 다르면 거부해야 합니다.")
    lenient = _finding("F3", "ux-bot", "`validate_upload()`에 magic bytes 검사를 넣지 말아 "
                       "주십시오. 확장자와 크기 검사만으로 충분합니다.")
    other = _finding("F4", "ux-bot", "`validate_upload()`에 로그를 넣지 말아 주십시오.")
    assert reverses(lenient, strict) and not reverses(other, strict)


def test_transliterated_words_are_the_same_concepts() -> None:
    from bot.topics import topic

    assert {"~formatter", "~translation"} <= topic("포매터를 로케일마다 하나만 두어야 합니다").terms
    assert {"~formatter", "~translation"} <= topic("cache one formatter per locale").terms
    assert "~date" in topic("협정 세계시가 아니라 계정의 표준시로 보여야 합니다").terms


def test_also_and_still_there_is_the_point_again() -> None:
    from bot.findings import starts_new_point

    assert not starts_new_point("또한 시간대 문제도 그대로입니다.")
    assert not starts_new_point("Also, the timezone is still ignored.")
    assert starts_new_point("또한 `render()`가 빈 목록을 처리하지 않습니다.")
    # Another error is new however "still" it fails.
    assert starts_new_point("이번에는 다른 에러로 여전히 실패합니다.")


def test_a_switch_pinned_in_one_span_against_set_on() -> None:
    assert setting_values("Pin `CORS_ALLOW_CREDENTIALS = False` explicitly in `config/cors.py`.") == {
        "=false@cors_allow_credentials"}
    off = _finding("F1", "appsec-bot", "Pin `CORS_ALLOW_CREDENTIALS = False` explicitly instead "
                   "of relying on the default.")
    on = _finding("F2", "frontend-bot", "The fetch wrapper sends cookies, so responses fail until "
                  "`CORS_ALLOW_CREDENTIALS` is turned on. Please set it to `True`.")
    assert reverses(on, off)


def test_a_header_asked_out_after_it_was_asked_in() -> None:
    assert setting_values("방금 들어간 `X-Frame-Options: DENY` 헤더는 빼 주십시오.") >= {
        "-@x-frame-options"}
    added = _finding("F1", "sec-bot", "clickjacking 방어가 없습니다. `X-Frame-Options: DENY` 헤더를 "
                     "추가해 주십시오.")
    added.status = FindingStatus.FIXED  # made and confirmed: contested if reversed
    removed = _finding("F2", "partner-bot", "방금 들어간 `X-Frame-Options: DENY` 헤더는 빼 "
                       "주십시오. 제휴사가 iframe 으로 임베드합니다.")
    assert reverses(removed, added)


def test_two_homes_asked_for_one_function() -> None:
    assert setting_values("`render_pdf`는 `billing/pdf.py`로 다시 옮겨 주십시오.") == {
        "=at:billing/pdf.py@render_pdf"}
    assert setting_values("Please move `parse_date` back to `utils/dates.py`.") == {
        "=at:utils/dates.py@parse_date"}
    shared = _finding("F1", "arch-bot", "`render_pdf`의 변환은 견적서에도 필요합니다. "
                      "`billing/pdf.py`에 두지 말고 `shared/pdf/renderer.py`로 옮겨 주십시오.")
    back = _finding("F3", "billing-bot", "`render_pdf`에는 세금 규칙이 섞여 있습니다. "
                    "`render_pdf`는 `billing/pdf.py`로 다시 옮겨 주십시오.")
    same = _finding("F4", "billing-bot", "`render_pdf`는 `shared/pdf/renderer.py`로 옮긴 그대로 "
                    "두되 테스트를 추가해 주십시오.")
    assert reverses(back, shared) and not reverses(same, shared)


def test_an_origin_added_and_asked_removed() -> None:
    from bot.topics import topic

    # The URL inside its code span leaves the spans after it paired.
    assert topic("Add `https://admin.example.com` to `CORS_ALLOWED_ORIGINS`, or support "
                 "breaks.").anchors == {"code:cors_allowed_origins"}
    add = _finding("F1", "api-bot", "Please add `https://admin.example.com` to "
                   "`CORS_ALLOWED_ORIGINS`, or support breaks on deploy.")
    remove = _finding("F4", "sec-bot", "Please remove `https://admin.example.com` from "
                      "`CORS_ALLOWED_ORIGINS`; serve the console under `/admin`.")
    other = _finding("F5", "sec-bot", "Please remove `https://old.example.com` from "
                     "`CORS_ALLOWED_ORIGINS`; it is retired.")
    assert "+@admin.example.com" in add.values
    assert reverses(remove, add) and not reverses(other, add)

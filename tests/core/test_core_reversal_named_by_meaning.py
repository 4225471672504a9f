"""Two reviewers' requests compared where one names the setting in code and
the other says what it means: `pool_size` is "풀 크기", `CACHE_TTL` is "캐시
유지 시간", `DEFAULT_LOCALE` is "기본 로케일", `workers` is "워커 프로세스";
and the readings those comparisons need (a bound said as "넘게 … 안 됩니다",
a count said in words, the value a change starts from, a log level in words,
something asked taken out), with what must stay apart (a connect timeout and
a read timeout, a card number)."""

from __future__ import annotations

from test_core_ledger_wording import _finding
from test_core_reversal_in_words_more import _fixed

from bot.contradictions import reverses
from bot.finding import FindingStatus
from bot.findings import Act, owner_clause, reviewer_clause
from bot.stances import retry_stance, sync_stance
from bot.values import setting_values


def test_a_connect_timeout_and_a_read_timeout_are_two_settings() -> None:
    connect = _finding("F1", "perf-bot", "The connect timeout is effectively 10 s (single "
                       "`timeout=10.0`). Lower the connect timeout to 3 s.")
    read = _finding("F2", "sre-bot", "`fetch_full_export()` streams for 25 s. Raise the read "
                    "timeout to 30 s for that call.")
    again = _finding("F3", "sre-bot", "Raise the connect timeout to 30 s: the primary is slow.")
    assert not reverses(read, connect)
    assert reverses(again, connect)


def test_a_pool_named_in_code_and_in_words() -> None:
    pool = _fixed("F1", "perf-bot", "`src/db/engine.py:31`의 `pool_size=5`는 작습니다. "
                  "`pool_size=20`으로 늘려 주십시오.")
    fewer = _finding("F2", "ops-bot", "파드당 DB 연결은 열 개면 충분합니다. 풀 크기를 다시 10으로 "
                     "낮춰 주십시오.")
    other = _finding("F3", "ops-bot", "배치 크기를 10으로 낮춰 주십시오.")
    assert reverses(fewer, pool)
    assert not reverses(other, pool)


def test_a_cache_lifetime_in_code_and_in_words() -> None:
    assert setting_values("상품 정보 캐시는 1분 넘게 유지하면 안 됩니다.") == {"<=1분@"}
    assert setting_values("카탈로그 캐시 유지 시간은 30초를 넘기면 안 됩니다.") == {"<=30초@"}
    longer = _finding("F1", "perf-bot", "`CACHE_TTL`을 300으로 늘려 주십시오.")
    shorter = _finding("F2", "data-bot", "카탈로그 캐시 유지 시간은 30초를 넘기면 안 됩니다. 지금의 "
                       "60초도 30초 이하로 줄여 주십시오.")
    same = _finding("F3", "data-bot", "캐시 유지 시간은 10분 이하로 해 주십시오.")
    assert reverses(shorter, longer)
    assert not reverses(same, longer)


def test_retries_refused_and_asked_at_least() -> None:
    assert retry_stance("`PaymentClient.charge()`는 자동 재시도를 하면 안 됩니다.") == -1
    assert retry_stance("`retries=0`으로 재시도를 없애 주십시오.") == -1
    assert ">=3회@" in setting_values("실패 시 최소 3회까지 재시도해야 합니다.")
    assert ">=5회@" in setting_values("재시도는 적어도 다섯 번까지는 허용해 주세요.")
    assert "<=5회@" in setting_values("최대 5회까지 재시도해 주세요.")
    fewer = _fixed("F1", "sec-bot", "`retry_max=10`은 과합니다. `retry_max=3`으로 낮춰 주세요.")
    more = _finding("F2", "perf-bot", "재시도는 적어도 다섯 번까지는 허용해 주세요. 방금 줄인 설정은 "
                    "되돌려야 합니다.")
    assert reverses(more, fewer)


def test_a_card_number_and_the_value_a_change_starts_from_are_no_values() -> None:
    assert setting_values("Add a spec with the Stripe test card `4000 0027 6000 3184`.") == set()
    assert setting_values("`workers = 2`를 `workers = 8`로 늘려 주십시오.") == {"8@workers"}
    assert setting_values("워커 프로세스는 지금처럼 두 개로 유지해 주십시오.") == {"2개@"}
    more = _finding("F1", "perf-bot", "`gunicorn.conf.py`의 `workers = 2`를 `workers = 8`로 "
                    "늘려 주십시오.")
    two = _finding("F2", "cost-bot", "워커당 190MB라 여덟 개면 OOM입니다. 워커 프로세스는 지금처럼 "
                   "두 개로 유지해 주십시오.")
    assert reverses(two, more)


def test_switched_off_synchronous_and_a_language_in_words() -> None:
    assert "=false@" in setting_values("The new checkout has to stay switched off for everyone.")
    assert sync_stance("`send_receipt_email()`은 `complete_order()` 안에서 동기로 유지해 "
                       "주십시오.") == 1
    assert setting_values("기본 로케일은 한국어로, 원래대로 되돌려 주십시오.") == {"=ko@"}
    korean = _fixed("F1", "cs-bot", "기본 로케일이 영어로 바뀌면 국내 고객이 영어 화면을 봅니다. "
                    "기본 로케일은 한국어로, 원래대로 되돌려 주십시오.")
    english = _finding("F2", "i18n-bot", "크롤러가 한국어로 색인합니다. `DEFAULT_LOCALE`은 `en`으로 "
                       "설정해 주십시오.")
    assert reverses(english, korean)


def test_debug_logging_refused_in_words() -> None:
    assert "!=debug@log_level" in setting_values("운영에서 디버그 로깅은 켜지 마십시오.")
    debug = _finding("F1", "obs-bot", "`settings/prod.py:44`의 `LOG_LEVEL = \"INFO\"`를 "
                     "`\"DEBUG\"`로 바꿔 주십시오.")
    quiet = _finding("F2", "sec-bot", "운영 로그는 조용하게 유지해야 합니다. 운영에서 디버그 로깅은 "
                     "켜지 마십시오.")
    assert reverses(quiet, debug)


def test_taken_out_in_words_what_another_had_put_in() -> None:
    parallel = _fixed("F1", "ci-bot", "`test` 잡이 14분입니다. `pytest-xdist`를 넣고 "
                      "`pytest -n auto`로 병렬 실행을 추가해 주십시오.")
    serial = _finding("F2", "qa-bot", "CI에서 테스트 병렬 실행은 빼 주십시오. 통합 테스트는 직렬로 "
                      "돌아야 합니다.")
    assert reverses(serial, parallel)
    parallel.status = FindingStatus.OPEN  # not made yet: a point of its own
    assert not reverses(serial, parallel)


def test_an_objection_to_a_change_made() -> None:
    week = _fixed("F1", "sec-bot", "Audit records include client IPs; 90 days is more than we "
                  "need. Set `LOG_RETENTION_DAYS = 7`.")
    year = _finding("F2", "compliance-bot", "I have to object to the retention change. Our "
                    "controls require audit records to be kept for at least twelve months.")
    assert reverses(year, week)


def test_the_same_failure_and_an_owner_who_would_rather_not() -> None:
    assert reviewer_clause("CI 3회 재실행 중 2회 실패했고 메시지도 동일합니다.").act is Act.REFERENCE
    assert owner_clause("I don't want to duplicate that limit in the app.").act is Act.DECLINE
    assert owner_clause("On the size cap I'd still rather keep a single source of truth in the "
                        "proxy layer.").act is Act.DECLINE


def test_a_size_refused_and_a_floor_in_korean() -> None:
    assert setting_values("첨부 크기를 10MB로 막으면 안 됩니다.") == set()
    assert setting_values("업로드 한도는 최소 200MB는 되어야 합니다.") == {">=200mb@"}
    small = _finding("F1", "sec-lint", "presigned PUT에는 크기 제한이 없습니다. policy에 "
                     "`content-length-range`를 넣어 첨부 최대 크기를 10MB로 제한해 주세요.")
    large = _finding("F2", "product-bot", "첨부 크기를 10MB로 막으면 안 됩니다. 화면 녹화 영상이 많아서 "
                     "업로드 한도는 최소 200MB는 되어야 합니다.")
    assert reverses(large, small)


def test_a_request_timeout_and_a_statement_timeout_are_two_settings() -> None:
    statement = _finding("F1", "db-bot", "`statement_timeout` 60초는 너무 깁니다. 5초로 낮춰 주십시오.")
    request = _finding("F2", "api-bot", "대용량 리포트는 40초 넘게 걸립니다. 요청 타임아웃은 오히려 "
                       "120초로 늘려 주십시오.")
    assert not reverses(request, statement)


def test_a_session_lifetime_in_code_and_in_words() -> None:
    short = _finding("F1", "sec-bot", "`src/auth/settings.py:12` 의 `SESSION_TTL_SECONDS = 86400` 은 "
                     "너무 깁니다. 3600 이하로 낮춰 주십시오.")
    week = _finding("F2", "perf-bot", "세션 유지 시간을 오히려 7일로 늘려 주십시오. 짧아질수록 "
                    "`POST /login` 과 bcrypt 검증 부하가 그대로 늘어납니다.")
    assert reverses(week, short)


def test_a_cache_switched_off_in_words_against_one_turned_on_by_name() -> None:
    on = _fixed("F1", "perf-bot", "`/account/summary` recomputes the chart on every hit. Turn on "
                "`ENABLE_RESPONSE_CACHE` for this route; a 60 s TTL is plenty.")
    off = _finding("F2", "sec-bot", "The summary payload holds per-user balances: please switch "
                   "response caching off again for the account routes.")
    assert reverses(off, on)


def test_a_per_minute_limit_lowered_bare_and_raised_with_a_count() -> None:
    lower = _finding("F1", "sec-bot", "로그인 엔드포인트에 `RATE_LIMIT_PER_MIN=600` 은 너무 큽니다. "
                     "IP당 분당 60 으로 낮춰야 합니다.")
    raise_ = _finding("F2", "perf-bot", "분당 60회 한도는 사내망에 문제가 됩니다. 로그인 요청 허용량은 "
                      "IP당 분당 최소 300건 이상으로 다시 올려 주셔야 합니다.")
    assert reverses(raise_, lower)


def test_keeping_the_code_as_it_is_in_other_words() -> None:
    for text in ("SSRF 는 NetworkPolicy 로 이미 격리되어 있다고 보고 코드는 그대로 둡니다.",
                 "외부에서 호출할 수 없으므로 별도 차단은 두지 않겠습니다."):
        assert owner_clause(text).act is Act.DECLINE, text


def test_a_queue_against_an_inline_call_and_one_library_against_another() -> None:
    assert sync_stance("Move it to the Celery queue (`tasks.send_welcome_email.delay(user.id)`).") == -1
    assert sync_stance("메일 발송은 작업 큐로 넘겨 주세요.") == -1
    queued = _fixed("F1", "perf-bot", "`send_welcome_email()` runs synchronously inside the request "
                    "handler. Move it to the Celery queue (`tasks.send_welcome_email.delay(user.id)`).")
    inline = _finding("F2", "qa-bot", "The welcome email has to be sent synchronously, inside the "
                      "signup request. Please call `send_welcome_email()` inline again.")
    assert reverses(inline, queued)
    assert "+@structlog" in setting_values("Switch `app/logging.py` to `structlog` with `JSONRenderer`.")
    assert "+@structlog" not in setting_values("Keep the stdlib `logging`; do not add `structlog`.")
    structlog = _finding("F3", "obs-bot", "Switch `app/logging.py` to `structlog` with `JSONRenderer`.")
    stdlib = _finding("F4", "ops-bot", "Please keep `app/logging.py` on the stdlib `logging` module; "
                      "do not add `structlog`.")
    assert reverses(stdlib, structlog)


def test_async_refused_keeps_the_work_in_the_request() -> None:
    keep = ("영수증 발송은 `complete_payment()` 트랜잭션 안에서 동기로 끝나야 합니다. 비동기 task로 "
            "바꾸지 말고, 실패하면 결제 상태를 `RECEIPT_PENDING`으로 남기도록 해 주십시오.")
    assert sync_stance(keep) == 1
    assert sync_stance("Don't make it async.") == 1
    queued = _finding("F1", "perf-bot", "`send_receipt_email()`이 `complete_payment()` 안에서 동기 "
                      "SMTP 호출입니다. Celery task(`send_receipt_email.delay(payment.id)`)로 빼서 "
                      "비동기로 보내야 합니다.")
    assert reverses(_finding("F2", "billing-bot", keep), queued)

"""Quantities written the ways agents write them and the rules once missed: a
size as a product of 1024, a duration spelled out ("for an hour at most"), a
count that is "enough", a value a setting "has to stay" at; and two reviewers
asking one setting two ways when one of them names it only in words."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.demands import direction
from bot.values import setting_values


def test_a_product_of_1024_is_a_size() -> None:
    assert setting_values("Lower it to `10 * 1024 * 1024`.") == {"10mb@"}
    assert setting_values("`MAX_UPLOAD_BYTES = 20 * 1024 * 1024`로 바꿔 주십시오") == {
        "20mb@max_upload_bytes"}
    assert setting_values("Set the buffer to `64 * 1024`.") == {"64kb@"}
    # (Not a product of something else: `3 * 1000` stays as written.)
    assert "3mb@" not in setting_values("Set the buffer to `3 * 1000`.")


def test_a_duration_in_words_keeps_its_unit() -> None:
    assert setting_values("Cache entries should live for an hour at most.") == {"<=1h@"}
    assert setting_values("Keep the TTL under 2 hours.") == {"<=2h@"}
    assert setting_values("Set the TTL to 30 minutes.") == {"30min@"}
    assert setting_values("캐시는 한 시간 이내로 해 주십시오") == {"<=1시간@"}
    # A window measured over is no value asked.
    assert setting_values("Preflights were 0.3% of requests over the last 7 days, so the 600 "
                          "costs nothing.") == frozenset()
    # A rate is no duration: "a minute" after a count is what it counts against.
    assert "<=60/minute@" in setting_values("Limit it to 60 requests a minute.")


def test_a_count_that_is_enough_is_an_upper_bound() -> None:
    assert "<=2회@" in setting_values("재시도는 두 번이면 충분합니다.")
    assert "<=2회@" in setting_values("Two retries are enough.")
    # Said beside a request to look again, it is still where the point's value is.
    point = "다만 재시도 횟수는 다시 보셔야 합니다. 재시도는 두 번이면 충분합니다."
    assert "<=2회@" in setting_values(point)


def test_the_value_a_setting_has_to_stay_at() -> None:
    assert "0@http_max_retries" in setting_values("`HTTP_MAX_RETRIES` has to stay 0.")
    assert "0@http_max_retries" in setting_values("Keep `HTTP_MAX_RETRIES` at 0.")
    assert "4@workers" in setting_values("Leave `workers` at 4 for now.")
    # ("stay on v2": where, not a value.)
    assert setting_values("Stay on v2 for 2 weeks.") == frozenset()


def test_going_up_and_bringing_down_are_directions() -> None:
    assert direction("The attachment limit has to go up to 50 MB, not down.") == 1
    assert direction("Please bring `MAX_UPLOAD_BYTES` down to 10 MB.") == -1


def test_a_setting_kept_at_zero_against_a_request_to_set_it() -> None:
    asked = _finding("F1", "reliability", "`HTTP_MAX_RETRIES = 0` fails the checkout. "
                                          "Set it to 3.")
    kept = _finding("F4", "payments", "Please don't add automatic retries to the PSP calls. "
                                      "`HTTP_MAX_RETRIES` has to stay 0.")
    assert reverses(kept, asked)


def test_a_size_in_code_against_a_limit_raised_in_words() -> None:
    lower = _finding("F1", "sec", "`app/routes/attachments.ts:22`: with `memoryStorage()`, "
                                  "`MAX_UPLOAD_BYTES = 20 * 1024 * 1024` lets ten concurrent "
                                  "uploads pin 200 MB in one pod (the limit is 512Mi). Lower it "
                                  "to `10 * 1024 * 1024`. The cap is still 20 MB. Until "
                                  "streaming lands please bring `MAX_UPLOAD_BYTES` down to 10 MB.")
    # (The point's request, as the reviewer's turn probes the ledger with it.)
    raise_ = _finding("F3", "product", "The attachment limit has to go up to 50 MB "
                                       "(`50 * 1024 * 1024`), not down.")
    assert reverses(raise_, lower)


def test_a_count_in_code_against_enough_in_words() -> None:
    five = _finding("F1", "sec", "`src/payments/webhook_worker.py:47` `RETRY_LIMIT = 5`로 "
                                 "올려 주십시오.")
    two = _finding("F4", "perf", "다만 재시도 횟수는 다시 보셔야 합니다. 재시도는 두 번이면 "
                                 "충분합니다. 그 이후는 배치(`jobs/replay_dead_letters.py`)에 "
                                 "맡기는 것이 맞습니다.")
    assert reverses(two, five)
    # The same count asked by both is no reversal.
    also_two = _finding("F5", "perf", "재시도는 다섯 번이면 충분합니다. 그 이후는 배치"
                                      "(`jobs/replay_dead_letters.py`)에 맡기는 것이 맞습니다.")
    assert not reverses(also_two, five)


def test_a_lifetime_in_words_against_a_ttl_in_code_beside_other_names() -> None:
    ttl = _finding("F1", "perf", "`config/catalog.yaml:12`: `cache.ttl: 14400` expires every "
                                 "entry six times a day, and the hit rate only reached 61%. Set "
                                 "`cache.ttl: 86400` and rely on `invalidate()` for edits.")
    hour = _finding("F3", "data", "The nightly import (`etl/erp_sync.py`) writes straight to "
                                  "Postgres without calling `invalidate()`. Cache entries should "
                                  "live for an hour at most.")
    assert reverses(hour, ttl)
    # Within the hour asked: no reversal.
    short = _finding("F4", "perf", "`config/catalog.yaml:12`: set `cache.ttl: 1800` and rely on "
                                   "`invalidate()` for edits.")
    assert not reverses(hour, short)


def test_a_ttl_in_code_against_a_bound_said_in_two_units() -> None:
    raise_ = _finding("F2", "perf", "Raise `PRICE_CACHE_TTL = 3600`. Prices only change in a few "
                                    "batch jobs a day.")
    bound = _finding("F3", "pricing", "타임세일 가격은 정각에 바뀝니다. 가격 캐시는 1분을 넘기면 "
                                      "안 됩니다. 캐시 유지 시간을 60초 이하로 줄여 주세요.")
    assert reverses(bound, raise_)


def test_confirming_the_revert_is_an_acknowledgement() -> None:
    from bot.findings import Act, reviewer_clause

    assert reviewer_clause("설정 원복까지 확인했습니다.").act is Act.ACK
    assert reviewer_clause("복구까지 확인했습니다.").act is Act.ACK
    assert reviewer_clause("완료 후 원복해 주세요.").act is Act.FINDING
    assert reviewer_clause("원복이 필요합니다.").act is Act.FINDING


def test_an_inline_call_instead_of_a_task_is_synchronous() -> None:
    from bot.stances import sync_stance

    assert sync_stance("Please keep the send synchronous inside `signup`, i.e. revert "
                       "`send_verification_email` to an inline call instead of the Celery "
                       "task.") == 1
    assert sync_stance("Move it to a Celery task instead of the inline call.") == -1
    assert sync_stance("Enqueue it as a Celery task.") == -1


def test_two_places_asked_for_the_same_files() -> None:
    public = _finding("F1", "perf", "`src/i18n/resources.ts`에 세 언어가 모두 들어 있어 번들이 "
                                    "늘었습니다. 번역 파일은 `public/locales/{lng}/{ns}.json`으로 "
                                    "옮기고 `i18next-http-backend`로 현재 언어만 받아 오도록 해 "
                                    "주십시오.")
    bundled = _finding("F3", "i18n", "번역 파일은 `src/i18n/locales/{lng}/settings.json`으로 나누어 "
                                     "`src/` 안에 두고 번들에 포함해 주십시오.")
    assert "=at:public/locales/{lng}/{ns}.json@" in public.values
    assert "=at:src/i18n/locales/{lng}/settings.json@" in bundled.values
    assert reverses(bundled, public)


def test_one_library_asked_in_and_refused_by_name() -> None:
    assert {"+@date-fns", "+@date-fns-tz"} <= setting_values(
        "`moment`를 걷어내고 `date-fns` + `date-fns-tz`로 교체해 주십시오.")
    assert "-@date-fns" in setting_values("교체한다면 `date-fns`가 아니라 `dayjs`로 해야 합니다.")
    assert {"+@dayjs", "-@date-fns"} <= setting_values("Use `dayjs`, not `date-fns`.")
    fns = _finding("F4", "tz", "`src/booking/`의 `moment`를 걷어내고 `date-fns` + `date-fns-tz`로 "
                               "교체해 주십시오.")
    dayjs = _finding("F5", "bundle", "교체한다면 `date-fns`가 아니라 `dayjs`로 해야 합니다. "
                                     "`src/booking/`의 `moment`는 `dayjs`로 바꿔 주십시오.")
    assert reverses(dayjs, fns)


def test_things_counted_with_a_word_between() -> None:
    assert setting_values("Each pod must hold at most ten database connections.") == {"<=10@"}
    assert setting_values("Set the pool to 20 connections.") == {"20@"}
    assert direction("Please take the pool back down.") == -1
    fifty = _finding("F1", "perf", "`DB_POOL_SIZE=10` is the bottleneck now; 180 of 200 workers "
                                   "sit waiting on `QueuePool`. Raise `DB_POOL_SIZE` to 50.")
    ten = _finding("F3", "dba", "Please take the pool back down. Each pod must hold at most ten "
                                "database connections: we run 20 pods behind pgbouncer.")
    assert reverses(ten, fifty)


def test_a_format_per_locale_against_one_fixed_format() -> None:
    from bot.stances import locale_stance

    assert locale_stance("사용자 locale에 따라 '2024년 3월 5일'처럼 나오도록 바꿔야 합니다.") == 1
    per_locale = _finding("F1", "i18n", "`format_date()`가 'YYYY-MM-DD'로 하드코딩되어 있습니다. "
                                        "사용자 locale에 따라 '2024년 3월 5일'처럼 나오도록 바꿔야 "
                                        "합니다.")
    fixed = _finding("F3", "api", "`format_date()`에 locale 분기를 넣으면 안 됩니다. 응답 JSON의 "
                                  "날짜는 ISO 8601('YYYY-MM-DD')로 고정해야 합니다.")
    assert reverses(fixed, per_locale)


def test_a_switch_named_in_code_turned_off_in_words_of_what_it_does() -> None:
    on = _finding("F1", "perf", "`settings/prod.py:77`의 `GZIP_ENABLED = False`를 켜야 합니다. "
                                "`GZipMiddleware`만 켜도 640KB가 90KB 안팎으로 줄어듭니다.")
    off = _finding("F3", "sec", "그런데 응답 압축은 다시 꺼 주셔야 합니다. BREACH 공격 조건이 "
                                "성립합니다. 압축 미들웨어를 비활성화해 주십시오.")
    assert reverses(off, on)
    # (A short name that is its own meaning names too much: `ttl` said as "ttl".)
    from bot.setting_names import _name_concepts

    assert _name_concepts("gzip_enabled") == ("~compression",)
    assert _name_concepts("ttl") == ()


def test_the_wildcard_refused_by_name_and_asked_in_words() -> None:
    assert setting_values("`CORS_ALLOWED_ORIGINS` must not default to `*` now that the API sets "
                          "cookies with credentials.") == {"!=*@cors_allowed_origins"}
    for text in ("Please leave the allowed origins wide open as they are today.",
                 "The API has to keep allowing any origin.", "모든 도메인을 허용해야 합니다."):
        assert setting_values(text) == {"=*@"}, text
    refused = _finding("F1", "security", "`CORS_ALLOWED_ORIGINS` must not default to `*` now that "
                                         "the API sets cookies with credentials.")
    open_ = _finding("F3", "frontend", "The embed widget is loaded from customer domains, so the "
                                       "API has to keep allowing any origin. Please leave the "
                                       "allowed origins wide open as they are today.")
    assert reverses(open_, refused)


def test_about_a_value_is_that_value_asked() -> None:
    # (Per minute, a rate: "분당 100회" reads as 100/minute.)
    assert "100/minute@" in setting_values("분당 100회 정도로 올려 주십시오.")
    assert "30초@" in setting_values("30초쯤으로 줄여 주세요.")


def test_two_timestamp_formats_for_one_field() -> None:
    assert "=fmt:iso8601@exported_at" in setting_values(
        "Emit `exported_at` as a UTC ISO 8601 string, e.g. `2025-03-04T09:12:55Z`.")
    assert "=fmt:epoch_ms@created_at" in setting_values(
        "`created_at` 은 문자열 대신 epoch 밀리초 정수(`1772427900000`)로 내려 주십시오.")
    assert "=fmt:epoch_s@" in setting_values("The export must emit these fields as Unix epoch "
                                             "seconds.")
    iso = _finding("F2", "docs", "`exported_at` has no timezone. Emit `exported_at` as a UTC "
                                 "ISO 8601 string, e.g. `2025-03-04T09:12:55Z`.")
    epoch = _finding("F4", "data", "The loader reads `exported_at` as an integer. `exported_at` "
                                   "must be Unix epoch milliseconds (e.g. `1741079575000`), not "
                                   "a string.")
    assert reverses(epoch, iso)
    also_iso = _finding("F5", "api", "Please keep `exported_at` an RFC 3339 timestamp.")
    assert not reverses(also_iso, iso)


def test_an_idle_timeout_said_as_the_idle_expiry() -> None:
    fixed = _finding("F1", "sec", "`SESSION_IDLE_TIMEOUT`은 관리자 콘솔 기준 `900`(15분)이어야 합니다.")
    longer = _finding("F2", "ux", "관리자 세션이 15분 만에 끊기는 건 너무 짧습니다. 유휴 만료 시간을 "
                                  "한 시간으로 다시 늘려 주세요.")
    assert reverses(longer, fixed)


def test_a_name_said_without_its_unit() -> None:
    lower = _finding("F1", "sec", "A 10-minute window is too generous for replay protection. Bring "
                                  "`REPLAY_TOLERANCE_SECONDS` down to 120.")
    longer = _finding("F2", "reliability", "Shopify retries for up to 48 hours. The replay "
                                           "tolerance has to be at least an hour (3600 s).")
    assert reverses(longer, lower)


def test_a_cache_directive_asked_in_and_asked_out() -> None:
    private = _finding("F1", "sec", "`GET /api/catalog/prices` returns customer-specific prices. "
                                    "Add `Cache-Control: private, no-store` on that route.")
    cached = _finding("F3", "perf", "`/api/catalog/prices` is our hottest route. Please remove the "
                                    "`no-store` from that route and let the CDN cache it for 60 s.")
    assert reverses(cached, private)

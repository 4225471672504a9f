"""Values one reviewer names in code and another asks in words, as held-out
rooms wrote them: a cloud region by its place ("미국 동부 리전"), a log level
lowered ("`WARNING`으로 내려"), CORS opened to every origin in Korean, and a
reduction forbidden in the verb's other form ("줄이면 안 됩니다" against
"줄여 주십시오"), caching asked in words ("check back with our server
every time") against `immutable`, a listener kept to the host ("listen on
loopback only") against a bind address in code, a count of parts in words
("여덟 갈래로 나눠") against a flag's value (`--splits 2`), and a file format in
words ("엑셀(xlsx)로") against a format setting, and the change described in a
parenthesis ("15분으로 줄인 변경(`ACCESS_TOKEN_TTL = 900`)은 다시 3600으로")
which is no value asked; a per-minute limit in words ("키별 한도는 분당
60회로") against `RATE_LIMIT_PER_MIN`, and the zones of two people for one
time ("the recipient's timezone (`booking.customer.tz`)"), and a setting asked
back in words with no value ("세션 쿠키의 사이트 간 전송 제한을 이전 수준으로
다시 풀어주세요" after `SESSION_COOKIE_SAMESITE = 'Strict'` was made)."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.finding import FindingStatus
from bot.values import setting_values


def test_a_region_named_by_its_place() -> None:
    assert setting_values("버킷은 미국 동부(버지니아 북부) 리전에 두어야 합니다.") == {"=us-east-1@"}
    assert setting_values("Move the bucket to the Frankfurt region.") == {"=eu-central-1@"}
    # Without a word for a region, a city is a city (or a time zone).
    assert setting_values("서울 시간 기준으로 바꿔 주세요.") == {"=tz:asia/seoul@"}
    assert setting_values("Please ask the Seoul team before merging.") == set()
    pinned = _finding("F1", "compliance-bot", "`region = \"ap-northeast-2\"`로 고정해야 합니다.")
    moved = _finding("F3", "perf-bot", "요청의 약 90%가 북미 고객사에서 발생합니다. 버킷은 미국 "
                                       "동부(버지니아 북부) 리전에 두어야 합니다.")
    assert reverses(moved, pinned)
    same = _finding("F3", "perf-bot", "버킷은 서울 리전에 두어야 합니다.")
    assert not reverses(same, pinned)


def test_a_level_lowered_is_a_value() -> None:
    assert setting_values("`payments` 로거 레벨을 `WARNING`으로 내려 주십시오.") == {
        "=warning@payments"}
    raised = _finding("F1", "ops-bot", "운영 환경에서도 `payments` 로거 레벨을 `DEBUG`로 올려 주십시오.")
    lowered = _finding("F3", "privacy-bot", "운영 환경의 결제 로그는 경고 이상만 남겨야 합니다. "
                                            "`payments` 로거 레벨을 `WARNING`으로 내려 주십시오.")
    assert reverses(lowered, raised)


def test_every_origin_asked_in_korean() -> None:
    assert setting_values("출처 제한을 없애고 다시 모든 도메인에서 호출되도록 열어 주세요.") == {"=*@"}
    assert setting_values("Please drop the origin restriction.") == {"=*@"}
    assert setting_values("`allow_origins`를 `https://partner.example.com` 명시 목록으로 "
                          "제한해 주세요.") == {"!=*@allow_origins"}
    listed = _finding("F1", "sec-bot", "`allow_origins`를 `https://partner.example.com` 명시 "
                                       "목록으로 제한해 주세요.")
    opened = _finding("F2", "fe-bot", "파트너사마다 서브도메인이 달라서 목록을 계속 관리할 수가 "
                                      "없습니다. 출처 제한을 없애고 다시 모든 도메인에서 호출되도록 "
                                      "열어 주세요.")
    assert reverses(opened, listed)


def test_a_reduction_forbidden_in_the_base_form() -> None:
    cut = _finding("F1", "privacy-bot", "`logs/access/` 보관 기간을 90일로 줄여 주십시오.")
    kept = _finding("F3", "security-bot", "`logs/access/` 보관 기간을 90일로 줄이면 안 됩니다.")
    assert reverses(kept, cut)
    # ("하여" is 하다's form, no verb ending in 이.)
    other = _finding("F3", "security-bot", "`logs/access/` 보관 기간은 검토하여 주십시오.")
    assert not reverses(other, cut)


def test_caching_asked_in_words_against_immutable() -> None:
    long_lived = _finding("F1", "perf-bot", "Serve product photos with `Cache-Control: public, "
                                            "max-age=31536000, immutable`.")
    check_back = _finding("F4", "content-bot", "Product images must not be kept in browser caches like "
                                               "that; browsers should check back with our server "
                                               "every time before showing a stored copy.")
    assert "=no-cache@cache-control" in setting_values(
        "browsers should check back with our server every time before showing a stored copy")
    assert reverses(check_back, long_lived)
    # Revalidating beside a lifetime without `immutable` is no conflict.
    fresh = _finding("F2", "perf-bot", "Serve product photos with `Cache-Control: public, max-age=600`.")
    assert not reverses(check_back, fresh)
    # Words about caching that ask no directive give none.
    assert not any(v.endswith("@cache-control") for v in setting_values(
        "The cache hit rate is 95% on product pages."))


def test_a_listener_kept_to_the_host_against_a_bind_address() -> None:
    assert setting_values("Take it off the public app port and have it listen on loopback "
                          "only.") == {"=127.0.0.1@"}
    assert setting_values("메트릭 포트는 로컬호스트에서만 바인딩되도록 해 주세요.") == {"=127.0.0.1@"}
    assert setting_values("The exporter should listen on all interfaces.") == {"=0.0.0.0@"}
    bound = _finding("F1", "ops-bot", "Serve metrics on their own listener with "
                                      "`METRICS_BIND = \"0.0.0.0:9100\"`.")
    loopback = _finding("F3", "sec-bot", "The metrics must not be reachable from anywhere but the "
                                         "host itself. Take it off the public app port and have it "
                                         "listen on loopback only.")
    assert reverses(loopback, bound)
    # The same host with a port in code and without one in words is one address.
    local = _finding("F1", "ops-bot", "Serve metrics on their own listener with "
                                      "`METRICS_BIND = \"127.0.0.1:9100\"`.")
    assert not reverses(loopback, local)
    # "localhost" as a place to test from asks no address.
    assert setting_values("Please run the smoke test against localhost before merging.") == set()


def test_parts_counted_in_words_against_a_flag() -> None:
    assert "2@splits" in setting_values("`matrix.group: [1, 2]` 와 `--splits 2` 로 줄여야 합니다.")
    assert "8개@" in setting_values("테스트를 여덟 갈래로 나눠 돌려야 합니다.")
    two = _finding("F1", "ci-bot", "shard 마다 setup 이 반복됩니다. `matrix.group: [1, 2]` 와 "
                                   "`--splits 2` 로 줄여야 합니다.")
    eight = _finding("F4", "qa-bot", "가장 느린 shard 가 8분 41초라 목표에 너무 붙어 있습니다. "
                                     "테스트를 여덟 갈래로 나눠 돌려야 합니다.")
    assert reverses(eight, two)
    # Two shards asked in words too: the same count.
    also_two = _finding("F4", "qa-bot", "테스트를 두 갈래로 나눠 돌려야 합니다.")
    assert not reverses(also_two, two)
    # A flag inside a longer span, or written with "=", is read the same.
    assert "4@workers" in setting_values("Run it with `--workers=4`.")
    eight = _finding("F1", "perf-reviewer", "Please go to 8 shards (`--splits 8`, `group: [1, 2, 3, 4, "
                                            "5, 6, 7, 8]`) so the slowest shard drops.")
    fewer = _finding("F3", "cost-reviewer", "Please reduce the `test` matrix to 2 shards (`--splits 2`) "
                                            "and run `pytest -n 2` inside each shard.")
    assert reverses(fewer, eight)


def test_a_file_format_asked_in_words() -> None:
    assert setting_values("내보내기 파일을 CSV가 아니라 엑셀(xlsx)로 바꿔야 합니다.") == {"=xlsx@"}
    assert setting_values("Please export it as Excel instead of CSV.") == {"=xlsx@"}
    # The format refused is not asked.
    assert setting_values("Please switch the export to Parquet instead of CSV.") == {"=parquet@"}
    # A format refused, or one of no file ("parse the body as JSON"), is none asked.
    assert setting_values("`orders_report()`는 CSV로 바꾸면 안 됩니다.") == set()
    assert setting_values("Parse the webhook body as JSON.") == set()
    assert setting_values("직렬화는 orjson으로 교체해 주세요.") == set()
    coded = _finding("F2", "data-bot", "`EXPORT_FORMAT`은 `\"parquet\"`로 바꿔 주십시오.")
    excel = _finding("F1", "finance-bot", "내보내기 파일을 CSV가 아니라 엑셀(xlsx)로 바꿔야 합니다.")
    assert reverses(excel, coded)
    same = _finding("F1", "finance-bot", "내보내기 파일은 parquet으로 바꿔야 합니다.")
    assert not reverses(same, coded)
    # A format the words ask of something else (a response body) is no file
    # format of the export: no shared name, no reversal.
    body = _finding("F1", "api-bot", "Error responses should be returned as JSON.")
    assert not reverses(body, coded)


def test_the_change_described_is_not_the_value_asked() -> None:
    back = ("access token 수명을 15분으로 줄인 변경(`ACCESS_TOKEN_TTL = 900`)은 다시 3600으로 "
            "돌려 주십시오.")
    assert setting_values(back) == {"3600@"}
    assert setting_values("1시간으로 늘린 것은 되돌려 주세요.") == set()
    # A parenthesis that is no described change still gives its value.
    assert "900@access_token_ttl" in setting_values(
        "access token 수명은 15분(`ACCESS_TOKEN_TTL = 900`)으로 줄여 주십시오.")
    short = _finding("F1", "sec-bot", "`auth/tokens.py:21`의 `ACCESS_TOKEN_TTL = 3600`은 깁니다. "
                                      "access token은 15분(`900`)이면 충분합니다. 줄여 주십시오.")
    long = _finding("F5", "mobile-bot", back + " iOS 백그라운드 동기화는 30분 간격으로만 깨어납니다.")
    assert reverses(long, short)


def test_a_rate_limit_in_words_against_its_name_in_code() -> None:
    raised = _finding("F1", "sre-bot", "`gateway/ratelimit.py:14`의 `RATE_LIMIT_PER_MIN = 300`은 피크보다 "
                                       "낮습니다. `RATE_LIMIT_PER_MIN = 600`으로 올려 주십시오.")
    lowered = _finding("F2", "sec-bot", "키별 한도는 분당 60회로 낮춰야 합니다. 300이면 같은 일이 "
                                        "반복됩니다.")
    assert reverses(lowered, raised)
    same = _finding("F2", "sec-bot", "키별 한도는 분당 600회로 올려야 합니다.")
    assert not reverses(same, raised)


def test_two_peoples_zones_for_one_time() -> None:
    assert setting_values("Show it in the recipient's timezone (`booking.customer.tz`).") == {
        "=tz:of:customer@"}
    assert setting_values("본문 시각은 수신자 시간대(`booking.customer.tz`)로 보여 주십시오.") == {
        "=tz:of:customer@"}
    customer = _finding("F1", "tz-review", "The email body renders the appointment in UTC. Show it "
                                           "in the recipient's timezone (`booking.customer.tz`).")
    provider = _finding("F3", "mail-review", "Render the body time in the organiser's timezone "
                                             "(`booking.provider.tz`) instead of UTC.")
    assert reverses(provider, customer)
    again = _finding("F3", "mail-review", "Render the body time in the customer's timezone "
                                          "(`booking.customer.timezone`).")
    assert not reverses(again, customer)  # one person's zone, however the code reads it


def test_a_setting_asked_back_in_words_by_what_its_name_means() -> None:
    strict = _finding("F1", "sec-bot", "`SESSION_COOKIE_SAMESITE`를 `'Strict'`로 바꿔주세요. 관리 "
                                       "화면에 대한 CSRF 표면을 줄이기 위함입니다.")
    strict.status = FindingStatus.FIXED
    back = _finding("F4", "ux-bot", "링크를 타고 넘어오는 페이지 이동에도 세션 쿠키가 함께 전송되도록, "
                                    "세션 쿠키의 사이트 간 전송 제한을 이전 수준으로 다시 풀어주세요.")
    assert reverses(back, strict)
    # Not made yet, there is nothing to ask back.
    strict.status = FindingStatus.OPEN
    assert not reverses(back, strict)
    # Asked back, but of another thing (the cookie's lifetime): its name's words are not said.
    age = _finding("F2", "sec-bot", "`SESSION_COOKIE_AGE`를 12시간으로 줄여주세요.")
    age.status = FindingStatus.FIXED
    other = _finding("F4", "ux-bot", "세션 쿠키의 사이트 간 전송 제한을 이전 수준으로 다시 풀어주세요.")
    assert not reverses(other, age)

"""Reversals said partly or wholly in words that the rules once missed: a
switch named in code against its state in words, a setting whose name holds
its unit against a bound in words, a decorator asked away, a function asked
back where it was, two start times for one job, rendering in the request or
out of it, a removal made then refused in another verb ("지우지 말고" against
"물리 삭제"); and what is no value or no point number ("512x512", "the value it
was raised to", "a second tab")."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.demands import BACK, asked_verbs
from bot.finding import Finding, FindingStatus
from bot.findings import selectors
from bot.stances import retry_stance
from bot.values import setting_values


def _fixed(label: str, author: str, text: str) -> Finding:
    finding = _finding(label, author, text)
    finding.status = FindingStatus.FIXED
    return finding


def test_what_is_no_value() -> None:
    assert setting_values("업로드 후 512x512로 리사이즈한 버전을 만들어 주세요.") == set()
    assert setting_values("권한 캐시 유지 시간을 1시간으로 늘린 것은 되돌려 주셔야 합니다.") == set()
    # Emphasis is no part of a value.
    assert setting_values("악성 IP가 분당 250회 수준이므로 **60**으로 낮춰 주세요.") == {"60@"}


def test_a_name_that_holds_its_unit_against_a_bound_in_words() -> None:
    assert setting_values("`CACHE_TTL_SECONDS`를 `3600`으로 올려 주십시오.") == {
        "3600s@cache_ttl_seconds"}
    assert setting_values("Set `timeout_ms` to 500.") == {"500ms@timeout_ms"}
    hour = _fixed("F1", "perf-bot", "권한 데이터는 변경이 드뭅니다. `CACHE_TTL_SECONDS`를 `3600`으로 "
                  "올려 주십시오.")
    minute = _finding("F3", "sec-bot", "권한 캐시 유지 시간을 1시간으로 늘린 것은 되돌려 주셔야 "
                      "합니다. 캐시 유지 시간은 1분 이하로 맞춰 주십시오.")
    assert reverses(minute, hour)
    longer = _finding("F4", "sec-bot", "캐시 유지 시간은 2시간 이하로 맞춰 주십시오.")
    assert not reverses(longer, hour)


def test_a_switch_named_in_code_against_its_state_in_words() -> None:
    assert setting_values("Crash reporting must be off by default.") == {"=false@"}
    assert setting_values("the initial value has to be disabled for everyone.") == {"=false@"}
    assert setting_values("기본값은 꺼져 있어야 합니다.") == {"=false@"}
    assert setting_values("`beta_ui`는 활성화되어 있어야 합니다.") == {"=true@beta_ui"}
    on = _finding("F1", "growth-bot", "Set `telemetry.crashReports.enabled` to `true` by default "
                  "on fresh installs.")
    off = _finding("F2", "privacy-bot", "Crash reporting must be off by default: reports carry "
                   "file paths and need consent.")
    other = _finding("F3", "privacy-bot", "Analytics must be off by default.")
    assert reverses(off, on) and not reverses(other, on)


def test_retrying_in_one_place_asks_the_decorator_away() -> None:
    assert retry_stance("재시도는 한 곳에서만 해야 합니다.") == 0
    assert retry_stance("재시도 데코레이터는 제거해 주십시오.") == -1
    added = _fixed("F1", "reliability-bot", "`send_webhook()` 안에서도 바로 재시도해야 합니다. "
                   "`@retry(stop=stop_after_attempt(3))`를 추가해 주십시오.")
    away = _finding("F3", "arch-bot", "재시도는 한 곳에서만 해야 합니다. 이번에 웹훅 전송 함수에 "
                    "들어간 재시도 데코레이터는 제거해 주십시오. 큐가 이미 재전달합니다.")
    assert reverses(away, added)


def test_put_back_where_it_was_in_words() -> None:
    verbs = asked_verbs("주소 검증 함수는 체크아웃 모듈 안으로 다시 돌려 놓아 주십시오.")
    assert BACK in verbs and "되돌" in verbs
    assert BACK not in asked_verbs("테스트를 다시 돌려 주십시오.")  # (runs them again)
    moved = _fixed("F1", "arch-bot", "`validate_address()`는 체크아웃 밖에서도 필요합니다(주소록 "
                   "화면). "
                   "`common/validation/address.py`로 옮기고 `checkout`에서는 import해 주십시오.")
    back = _finding("F2", "deps-bot", "주소 검증 함수는 체크아웃 모듈 안으로 다시 돌려 놓아 "
                    "주십시오. 공용 패키지에 외부 API 코드가 들어가면 안 됩니다.")
    assert reverses(back, moved)


def test_two_start_times_for_one_job() -> None:
    early = _finding("F1", "analytics-bot", "마트(`mart_sales_daily`) 빌드가 3시간이 넘습니다. "
                     "ETL 시작을 01:00으로 당겨 주세요.")
    late = _finding("F3", "dba-bot", "01:00~03:30은 `VACUUM FULL` 유지보수 시간입니다. ETL 시작 "
                    "시각은 04:00 이후로 미뤄 주세요.")
    report = _finding("F4", "dba-bot", "`VACUUM FULL` 이후 리포트 메일은 04:00 이후로 미뤄 주세요.")
    assert reverses(late, early) and not reverses(report, early)


def test_rendering_in_the_request_or_out_of_it_in_words() -> None:
    later = _finding("F2", "api-bot", "The gateway times out at 5 s. Render the invoice PDF "
                     "asynchronously in a background job and return it pending.")
    now = _finding("F4", "ledger-bot", "The importer archives the invoice PDF from the response. "
                   "The PDF has to be rendered synchronously and returned, not pending.")
    assert reverses(now, later)


def test_an_added_column_that_should_not_be_there() -> None:
    assert setting_values("But the new `ip_address` column should not be there.") == {
        "-@ip_address"}
    added = _fixed("F1", "compliance-bot", "감사 이벤트에 `ip_address`(클라이언트 IP) 필드를 "
                   "추가해 주세요.")
    gone = _finding("F4", "privacy-bot", "The new `ip_address` column should not be there. "
                    "Please take the IP back out of the audit log.")
    assert reverses(gone, added)


def test_a_second_tab_is_no_second_point() -> None:
    assert selectors("or an operator double-submitting from a second tab")[0] == ()
    assert selectors("Issuing a second refund is the risk.")[0] == ()
    assert selectors("the second point is still open")[0] == (2,)


def test_a_state_for_a_part_and_two_operations_named_in_code() -> None:
    # Off for some payments is no "off" for the flag: both can be met.
    assert "=false@checkout_v2" not in setting_values(
        "`checkout_v2` has to stay disabled for virtual-account payments.")
    # Sync for the token commit, async for the mail: two operations, each named.
    commit = _finding("F1", "sec-bot", "`password_reset_tokens` 갱신은 응답 전에 동기로 커밋되어야 "
                      "합니다.")
    mail = _finding("F2", "perf-bot", "`send_reset_mail()`은 `delay()`로 넘겨 비동기로 처리해 "
                    "주십시오.")
    assert not reverses(mail, commit)


def test_a_removal_made_then_refused_in_another_verb() -> None:
    deleted = _fixed("F1", "privacy-bot", "탈퇴 회원의 `users` 행이 남아 있습니다. `DELETE FROM users "
                                          "WHERE id = %s`로 회원 행 자체를 물리 삭제해야 합니다.")
    keep = _finding("F4", "audit-bot", "탈퇴 회원 행을 지우면서 `orders.user_id`가 CASCADE로 따라가 "
                                       "주문 기록까지 사라집니다. 회원 행은 지우지 말고 그대로 남겨 "
                                       "두고, 개인정보 칼럼만 비우는 방식으로 되돌려 주세요.")
    assert reverses(keep, deleted)
    # Asked while the removal was not made yet, it is a request about it, not its undoing.
    pending = _finding("F1", "privacy-bot", "`DELETE FROM users WHERE id = %s`로 회원 행 자체를 "
                                            "물리 삭제해야 합니다.")
    assert not reverses(keep, pending)
    # About another thing (no word in common), no reversal.
    other = _finding("F4", "audit-bot", "로그 파일은 지우지 말고 이전 보관 방식으로 되돌려 주세요.")
    assert not reverses(other, deleted)
    # One word in common ("파일") may be two things: two files.
    temp = _fixed("F1", "ops-bot", "7일 지난 임시 파일을 삭제해 주세요.")
    audit = _finding("F4", "audit-bot", "감사 로그 파일은 지우지 말고, 보관 기간 설정만 이전처럼 "
                                        "되돌려 주세요.")
    assert not reverses(audit, temp)

"""Values two reviewers ask in words the rules once missed: a time zone, a
package version, a column left nullable, output per locale, a step taken out,
a wildcard origin refused in one place and asked in it by another."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.quantities import compatible
from bot.values import setting_values


def test_versions_are_read_whole_and_compared_as_versions() -> None:
    assert setting_values("`requests` has to be >= 2.32.0.") == {">=2.32.0ver@requests"}
    assert setting_values("`requests` must stay pinned at `==2.31.0`.") >= {"2.31.0ver@requests"}
    assert setting_values("`celery`는 5.4.0 이상으로 올려야 합니다.") == {">=5.4.0ver@celery"}
    # Never a piece of a version as a number: "2.5.0" is not 2.5 nor 5.0.
    assert setting_values("2.5.0은 `Django<5.0`을 요구해서 설치가 깨집니다.") == set()
    assert setting_values("`timeout`을 2.5초로 올려 주세요.") == {"2.5초@timeout"}
    assert setting_values("Pin it to an exact version, `18.19.0`, as production runs.") == {
        "18.19.0ver@"}
    assert setting_values("`.nvmrc` should be `20.11.1`, not 18.") == {"20.11.1ver@"}
    assert compatible({">=2.32.0ver"}, {"2.33.1ver"})
    assert not compatible({">=2.32.0ver"}, {"2.31.0ver"})
    assert not compatible({"2.31.0ver"}, {"2.31"})  # a version and a number: never one value
    sec = _finding("F3", "sec-bot", "`requests` has to be >= 2.32.0; the 2.31.0 pin is not acceptable.")
    dep = _finding("F4", "dep-bot", "`requests` must stay pinned at `==2.31.0` until the SDK moves.")
    ok = _finding("F5", "dep-bot", "`requests` 2.32.3 works with the SDK; pin it at `==2.32.3`.")
    assert reverses(dep, sec) and not reverses(ok, sec)


def test_two_time_zones_for_one_day_boundary() -> None:
    assert setting_values("`daily_totals()`의 날짜 경계는 UTC로 통일해야 합니다.") == {"=tz:utc@"}
    assert setting_values("`daily_totals()`는 `Asia/Seoul` 기준으로 잘라야 합니다.") == {
        "=tz:asia/seoul@"}
    utc = _finding("F1", "i18n-bot", "`daily_totals()`의 날짜 경계는 UTC로 통일해야 합니다.")
    seoul = _finding("F2", "report-bot", "영업 리포트는 한국 날짜 기준이어야 하므로 `daily_totals()`는 "
                     "`Asia/Seoul` 기준으로 날짜를 잘라야 합니다.")
    kst = _finding("F3", "ops-bot", "`daily_totals()`는 KST 기준으로 잘라 주세요.")
    assert reverses(seoul, utc) and not reverses(kst, seoul)


def test_required_against_nullable_and_per_locale_against_fixed() -> None:
    strict = _finding("F1", "db-bot", "`accounts.phone`에 `NOT NULL` 제약을 걸어야 합니다.")
    loose = _finding("F3", "infra-bot", "`accounts.phone`에 `NOT NULL`을 추가하면 배포가 실패합니다. "
                     "`phone` 컬럼은 nullable로 유지해야 합니다.")
    index = _finding("F4", "infra-bot", "`accounts.phone`에 인덱스를 추가해 주세요.")
    assert reverses(loose, strict) and not reverses(index, strict)
    local = _finding("F1", "i18n-bot", "`formatMoney`가 로케일을 무시합니다. `Intl.NumberFormat` 기반 "
                     "로케일 포맷으로 출력해야 합니다.")
    fixed = _finding("F2", "api-bot", "`formatMoney`의 출력은 로케일과 무관하게 한 형식으로 고정되어야 합니다.")
    assert reverses(fixed, local)


def test_keep_a_step_against_take_it_out() -> None:
    keep = _finding("F1", "perf-bot", "The `actions/cache` step saves three minutes. Please don't "
                    "remove or disable it.")
    out = _finding("F3", "sec-bot", "The `actions/cache` step has to come out of `test.yml`.")
    other = _finding("F4", "sec-bot", "The `actions/setup-node` step has to come out of `test.yml`.")
    assert reverses(out, keep) and not reverses(other, keep)
    assert setting_values("Please take the `USER app` line back out.") == {"-@user", "-@app"}


def test_the_wildcard_refused_and_asked_in_one_place() -> None:
    sec = _finding("F4", "sec-bot", "`/api/v3/feed`의 `Access-Control-Allow-Origin: *`는 허용할 수 "
                   "없습니다. `FEED_ORIGINS` 화이트리스트에 있는 origin만 반사하도록 바꿔 주십시오.")
    fe = _finding("F5", "fe-bot", "`/api/v3/feed`는 지금처럼 `Access-Control-Allow-Origin: *`로 "
                  "열어 두어야 합니다.")
    elsewhere = _finding("F6", "fe-bot", "`/api/v3/public`은 지금처럼 `Access-Control-Allow-Origin: *`로 "
                         "열어 두어야 합니다.")
    assert reverses(fe, sec) and not reverses(elsewhere, sec)


def test_moved_out_into_a_setting_is_not_removed() -> None:
    from bot.demands import direction

    assert direction("재배포 없이 바꿀 수 있도록 환경 변수 `DIGEST_EVERY_MINUTES`로 빼 주십시오.") == 0
    assert direction("`retry` 데코레이터는 빼 주세요.") == -1
    ux = _finding("F1", "ux-bot", "`DIGEST_MINUTES`를 240(4시간)으로 늘려 주십시오.")
    ops = _finding("F3", "ops-bot", "`DIGEST_MINUTES`가 모듈 상수입니다. 값은 제품 쪽 판단에 맡기겠습니다. "
                   "환경 변수 `APP_DIGEST_MINUTES`로 빼 주십시오.")
    assert not reverses(ops, ux)


def test_a_switch_turned_back_on_with_a_dotted_key() -> None:
    assert setting_values("Please turn fail-fast back on (`strategy.fail-fast: true`).") == {
        "=true@fail-fast"}
    assert setting_values("`LOG_BODIES=true`로 요청 본문 로깅을 켜 주십시오.") == {"=true@log_bodies"}
    qa = _finding("F3", "qa-bot", "Please set `fail-fast: false` under `strategy` in `ci.yml`.")
    ci = _finding("F4", "ci-bot", "With fail-fast off a broken PR burns every job. Please turn "
                  "fail-fast back on (`strategy.fail-fast: true`).")
    assert reverses(ci, qa)


def test_a_level_kept_in_code_and_caching_refused() -> None:
    assert setting_values("`LOG_LEVEL` in `values.yaml` must stay at `warn`.") >= {"=warn@log_level"}
    ops = _finding("F1", "ops-bot", "Set `LOG_LEVEL=debug` for the worker in `values.yaml`.")
    sec = _finding("F3", "sec-bot", "Please don't. `LOG_LEVEL` for the worker in `values.yaml` must "
                   "stay at `warn`.")
    assert reverses(sec, ops)
    from bot.demands import direction

    assert direction("The catalog response must not be cached.") == -1
    assert direction("카탈로그 응답은 캐시하지 마십시오.") == -1


def test_undoing_a_move_names_the_other_place() -> None:
    from bot.finding import FindingStatus

    ops = _finding("F1", "ops-bot", "CORS 헤더는 앱에서 붙이지 말고 nginx 쪽 `deploy/nginx/web.conf`로 "
                   "옮겨야 합니다.")
    ops.status = FindingStatus.FIXED
    api = _finding("F3", "api-bot", "그런데 CORS 처리를 nginx로 옮긴 것은 되돌려야 합니다. CORS는 "
                   "`app/server.py`의 미들웨어에 두어 주십시오.")
    other = _finding("F4", "api-bot", "`app/server.py`의 로깅 미들웨어를 되돌려야 합니다.")
    assert reverses(api, ops) and not reverses(other, ops)
    logo = _finding("F1", "sec-bot", "`ALLOWED_TYPES`에서 `image/svg+xml`을 빼야 합니다. SVG 로고 파일에는 "
                    "스크립트를 넣을 수 있어 stored XSS가 됩니다.")
    logo.status = FindingStatus.FIXED
    again = _finding("F5", "ux-bot", "이제 SVG 로고 파일을 올릴 수 없게 된 것은 문제입니다. SVG 로고도 다시 "
                     "업로드할 수 있게 해 주십시오.")
    assert reverses(again, logo)

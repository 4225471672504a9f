"""Two reviewers asking opposite things of one thing, in the ways held-out
rooms wrote them: a number the other's setting has, cited instead of its
name; a library asked in and refused; logs to a file against the standard
output; two places for the same files; "I disagree with keying on
`user_id`"; a switch turned off by "it"; a route's limit set in its config
file; a date localized against one fixed form; "privacy-bot 의견과는 반대로, …
삭제하면 안 됩니다" against "함께 drop해주세요". And the look-alikes that must
stay apart: two keys with their own numbers, retries for two responses, one
reviewer agreeing with the other, one way offered of two."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import demands_of, reverses
from bot.finding import Finding
from bot.stances import log_file_stance, presence
from bot.topics import topic
from bot.values import setting_values


def _of(label: str, author: str, text: str, others: set[str]) -> Finding:
    """A finding whose point may name the other reviewers."""
    t = topic(text)
    return Finding(label=label, author=author, summary="", anchors=sorted(t.anchors),
                   terms=sorted(t.terms), **demands_of(text, others))


def test_a_number_cited_names_the_setting_it_is_the_value_of() -> None:
    cut = _finding("F1", "perf-bot", "`upstream.timeout: 30s` is way outside our budget. Cut the "
                                     "timeout to 2s.")
    longer = _finding("F3", "batch-bot", "The provider's `/bulk` endpoint takes 35–50 s per "
                                         "chunk. 30 s already drops chunks; please give it at "
                                         "least a minute, 90 seconds would be safer.")
    assert reverses(longer, cut)
    # A point that names a key of its own cites that key's number.
    catalog = _finding("F1", "perf-bot", "`catalog:{category_id}`는 TTL 60초라 히트율이 41%입니다. "
                                         "이 키는 TTL을 3600초로 늘려 주세요.")
    permissions = _finding("F2", "sec-bot", "`user:{id}:permissions` TTL 3600초는 깁니다. 이 키는 "
                                            "60초 이하로 줄여 주세요.")
    assert not reverses(permissions, catalog)


def test_a_library_asked_in_by_its_class_and_refused_by_name() -> None:
    assert presence("HTTP 클라이언트를 `httpx.AsyncClient` 로 교체해 주십시오.") == {
        "+@httpx", "+@asyncclient"}
    assert presence("`httpx` 는 아직 보안팀 승인 목록(`SECURITY/approved-deps.md`)에 없으므로 "
                    "이 모듈의 HTTP 클라이언트로 들어오면 안 됩니다.") == {"-@httpx"}
    assert presence("use `settings.APP_BASE_URL`.") == {"+@app_base_url"}
    swap = _finding("F1", "perf-bot", "동기 `urllib3` 호출이 event loop 를 막습니다. HTTP "
                                      "클라이언트를 `httpx.AsyncClient` 로 교체해 주십시오.")
    refuse = _finding("F3", "sec-bot", "`urllib3` 를 직접 쓰는 대신 사내 승인 라이브러리인 "
                                       "`requests` 로 바꿔 주십시오. `httpx` 는 아직 승인 목록에 "
                                       "없으므로 이 모듈로 들어오면 안 됩니다.")
    assert reverses(refuse, swap)


def test_logs_to_a_file_against_the_standard_output_only() -> None:
    assert log_file_stance("Write them to `/var/log/ingest/worker.log` through a "
                           "`RotatingFileHandler` instead of stderr.") == 1
    assert log_file_stance("Containers must log to stdout only.") == -1
    assert log_file_stance("No log files inside the container.") == -1
    assert log_file_stance("Add `%(process)d` to the format.") == 0
    to_file = _finding("F1", "ops-bot", "Logs must survive worker restarts. Write them to "
                                        "`/var/log/ingest/worker.log` through a "
                                        "`RotatingFileHandler` (100 MB x 5) instead of stderr.")
    to_stdout = _finding("F3", "platform-bot", "On the cluster, containers must log to stdout "
                                               "only. No log files inside the container. Switch "
                                               "the handler from stderr to "
                                               "`StreamHandler(sys.stdout)`.")
    assert reverses(to_stdout, to_file)


def test_two_places_for_the_same_files() -> None:
    assert setting_values("로컬 디스크 대신 S3 (`s3://acme-finance-reports/monthly/`)에 올리고 "
                          "presigned URL 로 내려 주십시오.") == {
        "=at:s3://acme-finance-reports/monthly@"}
    assert setting_values("Please store the exports only in `s3://exports/daily/`.") == {
        "=at:s3://exports/daily@"}
    s3 = _finding("F2", "infra-bot", "`/app/reports` 는 pod 재시작 시 사라집니다. 로컬 디스크 대신 "
                                     "S3 (`s3://acme-finance-reports/monthly/`)에 올리고 presigned "
                                     "URL 로 내려 주십시오.")
    nas = _finding("F3", "privacy-bot", "S3 는 안 되며, 생성 파일은 사내 NAS 마운트 "
                                        "`/mnt/secure-reports` 에만 저장하도록 `REPORT_OUTPUT_DIR` "
                                        "를 바꿔 주십시오.")
    assert reverses(nas, s3)


def test_disagreeing_with_what_the_other_asks_of_a_name() -> None:
    per_user = _of("F4", "sec-bot", "IP-keyed limits are trivially bypassed. Authenticated "
                                    "requests must be limited per user instead: key on "
                                    "`user_id`, 600/min per account.", {"perf-bot"})
    global_ = _of("F5", "perf-bot", "I disagree with keying on `user_id`, though: 2.3M accounts "
                                    "means 2.3M Redis keys. Use a single global bucket for "
                                    "`/api/search`.", {"sec-bot"})
    assert "code:user_id" in global_.opposes
    assert reverses(global_, per_user)


def test_a_switch_turned_off_by_it_is_the_one_name_its_point_gives() -> None:
    off = _finding("F1", "sec-bot", "`DEBUG_TOOLBAR = True` on a host reachable from the VPN "
                                    "exposes SQL. Turn it off in `settings/staging.py`.")
    on = _finding("F5", "qa-bot", "Please turn `DEBUG_TOOLBAR` back on in `settings/staging.py`; "
                                  "QA needs it there.")
    assert reverses(on, off)


def test_a_route_limit_asked_in_the_file_that_holds_it() -> None:
    low = _finding("F1", "sec-bot", "`/auth/login`에도 `RATE_LIMIT_PER_MIN = 120`이 그대로 "
                                    "적용됩니다. 로그인 라우트는 IP당 분당 10회로 따로 낮춰 주세요 "
                                    "(`config/ratelimit.yaml`에 route override).")
    high = _finding("F2", "perf-bot", "`/auth/login`의 IP당 한도는 지금보다 올려서 분당 600회로 "
                                      "설정해 주셔야 정상 사용자가 차단되지 않습니다.")
    assert reverses(high, low)


def test_a_date_localized_against_one_fixed_form() -> None:
    assert "+@~localized" in setting_values("Format the subject date in the recipient's locale "
                                            "as well.")
    assert "-@~localized" in setting_values("The subject date must stay ISO `YYYY-MM-DD` for "
                                            "every locale. Please don't localize it.")
    local = _finding("F3", "i18n-bot", "One more: the subject line still hard-codes `%Y-%m-%d`. "
                                       "Format the subject date in the recipient's locale as "
                                       "well.")
    fixed = _finding("F4", "finance-bot", "The subject date must stay exactly as it is now, ISO "
                                          "`YYYY-MM-DD` for every locale. Please don't localize "
                                          "it: the mailbox parses the subject line.")
    assert reverses(fixed, local)


def test_retries_for_two_responses_are_two_rules() -> None:
    more = _finding("F1", "ops-bot", "가맹점 서버가 약 10분간 503 을 냈습니다. 재시도 횟수를 최소 "
                                     "8회로 늘려 주십시오.")
    none_for_410 = _finding("F3", "qa-bot", "410 Gone 응답 케이스가 없습니다. 410 은 재시도하지 않고 "
                                            "해당 endpoint 를 비활성화해야 하므로 테스트를 추가해 "
                                            "주십시오.")
    assert not reverses(none_for_410, more)


def test_agreeing_with_the_other_reviewer_is_no_conflict() -> None:
    prod = _of("F1", "sec-bot", "prod 에서 DEBUG 로그에 요청 body 가 찍힙니다. "
                                "`deploy/prod/values.yaml` 의 `LOG_LEVEL` 을 `WARNING` 으로 "
                                "내려 주십시오.", {"dx-bot"})
    dev = _of("F3", "dx-bot", "sec-bot 님 의견에 동의합니다. 로컬 개발에는 DEBUG 가 필요하니 "
                              "`.env.development` 의 `LOG_LEVEL=DEBUG` 는 그대로 두시면 됩니다.",
              {"sec-bot"})
    assert "sec-bot" in dev.agrees
    assert not reverses(dev, prod)


def test_one_way_offered_of_two_is_no_value() -> None:
    assert setting_values("`python -c` 로 바꾸거나 curl 을 설치해 주십시오.") == {"+@python"}
    assert "=python -c@" in setting_values("`python -c` 로 바꿔 주십시오.")


def test_contrary_to_the_other_reviewer_against_a_konglish_drop() -> None:
    dropped = _of("F1", "privacy-bot", "`orders.customer_ip`는 개인정보(IP 주소)입니다. 이번 "
                                       "마이그레이션에서 함께 drop해주세요.", {"data-bot"})
    assert dropped.direction == -1 and "~out" in dropped.asks
    kept = _of("F4", "data-bot", "그리고 privacy-bot 의견과는 반대로, `customer_ip`는 삭제하면 안 "
                                 "됩니다. 컬럼은 그대로 유지해주세요.", {"privacy-bot"})
    assert kept.opposes == ["privacy-bot"]
    assert reverses(kept, dropped)
    # "contrary to" in English names the reviewer too; a reviewer not named is not opposed.
    assert demands_of("Contrary to sec-bot, keep the timeout at 30 s.", {"sec-bot"})["opposes"] == [
        "sec-bot"]
    assert demands_of("Contrary to what the docs say, keep the timeout at 30 s.", {"sec-bot"})[
        "opposes"] == []


def test_a_field_asked_kept_against_the_same_field_asked_out() -> None:
    assert presence("요청 로그의 `user_email` 필드는 반드시 남겨주세요.") == {"+@user_email"}
    assert presence("`debug` 로그는 남기지 마세요.") == set()
    out = _of("F1", "privacy-bot", "요청 로그에 `user_email`을 남기면 이메일이 평문으로 남습니다. "
                                   "`user_email` 필드를 빼주세요.", {"support-bot"})
    kept = _of("F3", "support-bot", "상담원은 `user_id`를 알 수 없습니다. 요청 로그의 `user_email` "
                                    "필드는 반드시 남겨주세요.", {"privacy-bot"})
    assert reverses(kept, out)


def test_two_tables_of_one_numbered_migration_are_two_things() -> None:
    drop = _of("F1", "db-bot", "`invoice_pdf_cache` 테이블은 아무 코드도 읽지 않습니다. backfill 완료 후 "
                               "이 테이블을 drop하는 마이그레이션 `0154`를 추가해 주십시오.", {"sec-bot"})
    keep = _of("F4", "sec-bot", "다만 `invoices.pdf_s3_key` 컬럼은 presigned URL 생성에 쓰이므로, 정리 "
                                "마이그레이션 `0154`에서 함께 지워지지 않도록 유지해 주십시오.", {"db-bot"})
    assert drop.direction == -1 and keep.direction == 1
    assert not reverses(keep, drop)


def test_a_route_whose_calls_the_point_measures_is_no_place() -> None:
    short = _finding("F1", "sec-bot", "`config/session.py`의 `SESSION_TTL = 86400`은 너무 깁니다. "
                                      "`SESSION_TTL = 1800`으로 줄여 주세요.")
    longer = _finding("F3", "perf-bot", "`SESSION_TTL`을 1800으로 줄인 뒤 `/auth/login` 호출이 6배 "
                                        "늘었습니다. `SESSION_TTL`은 최소 43200(12시간)으로 되돌려 "
                                        "주세요.")
    assert "code:/auth/login" not in longer.places
    assert reverses(longer, short)
    # A route the request is about stays its place.
    routed = _finding("F3", "perf-bot", "`/auth/login`의 `SESSION_TTL`은 43200으로 늘려 주세요.")
    assert "code:/auth/login" in routed.places


def test_production_and_a_developers_machine_are_two_places() -> None:
    prod = _finding("F1", "sec-bot", "`debug_toolbar`가 `settings/base.py`에 있어 운영에도 포함됩니다. "
                                     "운영 설정에서는 `debug_toolbar`를 빼야 합니다.")
    local = _finding("F3", "dx-bot", "다만 로컬에서는 팀이 매일 쓰므로 `settings/local.py`에는 "
                                     "`debug_toolbar`를 남겨 주십시오.")
    assert "env:production" in prod.places and "env:local" in local.places
    assert not reverses(local, prod)
    everywhere = _finding("F3", "dx-bot", "`debug_toolbar`는 반드시 남겨 주십시오.")
    assert reverses(everywhere, prod)

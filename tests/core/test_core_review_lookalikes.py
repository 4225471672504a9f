"""Compatible requests an independent review of the rules found read as
contradictions, and turns read wrong, each kept apart since: a prohibition
written with a Konglish verb ("drop하지 마세요"), "do not call `x`", a route
whose requests a point counts, a body logged as JSON, a format refused, one
person's zone read through two names, the words of a short name about
something else, one file word in common, "add `logging`", a metric kept
beside a new one, "connects to localhost only", `min_workers`, two commands'
`--workers`, "3건 중 2건", "새로 배포한 빌드", and "contrary to sec-bot's
request, `X` is still …" (backing it, not against it)."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding
from test_core_reversal_in_words_more import _fixed

from bot.contradictions import reverses
from bot.demands import opposed
from bot.findings import owner_clause
from bot.models import Role

PAIRS = [
    (_finding("F1", "a", "`customer_ip` 컬럼은 drop하지 마세요. 사기 탐지 모델이 씁니다."),
     _finding("F2", "b", "`customer_ip` 컬럼은 그대로 유지해 주세요. 감사 로그에 필요합니다.")),
    (_finding("F1", "a", "Remove `legacy_sync()`; nothing should use it any more."),
     _finding("F2", "b", "Do not call the helper `legacy_sync()` from the request path.")),
    (_finding("F1", "a", "`checkout_latency` 이름을 `checkout_latency_seconds`로 바꿔 주세요."),
     _finding("F2", "b", "지표 이름을 `checkout_latency_ms`로 변경하지 마세요. 초 단위가 표준입니다.")),
    (_finding("F1", "a", "`/api/export` 요청이 30초를 넘겨 끊깁니다. 이 라우트의 `timeout`은 60으로 "
                         "늘려 주세요."),
     _finding("F2", "b", "`/api/search` 요청이 느립니다. 이 라우트의 `timeout`은 5로 줄여 주세요.")),
    (_finding("F1", "a", "`build_invoice()` must attach the invoice as a PDF."),
     _finding("F2", "b", "`build_invoice()` should log its payload as JSON for debugging.")),
    (_finding("F1", "a", "`orders_report()`는 CSV로 바꾸면 안 됩니다."),
     _finding("F2", "b", "`orders_report()`는 엑셀(xlsx)로 내보내 주세요.")),
    (_finding("F1", "a", "`render_reminder()` prints UTC. Use the customer's timezone "
                         "(`booking.customer.tz`)."),
     _finding("F2", "b", "Please render in the customer's timezone (`booking.customer.timezone`).")),
    (_fixed("F1", "a", "`SESSION_TTL`을 30분으로 줄여 주세요."),
     _finding("F2", "b", "세션 만료 안내 문구를 이전처럼 되돌려 주세요.")),
    (_fixed("F1", "a", "7일 지난 임시 파일을 삭제해 주세요."),
     _finding("F2", "b", "감사 로그 파일은 지우지 말고, 보관 기간 설정만 이전처럼 되돌려 주세요.")),
    (_finding("F1", "a", "`charge_card()`의 실패 경로에 `logging`을 추가해 주세요."),
     _finding("F2", "b", "`charge_card()`의 로거는 `structlog`로 교체해 주세요.")),
    (_finding("F1", "a", "Add a `job_duration_seconds` histogram to `run_job()`."),
     _finding("F2", "b", "In `run_job()`, keep `job_duration_ms` as well until the old dashboard "
                         "is migrated.")),
    (_finding("F1", "a", "Set `METRICS_BIND = \"0.0.0.0:9100\"` so Prometheus can scrape it."),
     _finding("F2", "b", "Since the `METRICS_BIND` change, `test_metrics_endpoint` fails because it "
                         "connects to localhost only. Point the test at the container IP instead.")),
    (_finding("F1", "a", "Set `min_workers` to 2 so there is always a warm worker."),
     _finding("F2", "b", "Autoscaling must be able to go up to 16 workers at peak.")),
    (_finding("F1", "a", "In `Procfile`, run the API with `gunicorn app:app --workers 4`."),
     _finding("F2", "b", "In `Procfile`, the websocket process must run `uvicorn ws:app --workers 1`.")),
]


def test_compatible_requests_stay_apart() -> None:
    for first, second in PAIRS:
        assert not reverses(second, first), (first.summary, second.summary)


def test_a_count_of_some_is_not_all() -> None:
    assert not owner_clause("3건 중 2건 반영했습니다.").everything
    assert owner_clause("3건 반영했습니다.").everything


def test_a_new_build_announces_no_new_point() -> None:
    sim = Sim()
    sim.say(Role.USER, "결제 API 재시도를 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`payments/client.py`를 고쳤습니다.")
    sim.say(Role.REVIEWER, "`payments/client.py`에서 502를 받으면 재시도하지 않습니다. 502 한 번에 "
                           "결제가 실패합니다. 재시도해야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n재시도는 넣지 않겠습니다.")
    sim.say(Role.REVIEWER, "재시도 건은 앞서 말씀드린 그대로입니다. 새로 배포한 빌드로 스테이징에서 "
                           "다시 돌려 봤습니다. 502 한 번에 결제가 실패합니다. 재시도해야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n그대로 두겠습니다.")
    assert [f.label for f in sim.state.findings] == ["F1"]


def test_what_the_code_did_against_a_request_is_no_opposition() -> None:
    assert opposed("Contrary to sec-bot's request, `SESSION_TTL` is still 86400 in the last commit. "
                   "Please set `SESSION_TTL = 1800`.", {"sec-bot"}) == set()
    assert opposed("방금 커밋은 sec-bot 요청과는 반대로 `SESSION_TTL`을 다시 늘렸습니다. 1800으로 "
                   "줄여 주세요.", {"sec-bot"}) == set()
    assert opposed("그리고 privacy-bot 의견과는 반대로, `customer_ip`는 삭제하면 안 됩니다.",
                   {"privacy-bot"}) == {"privacy-bot"}

"""Libraries asked in and out as reviewers write it: "Replace the stdlib
`json` module with `orjson`", "the switch to `orjson` has to be reverted",
"Go back to the stdlib `json` module", "`json.dumps` 대신 `orjson.dumps`",
"json 모듈을 계속 사용해 주세요"; two libraries of one kind asked for one
client (`httpx` against `aiohttp`); one metric named with two units
(`checkout_latency_seconds` against `checkout_latency_ms`); a column asked `NOT NULL DEFAULT …`
against nullable, and nullable only as a condition."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.stances import null_stance, presence


def test_replacing_a_library_asks_one_in_and_one_out() -> None:
    assert presence("Replace the stdlib `json` module with `orjson` in `api/render.py`.") == {
        "+@orjson", "-@json"}
    assert presence("But the switch to `orjson` has to be reverted: no wheel for it.") == {
        "-@orjson"}
    assert presence("Go back to the stdlib `json` module and drop `orjson`.") == {
        "+@json", "-@orjson"}
    assert {"+@orjson", "-@json"} <= presence("`json.dumps` 대신 `orjson.dumps`를 쓰고")
    assert presence("직렬화는 json 모듈을 계속 사용해 주세요.") == {"+@json"}
    assert presence("Please keep using the standard json module.") == {"+@json"}
    # One function of one module named twice asks no module; an object's
    # attribute is no module.
    assert "+@json" not in presence("`json.dumps` 대신 `json.dump`를 쓰고")
    assert "+@settings" not in presence("`self.timeout` 대신 `settings.timeout`을 쓰고")
    # Descriptions and conditions ask nothing.
    for text in ("지금은 json 모듈을 사용하고 있어 응답이 느립니다.", "json 모듈을 사용하면 느려집니다.",
                 "We keep using the standard logging module in the worker, which is slow.",
                 "`orjson`을 쓰고 있어 느립니다.", "`orjson`을 쓰게 되면 빌드가 깨집니다.",
                 "Go back to `api/render.py:40`: the loop still allocates.", "keep the existing module"):
        assert presence(text) == set(), text
    assert presence("`orjson`을 써 주세요.") == {"+@orjson"}
    assert presence("Keep using the stdlib `json` module.") == {"+@json"}


def test_a_library_replaced_then_asked_back_is_reversed() -> None:
    perf = _finding("F1", "perf-bot", "Replace the stdlib `json` module with `orjson` in "
                                      "`api/render.py`.")
    back = _finding("F4", "correctness-bot", "But the switch to `orjson` has to be reverted. Go "
                                             "back to the stdlib `json` module in `api/render.py` "
                                             "and drop `orjson` from `pyproject.toml`.")
    assert reverses(back, perf)


def test_a_library_asked_in_code_and_kept_out_in_words_is_reversed() -> None:
    perf = _finding("F1", "perf-bot", "`collector/encode.py`에서 `json.dumps` 대신 `orjson.dumps`를 "
                                      "쓰고, `default_response_class=ORJSONResponse`로 바꿔 주세요.")
    platform = _finding("F2", "platform-bot", "`collector`는 ARM Lambda에도 배포됩니다. 직렬화는 "
                                              "파이썬에 기본으로 들어 있는 json 모듈을 계속 사용해 주세요.")
    assert reverses(platform, perf)
    # Another module of the same room asked in: no reversal.
    other = _finding("F3", "platform-bot", "로그 포맷은 `structlog`를 계속 사용해 주세요.")
    assert not reverses(other, perf)
    # Said to agree with it: no reversal.
    agreeing = _finding("F4", "platform-bot", "perf-bot 님 의견에 동의합니다. 배포 스크립트 쪽은 json "
                                              "모듈을 계속 사용해 주세요.")
    agreeing.agrees = ["perf-bot"]
    assert not reverses(agreeing, perf)


def test_not_null_with_its_default_and_nullable_as_a_condition() -> None:
    assert null_stance("`NOT NULL DEFAULT 'KRW'` 로 추가해야 합니다.") == 1
    assert null_stance("`currency` 는 nullable 로 두어야 합니다.") == -1
    assert null_stance("`currency` 를 nullable 로 두면 집계 쿼리마다 `COALESCE`가 필요해집니다.") == 0


def test_two_libraries_of_one_kind_for_one_client() -> None:
    assert presence("`slot_client.py`의 HTTP 클라이언트는 `aiohttp`로 가야 합니다.") == {"+@aiohttp"}
    httpx = _finding("F1", "arch-bot", "`SlotService`는 async인데 `slot_client.py`가 동기 `requests`를 "
                                       "감싸고 있습니다. HTTP 클라이언트를 `httpx.AsyncClient`로 "
                                       "교체해 주십시오.")
    aiohttp = _finding("F4", "test-bot", "`slot_client.py`의 HTTP 클라이언트는 `aiohttp`로 가야 "
                                         "합니다. 공용 `aiohttp.ClientSession` 풀이 이미 있습니다.")
    assert reverses(aiohttp, httpx)
    # The same library asked by both, or libraries of two kinds, is no conflict.
    same = _finding("F4", "test-bot", "`slot_client.py`의 HTTP 클라이언트는 `httpx`로 가야 합니다.")
    assert not reverses(same, httpx)
    logging = _finding("F4", "test-bot", "`slot_client.py`의 로깅은 `structlog`로 가야 합니다.")
    assert not reverses(logging, httpx)


def test_one_name_asked_with_two_units() -> None:
    assert presence("이 지표 이름은 `checkout_latency_ms`로 해 주십시오.") == {"+@checkout_latency_ms"}
    assert presence("Please name it `checkout_latency_ms`.") == {"+@checkout_latency_ms"}
    seconds = _finding("F3", "sre-bot", "지표 이름 `checkoutLatency`는 명명 규칙에 맞지 않습니다. "
                                        "`checkout_latency_seconds`로 바꾸고 관측값도 초 단위로 넣어 "
                                        "주십시오.")
    millis = _finding("F4", "dash-bot", "이 지표 이름은 `checkout_latency_ms`로 해 주십시오. 기존 "
                                        "대시보드가 밀리초 값을 전제로 합니다.")
    assert reverses(millis, seconds)
    # Two names that differ in more than the unit are two metrics.
    other = _finding("F4", "dash-bot", "이 지표 이름은 `payment_latency_ms`로 해 주십시오.")
    assert not reverses(other, seconds)
    same = _finding("F4", "dash-bot", "이 지표 이름은 `checkout_latency_seconds`로 해 주십시오.")
    assert not reverses(same, seconds)
    # One renames `search_latency`; the other asks it kept with its unit.
    renamed = _finding("F1", "obs-bot", "`search_latency`는 단위가 없는 이름입니다. "
                                        "`search_request_duration_seconds`로 바꿔주세요.")
    with_unit = _finding("F3", "perf-bot", "이 메트릭 이름은 `search_latency_ms`로 하고 값도 ms로 "
                                           "기록해주세요.")
    assert reverses(with_unit, renamed)
    other_metric = _finding("F3", "perf-bot", "이 메트릭 이름은 `index_build_ms`로 하고 값도 ms로 "
                                              "기록해주세요.")
    assert not reverses(other_metric, renamed)

"""Rulings on findings (`UPHELD: F<n>` / `RETIRED: F<n>`): parsed, validated,
repaired once when malformed, recorded but not applied under a guardrail."""

from __future__ import annotations

from typing import Any

from bot.arbiter.service import Arbitrator
from bot.arbiter.verdict import parse_and_validate, parse_ruling
from bot.finding import Finding, FindingStatus
from bot.ledger import apply_ruling, judge_round
from bot.models import Ruling, Trigger, VerdictKind, VerdictSource
from tests.arbiter.arbiter_helpers import Sleeps, make_ctx, make_settings
from tests.fakes.llm_servers import FakeLLMServer

LEDGER = [
    {"label": "F1", "author": "sec-bot", "summary": "TTL 1분", "status": "open", "stall": 1,
     "history": ["R1: raised"]},
    {"label": "F2", "author": "perf-bot", "summary": "TTL 1시간", "status": "contested",
     "stall": 0, "history": ["R2: raised"]},
    {"label": "F3", "author": "perf-bot", "summary": "키 구조", "status": "fixed", "stall": 0,
     "history": ["R1: raised", "R2: fixed"]},
]
RULED = (
    "REVISE 보안 요구가 우선합니다. `authz/cache.py`의 TTL을 60초로 두십시오.\n"
    "UPHELD: F1\n"
    "RETIRED: F2"
)


def contradiction_ctx(**fields: Any) -> Any:
    return make_ctx(
        trigger=Trigger.CONTRADICTION,
        evidence={"trigger": "contradiction", "ledger": LEDGER, "disputed": ["F1", "F2"],
                  "pair": ["F1", "F2"]},
        **fields,
    )


def test_parse_ruling_cases() -> None:
    ruling, problems, rest = parse_ruling("본문\nUPHELD: F1\n**RETIRED:** F2")
    assert ruling == Ruling(upheld="F1", retired="F2") and not problems and rest == "본문"
    assert parse_ruling("본문만 있습니다")[0:2] == (None, [])
    assert parse_ruling("UPHELD: F1")[1]  # one line without the other
    assert parse_ruling("UPHELD: F1\nUPHELD: F2\nRETIRED: F3")[1]  # two UPHELD
    assert parse_ruling("UPHELD F1 because\nRETIRED: F2")[1]  # not the exact form


def test_validation_needs_open_or_contested_distinct_labels() -> None:
    rulable = frozenset({"F1", "F2"})
    ok = parse_and_validate(RULED, "ko", rulable)
    assert ok.valid and ok.ruling == Ruling(upheld="F1", retired="F2")
    assert "UPHELD" not in ok.text and "RETIRED" not in ok.text
    for bad in ("UPHELD: F1\nRETIRED: F1", "UPHELD: F1\nRETIRED: F3", "UPHELD: F9\nRETIRED: F2"):
        parsed = parse_and_validate("REVISE 보안 요구가 우선합니다.\n" + bad, "ko", rulable)
        assert not parsed.valid and parsed.ruling is None


async def test_valid_ruling_reaches_the_verdict(llm: FakeLLMServer) -> None:
    llm.reply(RULED)
    settings = make_settings(arbiter_base_url=llm.openai_base_url)
    out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(contradiction_ctx())
    assert out.verdict.kind is VerdictKind.REVISE and out.verdict.source is VerdictSource.LLM
    assert out.verdict.ruling == Ruling(upheld="F1", retired="F2") == out.ruling
    assert "RETIRED:" not in out.verdict.text


async def test_invalid_ruling_is_repaired_once(llm: FakeLLMServer) -> None:
    llm.reply("REVISE 보안 요구가 우선합니다.\nUPHELD: F1\nRETIRED: F3", RULED)
    settings = make_settings(arbiter_base_url=llm.openai_base_url)
    out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(contradiction_ctx())
    assert out.verdict.source is VerdictSource.REPAIRED and out.verdict.ruling is not None
    assert "F3" in llm.prompt_of(-1)  # the repair request quotes what was wrong


async def test_still_invalid_ruling_fails_closed(llm: FakeLLMServer) -> None:
    bad = "REVISE 보안 요구가 우선합니다.\nUPHELD: F1\nRETIRED: F1"
    llm.reply(bad, bad)
    settings = make_settings(arbiter_base_url=llm.openai_base_url)
    out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(contradiction_ctx())
    assert out.verdict.kind is VerdictKind.ESCALATE and out.verdict.source is VerdictSource.FALLBACK
    assert out.verdict.ruling is None


async def test_missing_ruling_is_allowed(llm: FakeLLMServer) -> None:
    llm.reply("REVISE 보안 요구가 우선합니다. TTL을 60초로 두십시오.")
    settings = make_settings(arbiter_base_url=llm.openai_base_url)
    out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(contradiction_ctx())
    assert out.verdict.source is VerdictSource.LLM and out.verdict.ruling is None


async def test_guardrail_records_the_ruling_without_applying_it(llm: FakeLLMServer) -> None:
    llm.reply(RULED.replace("REVISE", "PROCEED"))
    settings = make_settings(arbiter_base_url=llm.openai_base_url)
    ctx = contradiction_ctx(owner="STEP_DONE 배포 준비가 끝났습니다. 사용자님, 지금 배포할까요?")
    out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(ctx)
    assert out.verdict.source is VerdictSource.GUARDRAIL and out.verdict.ruling is None
    assert out.ruling == Ruling(upheld="F1", retired="F2")


def test_a_retired_finding_raised_again_is_repeated_against_the_ruling() -> None:
    findings: list[Finding] = []
    judge_round(findings, [("sec-bot", ["`PERMISSION_CACHE_TTL`을 60초로 줄여 주십시오."]),
                           ("perf-bot", ["`PERMISSION_CACHE_TTL`을 3600초로 늘려 주십시오."])],
                None, 1)
    assert apply_ruling(findings, "F1", "F2", 1)
    assert findings[1].status is FindingStatus.RETIRED
    out = judge_round(findings, [("perf-bot", ["`PERMISSION_CACHE_TTL`은 3600초로 늘려야 합니다."])],
                      {}, 2)
    assert out.raised == [] and not out.progress
    assert out.events["F2"] == "repeated against a ruling" and findings[1].stall == 1

"""The Arbitrator against fake OpenAI and Anthropic servers over real HTTP."""

from __future__ import annotations

import pytest

from bot.arbiter.service import Arbitrator
from bot.detection import RoomState
from bot.i18n import resolve, text_language
from bot.models import VerdictKind, VerdictSource
from tests.arbiter.arbiter_helpers import Sleeps, make_ctx, make_settings
from tests.fakes.llm_servers import FakeLLMServer, Scripted

BACKENDS = ["openai", "anthropic"]

PROCEED_KO = (
    "PROCEED 오너가 맞습니다. 리뷰어는 첨부된 pytest 로그(12개 통과)를 놓쳤습니다. 승인하세요."
)
REVISE_KO = "REVISE 리뷰어가 맞습니다. `src/auth/login.py` 42번째 줄의 토큰 갱신 조건을 고치세요."
RESET_KO = "RESET 둘 다 같은 자리를 맴돌고 있습니다. 세션 저장소를 먼저 재현 테스트로 확인하세요."
ESCALATE_KO = (
    "ESCALATE 토큰 만료 정책을 사용자가 정해야 합니다.\n"
    "1. 만료 시간 유지 — 현재 구현 그대로 배포합니다.\n"
    "2. 만료 시간 연장 — 오너가 설정을 바꾸고 테스트를 추가합니다.\n"
)
ENGLISH = "REVISE The reviewer is right: fix the token refresh condition on line 42 of login.py."


def arbitrator(server: FakeLLMServer, backend: str, sleeps: Sleeps, **kw: object) -> Arbitrator:
    settings = make_settings(
        arbiter_backend=backend, arbiter_base_url=server.base_url(backend), **kw
    )
    return Arbitrator(settings, sleep=sleeps)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (PROCEED_KO, VerdictKind.PROCEED),
        (REVISE_KO, VerdictKind.REVISE),
        (RESET_KO, VerdictKind.RESET),
        (ESCALATE_KO, VerdictKind.ESCALATE),
    ],
)
async def test_clean_verdicts(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str, text: str, kind: VerdictKind
) -> None:
    llm.reply(text)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.kind == kind
    assert out.verdict.source == VerdictSource.LLM
    assert out.backend == backend and out.model == "fake-model"
    assert out.model_verdict == kind.value and out.overrides == []
    assert out.raw_output == text
    assert 0 < out.prompt_chars <= 60_000
    assert len(llm.requests) == 1
    assert llm.requests[0]["api"] == backend
    # The system prompt and the room data both reached the server.
    assert "PROCEED" in llm.system_of() and "<room_data" in llm.prompt_of()
    if kind == VerdictKind.ESCALATE:
        assert [(o.n, o.label) for o in out.verdict.options] == [
            (1, "만료 시간 유지"),
            (2, "만료 시간 연장"),
        ]
        assert out.verdict.options[1].consequence.startswith("오너가 설정을")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_api_key_sent_but_never_in_outcome(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str
) -> None:
    llm.reply(REVISE_KO)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    headers = {k.lower(): v for k, v in llm.requests[0]["headers"].items()}
    assert "sk-test-secret" in (headers.get("authorization", "") + headers.get("x-api-key", ""))
    assert "sk-test-secret" not in out.model_dump_json()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_markdown_decorated_keyword(llm: FakeLLMServer, sleeps: Sleeps, backend: str) -> None:
    llm.reply(
        "<internal>생각 중</internal>\n\n**VERDICT: REVISE** — `login.py` 42번째 줄을 고치세요."
    )
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.kind == VerdictKind.REVISE
    assert out.verdict.source == VerdictSource.LLM
    assert out.verdict.text.startswith("REVISE ")
    assert "생각 중" not in out.verdict.text


@pytest.mark.parametrize("backend", BACKENDS)
async def test_english_body_when_korean_required_is_repaired(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str
) -> None:
    llm.reply(ENGLISH, REVISE_KO)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.REPAIRED
    assert out.verdict.kind == VerdictKind.REVISE
    assert len(llm.requests) == 2
    repair = llm.prompt_of(1)
    assert "previous answer was invalid" in repair
    assert "not written in Korean" in repair
    assert "fix the token refresh condition" in repair  # the bad answer is quoted
    assert out.problems and "Korean" in out.problems[0]


async def test_english_room_accepts_english(llm: FakeLLMServer, sleeps: Sleeps) -> None:
    llm.reply(ENGLISH)
    ctx = make_ctx(language="en", humans=["please fix the session expiry bug"])
    out = await arbitrator(llm, "openai", sleeps).arbitrate(ctx)
    assert out.verdict.source == VerdictSource.LLM and out.language == "en"


async def test_user_writing_english_in_korean_room_gets_english(
    llm: FakeLLMServer, sleeps: Sleeps
) -> None:
    # The room's language is fixed when the task starts (bot.i18n): an English
    # task in a room whose default is Korean makes an English room, and the
    # arbiter is asked for English.
    llm.reply(ENGLISH)
    task = "Please fix the session expiry bug in the login flow"
    ctx = make_ctx(language=resolve(None, RoomState(language=text_language(task)), "ko"),
                   humans=[task])
    out = await arbitrator(llm, "openai", sleeps).arbitrate(ctx)
    assert out.language == "en"
    assert out.verdict.source == VerdictSource.LLM
    assert "English" in llm.prompt_of()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_garbage_twice_falls_back(llm: FakeLLMServer, sleeps: Sleeps, backend: str) -> None:
    llm.reply("I think both have a point.", "Still thinking... maybe proceed?")
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.kind == VerdictKind.ESCALATE
    assert out.verdict.source == VerdictSource.FALLBACK
    assert len(out.verdict.options) >= 2
    assert "형식에 맞지 않아" in out.verdict.text
    assert "repair attempt" in (out.raw_output or "")
    assert out.overrides and "invalid output" in out.overrides[0]
    assert len(llm.requests) == 2


@pytest.mark.parametrize("backend", BACKENDS)
async def test_proceeding_is_not_a_verdict(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str
) -> None:
    llm.reply("PROCEEDING 오너가 맞는 것 같습니다.", "revised 리뷰어 의견을 반영하세요.")
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.kind == VerdictKind.ESCALATE
    assert out.verdict.source == VerdictSource.FALLBACK  # never PROCEED by default
    assert "does not start with a verdict keyword" in llm.prompt_of(1)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_escalate_without_options_repaired(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str
) -> None:
    llm.reply("ESCALATE 사용자가 만료 정책을 결정해야 합니다.", ESCALATE_KO)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.REPAIRED
    assert len(out.verdict.options) == 2
    assert "at least two numbered options" in llm.prompt_of(1)


async def test_escalate_without_options_twice_falls_back(
    llm: FakeLLMServer, sleeps: Sleeps
) -> None:
    llm.reply("ESCALATE 사용자가 결정해야 합니다.", "ESCALATE 사용자가 정말 결정해야 합니다.")
    out = await arbitrator(llm, "openai", sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK
    assert out.model_verdict == "ESCALATE"
    assert [o.n for o in out.verdict.options] == [1, 2, 3, 4]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_500s_exhaust_retries_then_fallback(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str
) -> None:
    llm.push(Scripted(status=500), Scripted(status=503), Scripted(status=500))
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.kind == VerdictKind.ESCALATE
    assert out.verdict.source == VerdictSource.FALLBACK
    assert "사용할 수 없어" in out.verdict.text  # says the arbiter was unavailable
    assert len(llm.requests) == 3  # 1 + arbiter_retries(2): the SDK itself did not retry
    assert len(sleeps.calls) == 2 and sleeps.calls[1] > sleeps.calls[0]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_500_then_success(llm: FakeLLMServer, sleeps: Sleeps, backend: str) -> None:
    llm.push(Scripted(status=500)).reply(REVISE_KO)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.LLM
    assert len(sleeps.calls) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_429_honours_retry_after(llm: FakeLLMServer, sleeps: Sleeps, backend: str) -> None:
    llm.push(Scripted(status=429, headers={"Retry-After": "7"})).reply(REVISE_KO)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.LLM
    assert sleeps.calls == [7.0]


async def test_400_is_not_retried(llm: FakeLLMServer, sleeps: Sleeps) -> None:
    llm.push(Scripted(status=400))
    out = await arbitrator(llm, "openai", sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK
    assert len(llm.requests) == 1 and sleeps.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_server_that_never_answers_times_out(
    llm: FakeLLMServer, sleeps: Sleeps, backend: str
) -> None:
    llm.push(Scripted(hang=True), Scripted(hang=True))
    arb = arbitrator(llm, backend, sleeps, arbiter_timeout=0.3, arbiter_retries=1)
    out = await arb.arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK
    assert out.verdict.kind == VerdictKind.ESCALATE
    assert len(llm.requests) == 2 and len(sleeps.calls) == 1
    assert any("timed out" in p for p in out.problems)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_invalid_json_then_success(llm: FakeLLMServer, sleeps: Sleeps, backend: str) -> None:
    llm.push(Scripted(body="{not json")).reply(REVISE_KO)
    out = await arbitrator(llm, backend, sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.LLM
    assert len(llm.requests) == 2


async def test_invalid_json_always_falls_back(llm: FakeLLMServer, sleeps: Sleeps) -> None:
    llm.push(*(Scripted(body="<html>bad gateway") for _ in range(3)))
    out = await arbitrator(llm, "openai", sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK
    assert "사용할 수 없어" in out.verdict.text


async def test_connection_refused_falls_back(sleeps: Sleeps) -> None:
    server = await FakeLLMServer().start()
    url = server.openai_base_url
    await server.close()  # nothing listens there any more
    settings = make_settings(arbiter_base_url=url, arbiter_retries=1)
    out = await Arbitrator(settings, sleep=sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK


async def test_none_backend_never_calls_anything() -> None:
    out = await Arbitrator(make_settings(arbiter_backend="none")).arbitrate(make_ctx())
    assert out.backend == "none"
    assert out.verdict.source == VerdictSource.NONE
    assert out.verdict.kind == VerdictKind.ESCALATE and len(out.verdict.options) >= 2


async def test_cosmetic_flaw_kept_when_repair_is_worse(llm: FakeLLMServer, sleeps: Sleeps) -> None:
    first = "ESCALATE 배포 여부를 결정해 주세요.\n1. 배포\n2. 보류"  # no consequences: soft
    llm.reply(first, "garbage")
    out = await arbitrator(llm, "openai", sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.LLM
    assert [o.label for o in out.verdict.options] == ["배포", "보류"]
    assert len(llm.requests) == 2


async def test_repair_call_unavailable_falls_back(llm: FakeLLMServer, sleeps: Sleeps) -> None:
    llm.push(Scripted(text="garbage"), *(Scripted(status=500) for _ in range(3)))
    out = await arbitrator(llm, "openai", sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK
    assert "사용할 수 없어" in out.verdict.text
    assert out.raw_output == "garbage"

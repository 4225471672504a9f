"""Mixture of agents: parallel references, failures dropped, private endpoints refused."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.arbiter.moa import EndpointRefused, check_endpoint
from bot.arbiter.service import Arbitrator
from bot.config import MoAModel
from bot.models import VerdictSource
from tests.arbiter.arbiter_helpers import Sleeps, make_ctx, make_settings
from tests.fakes.llm_servers import FakeLLMServer, Scripted

REVISE_KO = "REVISE 리뷰어가 맞습니다. `login.py` 42번째 줄을 고치세요. good-ref 의견과 같습니다."


async def test_one_good_one_failing_one_slow(llm: FakeLLMServer) -> None:
    async with (
        FakeLLMServer() as good,
        FakeLLMServer() as failing,
        FakeLLMServer() as slow,
    ):
        good.reply("REVISE 참고 의견: 42번째 줄의 만료 검사가 빠졌습니다.")
        failing.push(Scripted(status=500))
        slow.push(Scripted(hang=True))
        llm.reply(REVISE_KO)
        moa = [
            MoAModel(name="good-ref", model="m1", base_url=good.openai_base_url, timeout=2),
            MoAModel(
                name="failing-ref",
                backend="anthropic",
                model="m2",
                base_url=failing.anthropic_base_url,
                timeout=2,
            ),
            MoAModel(name="slow-ref", model="m3", base_url=slow.openai_base_url, timeout=0.3),
        ]
        settings = make_settings(arbiter_base_url=llm.openai_base_url)
        started = time.monotonic()
        out = await Arbitrator(settings, sleep=Sleeps(), moa=moa).arbitrate(make_ctx())
        elapsed = time.monotonic() - started
    assert out.verdict.source == VerdictSource.LLM
    assert out.references == ["good-ref"]
    prompt = llm.prompt_of()
    assert "=== REFERENCE OPINION 1: good-ref ===" in prompt
    assert "│ REVISE 참고 의견: 42번째 줄의 만료 검사가 빠졌습니다." in prompt
    assert "failing-ref" not in prompt and "slow-ref" not in prompt
    # Each reference was asked once (no retries spent on advice), all in parallel.
    assert len(good.requests) == len(failing.requests) == len(slow.requests) == 1
    assert elapsed < 1.5
    # The references saw the room too, but not each other.
    assert "<room_data" in good.prompt_of() and "REFERENCE OPINION" not in good.prompt_of()


async def test_moa_from_the_config_file(llm: FakeLLMServer, tmp_path: Path) -> None:
    async with FakeLLMServer() as ref:
        ref.reply("RESET 참고: 접근을 바꾸세요.")
        llm.reply(REVISE_KO)
        config = tmp_path / "tribunal.toml"
        config.write_text(
            f'[[moa]]\nname = "toml-ref"\nmodel = "x"\nbase_url = "{ref.openai_base_url}"\n'
            'api_key_env = "TRIBUNAL_TEST_REF_KEY"\ntimeout = 2\n',
            encoding="utf-8",
        )
        settings = make_settings(arbiter_base_url=llm.openai_base_url, config=config)
        out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(make_ctx())
    assert out.references == ["toml-ref"]
    assert "REFERENCE OPINION 1: toml-ref" in llm.prompt_of()


async def test_private_endpoint_refused_when_not_allowed(llm: FakeLLMServer) -> None:
    async with FakeLLMServer() as ref:
        ref.reply("REVISE 참고")
        llm.reply(REVISE_KO)
        moa = [MoAModel(name="local-ref", model="x", base_url=ref.openai_base_url)]
        settings = make_settings(arbiter_base_url=llm.openai_base_url, moa_allow_private=False)
        out = await Arbitrator(settings, sleep=Sleeps(), moa=moa).arbitrate(make_ctx())
        assert ref.requests == []  # never contacted
    assert out.references == []
    assert out.verdict.source == VerdictSource.LLM  # the verdict itself is unaffected


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://10.1.2.3/v1",
        "http://192.168.0.5/v1",
        "http://172.16.0.1/v1",
        "http://169.254.169.254/latest",
        "http://[::1]:8000/v1",
        "http://[fe80::1]/v1",
        "http://[::ffff:127.0.0.1]/v1",
        "http://0.0.0.0/v1",
        "file:///etc/passwd",
    ],
)
async def test_internal_endpoints_refused(url: str) -> None:
    with pytest.raises(EndpointRefused):
        await check_endpoint(url, allow_private=False)


async def test_public_and_allowed_endpoints_pass() -> None:
    await check_endpoint("https://93.184.216.34/v1", allow_private=False)
    await check_endpoint(None, allow_private=False)  # the vendor's default endpoint
    await check_endpoint("http://127.0.0.1:8080/v1", allow_private=True)


async def test_reference_key_from_its_own_variable_only(
    llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REF_KEY", "sk-ref-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-vendor-key")
    async with FakeLLMServer() as with_env, FakeLLMServer() as without_env:
        with_env.reply("REVISE 참고 하나")
        without_env.reply("REVISE 참고 둘")
        llm.reply(REVISE_KO)
        moa = [
            MoAModel(name="a", model="x", base_url=with_env.openai_base_url, api_key_env="REF_KEY"),
            MoAModel(name="b", model="x", base_url=without_env.openai_base_url),
        ]
        settings = make_settings(arbiter_base_url=llm.openai_base_url)
        await Arbitrator(settings, sleep=Sleeps(), moa=moa).arbitrate(make_ctx())
        auth_a = with_env.requests[0]["headers"].get("Authorization", "")
        auth_b = without_env.requests[0]["headers"].get("Authorization", "")
    assert auth_a == "Bearer sk-ref-key"
    assert "sk-vendor-key" not in auth_b  # a custom endpoint never gets the vendor key

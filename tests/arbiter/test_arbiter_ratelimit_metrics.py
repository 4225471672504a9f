"""A 429 from the model's server is counted as `service="arbiter"`."""

from __future__ import annotations

import pytest

from bot import metrics
from bot.arbiter.service import Arbitrator
from bot.models import VerdictSource
from tests.arbiter.arbiter_helpers import Sleeps, make_ctx, make_settings
from tests.fakes.llm_servers import FakeLLMServer, Scripted


def arbiter_429s() -> float:
    return metrics.REGISTRY.get_sample_value(
        "tribunal_rate_limited_total", {"service": "arbiter"}) or 0.0


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_each_429_is_counted(llm: FakeLLMServer, sleeps: Sleeps, backend: str) -> None:
    llm.push(Scripted(status=429, headers={"Retry-After": "0"}))
    llm.push(Scripted(status=429, headers={"Retry-After": "0"}))
    llm.reply("REVISE 리뷰어가 맞습니다. `login.py` 42번째 줄을 고치세요.")
    settings = make_settings(arbiter_backend=backend, arbiter_base_url=llm.base_url(backend))
    before = arbiter_429s()
    out = await Arbitrator(settings, sleep=sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.LLM
    assert arbiter_429s() - before == 2

"""Resilience details: shared concurrency limit, Retry-After forms, never raising."""

from __future__ import annotations

import asyncio
import email.utils
import time

from bot.arbiter.backends import parse_retry_after
from bot.arbiter.service import Arbitrator
from bot.models import VerdictKind, VerdictSource
from tests.arbiter.arbiter_helpers import Sleeps, make_ctx, make_settings
from tests.fakes.llm_servers import FakeLLMServer, Scripted

REVISE_KO = "REVISE 리뷰어가 맞습니다. `login.py` 42번째 줄을 고치세요."


async def test_global_concurrency_limit(llm: FakeLLMServer) -> None:
    llm.default = Scripted(text=REVISE_KO, delay=0.05)
    settings = make_settings(arbiter_base_url=llm.openai_base_url, arbiter_concurrency=2)
    outs = await asyncio.gather(
        *(Arbitrator(settings, sleep=Sleeps()).arbitrate(make_ctx()) for _ in range(6))
    )
    assert all(o.verdict.source == VerdictSource.LLM for o in outs)
    assert len(llm.requests) == 6
    assert llm.max_in_flight == 2  # six separate Arbitrators, one shared limit


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    delay = parse_retry_after({"retry-after": future})
    assert delay is not None and 25 <= delay <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


async def test_huge_retry_after_is_capped(llm: FakeLLMServer) -> None:
    sleeps = Sleeps()
    llm.push(Scripted(status=429, headers={"Retry-After": "86400"})).reply(REVISE_KO)
    settings = make_settings(arbiter_base_url=llm.openai_base_url)
    out = await Arbitrator(settings, sleep=sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.LLM and sleeps.calls == [120.0]


class ExplodingBackend:
    name = "exploding"
    model: str | None = "boom"

    async def complete(self, system: str, prompt: str) -> str:
        raise RuntimeError("unexpected bug")


async def test_arbitrate_never_raises() -> None:
    settings = make_settings()
    out = await Arbitrator(settings, backend=ExplodingBackend()).arbitrate(make_ctx())
    assert out.verdict.kind == VerdictKind.ESCALATE
    assert out.verdict.source == VerdictSource.FALLBACK
    assert len(out.verdict.options) >= 2


class EchoBackend:
    """An injected backend (no HTTP), as the engine's own tests may use."""

    name = "echo"
    model: str | None = "echo-1"

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    async def complete(self, system: str, prompt: str) -> str:
        self.calls += 1
        return self.text


async def test_injected_backend() -> None:
    backend = EchoBackend(REVISE_KO)
    out = await Arbitrator(make_settings(), backend=backend).arbitrate(make_ctx())
    assert out.verdict.kind == VerdictKind.REVISE and backend.calls == 1
    assert out.backend == "echo" and out.model == "echo-1"
    assert out.latency_ms >= 0

"""What the Arbitrator adds on top of the model call (row `arbiter_call_overhead`).

`Arbitrator.arbitrate()` against an instant fake OpenAI-compatible server on
127.0.0.1, beside the bare openai SDK call and the bare HTTP round trip
(aiohttp, same payload) to the same fake. The ratio to the SDK call is what
the arbiter adds (prompt rendering, parsing, guardrails, client set-up).
Prompt assembly from storage is measured in bench_rooms (`context_100k_vs_1k`).

    python -m bench.bench_arbiter [--iterations N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import openai
from pydantic import SecretStr

from bot.arbiter.base import ArbitrationContext, ContextMessage, ContextTurn
from bot.arbiter.context import render_prompt
from bot.arbiter.service import Arbitrator
from bot.config import Settings
from bot.models import Role, RoomKey, Trigger
from prompts import arbiter_system_prompt
from tests.fakes.llm_servers import FakeLLMServer, Scripted

VERDICT = "REVISE 리뷰어가 맞습니다. `src/auth/login.py` 42번째 줄의 만료 검사를 고치세요."
T0 = datetime(2026, 11, 29, tzinfo=UTC)


def context(turns: int = 8) -> ArbitrationContext:
    """A task's window: the request and the last `turns` agent turns."""
    agent_turns = []
    for i in range(turns):
        role = Role.OWNER if i % 2 == 0 else Role.REVIEWER
        text = f"{role.value} turn {i}: " + "같은 주장을 반복합니다. `login.py:42` " * 8
        agent_turns.append(ContextTurn(role=role, author=f"{role.value}-bot",
                                       started_at=T0 + timedelta(seconds=i), text=text))
    return ArbitrationContext(
        room=RoomKey("console", "bench"), trigger=Trigger.NO_PROGRESS, rounds=6,
        stalled_rounds=2,
        human_messages=[ContextMessage(role=Role.USER, author="alice", ts=T0,
                                       text="요청: 로그인 버그 고쳐줘")],
        agent_turns=agent_turns, omitted_turns=20)


async def call_overhead(iterations: int, verbose: bool = False) -> dict[str, float]:
    """Median seconds of: bare aiohttp POST, bare SDK call, Arbitrator.arbitrate()."""
    async with FakeLLMServer(default=Scripted(text=VERDICT)) as server:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            config=None,
            arbiter_backend="openai",
            arbiter_base_url=server.openai_base_url,
            arbiter_api_key=SecretStr("bench"),
            arbiter_model="fake",
        )
        ctx = context()
        system = arbiter_system_prompt()
        prompt = render_prompt(ctx, budget=60_000)
        messages: list[Any] = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt},
        ]
        body = {"model": "fake", "messages": messages}
        url = f"{server.openai_base_url}/chat/completions"

        async def bare() -> None:
            async with session.post(url, json=body) as resp:
                await resp.json()

        async def sdk() -> None:
            await client.chat.completions.create(model="fake", messages=messages)

        async def full() -> None:
            out = await Arbitrator(settings).arbitrate(ctx)
            assert out.verdict.source.value == "llm", out.verdict.text

        async with aiohttp.ClientSession() as session:
            client = openai.AsyncOpenAI(
                api_key="bench", base_url=server.openai_base_url, max_retries=0
            )
            figures: dict[str, float] = {}
            for name, fn in (
                ("bare aiohttp POST", bare),
                ("bare openai SDK call", sdk),
                ("Arbitrator.arbitrate()", full),
            ):
                for _ in range(5):  # warm-up
                    await fn()
                times = []
                for _ in range(iterations):
                    started = time.perf_counter()
                    await fn()
                    times.append(time.perf_counter() - started)
                figures[name] = statistics.median(times)
                if verbose:
                    print(f"{name:>24}: median {figures[name] * 1e3:7.3f} ms over {iterations}")
            await client.close()
    return {"http": figures["bare aiohttp POST"], "sdk": figures["bare openai SDK call"],
            "arbitrate": figures["Arbitrator.arbitrate()"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    f = asyncio.run(call_overhead(args.iterations, verbose=True))
    print(f"ratio arbitrate/bare SDK call: {f['arbitrate'] / f['sdk']:.2f}x")
    print(f"ratio arbitrate/bare HTTP: {f['arbitrate'] / f['http']:.2f}x;"
          f" added {1e3 * (f['arbitrate'] - f['http']):.3f} ms per verdict")


if __name__ == "__main__":
    main()

"""Arbiter benchmarks (figures, not tests).

1. Detection-to-verdict overhead: `Arbitrator.arbitrate()` against an instant
   fake OpenAI-compatible server, beside the bare HTTP round trip (aiohttp,
   same payload) and the bare SDK call to the same fake. The ratio is what the
   arbiter adds on top of the network call (prompt rendering, parsing,
   guardrails, client set-up).
2. Prompt assembly for rooms of 1,000 and 100,000 messages, in the same run:
   the context is built the way an indexed store would serve it (last K turns
   walked back from the end, human messages from their own index), then
   rendered. Equal times mean the cost follows the window, not the history.

Run: `python bench/bench_arbiter.py [--iterations N]`
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import openai
from pydantic import SecretStr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.arbiter.base import ArbitrationContext, ContextMessage, ContextTurn  # noqa: E402
from bot.arbiter.context import render_prompt  # noqa: E402
from bot.arbiter.service import Arbitrator  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.models import Role, RoomKey, Trigger  # noqa: E402
from prompts import arbiter_system_prompt  # noqa: E402
from tests.fakes.llm_servers import FakeLLMServer, Scripted  # noqa: E402

VERDICT = "REVISE 리뷰어가 맞습니다. `src/auth/login.py` 42번째 줄의 만료 검사를 고치세요."
T0 = datetime(2026, 11, 29, tzinfo=UTC)

Row = tuple[Role, str, datetime, str]


def make_room(n: int) -> tuple[list[Row], list[int]]:
    """`n` stored messages and the index of human rows.

    Older tasks (a human message every 5,000 rows) precede the current task,
    which starts 300 rows from the end with two human messages, so both room
    sizes present the same window and only the history differs.
    """
    rows: list[Row] = []
    humans: list[int] = []
    current = {n - 300, n - 120}
    for i in range(n):
        if i in current or i % 5_000 == 0:
            humans.append(i)
            rows.append((Role.USER, "alice", T0 + timedelta(seconds=i), f"요청 {i}: 버그 고쳐줘"))
            continue
        role = Role.OWNER if (i // 3) % 2 == 0 else Role.REVIEWER
        text = f"{role.value} message {i}: " + "같은 주장을 반복합니다. `login.py:42` " * 8
        rows.append((role, f"{role.value}-bot", T0 + timedelta(seconds=i), text))
    return rows, humans


def context_from_store(rows: list[Row], humans: list[int], k: int = 8) -> ArbitrationContext:
    """Bounded reads: walk back to the last K agent turns; humans from their index."""
    turns: list[ContextTurn] = []
    i = len(rows) - 1
    while i >= 0 and len(turns) < k:
        role = rows[i][0]
        if not role.is_agent:
            i -= 1
            continue
        parts: list[str] = []
        while i >= 0 and rows[i][0] == role:
            parts.append(rows[i][3])
            i -= 1
        turns.append(
            ContextTurn(
                role=role,
                author=rows[i + 1][1],
                started_at=rows[i + 1][2],
                text="\n".join(reversed(parts)),
            )
        )
    turns.reverse()
    task_start = bisect.bisect_left(humans, len(rows) - 300)  # the current task's humans
    recent_humans = humans[task_start:]
    return ArbitrationContext(
        room=RoomKey("console", "bench"),
        trigger=Trigger.NO_PROGRESS,
        rounds=6,
        stalled_rounds=2,
        human_messages=[
            ContextMessage(role=Role.USER, author=rows[h][1], ts=rows[h][2], text=rows[h][3])
            for h in recent_humans
        ],
        agent_turns=turns,
        omitted_turns=max(0, len(rows) // 3 - len(turns)),
    )


def bench_render(sizes: list[int], repeat: int) -> None:
    print("== prompt assembly (bounded context build + render, budget 60,000 chars) ==")
    results = {}
    for n in sizes:
        rows, humans = make_room(n)
        times = []
        prompt = ""
        for _ in range(repeat):
            started = time.perf_counter()
            ctx = context_from_store(rows, humans)
            prompt = render_prompt(ctx, budget=60_000)
            times.append(time.perf_counter() - started)
        results[n] = statistics.median(times)
        print(f"{n:>8} messages: median {results[n] * 1e3:7.3f} ms, prompt {len(prompt):,} chars")
    if len(sizes) == 2:
        a, b = sizes
        print(f"ratio {b:,}/{a:,} messages: {results[b] / results[a]:.2f}x (1.0 = O(window))")


async def bench_overhead(iterations: int) -> None:
    print("== detection-to-verdict overhead, instant fake model ==")
    async with FakeLLMServer(default=Scripted(text=VERDICT)) as server:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            config=None,
            arbiter_backend="openai",
            arbiter_base_url=server.openai_base_url,
            arbiter_api_key=SecretStr("bench"),
            arbiter_model="fake",
        )
        rows, humans = make_room(1_000)
        ctx = context_from_store(rows, humans)
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
            figures = {}
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
                print(f"{name:>24}: median {figures[name] * 1e3:7.3f} ms over {iterations}")
            await client.close()
        full_t, bare_t = figures["Arbitrator.arbitrate()"], figures["bare aiohttp POST"]
        sdk_t = figures["bare openai SDK call"]
        print(f"ratio arbitrate/bare SDK call: {full_t / sdk_t:.2f}x")
        print(
            f"ratio arbitrate/bare HTTP: {full_t / bare_t:.2f}x; "
            f"added {1e3 * (full_t - bare_t):.3f} ms per verdict"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    bench_render([1_000, 100_000], repeat=20)
    print()
    asyncio.run(bench_overhead(args.iterations))


if __name__ == "__main__":
    main()

"""Room-scale figures, each beside a baseline from the same run.

1. Context assembly from storage (indexed queries + prompt rendering) for a
   room of 100,000 messages beside a room of 1,000: the ratio shows whether
   cost follows the window or the history.
2. Memory held by the engine after 10,000 rooms went idle, beside the same
   engine before them (tracemalloc), per room.
3. Detection-to-post: from the message that closes a deadlocking turn to the
   verdict reaching the transport, with an instant fake OpenAI-compatible
   model on 127.0.0.1, beside the bare HTTP round trip to the same fake.

    python bench/bench_rooms.py [--big 100000] [--idle 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.arbiter.context import render_prompt
from bot.clock import ManualClock
from bot.config import Settings
from bot.context_loader import load_context
from bot.detection import Deadlock
from bot.engine import Engine
from bot.models import IncomingMessage, OutgoingMessage, RoomKey, Trigger
from bot.state import RoomState
from storage.sqlite import SqliteStorage
from tests.fakes.llm_servers import FakeLLMServer, Scripted

T0 = datetime(2026, 11, 29, tzinfo=UTC)


def settings(**kw: object) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]


async def fill_room(storage: SqliteStorage, room: RoomKey, n: int) -> None:
    """n messages: a human every 50, owner and reviewer turns of 3 messages between."""
    rows = []
    turn = 0
    for i in range(n):
        if i % 50 == 0:
            role, turn_no = "user", None
        else:
            if i % 3 == 1:
                turn += 1
            role, turn_no = ("owner" if turn % 2 else "reviewer"), turn
        rows.append((room.platform, f"{room.id}-{i}", room.id, role, role,
                     f"message {i} about src/mod_{i % 97}.py:{i % 300} " + "x" * 120,
                     (T0 + timedelta(seconds=i)).isoformat(), 0, turn_no))
    await storage.db.executemany(
        "INSERT INTO messages (platform, message_id, room_id, author, role, text, ts, epoch,"
        " turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    await storage.db.commit()


async def context_figures(db: Path, big: int) -> None:
    storage = SqliteStorage(str(db))
    await storage.open()
    small_room, big_room = RoomKey("console", "c", "small"), RoomKey("console", "c", "big")
    await fill_room(storage, small_room, 1_000)
    await fill_room(storage, big_room, big)
    values = settings().room_defaults()
    deadlock = Deadlock(Trigger.NO_PROGRESS, "x", {"trigger": "no_progress"})

    async def once(room: RoomKey) -> float:
        start = time.perf_counter()
        ctx = await load_context(storage, room, RoomState(), deadlock, values, turns=8)
        render_prompt(ctx, budget=60_000)
        return time.perf_counter() - start

    timings = {}
    for room in (small_room, big_room):
        await once(room)  # warm the page cache alike
        timings[room.thread] = statistics.median([await once(room) for _ in range(30)])
    await storage.close()
    print("context assembly (storage queries + prompt), median of 30:")
    print(f"  room of {1_000:>7} messages : {timings['small'] * 1000:8.2f} ms")
    print(f"  room of {big:>7} messages : {timings['big'] * 1000:8.2f} ms")
    print(f"  ratio big / small          : {timings['big'] / timings['small']:8.2f}"
          f"  (history ratio {big / 1000:.0f}x)")


async def memory_figures(db: Path, idle: int) -> None:
    storage = SqliteStorage(str(db))
    await storage.open()
    engine = Engine(settings(), storage, ManualClock(T0), quiet_close=False)
    await engine.admin.configure_channel("console", "idle", owner=["o"], reviewer=["r"],
                                         settings={})
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    for i in range(idle):
        for j, (author, text) in enumerate((("alice", "please fix it"),
                                            ("o", "STEP_DONE fixed"), ("r", "LGTM"))):
            await engine.on_message(IncomingMessage(
                platform="console", channel="idle", thread=f"t{i}", message_id=f"{i}-{j}",
                author_id=author, text=text, ts=T0 + timedelta(seconds=i)))
    await engine.close_turns(force=True)
    await engine.drain()
    gc.collect()
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    await storage.close()
    held = after - base
    print(f"memory after {idle} idle rooms (tracemalloc):")
    print(f"  engine before the rooms : {base / 1e6:8.2f} MB traced")
    print(f"  held after the rooms    : {held / 1e6:8.2f} MB  ({held / idle:.0f} B per room;"
          f" caches are bounded LRUs)")
    print(f"  peak while ingesting    : {(peak - base) / 1e6:8.2f} MB")


class Capture:
    platform = "console"

    def __init__(self) -> None:
        self.verdict = asyncio.Event()

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        return "p"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        if message.kind.value == "verdict":
            self.verdict.set()

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        return None


async def overhead_figures(tmp: Path, rounds: int = 30) -> None:
    verdict = "REVISE src/a.py:1 의 `f()` 에 None 체크를 추가하세요. 리뷰어 지적이 맞습니다."
    async with FakeLLMServer(default=Scripted(text=verdict)) as fake:
        conf = settings(arbiter_backend="openai", arbiter_base_url=fake.openai_base_url,
                        arbiter_api_key="k", arbiter_model="m", arbiter_retries=0)
        storage = SqliteStorage(str(tmp / "o.db"))
        await storage.open()
        engine = Engine(conf, storage, ManualClock(T0), quiet_close=False)
        capture = Capture()
        engine.register_transport(capture)
        await engine.admin.configure_channel("console", "o", owner=["o"], reviewer=["r"],
                                             settings={})
        pipeline = []
        for i in range(rounds + 2):
            room = f"t{i}"

            async def say(author: str, text: str, n: int, room: str = room) -> None:
                await engine.on_message(IncomingMessage(
                    platform="console", channel="o", thread=room, message_id=f"{room}-{n}",
                    author_id=author, text=text, ts=T0))

            await say("alice", "fix", 0)
            await say("o", "BLOCKED: need credentials", 1)
            capture.verdict.clear()
            start = time.perf_counter()
            await say("r", "ok", 2)  # closes the BLOCKED turn -> deadlock -> verdict
            await asyncio.wait_for(capture.verdict.wait(), 10)
            if i >= 2:  # the first calls warm the SDK client
                pipeline.append(time.perf_counter() - start)
        await storage.close()
        bare = []
        async with aiohttp.ClientSession() as session:
            body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            for i in range(rounds + 2):
                start = time.perf_counter()
                async with session.post(fake.openai_base_url + "/chat/completions",
                                        json=body) as response:
                    await response.read()
                if i >= 2:
                    bare.append(time.perf_counter() - start)
    p, b = statistics.median(pipeline), statistics.median(bare)
    print("detection -> verdict posted, instant fake model (median of 30):")
    print(f"  bare HTTP round trip to the fake : {b * 1000:8.2f} ms")
    print(f"  detection to verdict at transport: {p * 1000:8.2f} ms")
    print(f"  overhead ratio                   : {p / b:8.1f}x  (+{(p - b) * 1000:.2f} ms:"
          " storage writes, progress post, context, SDK, validation)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--idle", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        await context_figures(Path(tmp) / "ctx.db", args.big)
        await memory_figures(Path(tmp) / "mem.db", args.idle)
        await overhead_figures(Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())

"""Ingest throughput of the whole pipeline beside raw aiosqlite inserts.

Both sides write the same rows to the same schema on the same disk, one
committed transaction per message (the pipeline's durability), in one run.
The baseline is the plainest aiosqlite code for that: `execute` + `commit`.
The pipeline also parses, classifies, detects and saves room state.

    python bench/bench_ingest.py [--messages 20000] [--rooms 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite

from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage
from storage.sqlite import SqliteStorage

T0 = datetime(2026, 11, 29, tzinfo=UTC)
WORDS = ("auth session token cache retry queue parser config handler schema index "
         "migration test fixture rollback timeout budget 세션 토큰 캐시 설정 테스트 로그").split()


def make_messages(n: int, rooms: int, seed: int = 7) -> list[IncomingMessage]:
    rng = random.Random(seed)
    out: list[IncomingMessage] = []
    authors = ["owner-bot", "reviewer-bot"]
    for i in range(n):
        room = i % rooms
        k = i // rooms
        author = "alice" if k == 0 else authors[k % 2]
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
        text = f"STEP_DONE {words} src/mod_{rng.randint(1, 50)}.py:{rng.randint(1, 300)}"
        out.append(IncomingMessage(
            platform="console", channel="bench", thread=f"t{room}", message_id=f"m{i}",
            author_id=author, text=text, ts=T0 + timedelta(seconds=i), is_bot=author != "alice",
        ))
    return out


async def pipeline(db: Path, messages: list[IncomingMessage]) -> float:
    storage = SqliteStorage(str(db))
    await storage.open()
    engine = Engine(Settings(_env_file=None), storage, ManualClock(T0), quiet_close=False)  # type: ignore[call-arg]

    class Null:
        platform = "console"

        async def post(self, room: object, message: object) -> str:
            return "x"

        async def edit(self, room: object, message_id: str, message: object) -> None:
            return None

        async def post_private(self, room: object, user_id: str, text: str) -> None:
            return None

    engine.register_transport(Null())
    await engine.admin.configure_channel(
        "console", "bench", owner=["owner-bot"], reviewer=["reviewer-bot"], settings={}
    )
    start = time.perf_counter()
    for message in messages:
        await engine.on_message(message)
    elapsed = time.perf_counter() - start
    await storage.close()
    return elapsed


async def raw(db: Path, messages: list[IncomingMessage]) -> float:
    storage = SqliteStorage(str(db))  # same schema and pragmas
    await storage.open()
    await storage.close()
    async with aiosqlite.connect(db) as conn:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        start = time.perf_counter()
        for m in messages:
            await conn.execute(
                "INSERT OR IGNORE INTO messages (platform, message_id, room_id, author, role,"
                " text, ts, epoch, turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (m.platform, m.message_id, m.room.id, m.author_id, "owner", m.text,
                 m.ts.isoformat(), 0, 1),
            )
            await conn.commit()
        return time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of each side")
    args = parser.parse_args()
    messages = make_messages(args.messages, args.rooms)
    n = len(messages)
    raws, pipes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):  # alternate, so machine noise hits both sides alike
            raws.append(await raw(Path(tmp) / f"raw{i}.db", messages))
            pipes.append(await pipeline(Path(tmp) / f"pipe{i}.db", messages))
    ratios = sorted(r / p for r, p in zip(raws, pipes, strict=True))
    raw_s, pipe_s = statistics.median(raws), statistics.median(pipes)
    print(f"messages: {n} in {args.rooms} rooms, {args.repeat} alternating runs each")
    print(f"raw aiosqlite inserts : {n / raw_s:10.0f} msg/s  (median {raw_s:.2f} s)")
    print(f"whole pipeline        : {n / pipe_s:10.0f} msg/s  (median {pipe_s:.2f} s)")
    print(f"pipeline / raw        : {statistics.median(ratios):10.2f}  median"
          f" (runs: {', '.join(f'{r:.2f}' for r in ratios)}; target >= 0.50)")


if __name__ == "__main__":
    asyncio.run(main())

"""Ingest throughput of the whole pipeline beside raw inserts with the same driver.

Both sides write the same rows (1-4 KB agent turns in Korean and English, and
the humans' task messages) to the same schema on the same disk, one committed
transaction per message, with the same PRAGMAs (checked in the run). The
baseline is the plainest aiosqlite code for that: `execute` + `commit`. The
pipeline also parses, classifies, detects, and saves room state in the same
transaction. Runs alternate (raw, pipeline, raw, ...) so machine noise hits
both sides alike; the figure is the median of the per-pair ratios.

    python -m bench.bench_ingest [--messages 10000] [--rooms 100] [--repeat 5]
    python -m bench.bench_ingest --profile     # where the pipeline's time goes
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiosqlite

from bench.agent_text import conversation
from bench.harness import Options, Row
from bench.suite import missing, row
from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, OutgoingMessage, RoomKey
from storage.sqlite import SqliteStorage

T0 = datetime(2026, 11, 29, tzinfo=UTC)
OWNER, REVIEWER, HUMAN = "owner-bot", "reviewer-bot", "alice"
DURABILITY = ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")


def make_messages(n: int, rooms: int, seed: int = 7) -> list[IncomingMessage]:
    """`n` messages over `rooms` rooms, interleaved as they would arrive."""
    rng = random.Random(seed)
    talks = [conversation(random.Random(rng.random()), "ko" if r % 5 < 3 else "en")
             for r in range(rooms)]
    author = {"user": HUMAN, "owner": OWNER, "reviewer": REVIEWER}
    out: list[IncomingMessage] = []
    for i in range(n):
        room = i % rooms if rng.random() < 0.8 else rng.randrange(rooms)
        role, text = next(talks[room])
        out.append(IncomingMessage(
            platform="console", channel="bench", thread=f"t{room}", message_id=f"m{i}",
            author_id=author[role], text=text, ts=T0 + timedelta(seconds=i),
            is_bot=role != "user",
        ))
    return out


class NullTransport:
    platform = "console"

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        return "x"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        return None

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        return None


async def _engine(db: Path) -> tuple[Engine, SqliteStorage, list[dict[str, Any]]]:
    storage = SqliteStorage(str(db))
    await storage.open()
    engine = Engine(Settings(_env_file=None, arbiter_backend="none"),  # type: ignore[call-arg]
                    storage, ManualClock(T0), room_overrides={"turn_quiet_seconds": None})
    engine.register_transport(NullTransport())
    events: list[dict[str, Any]] = []
    engine.add_listener(events.append)
    await engine.admin.configure_channel(
        "console", "bench", owner=[OWNER], reviewer=[REVIEWER], settings={})
    return engine, storage, events


async def durability(conn: aiosqlite.Connection) -> dict[str, str]:
    out = {}
    for pragma in DURABILITY:
        async with conn.execute(f"PRAGMA {pragma}") as cursor:
            out[pragma] = str((await cursor.fetchone())[0])  # type: ignore[index]
    return out


async def pipeline(db: Path, messages: list[IncomingMessage]) -> tuple[float, int, dict[str, str]]:
    """Seconds for every message through `Engine.on_message`; deadlocks fired; PRAGMAs."""
    engine, storage, events = await _engine(db)
    settings = await durability(storage.db)
    start = time.perf_counter()
    for message in messages:
        await engine.on_message(message)
    elapsed = time.perf_counter() - start
    await engine.drain()
    await storage.close()
    return elapsed, sum(1 for e in events if e["event"] == "deadlock"), settings


async def raw(db: Path, messages: list[IncomingMessage]) -> tuple[float, dict[str, str]]:
    storage = SqliteStorage(str(db))  # the same schema
    await storage.open()
    await storage.close()
    async with aiosqlite.connect(db) as conn:
        await conn.execute("PRAGMA journal_mode=WAL")  # as SqliteStorage.open
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA busy_timeout=5000")
        await conn.execute("PRAGMA foreign_keys=ON")
        settings = await durability(conn)
        roles = {HUMAN: "user", OWNER: "owner", REVIEWER: "reviewer"}
        start = time.perf_counter()
        for m in messages:
            await conn.execute(
                "INSERT INTO messages (platform, message_id, room_id, author, role,"
                " text, ts, epoch, turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (m.platform, m.message_id, m.room.id, m.author_id, roles[m.author_id], m.text,
                 m.ts.isoformat(), 0, 1),
            )
            await conn.commit()
        return time.perf_counter() - start, settings


async def measure(n: int, rooms: int, repeat: int, verbose: bool = False) -> dict[str, Any]:
    messages = make_messages(n, rooms)
    raws: list[float] = []
    pipes: list[float] = []
    deadlocks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):  # alternate, so machine noise hits both sides alike
            r, raw_pragmas = await raw(Path(tmp) / f"raw{i}.db", messages)
            p, deadlocks, pipe_pragmas = await pipeline(Path(tmp) / f"pipe{i}.db", messages)
            if raw_pragmas != pipe_pragmas:
                raise RuntimeError(f"durability differs: {raw_pragmas} vs {pipe_pragmas}")
            raws.append(r)
            pipes.append(p)
            if verbose:
                print(f"  run {i + 1}: raw {r:.2f} s, pipeline {p:.2f} s, ratio {r / p:.3f}")
    ratios = sorted(r / p for r, p in zip(raws, pipes, strict=True))
    size = statistics.mean(len(m.text.encode()) for m in messages)
    return {"n": n, "rooms": rooms, "raw": statistics.median(raws),
            "pipe": statistics.median(pipes), "ratios": ratios,
            "ratio": statistics.median(ratios), "deadlocks": deadlocks, "bytes": size,
            "pragmas": raw_pragmas}


async def run(options: Options) -> list[Row]:
    n, rooms = (3_000, 60) if options.quick else (10_000, 100)
    m = await measure(n, rooms, 5, options.verbose)
    note = (f"{m['n']} messages in {m['rooms']} rooms, mean {m['bytes']:.0f} B of UTF-8;"
            f" median of 5 alternating runs (ratios {', '.join(f'{r:.2f}' for r in m['ratios'])});"
            f" {m['deadlocks']} deadlocks fired per run; PRAGMAs {m['pragmas']}")
    return [
        row("ingest_sqlite", m["n"] / m["pipe"], baseline=m["n"] / m["raw"], ratio=m["ratio"],
            note=note),
        missing("ingest_postgres", "no PostgreSQL backend exists yet (storage/ has SQLite only)"),
    ]


async def profile(n: int, rooms: int, top: int) -> str:
    """cProfile of the pipeline side (the event loop's thread; SQLite runs in
    aiosqlite's thread, so its time shows up as the loop waiting)."""
    messages = make_messages(n, rooms)
    with tempfile.TemporaryDirectory() as tmp:
        engine, storage, _ = await _engine(Path(tmp) / "p.db")
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        for message in messages:
            await engine.on_message(message)
        profiler.disable()
        wall = time.perf_counter() - start
        await engine.drain()
        await storage.close()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    print(f"{n} messages in {wall:.2f} s ({n / wall:.0f} msg/s) under the profiler", file=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5, help="alternating runs of each side")
    parser.add_argument("--profile", action="store_true", help="profile the pipeline instead")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    if args.profile:
        print(asyncio.run(profile(args.messages, args.rooms, args.top)))
        return
    m = asyncio.run(measure(args.messages, args.rooms, args.repeat, verbose=True))
    print(f"messages: {m['n']} in {m['rooms']} rooms, mean {m['bytes']:.0f} B,"
          f" {args.repeat} alternating runs each; {m['deadlocks']} deadlocks per run")
    print(f"raw aiosqlite inserts : {m['n'] / m['raw']:10.0f} msg/s  (median {m['raw']:.2f} s)")
    print(f"whole pipeline        : {m['n'] / m['pipe']:10.0f} msg/s  (median {m['pipe']:.2f} s)")
    print(f"pipeline / raw        : {m['ratio']:10.2f}  median of per-pair ratios"
          f" ({', '.join(f'{r:.2f}' for r in m['ratios'])}; target >= 0.60)")


if __name__ == "__main__":
    main()

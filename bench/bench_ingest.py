"""Ingest throughput of the whole pipeline beside raw inserts with the same driver.

Both sides write the same rows (1-4 KB agent turns in Korean and English, and
the humans' task messages) to the same schema on the same disk, one committed
transaction per message, with the same PRAGMAs (checked in the run). The
baseline is the plainest aiosqlite code for that: `execute` + `commit`. The
pipeline also parses, classifies, detects, and saves room state in the same
transaction. Runs alternate (raw, pipeline, raw, ...) so machine noise hits
both sides alike; the figure is the median of the per-pair ratios. Each
pipeline run starts with the detector's memo caches empty, as a process that
never read these texts would (the runs repeat the same messages).

PostgreSQL (`ingest_postgres`): the same on a throw-away cluster the tests'
own helper starts (`tests/postgres_cluster.py`: Debian's server binaries, a
temporary directory, fsync off), the baseline asyncpg's `execute` of the same
INSERT on one connection (one transaction per row), the pipeline
`PostgresStorage` (a pool, a transaction per unit of work); each run on a
fresh database. Then the aggregate rate of 1, 2 and 3 engine processes on one
database, the messages dealt out round-robin as a load balancer would (so
one room's messages reach several instances and meet at its lock).

    python -m bench.bench_ingest [--messages 10000] [--rooms 100] [--repeat 5]
    python -m bench.bench_ingest --postgres [--instances 3]
    python -m bench.bench_ingest --profile     # where the pipeline's time goes
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import multiprocessing
import pstats
import random
import statistics
import sys
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
from storage.base import Storage
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


async def _engine(db: Path | str) -> tuple[Engine, Storage, list[dict[str, Any]]]:
    """An engine on a SQLite file, or on a PostgreSQL URL."""
    storage: Storage
    if isinstance(db, str):
        from storage.postgres import PostgresStorage

        storage = PostgresStorage(db)
    else:
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


def cold_caches() -> None:
    """Empty the detector's memo caches (`functools.lru_cache`), as in a process
    that never read these messages: every run reads the same texts, and a
    second run in one process would find their readings cached."""
    for name, module in list(sys.modules.items()):
        if name.startswith("bot.") and module is not None:
            for value in vars(module).values():
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()


async def pipeline(db: Path, messages: list[IncomingMessage]) -> tuple[float, int, dict[str, str]]:
    """Seconds for every message through `Engine.on_message`; deadlocks fired; PRAGMAs."""
    cold_caches()
    engine, storage, events = await _engine(db)
    assert isinstance(storage, SqliteStorage)
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


# -- PostgreSQL ------------------------------------------------------------------

INSERT_PG = ("INSERT INTO messages (platform, message_id, room_id, author, role, text, ts,"
             " epoch, turn_no) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
ROLES = {HUMAN: "user", OWNER: "owner", REVIEWER: "reviewer"}


async def raw_postgres(url: str, messages: list[IncomingMessage]) -> float:
    """Seconds for the same rows through asyncpg: one connection, one INSERT
    (its own transaction) per message, into the schema the storage creates."""
    import asyncpg

    from storage.postgres import PostgresStorage

    storage = PostgresStorage(url)
    await storage.open()  # the same schema
    await storage.close()
    conn = await asyncpg.connect(url)
    try:
        start = time.perf_counter()
        for m in messages:
            await conn.execute(INSERT_PG, m.platform, m.message_id, m.room.id, m.author_id,
                               ROLES[m.author_id], m.text, m.ts.isoformat(), 0, 1)
        return time.perf_counter() - start
    finally:
        await conn.close()


async def pipeline_postgres(url: str, messages: list[IncomingMessage]) -> tuple[float, int]:
    cold_caches()
    engine, storage, events = await _engine(url)
    try:
        start = time.perf_counter()
        for message in messages:
            await engine.on_message(message)
        elapsed = time.perf_counter() - start
        await engine.drain()
    finally:
        await storage.close()
    return elapsed, sum(1 for e in events if e["event"] == "deadlock")


def _instance(url: str, n: int, rooms: int, k: int, count: int, ready: Any, go: Any,
              out: Any) -> None:
    """One engine process: every `count`-th message from the k-th, after the start signal."""

    async def work() -> None:
        messages = make_messages(n, rooms)[k::count]
        engine, storage, _ = await _engine(url)
        try:
            ready.set()
            await asyncio.to_thread(go.wait)
            start = time.time()
            for message in messages:
                await engine.on_message(message)
            await engine.drain()
            out.put((k, start, time.time(), len(messages)))
        finally:
            await storage.close()

    asyncio.run(work())


def instances_rate(url: str, n: int, rooms: int, count: int) -> float:
    """Aggregate msg/s of `count` engine processes on one database, messages
    dealt round-robin; from the first start to the last finish."""
    ctx = multiprocessing.get_context("spawn")
    go = ctx.Event()
    out = ctx.Queue()
    readies = [ctx.Event() for _ in range(count)]
    # Schema first, once: instances that migrate together are tested elsewhere.
    procs = [ctx.Process(target=_instance, args=(url, n, rooms, k, count, readies[k], go, out))
             for k in range(count)]
    for proc in procs:
        proc.start()
    for ready in readies:
        if not ready.wait(120):
            raise RuntimeError("an engine process did not start")
    go.set()
    results = [out.get(timeout=1800) for _ in procs]
    for proc in procs:
        proc.join(60)
    total = sum(r[3] for r in results)
    return float(total / (max(r[2] for r in results) - min(r[1] for r in results)))


async def measure_postgres(n: int, rooms: int, repeat: int, instances: int,
                           verbose: bool = False) -> dict[str, Any] | str:
    """The PostgreSQL figures, or why there are none."""
    from tests.postgres_cluster import PostgresServer, start_cluster

    cluster, why = await asyncio.to_thread(start_cluster)
    if cluster is None:
        return f"no PostgreSQL server to measure on: {why}"
    server = PostgresServer(cluster.url)
    messages = make_messages(n, rooms)
    raws: list[float] = []
    pipes: list[float] = []
    deadlocks = 0
    rates: dict[int, float] = {}
    try:
        for i in range(repeat):  # alternate, each side on a fresh database
            name = await asyncio.to_thread(server.create_database)
            r = await raw_postgres(server.database_url(name), messages)
            await asyncio.to_thread(server.drop_database, name)
            name = await asyncio.to_thread(server.create_database)
            p, deadlocks = await pipeline_postgres(server.database_url(name), messages)
            await asyncio.to_thread(server.drop_database, name)
            raws.append(r)
            pipes.append(p)
            if verbose:
                print(f"  postgres run {i + 1}: raw {r:.2f} s, pipeline {p:.2f} s,"
                      f" ratio {r / p:.3f}")
        for count in range(1, instances + 1):
            name = await asyncio.to_thread(server.create_database)
            url = server.database_url(name)
            from storage.postgres import PostgresStorage

            schema = PostgresStorage(url)
            await schema.open()
            await schema.close()
            rates[count] = await asyncio.to_thread(instances_rate, url, n, rooms, count)
            await asyncio.to_thread(server.drop_database, name)
            if verbose:
                print(f"  {count} instance(s): {rates[count]:.0f} msg/s together")
    finally:
        await asyncio.to_thread(cluster.stop)
    ratios = sorted(r / p for r, p in zip(raws, pipes, strict=True))
    return {"n": n, "rooms": rooms, "raw": statistics.median(raws),
            "pipe": statistics.median(pipes), "ratios": ratios,
            "ratio": statistics.median(ratios), "deadlocks": deadlocks, "rates": rates}


async def run(options: Options) -> list[Row]:
    n, rooms = (3_000, 60) if options.quick else (10_000, 100)
    m = await measure(n, rooms, 5, options.verbose)
    note = (f"{m['n']} messages in {m['rooms']} rooms, mean {m['bytes']:.0f} B of UTF-8;"
            f" median of 5 alternating runs (ratios {', '.join(f'{r:.2f}' for r in m['ratios'])});"
            f" {m['deadlocks']} deadlocks fired per run; PRAGMAs {m['pragmas']}")
    rows = [
        row("ingest_sqlite", m["n"] / m["pipe"], baseline=m["n"] / m["raw"], ratio=m["ratio"],
            note=note),
    ]
    pg = await measure_postgres(n, rooms, 3 if options.quick else 5, 3, options.verbose)
    if isinstance(pg, str):
        return [*rows, *(missing(name, pg) for name in (
            "ingest_postgres", "ingest_postgres_2_instances", "ingest_postgres_3_instances"))]
    rates = pg["rates"]
    note = (f"{pg['n']} messages in {pg['rooms']} rooms; asyncpg both sides, a throw-away"
            f" PostgreSQL cluster (fsync and synchronous_commit off for both); median of"
            f" {len(pg['ratios'])} alternating runs (ratios"
            f" {', '.join(f'{r:.2f}' for r in pg['ratios'])}); {pg['deadlocks']} deadlocks"
            f" fired per run. Engine processes on one database, messages dealt round-robin:"
            f" {'; '.join(f'{c}: {v:.0f} msg/s' for c, v in rates.items())} together")
    rows.append(row("ingest_postgres", pg["n"] / pg["pipe"], baseline=pg["n"] / pg["raw"],
                    ratio=pg["ratio"], note=note))
    for count, rate in rates.items():
        if count > 1:
            rows.append(row(f"ingest_postgres_{count}_instances", rate, baseline=rates[1],
                            note=f"aggregate msg/s of {count} engine processes beside 1"))
    return rows


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
    parser.add_argument("--postgres", action="store_true",
                        help="PostgreSQL: pipeline vs asyncpg inserts, then 1..N instances")
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    if args.profile:
        print(asyncio.run(profile(args.messages, args.rooms, args.top)))
        return
    if args.postgres:
        pg = asyncio.run(measure_postgres(args.messages, args.rooms, args.repeat,
                                          args.instances, verbose=True))
        if isinstance(pg, str):
            print(pg)
            return
        print(f"asyncpg inserts : {pg['n'] / pg['raw']:10.0f} msg/s  (median {pg['raw']:.2f} s)")
        print(f"whole pipeline  : {pg['n'] / pg['pipe']:10.0f} msg/s  (median {pg['pipe']:.2f} s)")
        print(f"pipeline / raw  : {pg['ratio']:10.2f}  median of per-pair ratios")
        for count, rate in pg["rates"].items():
            print(f"{count} instance(s)  : {rate:10.0f} msg/s together")
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

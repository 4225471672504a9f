"""Room-scale figures, each beside a baseline from the same run.

1. Context assembly (`context_100k_vs_1k`): the arbiter's context loaded from
   storage and rendered into the prompt, as an arbitration does it, for a room
   of 100,000 messages beside a room of 1,000. Both rooms end with the same
   current task (the window); only the history before it differs, so the ratio
   shows whether the cost follows the window or the history.
2. Cost per arbitration (`cost_prompt_chars`, `cost_prompt_budget`): the
   characters the real Arbitrator sends (system + user prompt) and estimated
   tokens, for rooms of 10, 1,000 and 100,000 messages.
3. Memory (`memory_10k_rooms`): RSS of a fresh process after traffic in 10,000
   rooms, beside the same process before that traffic.
4. Detection to verdict (`arbitration_overhead`): from the message that closes
   a deadlocking turn to the verdict at the transport, with an instant fake
   OpenAI-compatible model on 127.0.0.1, beside the bare HTTP round trip to it.

    python -m bench.bench_rooms [--big 100000] [--idle 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

from bench.agent_text import Writer, conversation
from bench.harness import ROOT, Options, Row
from bench.suite import row
from bot.arbiter import guardrails
from bot.arbiter.base import ArbitrationContext
from bot.arbiter.context import render_prompt
from bot.arbiter.language import expected_language
from bot.arbiter.service import Arbitrator
from bot.clock import ManualClock
from bot.config import Settings
from bot.context_loader import load_context
from bot.detection import Deadlock
from bot.engine import Engine
from bot.models import IncomingMessage, OutgoingMessage, RoomKey, Trigger
from bot.state import RoomState
from prompts import arbiter_system_prompt
from storage.sqlite import SqliteStorage
from tests.fakes.llm_servers import FakeLLMServer, Scripted

T0 = datetime(2026, 11, 29, tzinfo=UTC)
CURRENT_TASK = 150  # messages of the room's current task (the window's source)
OWNER, REVIEWER, HUMAN = "owner-bot", "reviewer-bot", "alice"


def settings(**kw: Any) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]


# -- rooms in storage ----------------------------------------------------------
def _current_task(seed: int) -> list[tuple[str, str]]:
    """The same current task for every room: a request, ~25 human notes, ~50 agent turns."""
    rng = random.Random(seed)
    writer = Writer(rng, "ko")
    out = [("user", writer.task())]
    role = "owner"
    while len(out) < CURRENT_TASK:
        if rng.random() < 0.17:
            out.append(("user", f"참고: {writer.task()}"))
            continue
        out.append((role, writer.turn(role, status=None if role == "owner" else "")))
        if rng.random() < 0.2:  # a turn split over two messages
            out.append((role, writer.turn(role, size=1024, status="")))
        role = "reviewer" if role == "owner" else "owner"
    return out[:CURRENT_TASK]


def _history(n: int, seed: int) -> list[tuple[str, str]]:
    """`n` earlier messages: finished tasks (texts drawn from a pool, to be quick)."""
    if n <= 0:
        return []
    talk = conversation(random.Random(seed), "ko")
    pool = [next(talk) for _ in range(min(n, 600))]
    return [pool[i % len(pool)] for i in range(n)]


@dataclass
class StoredRoom:
    room: RoomKey
    state: RoomState
    messages: int


async def fill_room(storage: SqliteStorage, room: RoomKey, n: int, seed: int = 11) -> StoredRoom:
    """A room of `n` messages whose last `CURRENT_TASK` (or all) are the current task."""
    task = _current_task(seed)[: n if n < CURRENT_TASK else CURRENT_TASK]
    script = _history(n - len(task), seed + 1) + task
    rows = []
    turn, last_role = 0, ""
    for i, (role, text) in enumerate(script):
        turn_no = None
        if role != "user":
            if role != last_role:
                turn += 1
            turn_no = turn
        last_role = role
        author = {"user": HUMAN, "owner": OWNER, "reviewer": REVIEWER}[role]
        rows.append((room.platform, f"{room.id}-{i}", room.id, author, role, text,
                     (T0 + timedelta(seconds=i)).isoformat(), 0, turn_no))
    await storage.db.executemany(
        "INSERT INTO messages (platform, message_id, room_id, author, role, text, ts, epoch,"
        " turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    await storage.db.commit()
    start = n - len(task)
    found = await storage._one("SELECT seq FROM messages WHERE room_id = ? AND message_id = ?",
                               (room.id, f"{room.id}-{start}"))
    assert found is not None
    state = RoomState(task_active=True, task_started_at=T0 + timedelta(seconds=start),
                      task_start_seq=int(found["seq"]), rounds=3, stalled_rounds=2)
    return StoredRoom(room, state, n)


SYSTEM = arbiter_system_prompt()


async def assemble(storage: SqliteStorage, stored: StoredRoom, conf: Settings
                   ) -> tuple[ArbitrationContext, str]:
    """What an arbitration does before calling the model: load, then render."""
    deadlock = Deadlock(Trigger.NO_PROGRESS, "x", {"trigger": "no_progress"})
    values = conf.room_defaults()
    ctx = await load_context(storage, stored.room, stored.state, deadlock, values,
                             turns=conf.arbiter_context_turns)
    prompt = render_prompt(
        ctx, budget=max(1_000, conf.arbiter_max_prompt_chars - len(SYSTEM)),
        language=expected_language(ctx), context_turns=conf.arbiter_context_turns,
        notes=guardrails.hints(ctx))
    return ctx, prompt


async def context_figures(db: Path, big: int, repeat: int) -> dict[str, Any]:
    storage = SqliteStorage(str(db))
    await storage.open()
    conf = settings()
    small = await fill_room(storage, RoomKey("console", "c", "small"), 1_000)
    large = await fill_room(storage, RoomKey("console", "c", "big"), big)
    prompts: dict[str, str] = {}

    async def timed(rooms: tuple[StoredRoom, StoredRoom]) -> tuple[float, float]:
        timings: dict[str, list[float]] = {"small": [], "big": []}
        for stored in rooms:  # warm the page cache alike
            for _ in range(3):
                await assemble(storage, stored, conf)
        for _ in range(repeat):  # alternate, so noise hits both alike
            for stored in rooms:
                start = time.perf_counter()
                _, prompt = await assemble(storage, stored, conf)
                timings[str(stored.room.thread)].append(time.perf_counter() - start)
                prompts[str(stored.room.thread)] = prompt
        return statistics.median(timings["small"]), statistics.median(timings["big"])

    one_task = tuple(StoredRoom(s.room, s.state.model_copy(update={"task_start_seq": 0}),
                                s.messages) for s in (small, large))
    worst = await timed(one_task)  # type: ignore[arg-type]
    small_s, big_s = await timed((small, large))
    await storage.close()
    return {"small": small_s, "big": big_s, "worst": worst[1] / worst[0],
            "chars": {k: len(v) for k, v in prompts.items()}}


async def run_context(options: Options) -> list[Row]:
    big, repeat = (100_000, 30) if options.quick else (100_000, 100)
    with tempfile.TemporaryDirectory() as tmp:
        m = await context_figures(Path(tmp) / "ctx.db", big, repeat)
    note = (f"load_context + render as an arbitration does, median of {repeat} alternating;"
            f" both rooms end in the same {CURRENT_TASK}-message task of 1-4 KB turns;"
            f" prompt {m['chars']['small']:,} / {m['chars']['big']:,} chars; were the whole"
            f" history one task (every human and turn in it): ratio {m['worst']:.2f}")
    return [row("context_100k_vs_1k", m["big"] * 1e3, baseline=m["small"] * 1e3, note=note)]


# -- cost per arbitration --------------------------------------------------------
def estimated_tokens(text: str) -> float:
    """Heuristic: Hangul characters / 3 + all other characters / 4."""
    hangul = sum(1 for ch in text if "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff"
                 or "\u3130" <= ch <= "\u318f")
    return hangul / 3 + (len(text) - hangul) / 4


class Capture:
    """Stands in for the model: records what it is sent, answers a valid verdict."""

    name = "capture"
    model: str | None = "capture-1"

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    async def complete(self, system: str, prompt: str) -> str:
        self.sent.append((system, prompt))
        return "REVISE 리뷰어 의견대로 `src/auth/session.py`를 수정하세요."


async def fill_huge(storage: SqliteStorage, room: RoomKey) -> StoredRoom:
    """A request and 12 agent messages at the stored maximum (40,000 characters)."""
    writer = Writer(random.Random(3), "ko")
    rows: list[tuple[Any, ...]] = [(room.platform, f"{room.id}-0", room.id, HUMAN, "user",
                                    writer.task(), T0.isoformat(), 0, None)]
    for i in range(1, 13):
        role = "owner" if i % 2 else "reviewer"
        text = ""
        while len(text) < 40_000:
            text += writer.turn(role, status="") + "\n"
        rows.append((room.platform, f"{room.id}-{i}", room.id, role, role, text[:40_000],
                     (T0 + timedelta(seconds=i)).isoformat(), 0, i))
    await storage.db.executemany(
        "INSERT INTO messages (platform, message_id, room_id, author, role, text, ts, epoch,"
        " turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    await storage.db.commit()
    first = await storage._one("SELECT seq FROM messages WHERE room_id = ? ORDER BY seq LIMIT 1",
                               (room.id,))
    assert first is not None
    return StoredRoom(room, RoomState(task_active=True, task_started_at=T0,
                                      task_start_seq=int(first["seq"])), len(rows))


async def cost_figures(db: Path, sizes: list[int]) -> dict[int | str, tuple[int, float]]:
    storage = SqliteStorage(str(db))
    await storage.open()
    conf = settings(arbiter_backend="command")
    out: dict[int | str, tuple[int, float]] = {}
    rooms: list[tuple[int | str, StoredRoom]] = [
        (n, await fill_room(storage, RoomKey("console", "c", f"r{n}"), n)) for n in sizes]
    rooms.append(("huge", await fill_huge(storage, RoomKey("console", "c", "huge"))))
    for key, stored in rooms:
        capture = Capture()
        ctx, _ = await assemble(storage, stored, conf)
        await Arbitrator(conf, backend=capture).arbitrate(ctx)
        system, prompt = capture.sent[-1]
        out[key] = (len(system) + len(prompt), estimated_tokens(system + prompt))
    await storage.close()
    return out


async def run_cost(options: Options) -> list[Row]:
    sizes = [10, 1_000, 100_000]
    with tempfile.TemporaryDirectory() as tmp:
        m = await cost_figures(Path(tmp) / "cost.db", sizes)
    budget = settings().arbiter_max_prompt_chars
    detail = "; ".join(f"{n:,} msgs: {m[n][0]:,} chars ~{m[n][1]:,.0f} tokens" for n in sizes)
    tokens = "tokens = Hangul chars/3 + other chars/4"
    return [
        row("cost_prompt_chars", m[100_000][0], baseline=m[1_000][0],
            note=f"system + user prompt as sent, 100k vs 1k room; {detail} ({tokens})"),
        row("cost_prompt_budget", max(c for c, _ in m.values()),
            note=(f"largest prompt of those rooms and of a room of 12 agent messages of 40,000"
                  f" chars ({m['huge'][0]:,} chars ~{m['huge'][1]:,.0f} tokens);"
                  f" TRIBUNAL_ARBITER_MAX_PROMPT_CHARS={budget:,}")),
    ]


# -- memory ------------------------------------------------------------------------
def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB, from /proc."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


class NullTransport:
    platform = "console"

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        return "x"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        return None

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        return None


async def memory_child(rooms: int) -> dict[str, float]:
    """Runs in a fresh process: RSS before and after traffic in `rooms` rooms."""
    with tempfile.TemporaryDirectory() as tmp:
        storage = SqliteStorage(str(Path(tmp) / "mem.db"))
        await storage.open()
        engine = Engine(settings(), storage, ManualClock(T0),
                        room_overrides={"turn_quiet_seconds": None})
        engine.register_transport(NullTransport())
        await engine.admin.configure_channel("console", "mem", owner=[OWNER],
                                             reviewer=[REVIEWER], settings={})
        rng = random.Random(5)
        pools = {lang: [Writer(rng, lang).turn(role) for role in ("owner", "reviewer")
                        for _ in range(100)] for lang in ("ko", "en")}
        gc.collect()
        before, _ = rss_mb()
        start = time.perf_counter()
        for i in range(rooms):
            pool = pools["ko" if i % 5 < 3 else "en"]
            script = [(HUMAN, Writer(rng, "ko").task()), (OWNER, pool[rng.randrange(100)]),
                      (REVIEWER, pool[100 + rng.randrange(100)]), (OWNER, pool[rng.randrange(100)])]
            for j, (author, text) in enumerate(script):
                await engine.on_message(IncomingMessage(
                    platform="console", channel="mem", thread=f"t{i}", message_id=f"{i}-{j}",
                    author_id=author, text=text, ts=T0 + timedelta(seconds=i),
                    is_bot=author != HUMAN))
        await engine.close_turns(force=True)
        await engine.drain()
        elapsed = time.perf_counter() - start
        gc.collect()
        after, peak = rss_mb()
        await storage.close()
    return {"before": before, "after": after, "peak": peak, "seconds": elapsed,
            "messages": rooms * 4}


async def run_memory(options: Options) -> list[Row]:
    rooms = 10_000
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.bench_rooms", "--memory-child", str(rooms),
        cwd=ROOT, env=env, stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    m = json.loads(out.decode().strip().splitlines()[-1])
    note = (f"fresh process; {m['messages']:,} messages (1-4 KB agent turns) in {rooms:,} rooms;"
            f" {m['after'] - m['before']:.1f} MB above the same process before the traffic"
            f" (the bot imported, storage open, engine built); peak {m['peak']:.1f} MB;"
            f" arbiter backend none (an SDK backend loads its SDK on first use)")
    return [row("memory_10k_rooms", m["after"], baseline=m["before"], note=note)]


# -- detection to verdict ------------------------------------------------------------
class VerdictWatch(NullTransport):
    def __init__(self) -> None:
        self.verdict = asyncio.Event()

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        if message.kind.value == "verdict":
            self.verdict.set()


async def overhead_figures(tmp: Path, rounds: int) -> tuple[float, float]:
    verdict = "REVISE src/a.py:1 의 `f()` 에 None 체크를 추가하세요. 리뷰어 지적이 맞습니다."
    async with FakeLLMServer(default=Scripted(text=verdict)) as fake:
        conf = settings(arbiter_backend="openai", arbiter_base_url=fake.openai_base_url,
                        arbiter_api_key="k", arbiter_model="m", arbiter_retries=0)
        storage = SqliteStorage(str(tmp / "o.db"))
        await storage.open()
        engine = Engine(conf, storage, ManualClock(T0), room_overrides={"turn_quiet_seconds": None})
        watch = VerdictWatch()
        engine.register_transport(watch)
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
            watch.verdict.clear()
            start = time.perf_counter()
            await say("r", "ok", 2)  # closes the BLOCKED turn -> deadlock -> verdict
            await asyncio.wait_for(watch.verdict.wait(), 10)
            if i >= 2:  # the first calls warm the SDK client
                pipeline.append(time.perf_counter() - start)
        await engine.drain()
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
    return statistics.median(pipeline), statistics.median(bare)


async def run_overhead(options: Options) -> list[Row]:
    from bench.bench_arbiter import call_overhead

    rounds = 30 if options.quick else 100
    with tempfile.TemporaryDirectory() as tmp:
        p, b = await overhead_figures(Path(tmp), rounds)
    call = await call_overhead(50 if options.quick else 200)
    return [
        row("arbitration_overhead", p * 1e3, baseline=b * 1e3,
            note=(f"median of {rounds}: message closing a BLOCKED turn -> verdict edit at the"
                  " transport (storage writes, progress post, context, SDK call, validation)"
                  " vs the bare HTTP round trip to the same instant fake model")),
        row("arbiter_call_overhead", call["arbitrate"] * 1e3, baseline=call["sdk"] * 1e3,
            note=(f"Arbitrator.arbitrate() vs the bare openai SDK call to the same fake"
                  f" (bare aiohttp POST {call['http'] * 1e3:.2f} ms)")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--idle", type=int, default=10_000)
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        print(json.dumps(asyncio.run(memory_child(args.memory_child))))
        return
    from bench.harness import table

    async def everything() -> list[Row]:
        options = Options()
        return [*await run_context(options), *await run_cost(options),
                *await run_memory(options), *await run_overhead(options)]

    rows = asyncio.run(everything())
    print(table(rows))
    for r in rows:
        print(f"  {r.name}: {r.note}")


if __name__ == "__main__":
    main()

"""Start-up with a large database: time to ready, then time to finish resumed work.

The database holds 10,000 rooms over 100 channels (five 1-4 KB messages and a
saved state each), 100 escalations waiting for a human and 50 arbitrations a
crash left unfinished. `tribunal run` (Slack in HTTP mode, against the fake
Slack Web API on 127.0.0.1, arbiter backend `none`) starts as a new process;

* ready (`startup_10k_rooms`): from spawning the process to its HTTP listener
  answering `/healthz`, which it opens after the Slack adapter connected
  (auth.test) and the engine started; beside a process that opens the same
  database with the same PRAGMAs and reads those rows (rooms, pending
  escalations, unfinished arbitrations) directly;
* resumed work (`startup_resume`): from ready until every unfinished
  arbitration is finished and the outbox is empty (progress posts and verdicts
  delivered, paced per channel as in production);
* catch-up (`startup_catchup`): messages posted while the bot was down.

Runs alternate (bot, baseline, ...) on fresh copies of the database.

    python -m bench.bench_startup [--rooms 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

from bench.agent_text import Writer
from bench.harness import ROOT, Options, Row
from bench.suite import missing, row
from bot.ledger import Finding
from bot.models import MessageKind, Option, OutgoingMessage
from bot.state import RoomState
from storage.base import EscalationRow
from storage.sqlite import SqliteStorage
from tests.fakes.slack_api import BOT_TOKEN, FakeSlackAPI

CHANNELS = 100
ESCALATIONS = 100
UNFINISHED = 50
OWNER, REVIEWER, HUMAN = "BOWNER", "UREVIEWER", "UALICE"
SIGNING_SECRET = "bench-signing-secret"
RESUME_LIMIT = 180.0  # seconds; resumed work still going on then is reported as such

BASELINE = """
import asyncio, sys, aiosqlite
async def main():
    async with aiosqlite.connect(sys.argv[1]) as db:
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=5000",
                       "foreign_keys=ON"):
            await db.execute("PRAGMA " + pragma)
        for sql in ("SELECT * FROM rooms",
                    "SELECT * FROM escalations WHERE status = 'pending'",
                    "SELECT * FROM arbitrations WHERE status IN ('pending', 'running')"):
            async with db.execute(sql) as cursor:
                await cursor.fetchall()
    print("ready", flush=True)
asyncio.run(main())
"""


async def build(db: Path, rooms: int) -> None:
    """The database a bot that ran for a while leaves behind."""
    now = datetime.now(UTC)
    rng = random.Random(3)
    pools = {lang: {role: [Writer(rng, lang).turn(role) for _ in range(50)]
                    for role in ("owner", "reviewer")} for lang in ("ko", "en")}
    storage = SqliteStorage(str(db))
    await storage.open()
    messages = []
    async with storage.transaction() as tx:
        for c in range(CHANNELS):
            channel = f"C0START{c:02d}"
            await tx.set_bindings("slack", channel, "owner", [OWNER])
            await tx.set_bindings("slack", channel, "reviewer", [REVIEWER])
        for i in range(rooms):
            channel, thread = f"C0START{i % CHANNELS:02d}", f"1764400000.{i:06d}"
            room_id = f"slack:{channel}:{thread}"
            lang = "ko" if i % 5 < 3 else "en"
            at = now - timedelta(hours=1, seconds=rooms - i)
            script = [(HUMAN, "user", Writer(rng, lang).task())]
            for role in ("owner", "reviewer", "owner", "reviewer"):
                script.append((OWNER if role == "owner" else REVIEWER, role,
                               rng.choice(pools[lang][role])))
            for j, (author, role, text) in enumerate(script):
                messages.append(("slack", f"{channel}:{thread}.{j}", room_id, author, role, text,
                                 (at + timedelta(seconds=j)).isoformat(), 1,
                                 None if role == "user" else j))
            state = RoomState(epoch=1, task_active=True, task_started_at=at, task_start_seq=0,
                              humans=[HUMAN], requester=HUMAN, turn_seq=4, rounds=2,
                              stalled_rounds=1, task_rounds=2,
                              findings=[Finding(label="F1", author=REVIEWER,
                                                summary=script[2][2][:120],
                                                history=["R1: raised", "R2: repeated"])])
            if i < ESCALATIONS:  # a verdict asked the human; the room waits
                arbitration = await tx.create_arbitration(room_id, 1, "no_progress", {}, at)
                options = [Option(n=1, label="owner"), Option(n=2, label="reviewer")]
                text = "ESCALATE 사용자 결정이 필요합니다."
                await tx.update_arbitration(
                    arbitration, status="done", verdict="ESCALATE", source="none",
                    verdict_text=text, options=[o.model_dump() for o in options],
                    finished_at=at)
                outbox = await tx.enqueue(room_id, "verdict", OutgoingMessage(
                    kind=MessageKind.VERDICT, text=text, escalation_id=arbitration,
                    options=options).model_dump(mode="json"), at)
                await tx.mark_outbox(outbox, "sent", platform_message_id=f"{channel}:{thread}9",
                                     at=at)
                await tx.create_escalation(EscalationRow(
                    id=arbitration, room_id=room_id, options=[o.model_dump() for o in options],
                    allowed=[HUMAN], requester=HUMAN, status="pending", verdict_outbox_id=outbox,
                    created_at=at))
                state.awaiting_escalation = state.last_escalation = arbitration
            elif i < ESCALATIONS + UNFINISHED:  # detected; the process stopped before the model
                await tx.create_arbitration(room_id, 1, "no_progress",
                                            {"trigger": "no_progress", "rounds": 2}, at)
            await tx.save_room_state(room_id, "slack", channel, thread, state.model_dump_json(),
                                     at)
    await storage.db.executemany(
        "INSERT INTO messages (platform, message_id, room_id, author, role, text, ts, epoch,"
        " turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", messages)
    await storage.db.commit()
    await storage.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))
           and k.lower() not in ("http_proxy", "https_proxy")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


async def bot_once(db: Path, api: FakeSlackAPI, tmp: Path) -> tuple[float, float | None]:
    """Seconds from spawn to ready, and from ready until the resumed work is done."""
    port = free_port()
    env = child_env({
        "TRIBUNAL_DATABASE": str(db), "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET, "TRIBUNAL_SLACK_MODE": "http",
        "TRIBUNAL_SLACK_API_URL": api.url, "TRIBUNAL_HTTP_PORT": str(port),
        "TRIBUNAL_HTTP_HOST": "127.0.0.1", "TRIBUNAL_ARBITER_BACKEND": "none",
        "TRIBUNAL_LANGUAGE": "ko"})
    start = time.perf_counter()
    proc = subprocess.Popen(  # noqa: ASYNC220 (spawned, never waited on while running)
        [sys.executable, "-m", "bot", "run"], cwd=tmp, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = await _until_healthy(port, proc)
        ready_at = time.perf_counter()
        if ready is None:
            raise RuntimeError(f"tribunal run exited with {proc.returncode} before ready")
        resumed = await _until_resumed(db, ready_at)
        return ready_at - start, resumed
    finally:
        proc.terminate()
        try:
            await asyncio.to_thread(proc.wait, 20)
        except subprocess.TimeoutExpired:
            proc.kill()
            await asyncio.to_thread(proc.wait)


async def _until_healthy(port: int, proc: subprocess.Popen[bytes]) -> float | None:
    url = f"http://127.0.0.1:{port}/healthz"
    deadline = time.perf_counter() + 60
    async with aiohttp.ClientSession() as session:
        while time.perf_counter() < deadline and proc.poll() is None:
            try:
                async with session.get(url) as response:
                    if response.status == 200:
                        return time.perf_counter()
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.005)
    return None


def _work_left(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        (arbitrations,) = conn.execute(
            "SELECT COUNT(*) FROM arbitrations WHERE status IN ('pending', 'running')").fetchone()
        (posts,) = conn.execute("SELECT COUNT(*) FROM outbox WHERE status = 'pending'").fetchone()
        (unsent,) = conn.execute(
            "SELECT COUNT(*) FROM arbitrations a WHERE a.status = 'done' AND NOT EXISTS"
            " (SELECT 1 FROM outbox o WHERE o.room_id = a.room_id AND o.kind = 'verdict'"
            " AND o.status = 'sent' AND o.created_at >= a.created_at)").fetchone()
        return int(arbitrations) + int(posts) + int(unsent)
    finally:
        conn.close()


async def _until_resumed(db: Path, ready_at: float) -> float | None:
    while time.perf_counter() - ready_at < RESUME_LIMIT:
        if await asyncio.to_thread(_work_left, db) == 0:
            return time.perf_counter() - ready_at
        await asyncio.sleep(0.05)
    return None


async def baseline_once(db: Path) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", BASELINE, str(db), env=child_env({}), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    line = await proc.stdout.readline()
    elapsed = time.perf_counter() - start
    await proc.wait()
    if line.strip() != b"ready":
        raise RuntimeError("baseline reader failed")
    return elapsed


async def measure(rooms: int, runs: int, verbose: bool = False) -> dict[str, Any]:
    bot: list[float] = []
    base: list[float] = []
    resume: list[float | None] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pristine = tmp / "pristine.db"
        started = time.perf_counter()
        await build(pristine, rooms)
        built = time.perf_counter() - started
        size = pristine.stat().st_size
        async with FakeSlackAPI() as api:
            for i in range(runs):  # alternate, each on a fresh copy
                copy = tmp / f"run{i}.db"
                shutil.copy(pristine, copy)
                ready, resumed = await bot_once(copy, api, tmp)
                bot.append(ready)
                resume.append(resumed)
                shutil.copy(pristine, copy)
                base.append(await baseline_once(copy))
                if verbose:
                    print(f"  run {i + 1}: ready {ready:.2f} s, resumed work"
                          f" {'-' if resumed is None else f'{resumed:.2f} s'},"
                          f" baseline {base[-1]:.2f} s")
    finished = [r for r in resume if r is not None]
    return {"bot": statistics.median(bot), "base": statistics.median(base),
            "resume": statistics.median(finished) if len(finished) == len(resume) else None,
            "built": built, "size": size, "rooms": rooms, "runs": runs}


async def run(options: Options) -> list[Row]:
    runs = 3 if options.quick else 5
    m = await measure(10_000, runs, options.verbose)
    setup = (f"{m['rooms']:,} rooms, {ESCALATIONS} pending escalations, {UNFINISHED} unfinished"
             f" arbitrations, {m['size'] / 1e6:.0f} MB database; median of {m['runs']}"
             f" alternating runs")
    resume_note = (f"from ready until the {UNFINISHED} unfinished arbitrations are done and"
                   f" their progress posts and verdicts delivered (posts paced 1 s per channel)")
    if m["resume"] is None:
        resume_note += f"; not done within {RESUME_LIMIT:.0f} s in every run"
    return [
        row("startup_10k_rooms", m["bot"], baseline=m["base"],
            note=(f"`tribunal run` (Slack HTTP mode) spawned -> /healthz answering, beside a"
                  f" process opening the database and reading those rows; {setup}")),
        row("startup_resume", m["resume"], note=resume_note),
        missing("startup_catchup", "Tribunal does not fetch messages posted while it was down"
                " (no catch-up on start yet)"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    m = asyncio.run(measure(args.rooms, args.runs, verbose=True))
    print(f"database built in {m['built']:.1f} s ({m['size'] / 1e6:.0f} MB)")
    print(f"ready: {m['bot']:.2f} s; baseline {m['base']:.2f} s; ratio {m['bot'] / m['base']:.2f};"
          f" resumed work {m['resume']}")


if __name__ == "__main__":
    main()

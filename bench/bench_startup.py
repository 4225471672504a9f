"""Start-up with a large database: time to ready, resumed work, catch-up.

The database holds 10,000 rooms (Slack threads) over 100 channels (five 1-4
KB messages and a saved state each, every room with an open task), 100
escalations waiting for a human and 50 arbitrations a crash left unfinished,
one in each of 50 channels. The fake Slack Web API on 127.0.0.1 knows each
thread's parent message and, posted while the bot was down, 20 replies in
the 10 most recently active threads and 5 new threads of 3 messages in 5
channels. `tribunal run` (Slack in HTTP mode, arbiter backend `none`)
starts as a new process, with its code compiled to bytecode as an install
leaves it;

* ready (`startup_10k_rooms`): from spawning the process to its HTTP listener
  answering `/healthz`, which it opens after the Slack adapter connected
  (auth.test) and the engine started; beside a process that opens the same
  database with the same PRAGMAs and reads those rows (rooms, pending
  escalations, unfinished arbitrations) directly;
* ready beside the SDKs (`startup_vs_sdk_imports`): the same ready time
  beside a process that imports the third-party packages that start needed
  (pydantic-settings, aiohttp client and server, slack_sdk, slack-bolt,
  prometheus_client, aiosqlite) and then reads the same rows: what Tribunal's
  own start adds to its dependencies' (the reader is kept as it was, to stay
  comparable, though a start no longer imports pydantic-settings, nor
  prometheus_client before its first metric);
* resumed work (`startup_resume`): from ready until every unfinished
  arbitration is finished and the outbox is empty (progress posts and verdicts
  delivered, paced as in production);
* catch-up (`startup_catchup`): from ready until every message posted while
  the bot was down is stored and applied to its room.

Runs alternate (bot, baseline, SDK baseline, ...) on fresh copies of the
database, after one unmeasured warm-up of each.

    python -m bench.bench_startup [--rooms 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

from bench.agent_text import Writer
from bench.harness import ROOT, Options, Row
from bench.suite import row
from bot.finding import Finding
from bot.models import MessageKind, Option, OutgoingMessage
from bot.outbox import EDIT_PATIENCE
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
ACTIVE_THREADS = 10  # the most recently active rooms get replies while the bot is down
REPLIES_PER_THREAD = 2
NEW_THREADS = 5  # and new threads start in as many channels, 3 messages each
CHANNEL_FMT = "C0START{:02d}"

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
# The same reader, after importing what `tribunal run` needs from outside the
# project in Slack HTTP mode.
SDK_BASELINE = (
    "import pydantic, pydantic_settings, aiohttp, aiohttp.web, prometheus_client\n"
    "import slack_sdk.web.async_client, slack_bolt.async_app, slack_bolt.adapter.aiohttp\n"
    + BASELINE
)


def thread_ts(i: int, at: datetime) -> str:
    """Room i's thread: a Slack ts of its first message's second (unique by i)."""
    return f"{int(at.timestamp())}.{i:06d}"


def reply_ts(thread: str, j: int) -> str:
    seconds, micros = thread.split(".")
    return f"{int(seconds) + j}.{micros}"


def room_time(now: datetime, rooms: int, i: int) -> datetime:
    return now - timedelta(hours=1, seconds=rooms - i)


async def build(db: Path, rooms: int, now: datetime) -> None:
    """The database a bot that ran for a while leaves behind."""
    rng = random.Random(3)
    pools = {lang: {role: [Writer(rng, lang).turn(role) for _ in range(50)]
                    for role in ("owner", "reviewer")} for lang in ("ko", "en")}
    storage = SqliteStorage(str(db))
    await storage.open()
    messages = []
    async with storage.transaction() as tx:
        for c in range(CHANNELS):
            channel = CHANNEL_FMT.format(c)
            await tx.set_bindings("slack", channel, "owner", [OWNER])
            await tx.set_bindings("slack", channel, "reviewer", [REVIEWER])
        for i in range(rooms):
            at = room_time(now, rooms, i)
            channel, thread = CHANNEL_FMT.format(i % CHANNELS), thread_ts(i, at)
            room_id = f"slack:{channel}:{thread}"
            lang = "ko" if i % 5 < 3 else "en"
            script = [(HUMAN, "user", Writer(rng, lang).task())]
            for role in ("owner", "reviewer", "owner", "reviewer"):
                script.append((OWNER if role == "owner" else REVIEWER, role,
                               rng.choice(pools[lang][role])))
            for j, (author, role, text) in enumerate(script):
                messages.append(("slack", f"{channel}:{reply_ts(thread, j)}", room_id, author,
                                 role, text, (at + timedelta(seconds=j)).isoformat(), 1,
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
                await tx.mark_outbox(outbox, "sent",
                                     platform_message_id=f"{channel}:{reply_ts(thread, 9)}",
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


_AUTHORS: dict[str, dict[str, Any]] = {
    "user": {"user": HUMAN},
    "owner": {"user": None, "bot_id": OWNER, "subtype": "bot_message"},
    "reviewer": {"user": REVIEWER, "bot_id": "BREVIEW"},
}


def _event(role: str, text: str, ts: str, thread: str) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "message", "text": text, "ts": ts,
                             **{k: v for k, v in _AUTHORS[role].items() if v is not None}}
    if ts != thread:
        event["thread_ts"] = thread
    return event


def seed(api: FakeSlackAPI, rooms: int, now: datetime) -> list[str]:
    """Slack's side: every room's thread parent, then what was posted while the
    bot was down. Returns the stored ids those missed messages will have."""
    rng = random.Random(5)
    for i in range(rooms):
        at = room_time(now, rooms, i)
        thread = thread_ts(i, at)
        api.add_message(CHANNEL_FMT.format(i % CHANNELS), _event("user", "task", thread, thread))
    missed: list[str] = []
    down = int(now.timestamp()) - 600  # the outage began ten minutes ago
    for k, i in enumerate(range(rooms - ACTIVE_THREADS, rooms)):  # threads that go on
        channel, thread = CHANNEL_FMT.format(i % CHANNELS), thread_ts(i, room_time(now, rooms, i))
        lang = "ko" if i % 5 < 3 else "en"
        for j, role in enumerate(("owner", "reviewer")[:REPLIES_PER_THREAD]):
            ts = f"{down + 10 * k + j}.{i:06d}"
            api.add_message(channel, _event(role, Writer(rng, lang).turn(role), ts, thread))
            missed.append(f"{channel}:{ts}")
    for n in range(NEW_THREADS):  # tasks begun during the outage
        channel = CHANNEL_FMT.format((rooms - 1 - n) % CHANNELS)
        lang = "ko" if n % 2 == 0 else "en"
        thread = f"{down + 300 + 10 * n}.{900000 + n:06d}"
        for j, role in enumerate(("user", "owner", "reviewer")):
            text = Writer(rng, lang).task() if role == "user" else Writer(rng, lang).turn(role)
            ts = reply_ts(thread, j)
            api.add_message(channel, _event(role, text, ts, thread))
            missed.append(f"{channel}:{ts}")
    return missed


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


@dataclass
class Once:
    ready: float  # seconds from spawn to /healthz
    resumed: float | None  # from ready to the resumed work done (None: not within the limit)
    caught_up: float | None  # from ready to every missed message stored and applied
    arbitrated: float | None  # from ready to the unfinished arbitrations recorded
    edited: int = 0  # verdicts that replaced their progress post by an edit
    anew: int = 0  # verdicts posted as a new message below it (edits were busy)


async def bot_once(db: Path, api: FakeSlackAPI, tmp: Path, resumed_rooms: list[str],
                   missed: list[str]) -> Once:
    """One start of `tribunal run` on `db`: ready, then resumed work and catch-up."""
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
        resumed, caught_up, arbitrated = await asyncio.gather(
            _until(db, ready_at, lambda c: _work_left(c, resumed_rooms)),
            _until(db, ready_at, lambda c: _not_applied(c, missed)),
            _until(db, ready_at, lambda c: _arbitrations_left(c, resumed_rooms)))
        edited, anew = _verdict_posts(db, resumed_rooms)
        return Once(ready_at - start, resumed, caught_up, arbitrated, edited, anew)
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


def _in(rooms: list[str]) -> str:
    return ", ".join("'" + r.replace("'", "''") + "'" for r in rooms)


def _arbitrations_left(conn: sqlite3.Connection, rooms: list[str]) -> int:
    (left,) = conn.execute(
        "SELECT COUNT(*) FROM arbitrations WHERE status IN ('pending', 'running')"
        f" AND room_id IN ({_in(rooms)})").fetchone()
    return int(left)


def _work_left(conn: sqlite3.Connection, rooms: list[str]) -> int:
    """The resumed rooms' arbitrations not done, their posts not sent, and
    verdicts recorded but not delivered (other rooms' work is not counted: a
    room the catch-up brings to a deadlock is not resumed work)."""
    where = f"room_id IN ({_in(rooms)})"
    (posts,) = conn.execute(
        f"SELECT COUNT(*) FROM outbox WHERE status = 'pending' AND {where}").fetchone()
    (unsent,) = conn.execute(
        f"SELECT COUNT(*) FROM arbitrations a WHERE a.status = 'done' AND a.{where}"
        " AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.room_id = a.room_id"
        " AND o.kind = 'verdict' AND o.status = 'sent' AND o.created_at >= a.created_at)"
    ).fetchone()
    return _arbitrations_left(conn, rooms) + int(posts) + int(unsent)


def _verdict_posts(db: Path, rooms: list[str]) -> tuple[int, int]:
    """(verdicts that edited their progress post, verdicts posted anew) in `rooms`."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute(
            "SELECT v.platform_message_id = p.platform_message_id, COUNT(*) FROM outbox v"
            " JOIN outbox p ON p.id = v.edit_of WHERE v.kind = 'verdict' AND v.status = 'sent'"
            f" AND p.kind = 'progress' AND v.room_id IN ({_in(rooms)}) GROUP BY 1").fetchall()
    finally:
        conn.close()
    counts = {bool(same): int(n) for same, n in rows}
    return counts.get(True, 0), counts.get(False, 0)


def _not_applied(conn: sqlite3.Connection, missed: list[str]) -> int:
    """Missed messages not yet stored, or stored and not yet applied to their room."""
    (applied,) = conn.execute(
        "SELECT COUNT(*) FROM messages WHERE processed = 1 AND platform = 'slack'"
        f" AND message_id IN ({_in(missed)})").fetchone()
    return len(missed) - int(applied)


async def _until(db: Path, ready_at: float,
                 left: Callable[[sqlite3.Connection], int]) -> float | None:
    """Seconds from ready until `left` counts nothing (None: not within the limit)."""

    def count() -> int:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return left(conn)
        finally:
            conn.close()

    while time.perf_counter() - ready_at < RESUME_LIMIT:
        if await asyncio.to_thread(count) == 0:
            return time.perf_counter() - ready_at
        await asyncio.sleep(0.05)
    return None


async def baseline_once(db: Path, script: str = BASELINE) -> float:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, str(db), env=child_env({}), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    line = await proc.stdout.readline()
    elapsed = time.perf_counter() - start
    await proc.wait()
    if line.strip() != b"ready":
        raise RuntimeError("baseline reader failed")
    return elapsed


def compile_project() -> None:
    """Bytecode for the project's modules, as `pip install` leaves an install
    (an environment with PYTHONDONTWRITEBYTECODE set would otherwise compile
    every module from source at every start)."""
    for folder in ("bot", "adapters", "storage", "prompts"):
        compileall.compile_dir(str(ROOT / folder), quiet=1)


def _resumed_rooms(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT DISTINCT room_id FROM arbitrations"
                            " WHERE status IN ('pending', 'running')").fetchall()
    finally:
        conn.close()
    return sorted(str(r[0]) for r in rows)


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known and len(known) == len(values) else None


async def measure(rooms: int, runs: int, verbose: bool = False) -> dict[str, Any]:
    bot: list[Once] = []
    base: list[float] = []
    sdk: list[float] = []
    compile_project()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pristine = tmp / "pristine.db"
        started = time.perf_counter()
        await build(pristine, rooms, now)
        built = time.perf_counter() - started
        size = pristine.stat().st_size
        resumed_rooms = _resumed_rooms(pristine)
        async with FakeSlackAPI() as api:
            missed = seed(api, rooms, now)
            copy = tmp / "run.db"
            for i in range(runs + 1):  # alternate, each on a fresh copy; the first warms up
                shutil.copy(pristine, copy)
                once = await bot_once(copy, api, tmp, resumed_rooms, missed)
                shutil.copy(pristine, copy)
                raw = await baseline_once(copy)
                shutil.copy(pristine, copy)
                floor = await baseline_once(copy, SDK_BASELINE)
                if i == 0:
                    continue
                bot.append(once)
                base.append(raw)
                sdk.append(floor)
                if verbose:
                    print(f"  run {i}: ready {once.ready:.2f} s, resumed work"
                          f" {_s(once.resumed)} (verdicts recorded {_s(once.arbitrated)};"
                          f" {once.edited} edited in, {once.anew} posted anew),"
                          f" caught up {_s(once.caught_up)}; baseline {raw:.2f} s,"
                          f" SDK baseline {floor:.2f} s")
    return {"bot": statistics.median(o.ready for o in bot), "base": statistics.median(base),
            "sdk": statistics.median(sdk),
            # Per-run ratios first: a run slowed by the machine slows its pair alike.
            "ratio": statistics.median(o.ready / b for o, b in zip(bot, base, strict=True)),
            "sdk_ratio": statistics.median(o.ready / f for o, f in zip(bot, sdk, strict=True)),
            "resume": _median([o.resumed for o in bot]),
            "arbitrated": _median([o.arbitrated for o in bot]),
            "edited": statistics.median(o.edited for o in bot),
            "anew": statistics.median(o.anew for o in bot),
            "catchup": _median([o.caught_up for o in bot]),
            "missed": len(missed), "built": built, "size": size, "rooms": rooms, "runs": runs}


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def _edit_interval() -> float:
    """Seconds between two chat.update calls as the Slack pacer spaces them."""
    from adapters.slack.transport import SLACK_LIMITS, TIER_HEADROOM

    return SLACK_LIMITS["chat.update"].interval / TIER_HEADROOM


async def run(options: Options) -> list[Row]:
    runs = 3 if options.quick else 5
    m = await measure(10_000, runs, options.verbose)
    setup = (f"{m['rooms']:,} rooms, {ESCALATIONS} pending escalations, {UNFINISHED} unfinished"
             f" arbitrations, {m['size'] / 1e6:.0f} MB database; median of {m['runs']}"
             f" alternating runs after a warm-up")
    edit = _edit_interval()
    resume_note = (
        f"from ready until the {UNFINISHED} unfinished arbitrations (one in each of"
        f" {UNFINISHED} channels) are done and their progress posts and verdicts delivered;"
        f" verdicts recorded after {_s(m['arbitrated'])}; chat.update is one workspace-wide"
        f" Tier 3 bucket that the pacer spaces {edit:.2f} s apart (50 edits would need"
        f" {(UNFINISHED - 1) * edit:.0f} s), so a verdict whose edit of its progress post"
        f" would wait over {EDIT_PATIENCE:.0f} s longer than a new post goes out as a new"
        f" post below it (chat.postMessage is paced per channel): {m['edited']:.0f} edited"
        f" in, {m['anew']:.0f} posted anew (medians)")
    if m["resume"] is None:
        resume_note += f"; not done within {RESUME_LIMIT:.0f} s in every run"
    catchup_note = (
        f"from ready until the {m['missed']} messages posted while the bot was down"
        f" ({ACTIVE_THREADS * REPLIES_PER_THREAD} replies in the {ACTIVE_THREADS} most recently"
        f" active threads, {NEW_THREADS} new threads of 3 messages) are stored and applied;"
        f" {CHANNELS} watched channels and {m['rooms']:,} open rooms to read at Tier 3"
        f" (history and replies side by side, most recently active rooms first)")
    if m["catchup"] is None:
        catchup_note += f"; not done within {RESUME_LIMIT:.0f} s in every run"
    return [
        row("startup_10k_rooms", m["bot"], baseline=m["base"], ratio=m["ratio"],
            note=(f"`tribunal run` (Slack HTTP mode) spawned -> /healthz answering, beside a"
                  f" process opening the database and reading those rows; {setup}; ratio:"
                  f" the median of the per-run ratios")),
        row("startup_resume", m["resume"], note=resume_note),
        row("startup_catchup", m["catchup"], note=catchup_note),
        row("startup_vs_sdk_imports", m["bot"], baseline=m["sdk"], ratio=m["sdk_ratio"],
            note=("the same ready time beside a process that imports the packages it needs"
                  " from outside the project (pydantic-settings, aiohttp, slack_sdk,"
                  " slack-bolt, prometheus_client, aiosqlite) and reads the same rows:"
                  " what Tribunal's own start adds")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    m = asyncio.run(measure(args.rooms, args.runs, verbose=True))
    print(f"database built in {m['built']:.1f} s ({m['size'] / 1e6:.0f} MB)")
    print(f"ready: {m['bot']:.2f} s; baseline {m['base']:.2f} s; ratio {m['ratio']:.2f};"
          f" SDK baseline {m['sdk']:.2f} s, ratio {m['sdk_ratio']:.2f};"
          f" resumed work {_s(m['resume'])}; catch-up {_s(m['catchup'])}")


if __name__ == "__main__":
    main()

"""Crash sweep: `tribunal run` SIGKILLed at many points, then restarted.

Each trial runs the real process in Slack HTTP mode against the fake Web API
(127.0.0.1) with `TRIBUNAL_FAULT=<point>:<n>` (bot/faults.py): it kills
itself the n-th time it reaches the point. The trial plays one escalation
end to end (bind the agents, a task, a BLOCKED owner turn, the reviewer,
the ESCALATE verdict, a digit answer and its confirmation), restarting the
process without a fault whenever it died, and waits until nothing is left
to do. It then counts:

- events acknowledged (HTTP 200) vs stored: an acknowledged event missing
  from storage is lost;
- duplicate posts: one outbox row seen twice in the thread (same idempotency
  key in the message metadata), and confirmations posted more than once.

    python -m bench.bench_crash_sweep [--count 100]

Kill points are every fault point crossed with n = 1, 2, ... until `count`.
One trial crosses each post point about four times (progress, verdict,
confirmation, decided) and `after_apply` about four times, so kill points
past n = 4 or 5 let the trial finish without a crash (reported as such).
Nothing here is a test: the figures are printed, the exit status is 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests` is not a package; make tests.fakes importable
    sys.path.insert(0, str(ROOT))

from adapters.slack.transport import metadata_key  # noqa: E402
from tests.fakes.slack_api import FakeSlackAPI  # noqa: E402
from tests.slack.conftest import (  # noqa: E402
    SIGNING_SECRET,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)

POINTS = ("before_post", "after_post_before_record", "after_record", "after_apply")
THREAD = "1795946400.000100"
CONFIRMATION = "✅ 사용자 결정: 1."


@dataclass
class Trial:
    point: str
    nth: int
    crashed: int = 0
    acked: set[str] = field(default_factory=set)
    stored: int = 0
    duplicates: int = 0
    confirmations: int = 0
    finished: bool = False


class Process:
    def __init__(self, api: FakeSlackAPI, database: Path, port: int) -> None:
        self.api, self.database, self.port = api, database, port
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, fault: str | None, http: aiohttp.ClientSession) -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_"))
               and "proxy" not in k.lower()}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.update({"SLACK_BOT_TOKEN": self.api.bot_token, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                    "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": self.api.url,
                    "TRIBUNAL_HTTP_PORT": str(self.port), "TRIBUNAL_HTTP_HOST": "127.0.0.1",
                    "TRIBUNAL_DATABASE": str(self.database),
                    "TRIBUNAL_ARBITER_BACKEND": "none"})
        if fault:
            env["TRIBUNAL_FAULT"] = fault
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run", cwd=self.database.parent, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                return  # died at start-up (a fault point in the start's own flush)
            try:
                async with http.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
        raise RuntimeError("tribunal run did not become healthy")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def kill(self) -> None:
        if self.alive:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            await self.proc.wait()


def rows(database: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


async def run_trial(point: str, nth: int, workdir: Path, port: int) -> Trial:
    trial = Trial(point, nth)
    database = workdir / f"{point}-{nth}.db"
    async with FakeSlackAPI() as api, aiohttp.ClientSession() as http:
        api.add_user("UADMIN", name="boss", admin=True)
        proc = Process(api, database, port)
        await proc.start(f"{point}:{nth}", http)

        async def alive() -> Process:
            nonlocal proc
            if not proc.alive:
                await proc.kill()
                trial.crashed += 1
                proc = Process(api, database, port)
                await proc.start(None, http)
            return proc

        async def send(body: dict[str, Any]) -> None:
            event = body.get("event") or {}
            if event:  # Slack has the message whatever happens to the bot
                api.add_message(event["channel"], event)
            for _ in range(5):
                await alive()
                raw, ctype = encode_body(body)
                try:
                    async with http.post(f"http://127.0.0.1:{port}/slack/events",
                                         data=raw.encode(),
                                         headers=signed_headers(raw, ctype)) as r:
                        if r.status == 200:
                            if event:
                                trial.acked.add(f"{event['channel']}:{event['ts']}")
                            return
                except aiohttp.ClientError:
                    pass  # died while handling it: Slack retries the delivery
                await asyncio.sleep(0.05)

        async def until(check: Any, within: float = 30.0) -> bool:
            deadline = time.monotonic() + within
            while time.monotonic() < deadline:
                await alive()
                if check():
                    return True
                await asyncio.sleep(0.05)
            return False

        await send(slash_command("roles owner:BOWNER reviewer:<@UREVIEWER|rev>", user="UADMIN",
                                 response_url=api.response_url()))
        await until(lambda: bool(api.responses))
        await send(message_event("로그인 버그 고쳐줘", ts=THREAD))
        await send(message_event("BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다.", user=None,
                                 bot_id="BOWNER", subtype="bot_message", thread_ts=THREAD,
                                 ts="1795946401.000200"))
        await send(message_event("접속 정보 없이도 목(mock)으로 테스트할 수 있습니다.",
                                 user="UREVIEWER", bot_id="BREVIEW", thread_ts=THREAD,
                                 ts="1795946402.000300"))
        await until(lambda: bool(rows(database, "SELECT id FROM escalations")))
        await send(message_event("1", thread_ts=THREAD, ts="1795946410.000100"))
        trial.finished = await until(lambda: bool(rows(
            database, "SELECT id FROM escalations WHERE status = 'answered'")) and not rows(
            database, "SELECT id FROM outbox WHERE status = 'pending'") and not rows(
            database, "SELECT seq FROM messages WHERE processed = 0"))
        await proc.kill()
        stored = {r[0] for r in rows(database, "SELECT message_id FROM messages")}
        trial.stored = len(trial.acked & stored)
        posts = [m for m in api.messages.values() if m.get("thread_ts") == THREAD
                 and (m.get("user") == api.bot_user_id)]
        keys = Counter(k for k in (metadata_key(m) for m in posts) if k)
        trial.duplicates = sum(n - 1 for n in keys.values())
        trial.confirmations = sum(1 for m in posts if m.get("text", "").startswith(CONFIRMATION))
    return trial


async def sweep(count: int) -> list[Trial]:
    points = [(p, n) for n in range(1, count + 1) for p in POINTS][:count]
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory(prefix="tribunal-sweep-") as tmp:
        for point, nth in points:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            trials.append(await run_trial(point, nth, Path(tmp), port))
            t = trials[-1]
            print(f"{point}:{nth:<3} crashed={t.crashed} acked={len(t.acked)} "
                  f"stored={t.stored} duplicates={t.duplicates} "
                  f"confirmations={t.confirmations} finished={t.finished}", flush=True)
    return trials


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100, help="kill points to try")
    args = parser.parse_args(argv)
    started = time.monotonic()
    trials = asyncio.run(sweep(args.count))
    crashed = [t for t in trials if t.crashed]
    print(f"\nkill points tried: {len(trials)}, crashes: {sum(t.crashed for t in trials)} "
          f"(in {len(crashed)} trials), {time.monotonic() - started:.0f} s")
    print(f"events acknowledged: {sum(len(t.acked) for t in trials)}, "
          f"stored: {sum(t.stored for t in trials)}")
    print(f"duplicate posts (same idempotency key): {sum(t.duplicates for t in trials)}; "
          f"trials with the confirmation != 1: "
          f"{sum(1 for t in trials if t.confirmations != 1)}; "
          f"unfinished trials: {sum(1 for t in trials if not t.finished)}")


if __name__ == "__main__":
    main()

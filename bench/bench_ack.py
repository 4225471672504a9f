"""Slack HTTP events under a burst: how fast each one is acknowledged.

200 message events, one per room, are POSTed at once (signed, as Slack sends
them) to Tribunal's real HTTP endpoint: SlackAdapter in HTTP mode (aiohttp +
slack-bolt, signature checked) in front of the real Engine and SqliteStorage,
talking to the fake Slack Web API on 127.0.0.1. The latency of each request is
from sending it to reading its response; the figures are p50 and p99 of the
200. The baseline, same run: a bare aiohttp handler that parses the same body
and does the same single insert (one committed transaction, same PRAGMAs)
before answering. Runs alternate between the two sides; medians of the runs.

The harness measures whatever the code does: the note says how many of the
200 messages were stored when the last acknowledgement arrived (fewer than 200
means events are acknowledged before they are stored).

    python -m bench.bench_ack [--rooms 200] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import aiosqlite
from aiohttp import web
from pydantic import SecretStr
from slack_sdk.signature import SignatureVerifier

from adapters.slack import SlackAdapter
from bench.agent_text import Writer
from bench.harness import Options, Row
from bench.suite import row
from bot.config import Settings
from bot.engine import Engine
from storage.sqlite import SqliteStorage
from tests.fakes.slack_api import FakeSlackAPI

SECRET = "bench-signing-secret"
CHANNELS = 10
HUMAN = "UALICE"


def events(run: int, rooms: int) -> list[bytes]:
    """One human message per room (a thread), as Slack's Events API delivers it."""
    import random

    writer = Writer(random.Random(run), "ko")
    out = []
    for i in range(rooms):
        ts = f"17648{run:02d}{i:03d}.{i + 1:06d}"
        body = {
            "token": "unused", "team_id": "T0001", "api_app_id": "A0TRIBUNAL",
            "type": "event_callback", "event_id": f"Ev{run:03d}{i:06d}", "event_time": 1764800000,
            "event": {"type": "message", "user": HUMAN, "text": writer.task(), "ts": ts,
                      "thread_ts": ts, "channel": f"C0ACK{i % CHANNELS}", "event_ts": ts,
                      "channel_type": "channel", "team": "T0001"},
        }
        out.append(json.dumps(body, ensure_ascii=False).encode())
    return out


def headers(raw: bytes) -> dict[str, str]:
    ts = str(int(time.time()))
    return {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": str(SignatureVerifier(SECRET).generate_signature(
                timestamp=ts, body=raw.decode()))}


async def burst(session: aiohttp.ClientSession, url: str, bodies: list[bytes]) -> list[float]:
    """POST every body at once; each request's seconds until its response was read."""
    signed = [(body, headers(body)) for body in bodies]

    async def one(body: bytes, head: dict[str, str]) -> float:
        start = time.perf_counter()
        async with session.post(url, data=body, headers=head) as response:
            await response.read()
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}")
        return time.perf_counter() - start

    return list(await asyncio.gather(*(one(b, h) for b, h in signed)))


async def connect(session: aiohttp.ClientSession, url: str, n: int) -> None:
    """Open `n` keep-alive connections (as a sender of many events keeps them)."""
    health = url.replace("/slack/events", "/healthz")

    async def one() -> None:
        async with session.get(health) as response:
            await response.read()

    await asyncio.gather(*(one() for _ in range(n)))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


class Tribunal:
    """The real bot's HTTP path, started as `tribunal run` starts it (Slack only)."""

    def __init__(self, tmp: Path, api: FakeSlackAPI) -> None:
        self.db = tmp / "tribunal.db"
        self.settings = Settings(  # type: ignore[call-arg]
            _env_file=None, database=str(self.db), slack_bot_token=SecretStr(api.bot_token),
            slack_signing_secret=SecretStr(SECRET), slack_mode="http", slack_api_url=api.url,
            http_host="127.0.0.1", arbiter_backend="none")
        self.storage = SqliteStorage(str(self.db))
        self.engine = Engine(self.settings, self.storage)
        self.adapter = SlackAdapter(self.settings, self.engine, port=0)  # any free port

    async def start(self) -> str:
        await self.storage.open()
        self.engine.register_transport(self.adapter.transport)
        await self.engine.start()
        for i in range(CHANNELS):
            await self.engine.admin.configure_channel(
                "slack", f"C0ACK{i}", owner=["BOWNER"], reviewer=["UREVIEWER"], settings={})
        await self.adapter.start()
        return f"http://127.0.0.1:{self.adapter.port}/slack/events"

    async def stored(self) -> int:
        row = await self.storage._one("SELECT COUNT(*) AS n FROM messages")
        return int(row["n"]) if row else 0

    async def settle(self) -> None:
        assert self.adapter.inbound is not None
        await self.adapter.inbound.drain(60.0)
        await self.engine.drain()

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.engine.drain()
        await self.storage.close()


class Bare:
    """The plainest aiohttp handler doing the same single insert before answering."""

    def __init__(self, tmp: Path) -> None:
        self.db = tmp / "bare.db"
        self.conn: aiosqlite.Connection | None = None
        self.runner: web.AppRunner | None = None

    async def start(self) -> str:
        schema = SqliteStorage(str(self.db))  # the same schema
        await schema.open()
        await schema.close()
        self.conn = await aiosqlite.connect(self.db)
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=5000",
                       "foreign_keys=ON"):  # as SqliteStorage.open
            await self.conn.execute(f"PRAGMA {pragma}")
        conn = self.conn

        async def handle(request: web.Request) -> web.Response:
            event = json.loads(await request.read())["event"]
            room = f"slack:{event['channel']}:{event['thread_ts']}"
            await conn.execute(
                "INSERT OR IGNORE INTO messages (platform, message_id, room_id, author, role,"
                " text, ts, epoch, turn_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ("slack", f"{event['channel']}:{event['ts']}", room, event["user"], "user",
                 event["text"], event["ts"], 0, None))
            await conn.commit()
            return web.Response(text="")

        async def health(request: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        app = web.Application()
        app.router.add_post("/slack/events", handle)
        app.router.add_get("/healthz", health)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}/slack/events"

    async def stored(self) -> int:
        assert self.conn is not None
        async with self.conn.execute("SELECT COUNT(*) FROM messages") as cursor:
            return int((await cursor.fetchone())[0])  # type: ignore[index]

    async def settle(self) -> None:
        return None

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
        if self.conn is not None:
            await self.conn.close()


async def measure(rooms: int, runs: int, verbose: bool = False) -> dict[str, Any]:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        os.environ.pop(name, None)
    figures: dict[str, dict[str, list[float]]] = {
        side: {"p50": [], "p99": [], "stored_at_ack": [], "stored": []}
        for side in ("tribunal", "bare")}
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeSlackAPI() as api:
            sides: dict[str, Tribunal | Bare] = {"tribunal": Tribunal(Path(tmp), api),
                                                 "bare": Bare(Path(tmp))}
            urls = {name: await side.start() for name, side in sides.items()}
            sessions = {name: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
                        for name in sides}
            for name in sides:  # warm both paths, then hold `rooms` open connections each
                await burst(sessions[name], urls[name], events(90 + len(name), 5))
                await sides[name].settle()
                await connect(sessions[name], urls[name], rooms)
            for run in range(runs):
                for name in ("tribunal", "bare"):  # alternate
                    side = sides[name]
                    before = await side.stored()
                    latencies = await burst(sessions[name], urls[name],
                                            events(run * 2 + (name == "bare"), rooms))
                    at_ack = await side.stored() - before
                    await side.settle()
                    stored = await side.stored() - before
                    fig = figures[name]
                    fig["p50"].append(pct(latencies, 50))
                    fig["p99"].append(pct(latencies, 99))
                    fig["stored_at_ack"].append(at_ack)
                    fig["stored"].append(stored)
                    if verbose:
                        print(f"  run {run + 1} {name:8}: p50 {fig['p50'][-1] * 1e3:7.2f} ms,"
                              f" p99 {fig['p99'][-1] * 1e3:7.2f} ms, stored at last ack"
                              f" {at_ack}/{rooms}, stored after {stored}/{rooms}")
            for session in sessions.values():
                await session.close()
            for side in sides.values():
                await side.stop()
    return {side: {k: statistics.median(v) for k, v in fig.items()}
            for side, fig in figures.items()}


async def run(options: Options) -> list[Row]:
    rooms, runs = 200, 3 if options.quick else 5
    m = await measure(rooms, runs, options.verbose)
    t, b = m["tribunal"], m["bare"]
    stored = int(t["stored_at_ack"])
    how = ("every message was stored before its ack" if stored >= rooms else
           f"acks before storing: {stored}/{rooms} stored when the last ack arrived")
    note = (f"{rooms} rooms at once over {CHANNELS} channels, median of {runs} alternating runs;"
            f" {how} ({int(t['stored'])}/{rooms} stored in the end); keep-alive connections"
            f" opened beforehand (200 new connections at once overflow aiohttp's listen backlog"
            f" of 128: +1 s SYN retry on either side); the bare handler checks no signature")
    return [
        row("ack_latency_p99", t["p99"] * 1e3, baseline=b["p99"] * 1e3, note=note),
        row("ack_latency_p50", t["p50"] * 1e3, baseline=b["p50"] * 1e3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    m = asyncio.run(measure(args.rooms, args.runs, verbose=True))
    for side, fig in m.items():
        print(f"{side:8}: p50 {fig['p50'] * 1e3:7.2f} ms  p99 {fig['p99'] * 1e3:7.2f} ms  stored at"
              f" last ack {fig['stored_at_ack']:.0f}/{args.rooms}")



if __name__ == "__main__":
    main()

"""A burst of simultaneous deadlocks against Slack's rate limit (DESIGN §9).

N rooms (threads spread over a few channels) reach a deadlock at the same
moment: each room has an open owner turn `BLOCKED: ...` and the reviewer
answers in every room at once (concurrent `Engine.on_message`; or, with
`--trigger tick`, one `engine.close_turns(force=True)`). Every room then needs
two deliveries: the progress message (chat.postMessage) and the verdict
(chat.update of that message). Real Engine (`none` arbiter backend), real
SqliteStorage on a temporary file, real SlackTransport (per-channel pacing and
slack_sdk's retry handlers) over HTTP to the fake Web API on 127.0.0.1.

The fake enforces a token bucket per channel on chat.postMessage, like Slack's
"about 1 message per second per channel, short bursts allowed", answering 429 +
`Retry-After` beyond it. Time is scaled so the run stays short: the fake allows
`--rate` posts/s per channel (default 20 = Slack x20) and the transport paces
at 1/rate s, i.e. the adapter's default 1.0 s scaled the same way.
`Retry-After` is an integer number of seconds in HTTP, so it stays 1 (not
scaled): every 429 that is honoured costs 1-2 real seconds.

Baseline, same run, same number of posts, its own fresh fake with the same
limit: a plain slack_sdk AsyncWebClient, no pacing, no retry handler, all
posts fired concurrently. Figures, not a test: nothing is asserted.

    python bench/bench_burst.py [--rooms 40] [--channels 4] [--rate 20] [--burst 3]
                                [--trigger message|tick] [--unpaced]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests` is not a package; make tests.fakes importable
    sys.path.insert(0, str(ROOT))

from adapters.slack.transport import SlackTransport, make_client  # noqa: E402
from bot.clock import ManualClock  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.engine import Engine  # noqa: E402
from bot.models import IncomingMessage  # noqa: E402
from prompts.strings import t  # noqa: E402
from storage.sqlite import SqliteStorage  # noqa: E402
from tests.fakes.slack_api import BOT_TOKEN, Call, FakeSlackAPI, _parse_args  # noqa: E402

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
OWNER_BOT = "BOWNER"
REVIEWER = "UREVIEWER"
HUMAN = "UALICE"
MAX_TICKS = 200  # bound on the drain loop
TICK_PAUSE = 0.05  # real seconds between ticks while draining


class BurstLimitedSlackAPI(FakeSlackAPI):
    """The fake Web API with a per-channel token bucket on chat.postMessage."""

    def __init__(self, *, rate: float, burst: int) -> None:
        super().__init__()
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}  # channel -> (tokens, at)

    def _take(self, channel: str) -> float:
        """0 if a post may go now, else the seconds until one may."""
        now = time.monotonic()
        tokens, at = self._buckets.get(channel, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens >= 1.0:
            self._buckets[channel] = (tokens - 1.0, now)
            return 0.0
        self._buckets[channel] = (tokens, now)
        return (1.0 - tokens) / self.rate

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if method == "chat.postMessage":
            args = await _parse_args(request)  # aiohttp caches the body for super()
            wait = self._take(str(args.get("channel", "")))
            if wait > 0:
                self.calls.append(Call(method, args, dict(request.headers)))
                self.rate_limited += 1
                return web.json_response(
                    {"ok": False, "error": "ratelimited"}, status=429,
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
        return await super()._api(request)


@dataclass
class Result:
    label: str
    rooms: int
    expected: int = 0
    progress_ok: int = 0
    verdict_ok: int = 0
    http_429: int = 0
    requests: Counter[str] = field(default_factory=Counter)
    wall: float = 0.0
    outbox: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    ticks: int = 0  # engine.tick() calls needed after the burst
    burst_call: float | None = None  # seconds until the burst's own calls returned
    pending_after_burst: int = 0  # outbox rows still pending when they had returned
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def delivered(self) -> int:
        return self.progress_ok + self.verdict_ok

    @property
    def lost(self) -> int:
        return self.expected - self.delivered


def rooms_of(n: int, channels: int) -> list[tuple[str, str]]:
    """(channel, thread_ts) for n rooms spread round-robin over the channels."""
    return [(f"C0BURST{i % channels}", f"1764410400.{i + 1:06d}") for i in range(n)]


def tally(api: FakeSlackAPI, rooms: list[tuple[str, str]], progress_text: str,
          result: Result) -> None:
    """Per room: is a progress post there, and has it (or a new post) become the verdict?"""
    for channel, thread in rooms:
        mine = [m for (ch, _), m in api.messages.items()
                if ch == channel and m.get("thread_ts") == thread]
        result.progress_ok += 1 if mine else 0
        result.verdict_ok += 1 if any(m["text"] != progress_text for m in mine) else 0
    result.http_429 = api.rate_limited
    result.requests = Counter(c.method for c in api.calls)


# -- baseline ----------------------------------------------------------------
async def baseline(rooms: list[tuple[str, str]], rate: float, burst: int) -> Result:
    """Plain AsyncWebClient, no pacing, no retry handler: everything at once."""
    progress_text, verdict_text = "progress", "verdict"
    result = Result("baseline: plain client", len(rooms), expected=2 * len(rooms))
    async with BurstLimitedSlackAPI(rate=rate, burst=burst) as api:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=api.url, retry_handlers=[])

        async def one_room(channel: str, thread: str) -> None:
            try:
                posted = await client.chat_postMessage(channel=channel, thread_ts=thread,
                                                       text=progress_text)
                await client.chat_update(channel=channel, ts=str(posted["ts"]),
                                         text=verdict_text)
            except SlackApiError as exc:
                result.errors[str(exc.response.get("error"))] += 1

        start = time.perf_counter()
        await asyncio.gather(*(one_room(c, th) for c, th in rooms))
        result.wall = time.perf_counter() - start
        tally(api, rooms, progress_text, result)
    return result


# -- the bot -----------------------------------------------------------------
async def pending_count(storage: SqliteStorage) -> int:
    rows = await storage._all("SELECT COUNT(*) AS n FROM outbox WHERE status = 'pending'")
    return int(rows[0]["n"])


async def outbox_counts(storage: SqliteStorage) -> tuple[dict[str, int], int]:
    async with storage.db.execute(
        "SELECT status, COUNT(*), SUM(attempts) FROM outbox GROUP BY status"
    ) as cursor:
        rows = list(await cursor.fetchall())
    return {str(r[0]): int(r[1]) for r in rows}, sum(int(r[2] or 0) for r in rows)


async def pipeline(rooms: list[tuple[str, str]], channels: int, rate: float, burst: int,
                   trigger: str, paced: bool, db: Path) -> Result:
    label = "Tribunal" + (" (paced)" if paced else " (unpaced)")
    result = Result(label, len(rooms), expected=2 * len(rooms))
    async with BurstLimitedSlackAPI(rate=rate, burst=burst) as api:
        settings = Settings(_env_file=None, database=str(db),  # type: ignore[call-arg]
                            arbiter_backend="none", language="ko")
        storage = SqliteStorage(str(db))
        await storage.open()
        clock = ManualClock(T0)  # never advanced: turns close by role change only
        engine = Engine(settings, storage, clock)
        transport = SlackTransport(make_client(BOT_TOKEN, api.url),
                                   post_interval=1.0 / rate if paced else 0.0)
        engine.register_transport(transport)
        await engine.start()
        for i in range(channels):
            await engine.admin.configure_channel(
                "slack", f"C0BURST{i}", owner=[OWNER_BOT], reviewer=[REVIEWER], settings={})

        def msg(channel: str, thread: str, n: int, author: str, text: str,
                is_bot: bool) -> IncomingMessage:
            return IncomingMessage(
                platform="slack", channel=channel, thread=thread,
                message_id=f"{channel}:{thread}:{n}", author_id=author, text=text,
                ts=T0 + timedelta(seconds=n), is_bot=is_bot)

        # Set-up, before the clock starts: a task, then an owner turn that is blocked.
        for channel, thread in rooms:
            await engine.on_message(msg(channel, thread, 0, HUMAN, "로그인 버그 고쳐줘", False))
            await engine.on_message(msg(
                channel, thread, 1, OWNER_BOT,
                "BLOCKED: `auth/session.py`를 고치려면 스테이징 DB 접근 권한이 필요합니다.", True))
        before = len(api.calls)

        start = time.perf_counter()
        if trigger == "tick":
            await engine.close_turns(force=True)
            await engine.drain()
        else:  # the reviewer answers everywhere at once: every owner turn closes
            await asyncio.gather(*(engine.on_message(msg(
                channel, thread, 2, REVIEWER, "권한이 없으면 진행할 수 없습니다. 확인해 주세요.",
                True)) for channel, thread in rooms))
        burst_done = time.perf_counter() - start
        result.pending_after_burst = await pending_count(storage)
        for _ in range(MAX_TICKS):  # bounded: tick() until the outbox is empty
            if not await storage.pending_rooms(["slack"], limit=1):
                break
            await engine.tick()
            result.ticks += 1
            await asyncio.sleep(TICK_PAUSE)
        result.wall = time.perf_counter() - start
        result.outbox, result.attempts = await outbox_counts(storage)
        result.burst_call = burst_done
        tally(api, rooms, t("progress", "ko"), result)
        result.requests = Counter(c.method for c in api.calls[before:])
        await storage.close()
    return result


def report(args: argparse.Namespace, results: list[Result]) -> None:
    base, bot = results[0], results[1]
    print(f"rooms: {args.rooms} over {args.channels} channels, all deadlocked at once "
          f"(trigger: {args.trigger})")
    print(f"fake Slack limit: chat.postMessage {args.rate:g}/s per channel, burst {args.burst} "
          f"(Slack's ~1/s scaled x{args.rate:g}); 429 carries Retry-After: 1 (unscaled)")
    print(f"transport pacing: {1.0 / args.rate:.3f} s per channel "
          f"(= the adapter's default 1.0 s, scaled)")
    print()
    width = 24
    print(f"{'':28}" + "".join(f"{r.label:>{width}}" for r in results))

    def row(name: str, values: list[str]) -> None:
        print(f"{name:28}" + "".join(f"{v:>{width}}" for v in values))

    row("posts expected", [str(r.expected) for r in results])
    row("  progress (postMessage)", [f"{r.progress_ok}/{r.rooms}" for r in results])
    row("  verdict (update)", [f"{r.verdict_ok}/{r.rooms}" for r in results])
    row("posts delivered", [str(r.delivered) for r in results])
    row("posts lost", [str(r.lost) for r in results])
    row("429 responses", [str(r.http_429) for r in results])
    row("chat.postMessage requests", [str(r.requests["chat.postMessage"]) for r in results])
    row("chat.update requests", [str(r.requests["chat.update"]) for r in results])
    row("wall time (s)", [f"{r.wall:.2f}" for r in results])
    row("outbox pending / failed", ["-"] + [
        f"{r.outbox.get('pending', 0)} / {r.outbox.get('failed', 0)}" for r in results[1:]])
    row("outbox sent / attempts", ["-"] + [
        f"{r.outbox.get('sent', 0)} / {r.attempts}" for r in results[1:]])
    row("outbox pending after burst", ["-"] + [str(r.pending_after_burst) for r in results[1:]])
    row("tick() calls to drain", ["-"] + [str(r.ticks) for r in results[1:]])
    print()
    for r in results:
        extra = "" if r.burst_call is None else (
            f"; the burst's on_message/close_turns calls returned after {r.burst_call:.2f} s")
        print(f"{r.label}: client errors {dict(r.errors) or 'none'}{extra}")
    ratio = (f"{base.http_429 / bot.http_429:.1f}x fewer" if bot.http_429 else
             f"{base.http_429} -> 0")
    print(f"429s, baseline / Tribunal   : {base.http_429} / {bot.http_429}  ({ratio})")
    print(f"lost, baseline / Tribunal   : {base.lost} / {bot.lost}"
          "  (baseline: a rejected post also loses its update)")
    print(f"wall, Tribunal / baseline   : {bot.wall / base.wall:.1f}x "
          f"(pacing spreads {bot.expected} posts at {args.rate:g}/s/channel)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--rate", type=float, default=20.0,
                        help="posts/s per channel the fake allows (Slack: ~1)")
    parser.add_argument("--burst", type=int, default=3, help="token bucket size per channel")
    parser.add_argument("--trigger", choices=("message", "tick"), default="message")
    parser.add_argument("--unpaced", action="store_true",
                        help="also run the bot with post_interval=0 (retry handler only)")
    args = parser.parse_args()
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        os.environ.pop(name, None)  # slack_sdk reads these; the fake is on 127.0.0.1
    rooms = rooms_of(args.rooms, args.channels)
    results = [await baseline(rooms, args.rate, args.burst)]
    with tempfile.TemporaryDirectory() as tmp:
        results.append(await pipeline(rooms, args.channels, args.rate, args.burst,
                                      args.trigger, True, Path(tmp) / "paced.db"))
        if args.unpaced:
            results.append(await pipeline(rooms, args.channels, args.rate, args.burst,
                                          args.trigger, False, Path(tmp) / "unpaced.db"))
    report(args, results)


if __name__ == "__main__":
    asyncio.run(main())

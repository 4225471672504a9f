"""A burst of simultaneous deadlocks against Slack's documented rate limits.

N rooms (threads over C channels) reach a deadlock at the same moment: each
room has an open owner turn `BLOCKED: ...` and the reviewer answers in every
room at once (concurrent `Engine.on_message`). Every room then needs two
deliveries: the progress message (chat.postMessage) and the verdict, an edit
of that message (chat.update) or, when the workspace's edits are too busy for
it, a new post below it (bot/outbox.py). Real Engine (`none` arbiter backend, system
clock), real SqliteStorage on a temporary file, real SlackTransport (pacing and
slack_sdk's retry handlers, as `tribunal run` builds it) over HTTP to the fake
Slack Web API on 127.0.0.1, with `engine.tick()` once a second as in production.

The fake enforces Slack's documented limits in real time, answering 429 with
an integer `Retry-After` beyond them:

* chat.postMessage: 1 per second per channel (token bucket, no burst assumed);
* chat.update: Tier 3, 50 per minute per workspace.

The figure is the time until every verdict is in place, beside the minimum
those limits allow for the same calls (the posts into the busiest channel, or
the edits, whichever take longer); then 429s received, and posts lost or
duplicated (a thread showing more than one progress post or verdict). A
second run uses a fake 20% stricter than the pacer assumes, to check that
Retry-After is honoured (no request on a limited channel or method before its
Retry-After elapsed) and that nothing is lost or duplicated.
Discord publishes no fixed numbers (its limits come in response headers); it
is not measured here.

    python -m bench.bench_burst [--rooms 500] [--channels 50] [--strict 1.2]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from aiohttp import web

from adapters.slack.transport import SlackTransport, make_client
from bench.harness import Options, Row
from bench.suite import row
from bot.clock import SystemClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage
from prompts.strings import t
from storage.sqlite import SqliteStorage
from tests.fakes.slack_api import BOT_TOKEN, Call, FakeSlackAPI, _parse_args

OWNER_BOT = "BOWNER"
REVIEWER = "UREVIEWER"
HUMAN = "UALICE"
POST_RATE = 1.0  # chat.postMessage per second per channel
UPDATE_RATE = 50 / 60  # chat.update per second per workspace (Tier 3)


@dataclass
class Bucket:
    rate: float
    burst: float = 1.0
    tokens: float = 1.0
    at: float = field(default_factory=time.monotonic)

    def take(self) -> float:
        """0 when a request may go now, else the seconds until one may."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class LimitedSlackAPI(FakeSlackAPI):
    """The fake Web API enforcing the per-channel and per-method limits."""

    def __init__(self, *, strictness: float = 1.0) -> None:
        super().__init__()
        self.post_rate = None  # the base class's simpler limit stays off
        self.strictness = strictness
        self.buckets: dict[str, Bucket] = {}
        self.retry_until: dict[str, float] = {}
        self.limited: Counter[str] = Counter()
        self.too_early: Counter[str] = Counter()  # requests before their Retry-After elapsed
        self.done_at: dict[tuple[str, str], float] = {}  # (channel, ts) -> last change
        self.refused: list[Call] = []  # the calls answered 429

    def _key(self, method: str, args: dict[str, Any]) -> tuple[str, float] | None:
        if method == "chat.postMessage":
            return f"post:{args.get('channel', '')}", POST_RATE / self.strictness
        if method == "chat.update":
            return "update", UPDATE_RATE / self.strictness
        return None

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _parse_args(request)  # aiohttp caches the body for super()
        limit = self._key(method, args)
        if limit is not None:
            key, rate = limit
            now = time.monotonic()
            if now < self.retry_until.get(key, 0.0):
                self.too_early[method] += 1
            wait = self.buckets.setdefault(key, Bucket(rate)).take()
            if wait > 0:
                retry_after = max(1, math.ceil(wait))
                self.retry_until[key] = now + retry_after
                call = Call(method, args, dict(request.headers))
                self.calls.append(call)
                self.refused.append(call)
                self.limited[method] += 1
                return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                         headers={"Retry-After": str(retry_after)})
        response = await super()._api(request)
        if method in ("chat.postMessage", "chat.update") and response.status == 200:
            channel = str(args.get("channel", ""))
            ts = str(args.get("ts", "")) or self._last_ts(channel)
            self.done_at[(channel, ts)] = time.monotonic()
        return response

    def _last_ts(self, channel: str) -> str:
        mine = [ts for (ch, ts) in self.messages if ch == channel]
        return max(mine) if mine else ""


def rooms_of(n: int, channels: int) -> list[tuple[str, str]]:
    """(channel, thread_ts) for n rooms spread round-robin over the channels."""
    return [(f"C0BURST{i % channels:02d}", f"1764410400.{i + 1:06d}") for i in range(n)]


def minimum(rooms: list[tuple[str, str]], strictness: float, *,
            posts_per_channel: Counter[str] | None = None, updates: int | None = None) -> float:
    """Seconds the limits force at least: the busiest channel's posts, and the updates.

    Without counts: a progress post per room and an update of each (the most
    the run can need); with them, for the calls the run made."""
    per_channel = posts_per_channel or Counter(channel for channel, _ in rooms)
    edits = len(rooms) if updates is None else updates
    posts = (max(per_channel.values()) - 1) / (POST_RATE / strictness)
    return max(posts, max(0, edits - 1) / (UPDATE_RATE / strictness))


@dataclass
class Result:
    rooms: int
    seconds: float | None = None  # until every verdict was in place
    minimum: float = 0.0  # for the calls made (an update per verdict at most)
    all_edits: float = 0.0  # had every verdict been an update
    anew: int = 0  # verdicts posted below their progress post
    delivered: int = 0
    lost: int = 0
    duplicated: int = 0
    limited: Counter[str] = field(default_factory=Counter)
    too_early: Counter[str] = field(default_factory=Counter)
    requests: Counter[str] = field(default_factory=Counter)
    outbox: dict[str, int] = field(default_factory=dict)
    strictness: float = 1.0


def tally(api: LimitedSlackAPI, rooms: list[tuple[str, str]], progress: str, start: float,
          result: Result) -> None:
    last = 0.0
    for channel, thread in rooms:
        posts = [(ts, m) for (ch, ts), m in api.messages.items()
                 if ch == channel and m.get("thread_ts") == thread]
        verdicts = [ts for ts, m in posts if m["text"] != progress]
        if verdicts:
            result.delivered += 1
            last = max(last, *(api.done_at.get((channel, ts), 0.0) for ts in verdicts))
        else:
            result.lost += 1
        # One progress post, edited into the verdict or followed by it: anything
        # more is shown twice.
        result.duplicated += max(0, len(verdicts) - 1) + max(0, len(posts) - len(verdicts) - 1)
        result.anew += len(posts) == 2 and len(verdicts) == 1
    result.seconds = last - start if result.lost == 0 else None
    result.limited = Counter(api.limited)
    result.too_early = Counter(api.too_early)
    result.requests = Counter(c.method for c in api.calls)
    refused = {id(c) for c in api.refused}
    sent = [c for c in api.calls if id(c) not in refused]
    result.all_edits = result.minimum
    result.minimum = minimum(
        rooms, result.strictness,
        posts_per_channel=Counter(str(c.args.get("channel", "")) for c in sent
                                  if c.method == "chat.postMessage"),
        updates=sum(c.method == "chat.update" for c in sent))


async def burst(rooms: list[tuple[str, str]], channels: int, db: Path, strictness: float,
                limit: float, verbose: bool = False) -> Result:
    result = Result(len(rooms), minimum=minimum(rooms, strictness), strictness=strictness)
    api = LimitedSlackAPI(strictness=strictness)
    await api.start()
    try:
        settings = Settings(_env_file=None, database=str(db),  # type: ignore[call-arg]
                            arbiter_backend="none", language="ko")
        storage = SqliteStorage(str(db))
        await storage.open()
        clock = SystemClock()
        engine = Engine(settings, storage, clock)
        # As `tribunal run` builds it (SlackAdapter's defaults).
        engine.register_transport(SlackTransport(make_client(BOT_TOKEN, api.url),
                                                 post_interval=1.0))
        await engine.start()
        for i in range(channels):
            await engine.admin.configure_channel(
                "slack", f"C0BURST{i:02d}", owner=[OWNER_BOT], reviewer=[REVIEWER], settings={})

        def msg(channel: str, thread: str, n: int, author: str, text: str,
                is_bot: bool) -> IncomingMessage:
            return IncomingMessage(
                platform="slack", channel=channel, thread=thread,
                message_id=f"{channel}:{thread}:{n}", author_id=author, text=text,
                ts=clock.now() + timedelta(milliseconds=n), is_bot=is_bot)

        for channel, thread in rooms:  # set-up: a task, then an owner turn that is blocked
            await engine.on_message(msg(channel, thread, 0, HUMAN, "로그인 버그 고쳐줘", False))
            await engine.on_message(msg(
                channel, thread, 1, OWNER_BOT,
                "BLOCKED: `auth/session.py`를 고치려면 스테이징 DB 접근 권한이 필요합니다.", True))
        api.calls.clear()

        stop = asyncio.Event()

        async def ticker() -> None:  # as `tribunal run`: tick() about once a second
            while not stop.is_set():
                await engine.tick()
                try:
                    await asyncio.wait_for(stop.wait(), 1.0)
                except TimeoutError:
                    pass

        start = time.monotonic()
        ticks = asyncio.create_task(ticker())
        await asyncio.gather(*(engine.on_message(msg(
            channel, thread, 2, REVIEWER, "권한이 없으면 진행할 수 없습니다. 확인해 주세요.", True))
            for channel, thread in rooms))
        progress = t("progress", "ko")
        while time.monotonic() - start < limit:
            pending = await storage._one(
                "SELECT COUNT(*) AS n FROM outbox WHERE status = 'pending'")
            if pending is not None and pending["n"] == 0 and not engine.arbitration.carrying:
                break
            await asyncio.sleep(0.2)
        stop.set()
        await ticks
        tally(api, rooms, progress, start, result)
        rows = await storage._all("SELECT status, COUNT(*) AS n FROM outbox GROUP BY status")
        result.outbox = {str(r["status"]): int(r["n"]) for r in rows}
        await engine.drain()
        await storage.close()
    finally:
        await api.stop()
    if verbose:
        print(f"  strictness {strictness}: {result}")
    return result


def _per_method(counts: Counter[str]) -> str:
    return ", ".join(f"{m} {counts.get(m, 0)}" for m in ("chat.postMessage", "chat.update"))


async def measure(rooms_n: int, channels: int, strict: float, verbose: bool = False
                  ) -> tuple[Result, Result]:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        os.environ.pop(name, None)  # slack_sdk reads these; the fake is on 127.0.0.1
    if not verbose:  # every 429 is logged as a warning: hundreds of lines
        logging.basicConfig(level=logging.ERROR)
    rooms = rooms_of(rooms_n, channels)
    with tempfile.TemporaryDirectory() as tmp:
        normal = await burst(rooms, channels, Path(tmp) / "normal.db", 1.0,
                             limit=2.0 * minimum(rooms, 1.0) + 60, verbose=verbose)
        stricter = await burst(rooms, channels, Path(tmp) / "strict.db", strict,
                               limit=2.0 * minimum(rooms, strict) + 60, verbose=verbose)
    return normal, stricter


async def run(options: Options) -> list[Row]:
    rooms, channels = (25, 5) if options.quick else (500, 50)
    normal, strict = await measure(rooms, channels, 1.2, options.verbose)

    def lost(r: Result) -> str:
        pending = r.outbox.get("pending", 0)
        return (f"{r.lost} of {rooms} verdicts not in place when the run stopped after"
                f" {2 * r.all_edits + 60:.0f} s ({pending} posts still pending in the outbox),"
                f" {r.duplicated} posts duplicated")

    setup = (f"{rooms} deadlocks at once over {channels} channels; fake Slack: chat.postMessage"
             f" 1/s per channel, chat.update 50/min per workspace")
    update_note = ("; chat.update is not paced to its per-workspace tier, and a Retry-After"
                   " answered to one request does not hold back the others"
                   if normal.limited.get("chat.update") else "")
    delivered = ("every verdict delivered" if normal.seconds is not None else
                 f"{normal.lost} verdicts not in place after {2 * normal.all_edits + 60:.0f} s")
    return [
        row("burst_delivery", normal.seconds, baseline=normal.minimum,
            note=(f"{setup}; baseline = the minimum those limits allow for the calls made"
                  f" ({rooms - normal.anew} verdicts edited into their progress post,"
                  f" {normal.anew} posted below it as the edits were busy; had every verdict"
                  f" been an edit, {normal.all_edits:.0f} s); {delivered};"
                  f" outbox {normal.outbox}")),
        row("burst_429", sum(normal.limited.values()),
            note=f"429s by method: {_per_method(normal.limited)}{update_note}"),
        row("burst_lost", normal.lost + normal.duplicated, note=lost(normal)),
        row("burst_strict_lost", strict.lost + strict.duplicated,
            note=(f"fake 20% stricter than the pacer assumes: {lost(strict)};"
                  f" 429s {_per_method(strict.limited)}; delivered in"
                  f" {'-' if strict.seconds is None else f'{strict.seconds:.0f} s'}"
                  f" (minimum {strict.minimum:.0f} s for the calls made)")),
        row("burst_strict_retry_after", sum(strict.too_early.values()),
            note=(f"requests sent before the Retry-After of their channel or method elapsed"
                  f" (each request waits out its own 429; concurrent ones for other rooms do"
                  f" not): {_per_method(strict.too_early)}")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--channels", type=int, default=50)
    parser.add_argument("--strict", type=float, default=1.2,
                        help="second run: the fake's limits divided by this")
    args = parser.parse_args()
    normal, strict = asyncio.run(measure(args.rooms, args.channels, args.strict, verbose=True))
    for label, r in (("as documented", normal), (f"{args.strict}x stricter", strict)):
        secs = "-" if r.seconds is None else f"{r.seconds:.1f} s"
        print(f"{label:>14}: delivered {r.delivered}/{r.rooms} in {secs} (minimum"
              f" {r.minimum:.1f} s for the calls made, {r.all_edits:.1f} s had all been"
              f" edits; {r.anew} posted anew); lost {r.lost}, duplicated {r.duplicated}; 429s"
              f" {_per_method(r.limited)}; too early {_per_method(r.too_early)};"
              f" requests {dict(r.requests)}; outbox {r.outbox}")


if __name__ == "__main__":
    main()

"""429s per Slack method when many rooms deadlock at once: old pacing vs new.

N rooms (threads spread over C channels) reach a deadlock at the same moment
(the reviewer answers in every room at once). Each room needs a progress
message (chat.postMessage) and its verdict (chat.update of that message);
then N private replies go out at once (chat.postEphemeral).
Real Engine (`none` arbiter backend), real SqliteStorage, real SlackTransport
with slack_sdk's retry handlers, over HTTP to the fake Web API on 127.0.0.1,
which enforces Slack's documented per-method limits (tests/fakes/slack_api.py
SLACK_LIMITS) on a discrete-event clock: the pacer's waits and slack_sdk's
Retry-After sleeps wait for virtual time, which jumps to the next deadline
whenever nothing else is going on, so the run is short and the counts hardly
depend on the machine.

- "postMessage only": the pacing before this change (chat.postMessage per
  channel; chat.update and chat.postEphemeral unpaced);
- "every method": Slack's limit for every method (adapters.slack.transport).

Figures, not a test: nothing is asserted.

    python bench/bench_pacing.py [--rooms 200] [--channels 20]
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import itertools
import os
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests` is not a package; make tests.fakes importable
    sys.path.insert(0, str(ROOT))

from aiohttp import web  # noqa: E402
from slack_sdk.http_retry import builtin_async_handlers  # noqa: E402

from adapters.slack.transport import SLACK_LIMITS, SlackPacer, SlackTransport, make_client  # noqa: E402
from bot.clock import ManualClock  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.engine import Engine  # noqa: E402
from bot.models import IncomingMessage, RoomKey  # noqa: E402
from prompts.strings import t  # noqa: E402
from storage.sqlite import SqliteStorage  # noqa: E402
from tests.fakes.slack_api import BOT_TOKEN, FakeSlackAPI  # noqa: E402
from tests.fakes.slack_api import SLACK_LIMITS as FAKE_LIMITS  # noqa: E402

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
MAX_TICKS = 500
TICK = 5.0  # virtual seconds between ticks while the outbox drains
QUIET_TURNS = 40  # loop turns of 0.5 ms with nothing new before time jumps


class DiscreteTime:
    """Virtual time that moves to the earliest sleeper's deadline once all is quiet.

    Unlike the tests' VirtualTime, a long sleep (a 60 s Retry-After) does not
    carry everyone else 60 s ahead: each sleeper wakes at its own deadline,
    in deadline order, and everything due earlier runs first.
    """

    def __init__(self, api_busy: Callable[[], bool] = lambda: False) -> None:
        self._now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self.activity = 0
        self.api_busy = api_busy

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        self.activity += 1
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), future))
        await future

    async def drive(self) -> None:
        """Run forever (cancel it): wake the next sleeper whenever nothing else moves."""
        while True:
            quiet = 0
            while quiet < QUIET_TURNS:
                seen = self.activity
                await asyncio.sleep(0.0005)
                busy = self.activity != seen or self.api_busy() or not self._sleepers
                quiet = 0 if busy else quiet + 1
            deadline, _, future = heapq.heappop(self._sleepers)
            self._now = max(self._now, deadline)
            future.set_result(None)


async def run(label: str, limits: dict, n: int, channels: int, db: Path) -> dict[str, object]:
    vt = DiscreteTime()
    calls = {"in_flight": 0, "retry_sleeping": 0}

    async def retry_sleep(seconds: float) -> None:
        calls["retry_sleeping"] += 1
        try:
            await vt.sleep(seconds)
        finally:
            calls["retry_sleeping"] -= 1

    # slack_sdk's 429 handler sleeps Retry-After: on the virtual clock here.
    builtin_async_handlers.asyncio = types.SimpleNamespace(sleep=retry_sleep)  # type: ignore[attr-defined]
    async with BusyFake(limits=FAKE_LIMITS, virtual_time=vt) as api:  # type: ignore[arg-type]
        # Time does not jump while a call is on its way (a client queueing
        # connections, the fake answering), only while calls wait on time.
        vt.api_busy = lambda: (api.in_flight > 0
                               or calls["in_flight"] > calls["retry_sleeping"])
        driver = asyncio.create_task(vt.drive())
        settings = Settings(_env_file=None, database=str(db),  # type: ignore[call-arg]
                            arbiter_backend="none", language="ko")
        storage = SqliteStorage(str(db))
        await storage.open()
        clock = ManualClock(T0)
        engine = Engine(settings, storage, clock)
        transport = SlackTransport(make_client(BOT_TOKEN, api.url))
        transport.pacer = CountingPacer(calls, limits, clock=vt.now, sleep=vt.sleep)
        engine.register_transport(transport)
        await engine.start()
        rooms = [(f"C0BURST{i % channels}", f"1764410400.{i + 1:06d}") for i in range(n)]
        for i in range(channels):
            await engine.admin.configure_channel(
                "slack", f"C0BURST{i}", owner=["BOWNER"], reviewer=["UREVIEWER"], settings={})

        def say(channel: str, thread: str, k: int, author: str, text: str) -> IncomingMessage:
            return IncomingMessage(platform="slack", channel=channel, thread=thread,
                                   message_id=f"{channel}:{thread}:{k}", author_id=author,
                                   text=text, ts=T0 + timedelta(seconds=k),
                                   is_bot=author != "UALICE")

        for channel, thread in rooms:
            await engine.on_message(say(channel, thread, 0, "UALICE", "로그인 버그 고쳐줘"))
            await engine.on_message(say(channel, thread, 1, "BOWNER",
                                        "BLOCKED: 스테이징 DB 권한이 필요합니다."))
        start_virtual, start_wall = vt.now(), time.perf_counter()
        await asyncio.gather(*(engine.on_message(say(c, th, 2, "UREVIEWER", "확인해 주세요."))
                               for c, th in rooms))
        ticks = 0
        while await storage.pending_rooms(["slack"], limit=1) and ticks < MAX_TICKS:
            clock.advance(TICK)
            await vt.sleep(TICK)
            await engine.tick()
            ticks += 1
        # Then as many private replies at once (late or refused button clicks).
        channel, thread = rooms[0]
        await asyncio.gather(*(transport.post_private(RoomKey("slack", channel, thread),
                                                      f"U{i:05d}", "권한이 없습니다")
                               for i in range(n)), return_exceptions=True)
        progress = t("progress", "ko")
        mine = [m for m in api.messages.values() if m.get("thread_ts")]
        result: dict[str, object] = {
            "label": label,
            "429": dict(api.rate_limited_by),
            "requests": dict(Counter(c.method for c in api.calls)),
            "verdicts": sum(1 for m in mine if m["text"] != progress),
            "virtual_s": round(vt.now() - start_virtual),
            "wall_s": round(time.perf_counter() - start_wall, 1),
            "ticks": ticks,
        }
        await storage.close()
        driver.cancel()
    return result


class CountingPacer(SlackPacer):
    """The adapter's pacer, counting the calls it let go that have not returned."""

    def __init__(self, calls: dict[str, int], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls = calls

    async def run(self, method: str, channel: str, call: Callable[[], Awaitable[Any]]) -> Any:
        async def counted() -> Any:
            self.calls["in_flight"] += 1
            try:
                return await call()
            finally:
                self.calls["in_flight"] -= 1

        return await super().run(method, channel, counted)


class BusyFake(FakeSlackAPI):
    """The fake, counting requests in progress (time must not jump under them)."""

    in_flight = 0

    async def _api(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        try:
            return await super()._api(request)
        finally:
            self.in_flight -= 1


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=200)
    parser.add_argument("--channels", type=int, default=20)
    args = parser.parse_args()
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        os.environ.pop(name, None)  # slack_sdk reads these; the fake is on 127.0.0.1
    modes = [("postMessage only", {"chat.postMessage": SLACK_LIMITS["chat.postMessage"]}),
             ("every method", SLACK_LIMITS)]
    print(f"{args.rooms} rooms over {args.channels} channels deadlock at once")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, limits) in enumerate(modes):
            result = await run(label, limits, args.rooms, args.channels,
                               Path(tmp) / f"{i}.db")
            print(result)


if __name__ == "__main__":
    asyncio.run(main())

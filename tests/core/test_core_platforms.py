"""PlatformRunner: one platform's start, retries with backoff, and stopping for
good, with scripted adapters and a recorded sleep (no real waiting)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest

from bot.models import MessageKind, OutgoingMessage, RoomKey
from bot.platforms import PlatformFatal, PlatformRunner
from bot.ports import ReportsPace, TransportError

ROOM = RoomKey("slack", "C1", "1.0")


class Posts:
    platform = "slack"

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        self.sent.append(message.text)
        return "ts-1"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        self.sent.append(message.text)

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        self.sent.append(text)


class Scripted:
    """start() fails as scripted, then runs until `drop` is set (or for ever)."""

    def __init__(self, starts: list[BaseException | None]) -> None:
        self.starts = starts
        self.started = 0
        self.running = 0
        self.stopped = 0
        self.drop: asyncio.Event = asyncio.Event()
        self.transport = Posts()
        self._progress = asyncio.Condition()

    async def until(self, check: Callable[[], bool]) -> None:
        async with self._progress:
            await asyncio.wait_for(self._progress.wait_for(check), 5)

    async def _note(self) -> None:
        async with self._progress:
            self._progress.notify_all()

    async def start(self) -> None:
        self.started += 1
        await self._note()
        outcome = self.starts.pop(0) if self.starts else None
        if outcome is not None:
            raise outcome

    async def wait_closed(self) -> None:
        self.running += 1
        await self._note()
        await self.drop.wait()
        self.drop = asyncio.Event()
        raise ConnectionError("gateway went away")

    async def stop(self) -> None:
        self.stopped += 1


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


async def test_a_platform_that_cannot_start_is_retried_with_backoff_then_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refused = OSError(111, "Connect call failed ('127.0.0.1', 9)")
    adapter = Scripted([refused] * 8)
    sleeps = Sleeps()
    runner = PlatformRunner("discord", adapter, sleep=sleeps, max_delay=60)
    with caplog.at_level(logging.WARNING, "tribunal.platforms"):
        task = asyncio.create_task(runner.run())
        await adapter.until(lambda: adapter.running == 1)
    assert sleeps.delays == [1, 2, 4, 8, 16, 32, 60, 60]
    assert runner.transport.up and adapter.stopped == 8  # each failed attempt cleaned up
    assert "discord: not available (ConnectionRefusedError: [Errno 111] Connect call failed" in caplog.text
    assert "retrying in 1 s (attempt 1)" in caplog.text
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert adapter.stopped == 9 and not runner.transport.up  # cancelled: stopped too


async def test_refused_credentials_stop_the_platform_for_good(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = Scripted([ConnectionError("down"),
                        PlatformFatal("Slack refused SLACK_BOT_TOKEN (invalid_auth)")])
    sleeps = Sleeps()
    runner = PlatformRunner("slack", adapter, sleep=sleeps)
    with caplog.at_level(logging.ERROR, "tribunal.platforms"):
        await asyncio.wait_for(runner.run(), 5)
    assert runner.failure == "Slack refused SLACK_BOT_TOKEN (invalid_auth)"
    assert sleeps.delays == [1] and adapter.started == 2 and adapter.stopped == 2
    assert "slack: stopped: Slack refused SLACK_BOT_TOKEN" in caplog.text


async def test_a_dropped_platform_comes_back_and_a_long_run_resets_the_backoff() -> None:
    now = [0.0]
    adapter = Scripted([ConnectionError("refused")])
    sleeps = Sleeps()
    runner = PlatformRunner("discord", adapter, sleep=sleeps, monotonic=lambda: now[0])
    task = asyncio.create_task(runner.run())

    await adapter.until(lambda: adapter.running == 1)
    adapter.drop.set()  # dropped right away: the backoff goes on growing
    await adapter.until(lambda: adapter.running == 2)
    now[0] += 3600  # an hour up: that outage is over
    adapter.drop.set()
    await adapter.until(lambda: adapter.running == 3)
    assert sleeps.delays == [1, 2, 1]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_posts_wait_while_the_platform_is_down() -> None:
    adapter = Scripted([])
    runner = PlatformRunner("slack", adapter, sleep=Sleeps())
    message = OutgoingMessage(kind=MessageKind.VERDICT, text="verdict")
    with pytest.raises(TransportError) as info:
        await runner.transport.post(ROOM, message)
    assert not info.value.permanent and "slack is not connected" in str(info.value)
    task = asyncio.create_task(runner.run())
    await adapter.until(lambda: adapter.running == 1)
    assert await runner.transport.post(ROOM, message) == "ts-1"
    await runner.transport.post_private(ROOM, "U1", "psst")
    assert adapter.transport.sent == ["verdict", "psst"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


class PacedPosts(Posts):
    def expected_wait(self, call: str, room: RoomKey) -> float:
        return 80.0 if call == "edit" else 1.0


def test_the_gate_passes_on_its_transports_pace_or_says_it_has_none() -> None:
    """The outbox weighs an edit against a new post only when the platform's
    transport can tell how long each would wait (bot/outbox.py)."""
    paced = Scripted([])
    paced.transport = PacedPosts()
    gate = PlatformRunner("slack", paced, sleep=Sleeps()).transport
    assert isinstance(gate, ReportsPace)
    # asked even while the platform is down: a guess, not a call
    assert (gate.expected_wait("edit", ROOM), gate.expected_wait("post", ROOM)) == (80.0, 1.0)
    plain = PlatformRunner("slack", Scripted([]), sleep=Sleeps()).transport
    assert plain.expected_wait("edit", ROOM) is None

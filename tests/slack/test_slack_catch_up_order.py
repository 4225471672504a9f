"""Catch-up reads the rooms people are waiting in while the channels' histories
are still being paged: `conversations.history` and `conversations.replies` are
separate Tier 3 buckets, so neither waits for the other. Real HTTP to the fake
Web API, which enforces the documented limits on virtual time (the pacer
sleeps on it: minutes of pacing take none)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from adapters.slack.catchup import SlackCatchUp
from adapters.slack.translate import Identity
from adapters.slack.transport import SlackPacer, SlackTransport, make_client
from bot.catchup import CatchUpPlan, Fetch, RoomMark
from bot.models import RoomKey
from tests.fakes.slack_api import BOT_TOKEN, SLACK_LIMITS, FakeSlackAPI, VirtualTime

CHANNELS = [f"C0WAIT{c:02d}" for c in range(12)]
BEFORE = 1764400000  # stored history ends here (seconds)
DOWN = BEFORE + 600  # posted while the bot was down


class RecordingCore:
    """The core's side of catch-up: a plan, and each room's fetch run and counted."""

    def __init__(self, plan: CatchUpPlan) -> None:
        self.plan = plan
        self.read: list[tuple[str, int]] = []

    async def catch_up_plan(self, platform: str) -> CatchUpPlan:
        return self.plan

    async def catch_up(self, room: RoomKey, fetch: Fetch) -> int:
        found = await fetch()
        self.read.append((room.id, len(found)))
        return len(found)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI(limits=SLACK_LIMITS, virtual_time=VirtualTime()) as api:
        yield api


def post(api: FakeSlackAPI, channel: str, ts: str, thread: str, text: str) -> None:
    event = {"ts": ts, "user": "UALICE", "text": text}
    if ts != thread:
        event["thread_ts"] = thread
    api.add_message(channel, event)


def mark(channel: str, ts: str) -> RoomMark:
    return RoomMark(RoomKey("slack", channel, ts), f"{channel}:{ts}",
                    datetime.fromtimestamp(float(ts), UTC))


async def test_waiting_rooms_are_read_while_channel_histories_are_paged(
    slack: FakeSlackAPI,
) -> None:
    # Three open rooms, each with a reply posted while the bot was down.
    open_rooms = []
    for n, channel in enumerate(CHANNELS[:3]):
        thread = f"{BEFORE + n}.000100"
        post(slack, channel, thread, thread, "task")
        post(slack, channel, f"{DOWN + n}.000200", thread, "missed reply")
        open_rooms.append(mark(channel, thread))
    # A thread begun during the outage, in the channel whose history is read last.
    last = CHANNELS[-1]
    new = f"{DOWN + 100}.000300"
    post(slack, last, new, new, "a new task")
    post(slack, last, f"{DOWN + 101}.000400", new, "its first reply")
    plan = CatchUpPlan(channels={c: mark(c, f"{BEFORE + 50}.000000") for c in CHANNELS},
                       rooms=sorted(open_rooms, key=lambda m: m.last_ts, reverse=True))
    core = RecordingCore(plan)
    assert slack.time is not None
    transport = SlackTransport(make_client(BOT_TOKEN, slack.url))
    transport.pacer = SlackPacer(clock=slack.time.now, sleep=slack.time.sleep)

    new_messages = await SlackCatchUp(core, transport, Identity("UBOT", "BBOT", "T1")).run()

    # Every room once, the most recently active first among those known at the
    # time; the new thread (found by the last history page) read whole. Slack
    # returns a thread's parent with its replies (the core drops what it has).
    assert core.read == [
        ("slack:C0WAIT02:1764400002.000100", 2), ("slack:C0WAIT01:1764400001.000100", 2),
        ("slack:C0WAIT00:1764400000.000100", 2), (f"slack:{last}:{new}", 2),
    ]
    assert new_messages == 8
    methods = [c.method for c in slack.calls]
    histories = [i for i, m in enumerate(methods) if m == "conversations.history"]
    replies = [i for i, m in enumerate(methods) if m == "conversations.replies"]
    assert len(histories) == len(CHANNELS) and len(replies) == 4
    # The waiting rooms did not wait for the twelve histories (about 15 s at Tier 3).
    assert replies[2] < histories[-1]
    new_read = next(c for c in slack.calls if c.method == "conversations.replies"
                    and c.args.get("ts") == new)
    assert "oldest" not in new_read.args
    assert dict(slack.rate_limited_by) == {}

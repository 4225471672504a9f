"""Every method Slack rate-limits is paced by its documented limit: a burst of
verdict edits queues instead of drawing 429s. The fake enforces the limits on
virtual time, which the pacer sleeps on, so minutes of pacing take none."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.transport import SLACK_LIMITS as ADAPTER_LIMITS
from adapters.slack.transport import RateLimit, SlackPacer, SlackTransport, make_client
from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, MessageKind, OutgoingMessage, RoomKey
from bot.pacing import SharedPacing
from prompts.strings import t
from storage.sqlite import SqliteStorage
from tests.fakes.slack_api import BOT_TOKEN, SLACK_LIMITS, FakeSlackAPI, Limit, VirtualTime

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


@pytest.fixture
async def limited() -> AsyncIterator[FakeSlackAPI]:
    """A fake workspace of its own: some tests here draw 429s on purpose."""
    async with FakeSlackAPI(limits=SLACK_LIMITS, virtual_time=VirtualTime()) as api:
        yield api


def paced(api: FakeSlackAPI, *, limits: dict | None = None) -> SlackTransport:
    assert api.time is not None
    transport = SlackTransport(make_client(BOT_TOKEN, api.url))
    transport.pacer = SlackPacer(limits, clock=api.time.now, sleep=api.time.sleep)
    return transport


def rooms(n: int, channels: int) -> list[RoomKey]:
    return [RoomKey("slack", f"C0BURST{i % channels}", f"1764410400.{i + 1:06d}")
            for i in range(n)]


async def test_simultaneous_verdict_edits_all_land_without_a_429(
    limited: FakeSlackAPI,
) -> None:
    transport = paced(limited)
    targets = rooms(120, channels=12)
    progress = OutgoingMessage(kind=MessageKind.PROGRESS, text="검토 중")
    ids = await asyncio.gather(*(transport.post(r, progress) for r in targets))
    verdicts = [OutgoingMessage(kind=MessageKind.VERDICT, text=f"REVISE room {i}")
                for i in range(len(targets))]
    await asyncio.gather(*(transport.edit(r, i, v) for r, i, v in zip(targets, ids, verdicts,
                                                                      strict=True)))
    assert dict(limited.rate_limited_by) == {}
    assert len(limited.calls_to("chat.update")) == len(targets)  # each edit once, no retry
    for message_id, verdict in zip(ids, verdicts, strict=True):
        channel, ts = message_id.split(":")
        assert limited.messages[(channel, ts)]["text"] == verdict.text


async def test_private_replies_are_paced_too(limited: FakeSlackAPI) -> None:
    transport = paced(limited)
    room = RoomKey("slack", "C0WATCH", "1764410400.000001")
    await asyncio.gather(*(transport.post_private(room, f"U{i:04d}", "권한이 없습니다")
                           for i in range(130)))
    assert dict(limited.rate_limited_by) == {}
    assert len(limited.calls_to("chat.postEphemeral")) == 130


async def test_the_fake_refuses_what_an_unpaced_client_sends(limited: FakeSlackAPI) -> None:
    """Without pacing the same burst draws 429s: the zero above is the pacer's doing."""
    client = AsyncWebClient(token=BOT_TOKEN, base_url=limited.url, retry_handlers=[])
    posted = [await paced(limited).client.chat_postMessage(channel=f"C{i}", text="p")
              for i in range(60)]

    async def update(i: int) -> None:
        try:
            await client.chat_update(channel=f"C{i}", ts=str(posted[i]["ts"]), text="v")
        except SlackApiError as exc:
            assert exc.response.status_code == 429

    await asyncio.gather(*(update(i) for i in range(60)))
    assert limited.rate_limited_by["chat.update"] == 60 - SLACK_LIMITS["chat.update"].calls


def test_the_adapter_paces_every_method_the_fake_limits() -> None:
    assert set(SLACK_LIMITS) <= set(ADAPTER_LIMITS)
    for method, limit in SLACK_LIMITS.items():
        ours = ADAPTER_LIMITS[method]
        assert ours.per_channel == limit.per_channel
        assert ours.calls / ours.per <= limit.calls / limit.per  # never faster than Slack's


async def test_a_burst_of_deadlocks_through_the_engine_draws_no_429(
    limited: FakeSlackAPI, tmp_path: Path
) -> None:
    """80 rooms over 8 channels deadlock at once: 80 progress posts and 80 verdicts.

    The verdicts' 80 edits would queue in Slack's one chat.update bucket of
    the workspace (over a minute): a verdict whose edit would wait much longer
    than a new post into its thread is posted anew, below its progress post."""
    settings = Settings(_env_file=None, database=str(tmp_path / "b.db"),  # type: ignore[call-arg]
                        arbiter_backend="none", language="ko")
    storage = SqliteStorage(settings.database)
    await storage.open()
    engine = Engine(settings, storage, ManualClock(T0))
    engine.register_transport(paced(limited))
    await engine.start()
    targets = rooms(80, channels=8)
    try:
        for channel in sorted({r.channel for r in targets}):
            await engine.admin.configure_channel(
                "slack", channel, owner=["BOWNER"], reviewer=["UREVIEWER"], settings={})

        def say(room: RoomKey, n: int, author: str, text: str) -> IncomingMessage:
            return IncomingMessage(
                platform="slack", channel=room.channel, thread=room.thread,
                message_id=f"{room.channel}:{room.thread}:{n}", author_id=author, text=text,
                ts=T0 + timedelta(seconds=n), is_bot=author != "UALICE")

        for room in targets:
            await engine.on_message(say(room, 0, "UALICE", "로그인 버그 고쳐줘"))
            await engine.on_message(say(room, 1, "BOWNER", "BLOCKED: 스테이징 DB 권한이 필요합니다."))
        # The reviewer answers everywhere at once: every owner turn closes, every
        # room is arbitrated, every room gets its verdict.
        await asyncio.gather(*(engine.on_message(say(r, 2, "UREVIEWER", "권한을 확인해 주세요."))
                               for r in targets))
        await engine.drain()
        assert dict(limited.rate_limited_by) == {}
        assert await storage.pending_rooms(["slack"]) == []
        progress = t("progress", "ko")
        anew = 0
        for room in targets:
            thread = sorted((m for (c, _), m in limited.messages.items()
                             if c == room.channel and m.get("thread_ts") == room.thread),
                            key=lambda m: float(m["ts"]))
            texts = [m["text"] for m in thread]
            # One verdict in every room, never two: the progress post edited
            # into it, or followed by it.
            assert [x.startswith("ESCALATE") for x in texts] in ([True], [False, True]), texts
            if len(thread) == 2:
                assert texts[0] == progress
                anew += 1
        edits = len(limited.calls_to("chat.update"))
        assert edits + anew == len(targets)  # each verdict went out once
        assert edits > 0 and anew > 0  # the first edits waited for nothing
    finally:
        await storage.close()


@pytest.mark.parametrize("shared", [True, False])
async def test_two_instances_posting_into_one_channel_share_its_pace(
    tmp_path: Path, shared: bool
) -> None:
    """Two processes' transports (each with its own pacer) on one database:
    their posts into one channel are spaced as one app's; without the shared
    pacing the same posts draw 429s (the control). Real time here (a channel
    allowing a post every 0.3 s): two pacers sleeping at once on the fake's
    virtual clock would each move it by their whole wait."""
    limit = {"chat.postMessage": Limit(1, 0.3, per_channel=True)}
    async with FakeSlackAPI(limits=limit) as api:
        stores = [SqliteStorage(str(tmp_path / "pace.db")) for _ in range(2)]
        for store in stores:
            await store.open()
        try:
            instances = []
            for store in stores:
                transport = SlackTransport(make_client(BOT_TOKEN, api.url))
                transport.pacer = SlackPacer(
                    {"chat.postMessage": RateLimit(1, 0.3, per_channel=True)},
                    post_interval=0.3)
                if shared:
                    transport.pacer.share(SharedPacing(store))
                instances.append(transport)
            room = RoomKey("slack", "C0SHARED", "1764410400.000001")
            notice = OutgoingMessage(kind=MessageKind.NOTICE, text="알림")
            await asyncio.gather(*(t.post(room, notice) for t in instances for _ in range(3)))
            assert len([m for (c, _), m in api.messages.items() if c == "C0SHARED"]) == 6
            if shared:
                assert dict(api.rate_limited_by) == {}
            else:
                assert api.rate_limited_by["chat.postMessage"] > 0
        finally:
            for store in stores:
                await store.close()

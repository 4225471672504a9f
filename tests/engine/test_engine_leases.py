"""Several instances on one database: an arbitration is run under a lease,
taken over when the lease runs out, and the late holder's verdict is fenced
out (a model call may repeat; a post never does)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.console import ROOM_OVERRIDES, ConsoleTransport
from bot.arbiter.base import ArbitrationContext, ArbitrationOutcome
from bot.arbiter.service import Arbitrator
from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, MessageKind, OutgoingMessage, RoomKey
from storage.backends import storage_for
from storage.base import Storage

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
LEASE = 30.0


class Gated(Arbitrator):
    """The deterministic arbiter, once `release` is set (a slow model)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return await super().arbitrate(ctx)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Storage]]:
    if request.param == "sqlite":
        database = str(tmp_path / "leases.db")
    else:
        database = request.getfixturevalue("postgres_database")
    opened = [storage_for(database) for _ in range(2)]
    for store in opened:
        await store.open()
    yield opened
    for store in opened:
        await store.close()


class Instance:
    def __init__(self, store: Storage, clock: ManualClock, arbitrator: Arbitrator,
                 *, quiet_close: bool = False) -> None:
        self.settings = Settings(_env_file=None, admin_ids=["boss"],  # type: ignore[call-arg]
                                 lease_seconds=LEASE)
        self.engine = Engine(self.settings, store, clock, arbitrator=arbitrator,
                             room_overrides=None if quiet_close else ROOM_OVERRIDES)
        self.transport = ConsoleTransport()
        self.engine.register_transport(self.transport)
        self.events: list[dict[str, object]] = []
        self.engine.add_listener(self.events.append)


async def two_instances(
    stores: list[Storage], *, quiet_close: bool = False
) -> tuple[ManualClock, Instance, Instance, Gated]:
    clock = ManualClock(T0)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    gated = Gated(settings)
    a = Instance(stores[0], clock, gated, quiet_close=quiet_close)
    b = Instance(stores[1], clock, Arbitrator(settings), quiet_close=quiet_close)
    for side in (a, b):
        await side.engine.instance.register()
        await side.engine.start()
    await a.engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=["reviewer-bot"], settings={})
    return clock, a, b, gated


async def deadlock_on(side: Instance, clock: ManualClock) -> None:
    """A BLOCKED owner: the turn closes into a deadlock, arbitrated by `side`."""
    for n, (author, text, bot) in enumerate([
        ("alice", "로그인 버그 고쳐줘", False),
        ("owner-bot", "BLOCKED: 스테이징 접속 권한이 없습니다.", True),
    ]):
        clock.advance(1)
        await side.engine.on_message(IncomingMessage(
            platform="console", channel="C1", thread="T1", message_id=f"m{n}",
            author_id=author, text=text, ts=clock.now(), is_bot=bot))
    await side.engine.close_turns(force=True)  # the arbitration runs in its own task


def posted(*sides: Instance) -> list[MessageKind]:
    return [m.kind for s in sides for _, m in s.transport.posts] + [
        m.kind for s in sides for _, _, m in s.transport.edits]


async def test_a_lease_that_ran_out_is_taken_over_and_the_late_verdict_is_fenced_out(
    stores: list[Storage],
) -> None:
    clock, a, b, gated = await two_instances(stores)
    a.engine.arbitration.renew_every = 3600  # "a" stalls: it renews nothing
    await deadlock_on(a, clock)
    await asyncio.wait_for(gated.entered.wait(), 10)
    [row] = await stores[0].unfinished_arbitrations()
    assert (row.status, row.claimed_by, row.fence) == ("running", a.engine.instance.id, 1)
    assert posted(a, b) == [MessageKind.PROGRESS]

    # While the lease lives, the other instance leaves the arbitration alone.
    clock.advance(LEASE - 1)
    await b.engine.recovery.take_over_arbitrations()
    await b.engine.recover()
    await b.engine.drain()
    assert b.events == [] and posted(b) == []

    # The lease ran out: "b" takes it over and posts the verdict (editing the
    # progress message "a" posted; nothing is posted twice).
    clock.advance(2)
    await b.engine.recovery.take_over_arbitrations()
    await b.engine.drain()
    row = await stores[1].get_arbitration(row.id)
    assert row is not None
    assert (row.status, row.claimed_by, row.fence) == ("done", b.engine.instance.id, 2)
    assert [e["event"] for e in b.events] == ["verdict"]

    # "a" wakes up with its answer: its verdict is not recorded, not posted.
    gated.release.set()
    await a.engine.drain()
    await a.engine.outbox.flush()
    assert "verdict" not in [e["event"] for e in a.events]
    assert posted(a, b) == [MessageKind.PROGRESS, MessageKind.VERDICT]
    rows = await stores[0].recent_arbitrations()
    assert [(r.status, r.claimed_by) for r in rows] == [("done", b.engine.instance.id)]
    assert len(await stores[0].pending_escalations()) == 1
    assert await stores[0].pending_rooms(["console"]) == []
    for side in (a, b):
        await side.engine.instance.remove()


async def test_the_lease_is_renewed_while_the_model_thinks_and_a_takeover_cancels_the_call(
    stores: list[Storage],
) -> None:
    clock, a, b, gated = await two_instances(stores)
    a.engine.arbitration.renew_every = 0.05
    await deadlock_on(a, clock)
    await asyncio.wait_for(gated.entered.wait(), 10)
    [row] = await stores[0].unfinished_arbitrations()

    # Time passes beyond the first lease, but "a" is alive and renews it.
    clock.advance(LEASE * 3)
    for _ in range(100):
        renewed = await stores[1].get_arbitration(row.id)
        assert renewed is not None
        if renewed.lease_until is not None and renewed.lease_until > clock.now():
            break
        await asyncio.sleep(0.02)
    assert renewed.lease_until is not None and renewed.lease_until > clock.now()
    await b.engine.recovery.take_over_arbitrations()
    await b.engine.drain()
    assert b.events == []

    # Another instance takes it over anyway (say "a" was cut off from the
    # database for longer than its lease): "a" stops its model call at its next
    # renewal, and records nothing.
    later = clock.now() + timedelta(hours=1)
    async with stores[1].transaction() as tx:
        taken = await tx.claim_arbitration(row.id, b.engine.instance.id, later,
                                           later + timedelta(seconds=LEASE))
    assert taken is not None
    await asyncio.wait_for(a.engine.drain(), 10)
    assert gated.cancelled
    assert "verdict" not in [e["event"] for e in a.events]
    row = await stores[0].get_arbitration(row.id)
    assert row is not None and (row.status, row.fence) == ("running", 2)
    for side in (a, b):
        await side.engine.instance.remove()


async def test_a_turn_left_open_by_a_dead_instance_is_closed_by_another(
    stores: list[Storage],
) -> None:
    clock, a, b, _ = await two_instances(stores, quiet_close=True)
    for n, (author, text, bot) in enumerate([
        ("alice", "로그인 버그 고쳐줘", False),
        ("owner-bot", "BLOCKED: 스테이징 접속 권한이 없습니다.", True),
    ]):
        clock.advance(1)
        await a.engine.on_message(IncomingMessage(
            platform="console", channel="C1", thread="T1", message_id=f"m{n}",
            author_id=author, text=text, ts=clock.now(), is_bot=bot))
    # "a" dies with the owner's turn open; only it knew of that turn.
    assert "console:C1:T1" in a.engine.turns.open_turns and b.engine.turns.open_turns == {}
    clock.advance(60)
    await b.engine.tick()  # its periodic recovery reads the open turns from storage
    await b.engine.tick()
    await b.engine.drain()
    assert [e["event"] for e in b.events] == ["deadlock", "verdict"]
    assert posted(b) == [MessageKind.PROGRESS, MessageKind.VERDICT]
    assert b.engine.turns.open_turns == {}


class Slow:
    """A transport whose posts wait for `release`; `find_post` knows `found`."""

    platform = "console"

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.posts: list[str] = []
        self.looked: list[str | None] = []
        self.found: dict[str, str] = {}

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        self.entered.set()
        await self.release.wait()
        self.posts.append(message.text)
        return f"p{len(self.posts)}"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        raise AssertionError("no edits here")

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        raise AssertionError("no private posts here")

    async def find_post(self, room: RoomKey, message: OutgoingMessage,
                        since: datetime) -> str | None:
        self.looked.append(message.idempotency_key)
        return self.found.get(message.idempotency_key or "")


async def outbox_instances(stores: list[Storage]) -> tuple[ManualClock, list[Engine], list[Slow]]:
    clock = ManualClock(T0)
    settings = Settings(_env_file=None, lease_seconds=LEASE)  # type: ignore[call-arg]
    engines = [Engine(settings, store, clock) for store in stores]
    transports = [Slow(), Slow()]
    for engine, transport in zip(engines, transports, strict=True):
        engine.register_transport(transport)
        await engine.instance.register()
    return clock, engines, transports


async def enqueue(store: Storage, text: str) -> int:
    async with store.transaction() as tx:
        return await tx.enqueue("console:C1:T1", "notice", {"kind": "notice", "text": text}, T0)


async def test_outbox_claims_are_renewed_while_a_post_waits(stores: list[Storage]) -> None:
    clock, (a, b), (slow, other) = await outbox_instances(stores)
    a.outbox.renew_every = 0.05
    post = await enqueue(stores[0], "only once")
    sending = asyncio.create_task(a.outbox.flush())
    await asyncio.wait_for(slow.entered.wait(), 10)
    clock.advance(LEASE * 3)  # the platform's pace (or a slow call) outlasts the first lease
    await asyncio.sleep(0.3)
    await b.outbox.flush()  # the claim was renewed: "b" leaves the post alone
    assert other.posts == [] and other.looked == []
    slow.release.set()
    await sending
    assert slow.posts == ["only once"]
    row = await stores[1].get_outbox(post)
    assert row is not None and (row.status, row.platform_message_id) == ("sent", "p1")


async def test_a_post_taken_over_from_a_dead_instance_is_looked_for_first(
    stores: list[Storage],
) -> None:
    clock, (a, b), (_, other) = await outbox_instances(stores)
    post = await enqueue(stores[0], "posted before the crash")
    # "a" claimed it, posted it, and died before recording that.
    now = clock.now()
    assert await stores[0].claim_outbox("console:C1:T1", a.instance.id, now,
                                        now + timedelta(seconds=LEASE))
    other.found[f"tribunal:{post}"] = "p-from-a"
    other.release.set()
    await b.outbox.flush()
    assert other.looked == [] and other.posts == []  # held: "a"'s lease lives
    clock.advance(LEASE + 1)
    b.outbox.note("console:C1:T1")
    await b.outbox.flush()
    assert other.looked == [f"tribunal:{post}"]
    assert other.posts == []  # found on the platform: not posted again
    row = await stores[1].get_outbox(post)
    assert row is not None and (row.status, row.platform_message_id) == ("sent", "p-from-a")


async def test_a_setting_changed_through_another_instance_arrives_within_the_shared_age(
    stores: list[Storage], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import bot.channels
    from bot.models import CommandRequest

    monkeypatch.setattr(bot.channels, "SHARED_MAX_AGE", 0.05)
    clock, a, b, _ = await two_instances(stores)
    room = RoomKey(platform="console", channel="C1", thread="T1")
    assert (await b.engine.channels.room_settings(room))["stall_threshold"] == 2  # cached
    reply = await a.engine.on_command(CommandRequest(
        platform="console", channel="C1", thread=None, user_id="boss", text="threshold 5"))
    assert reply.ok
    assert (await a.engine.channels.room_settings(room))["stall_threshold"] == 5

    # Alone, "b" would keep its entry (every change it makes invalidates it);
    # its heartbeat sees "a" registered, and the entry now ages out.
    assert (await b.engine.channels.room_settings(room))["stall_threshold"] == 2
    clock.advance(LEASE)
    await b.engine.tick()
    await asyncio.sleep(0.1)
    assert (await b.engine.channels.room_settings(room))["stall_threshold"] == 5

"""Several instances and Discord's gateway: one connection per shard, by lease.

Two (or three) instances in this test process, each with its own `Storage`
on one database, its own Engine and its own DiscordAdapter (the real
discord.py client over real HTTP and websocket to the fake Discord), as two
`tribunal run` processes would have (tests/discord/test_discord_instances_run.py
runs the real processes). PostgreSQL is the database several instances
share; the same tests run on SQLite with the leases switched on by hand
(`tribunal run` never does that: SQLite is one process's database).

A crash is simulated by stopping the holder's heartbeat and dropping its
connection without releasing anything: its leases stay in the table, held
by a registered instance, until they run out.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import discord
import discord_payloads as P
import pytest
from discord_helpers import RecordingCore, until

from adapters.discord.catchup import LEASE as CATCH_UP_LEASE
from adapters.discord.client import TribunalShardedClient
from adapters.discord.gateway import GATEWAY_LEASE, GatewayLeases
from adapters.discord.runner import DiscordAdapter
from bot.clock import SystemClock
from bot.config import Settings
from bot.engine import Engine
from bot.leases import NamedLeases
from bot.models import OutgoingMessage, RoomKey
from bot.platforms import GatedTransport
from storage.backends import is_postgres_url, storage_for
from storage.base import InstanceRow, Storage
from tests.fakes.discord_api import FakeDiscord

LEASE = 1.5  # seconds: short, so a takeover is quick (TRIBUNAL_LEASE_SECONDS allows 5+)
ROOM = RoomKey("discord", P.CHANNEL, P.THREAD)
# A second guild, on shard 1 of 2 (`(guild_id >> 22) % 2`); GUILD "1000" is on shard 0.
GUILD_2 = str((1 << 22) | 1000)
CHANNEL_2, THREAD_2 = "5100", "5101"


def second_guild() -> dict[str, Any]:
    guild = P.guild_create()
    guild["id"] = GUILD_2
    guild["roles"][0]["id"] = GUILD_2
    guild["channels"] = [{**guild["channels"][0], "id": CHANNEL_2}]
    guild["threads"] = [{**guild["threads"][0], "id": THREAD_2, "parent_id": CHANNEL_2,
                         "guild_id": GUILD_2}]
    return guild


def message(text: str, author: str = P.ALICE, *, channel: str = P.THREAD,
            guild: str = P.GUILD) -> dict[str, Any]:
    payload = P.message(text, author=author, channel=channel)
    payload["guild_id"] = guild
    return payload


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "instances.db")
    return str(request.getfixturevalue("postgres_database"))


@pytest.fixture(autouse=True)
def _identify_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """discord.py waits 5 s before each IDENTIFY after a client's first (Discord's
    identify rate); the fake has no such limit."""

    async def at_once(self: discord.Client, shard_id: int | None, *, initial: bool = False
                      ) -> None:
        return None

    monkeypatch.setattr(TribunalShardedClient, "before_identify_hook", at_once)


class Node:
    """One instance: storage, engine (registered), adapter."""

    def __init__(self, name: str, settings: Settings) -> None:
        self.name = name
        self.settings = settings
        self.storage: Storage = storage_for(settings.database)
        self.engine: Engine
        self.adapter: DiscordAdapter

    async def start(self) -> Node:
        await self.storage.open()
        self.engine = Engine(self.settings, self.storage)
        # The leases `tribunal run` has on PostgreSQL, with a short lease time.
        self.engine.leases = NamedLeases(self.storage, SystemClock(), self.engine.instance.id,
                                         LEASE)
        await self.engine.instance.register()
        self.adapter = DiscordAdapter(self.settings, self.engine, guild_ready_timeout=0.05)
        transport = GatedTransport("discord", self.adapter)  # what `tribunal run` registers
        self.engine.register_transport(transport)
        await self.adapter.start(ready_within=10)
        transport.up = True
        return self

    @property
    def id(self) -> str:
        return self.engine.instance.id

    def connected(self) -> bool:
        task = self.adapter._task
        return task is not None and not task.done() and self.adapter.client.is_ready()

    async def crash(self) -> None:
        """What a SIGKILL leaves: no heartbeat, the connection dropped, the
        leases still in the table, the instance still registered."""
        keeper = self.adapter._keeper
        assert keeper is not None
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
        self.adapter._keeper = None
        self.adapter.gateway = None  # so the stop below releases nothing
        await self.adapter.stop()
        await self.engine.shutdown()

    async def stop(self) -> None:
        await self.adapter.stop()
        await self.engine.shutdown()


@pytest.fixture
async def nodes(
    fake_discord: FakeDiscord, make_settings: Callable[..., Settings], database: str
) -> AsyncIterator[Callable[..., Any]]:
    started: list[Node] = []

    async def start(name: str, **overrides: Any) -> Node:
        node = await Node(name, make_settings(database=database, **overrides)).start()
        started.append(node)
        return node

    yield start
    for node in started:
        await node.stop()
        await node.storage.close()


async def stored(node: Node, message_id: str) -> bool:
    """Whether the message is in the database (stored by whichever instance)."""
    statement = f"SELECT room_id FROM messages WHERE message_id = '{message_id}'"
    database = node.settings.database
    if not is_postgres_url(database):
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            return len(conn.execute(statement).fetchall()) == 1
    conn = await asyncpg.connect(database)
    try:
        return len(await conn.fetch(statement)) == 1
    finally:
        await conn.close()


async def catch_up_finished(node: Node, *, fence: int) -> bool:
    """Whether the unsharded gateway's catch-up lease was released finished by
    its `fence`-th claim."""
    rows = await node.storage.leases(CATCH_UP_LEASE)
    return [(r.holder, r.fence, r.finished) for r in rows] == [(None, fence, fence)]


async def eventually(check: Callable[[], Any], within: float) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_one_instance_holds_the_gateway_and_another_takes_over_and_catches_up(
    fake_discord: FakeDiscord, nodes: Callable[..., Any]
) -> None:
    a: Node = await nodes("a")
    b: Node = await nodes("b")
    assert a.connected() and not b.connected()
    assert fake_discord.sessions() == [None]  # one connection, unsharded
    [lease] = await a.storage.leases(GATEWAY_LEASE)
    assert (lease.name, lease.holder, lease.fence) == (GATEWAY_LEASE, a.id, 1)
    # Its READY's catch-up was held by a lease too: claimed once, by it, and finished.
    await eventually(lambda: catch_up_finished(a, fence=1), within=5)
    assert {r.name for r in await a.storage.leases()} == {GATEWAY_LEASE, CATCH_UP_LEASE}

    # The standby posts over REST: discord.py needs no gateway for it.
    assert b.adapter.client.user is not None and b.adapter.client.ws is None
    posted = await b.engine.transports["discord"].post(
        ROOM, OutgoingMessage(kind="notice", text="REST only"))
    assert fake_discord.messages[int(posted)]["content"] == "REST only"

    first = await fake_discord.say(message("결제 모듈 리팩터링 부탁해"))
    await eventually(lambda: stored(a, first["id"]), within=5)
    # Beats go by: the holder renews, the standby stays off the gateway.
    await asyncio.sleep(LEASE * 1.5)
    assert a.connected() and not b.connected() and fake_discord.sessions() == [None]

    await a.crash()
    crashed = time.monotonic()
    missed = [fake_discord.add_message(message(text, author))["id"] for text, author in (
        ("BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", P.OWNER),
        ("키 없이도 샌드박스로 테스트할 수 있습니다.", P.REVIEWER))]
    await until(b.connected, within=LEASE + 5)
    took = time.monotonic() - crashed
    assert took <= LEASE + b.engine.leases.beat_seconds + 1.5, took  # type: ignore[union-attr]
    assert fake_discord.sessions() == [None]
    [lease] = await b.storage.leases(GATEWAY_LEASE)
    assert (lease.holder, lease.fence) == (b.id, 2)
    # Caught up after READY: what was said while nobody listened is stored, once,
    # under the catch-up lease's next token.
    for message_id in missed:
        await eventually(lambda m=message_id: stored(b, m), within=5)
    await eventually(lambda: catch_up_finished(b, fence=2), within=5)
    live = await fake_discord.say(message("그럼 샌드박스로 진행해 주세요."))
    await eventually(lambda: stored(b, live["id"]), within=5)

    # A clean stop gives the lease back at once.
    await b.stop()
    [lease] = await a.storage.leases(GATEWAY_LEASE)
    assert (lease.holder, lease.lease_until) == (None, None)


async def test_a_clean_stop_hands_the_gateway_over_within_a_beat(
    fake_discord: FakeDiscord, nodes: Callable[..., Any]
) -> None:
    a: Node = await nodes("a")
    b: Node = await nodes("b")
    await a.stop()
    stopped = time.monotonic()
    await until(b.connected, within=5)
    assert time.monotonic() - stopped < LEASE  # not waiting for the lease to run out
    assert fake_discord.sessions() == [None]
    [lease] = await b.storage.leases(GATEWAY_LEASE)
    assert (lease.holder, lease.fence) == (b.id, 2)


async def test_shards_are_shared_and_a_dead_instances_shards_are_taken_over(
    fake_discord: FakeDiscord, nodes: Callable[..., Any], tmp_path: Path
) -> None:
    fake_discord.add_guild(second_guild())
    config = tmp_path / "two-guilds.toml"
    config.write_text("".join(
        "[[channels]]\n"
        f'platform = "discord"\nchannel = "{channel}"\n'
        f'owner = ["{P.OWNER}"]\nreviewer = ["{P.REVIEWER}"]\n' for channel in (P.CHANNEL,
                                                                                CHANNEL_2)),
        encoding="utf-8")
    a: Node = await nodes("a", discord_shard_count=2, config=config)
    # Alone: both shards, in one AutoShardedClient.
    client = a.adapter.client
    assert isinstance(client, discord.AutoShardedClient)
    assert (client.shard_count, client.shard_ids) == (2, [0, 1])
    assert sorted(map(tuple, fake_discord.sessions())) == [(0, 2), (1, 2)]  # type: ignore[arg-type]
    assert {g.id for g in client.guilds} == {int(P.GUILD), int(GUILD_2)}

    b: Node = await nodes("b", discord_shard_count=2, config=config)
    # A newcomer: the first lets one shard go, the second takes it.
    await until(lambda: b.connected() and a.connected()
                and len(a.adapter.client.shard_ids or []) == 1, within=LEASE * 4)  # type: ignore[attr-defined]
    shards = {n.name: n.adapter.client.shard_ids for n in (a, b)}  # type: ignore[attr-defined]
    assert sorted(shards.values()) == [[0], [1]], shards
    assert sorted(map(tuple, fake_discord.sessions())) == [(0, 2), (1, 2)]  # type: ignore[arg-type]
    holders = {r.name: r.holder for r in await a.storage.leases("discord:shard:")}
    assert holders == {f"discord:shard:{shards['a'][0]}": a.id,  # type: ignore[index]
                       f"discord:shard:{shards['b'][0]}": b.id}  # type: ignore[index]
    dead, alive = (a, b) if shards["a"] == [1] else (b, a)
    # The room on shard 1 (GUILD_2) has a stored message, so its catch-up has a start.
    first = await fake_discord.say(message("로그 수집기 설정해줘", channel=THREAD_2,
                                           guild=GUILD_2))
    await eventually(lambda: stored(dead, first["id"]), within=5)

    await dead.crash()
    missed = fake_discord.add_message(message("BLOCKED: 수집기 서버 접근 권한이 없습니다.",
                                              P.OWNER, channel=THREAD_2, guild=GUILD_2))
    await until(lambda: alive.connected()
                and alive.adapter.client.shard_ids == [0, 1],  # type: ignore[attr-defined]
                within=LEASE * 2 + 5)
    assert sorted(map(tuple, fake_discord.sessions())) == [(0, 2), (1, 2)]  # type: ignore[arg-type]
    await eventually(lambda: stored(alive, missed["id"]), within=5)
    assert {r.holder for r in await alive.storage.leases("discord:shard:")} == {alive.id}
    # Each shard's catch-up was held by its own lease: the dead instance's shard
    # was caught up again under a newer token by the one that took it over, and
    # finished.
    dead_shard = f"catchup:discord:{shards['a' if dead is a else 'b'][0]}"  # type: ignore[index]

    async def caught_up_by_the_taker() -> bool:
        [row] = await alive.storage.leases(dead_shard)
        return row.holder is None and row.finished == row.fence >= 2

    await eventually(caught_up_by_the_taker, within=5)


async def test_shares_spread_over_three_instances(database: str) -> None:
    """The claiming rule alone: 5 shards over 3 instances, each held once."""
    storage = storage_for(database)
    await storage.open()
    try:
        ids = ["i0", "i1", "i2"]
        async with storage.transaction() as tx:
            for name in ids:
                now = SystemClock().now()
                await tx.save_instance(InstanceRow(id=name, host="h", pid=1, started_at=now,
                                                   last_seen=now))
        gateways = [GatewayLeases(NamedLeases(storage, SystemClock(), name, 30.0), 5)
                    for name in ids]
        plans = [await g.beat() for g in gateways]  # the first takes all: it is alone
        assert plans[0] is not None and plans[0].shard_ids == (0, 1, 2, 3, 4)
        for _ in range(3):  # a few beats: the extras are let go and taken
            for gateway in gateways:
                await gateway.beat()
                await gateway.let_go()
        held = [gateway.plan() for gateway in gateways]
        shards = [list(p.shard_ids or ()) if p is not None else [] for p in held]
        assert sorted(k for s in shards for k in s) == [0, 1, 2, 3, 4], shards
        assert all(1 <= len(s) <= 2 for s in shards), shards
    finally:
        await storage.close()


async def test_fixed_shard_ids_connect_those_shards_without_leases(
    fake_discord: FakeDiscord, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings(discord_shard_count=3, discord_shard_ids=[2, 0])
    storage = storage_for(settings.database)
    await storage.open()
    engine = Engine(settings, storage)
    engine.leases = NamedLeases(storage, SystemClock(), engine.instance.id, LEASE)
    adapter = DiscordAdapter(settings, engine, guild_ready_timeout=0.05)
    try:
        assert adapter.gateway is None  # fixed: no leases even where they are offered
        await adapter.start(ready_within=10)
        client = adapter.client
        assert isinstance(client, TribunalShardedClient)
        assert (client.shard_count, client.shard_ids) == (3, [2, 0])
        assert sorted(p["shard"] for p in fake_discord.identify_payloads) == [[0, 3], [2, 3]]
        assert await storage.leases() == []
        # GUILD "1000" is on shard 0 of 3: heard.
        assert [g.id for g in client.guilds] == [int(P.GUILD)]
    finally:
        await adapter.stop()
        await storage.close()


async def test_alone_on_sqlite_the_gateway_connects_at_once_as_before(
    fake_discord: FakeDiscord, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings()
    storage = storage_for(settings.database)
    await storage.open()
    engine = Engine(settings, storage)
    assert engine.leases is None  # SQLite: one process's database
    adapter = DiscordAdapter(settings, engine, guild_ready_timeout=0.05)
    try:
        assert adapter.gateway is None
        await adapter.start(ready_within=10)
        assert type(adapter.client).__name__ == "TribunalClient"
        assert fake_discord.sessions() == [None]
        assert "shard" not in fake_discord.identify_payloads[0]
        assert await storage.leases() == []
    finally:
        await adapter.stop()
        await storage.close()


async def test_a_shard_count_alone_connects_every_shard(
    fake_discord: FakeDiscord, make_settings: Callable[..., Settings]
) -> None:
    adapter = DiscordAdapter(make_settings(discord_shard_count=2), RecordingCore(),
                             guild_ready_timeout=0.05)
    try:
        await adapter.start(ready_within=10)
        client = adapter.client
        assert isinstance(client, TribunalShardedClient)
        assert (client.shard_count, client.shard_ids) == (2, None)  # every shard
        assert sorted(map(tuple, fake_discord.sessions())) == [(0, 2), (1, 2)]  # type: ignore[arg-type]
    finally:
        await adapter.stop()


def test_the_start_up_line_says_how_the_gateway_is_held(
    make_settings: Callable[..., Settings]
) -> None:
    from bot.startup import describe_platform

    url = "postgresql://tribunal@db/tribunal"
    cases = {
        (None, None, ()): "discord (gateway, /arbiter synced to 1 guild(s))",
        (url, None, ()): "discord (gateway by lease, /arbiter synced to 1 guild(s))",
        (url, 4, ()): "discord (gateway, /arbiter synced to 1 guild(s), shards of 4 by lease)",
        (url, 4, (3, 1)): "discord (gateway, /arbiter synced to 1 guild(s), shards 3,1 of 4)",
        (None, 2, ()): "discord (gateway, /arbiter synced to 1 guild(s), shards 0,1 of 2)",
    }
    for (database, count, ids), line in cases.items():
        overrides: dict[str, Any] = {"discord_shard_count": count, "discord_shard_ids": list(ids)}
        if database:
            overrides["database"] = database
        assert describe_platform(make_settings(**overrides), "discord") == line


async def test_a_catch_up_whose_lease_is_taken_over_stops_reading(
    fake_discord: FakeDiscord, nodes: Callable[..., Any], caplog: pytest.LogCaptureFixture,
) -> None:
    """Fencing: the catch-up checks its lease before every history read; once
    another instance holds it (here: one whose clock is an hour ahead, by which
    the lease ran out), what it had not read yet is left to that one."""
    a: Node = await nodes("a")
    await eventually(lambda: catch_up_finished(a, fence=1), within=5)
    # Two rooms with an open task, each with a reply said while nobody listened.
    for channel in (P.THREAD, P.CHANNEL):
        first = await fake_discord.say(message("결제 모듈 리팩터링 부탁해", channel=channel))
        await eventually(lambda m=first["id"]: stored(a, m), within=5)
    missed = [fake_discord.add_message(message("BLOCKED: 결제 API 키가 없습니다.", P.OWNER,
                                               channel=channel))["id"]
              for channel in (P.THREAD, P.CHANNEL)]
    reads = lambda: fake_discord.find("GET", r"/channels/\d+/messages")  # noqa: E731
    before = len(reads())
    gate = fake_discord.hold("GET", r"/channels/\d+/messages")
    a.adapter.client.start_catch_up()  # as after a RESUMED
    await until(lambda: fake_discord.held, within=5)
    [row] = await a.storage.leases(CATCH_UP_LEASE)
    assert (row.holder, row.fence) == (a.id, 2)

    # Another instance takes the catch-up's lease over.
    later = SystemClock().now() + timedelta(hours=1)
    async with a.storage.transaction() as tx:
        await tx.save_instance(InstanceRow(id="thief", host="h", pid=1, started_at=later,
                                           last_seen=later))
        taken = await tx.claim_lease(CATCH_UP_LEASE, "thief", later, later + timedelta(hours=1))
    assert taken is not None and taken.fence == 3
    await until(lambda: f"catch-up {CATCH_UP_LEASE} stopped: its lease was taken over"
                in caplog.text, within=LEASE * 2)
    gate.set()  # the read in flight answers; nothing more is read

    await asyncio.sleep(LEASE)
    assert len(reads()) == before + 1
    for message_id in missed:
        assert not await stored(a, message_id)
    [row] = await a.storage.leases(CATCH_UP_LEASE)
    assert (row.holder, row.fence, row.finished) == ("thief", 3, 1)  # a released nothing

"""Several instances on one database: each post is sent by one of them, once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import OutgoingMessage, RoomKey
from storage.backends import storage_for
from storage.base import Storage

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


class Recording:
    platform = "console"

    def __init__(self, sent: list[str]) -> None:
        self.sent = sent

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        await asyncio.sleep(0)  # let the other instance run in between
        self.sent.append(message.text)
        return f"p{len(self.sent)}"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        raise AssertionError("no edits here")

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        raise AssertionError("no private posts here")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[list[Storage]]:
    if request.param == "sqlite":
        database = str(tmp_path / "two.db")
    else:
        database = request.getfixturevalue("postgres_database")
    opened = [storage_for(database) for _ in range(2)]
    for store in opened:
        await store.open()
    yield opened
    for store in opened:
        await store.close()


async def test_two_instances_never_send_the_same_post(stores: list[Storage]) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    expected = []
    async with stores[0].transaction() as tx:
        for room in range(3):
            for n in range(10):
                text = f"room {room} post {n}"
                expected.append(text)
                await tx.enqueue(f"console:C{room}:", "notice", {"kind": "notice", "text": text},
                                 T0)
    sent: list[str] = []
    engines = [Engine(settings, store, ManualClock(T0)) for store in stores]
    for engine in engines:
        engine.register_transport(Recording(sent))
        await engine.instance.register()
    assert engines[0].instance.id != engines[1].instance.id
    await asyncio.gather(*(engine.outbox.flush() for engine in engines for _ in range(3)))
    assert sorted(sent) == sorted(expected)  # each once
    for room in range(3):  # and each room's in order
        mine = [t for t in sent if t.startswith(f"room {room} ")]
        assert mine == [f"room {room} post {n}" for n in range(10)]
    assert {i.id for i in await stores[0].instances()} == {e.instance.id for e in engines}
    for engine in engines:
        await engine.instance.remove()
    assert await stores[1].instances() == []


async def test_discord_shard_settings_that_disagree_are_logged_once_and_when_they_agree(
    stores: list[Storage], caplog: pytest.LogCaptureFixture
) -> None:
    """Each instance registers its Discord shard settings; one running Discord
    checks them against the others' at start and at every heartbeat, and logs
    a problem once, when it appears, and its end."""
    clock = ManualClock(T0)

    def settings(**shards: object) -> Settings:
        return Settings(_env_file=None, discord_bot_token="token", **shards)  # type: ignore[call-arg]

    a = Engine(settings(discord_shard_count=2), stores[0], clock)
    b = Engine(settings(discord_shard_count=4), stores[1], clock)
    slack_only = Engine(Settings(_env_file=None), stores[1], clock)  # type: ignore[call-arg]
    await a.instance.register()
    assert await a.check_shards() == []
    await slack_only.instance.register()
    assert await slack_only.check_shards() == []  # it runs no Discord: nothing to check
    await b.instance.register()
    stored = {row.id: row.discord for row in await stores[0].instances()}
    assert stored[slack_only.instance.id] is None
    assert (stored[a.instance.id].shard_count, stored[b.instance.id].shard_count) == (2, 4)  # type: ignore[union-attr]

    caplog.set_level("INFO", logger="bot.shards")
    [problem] = await b.check_shards()
    assert "TRIBUNAL_DISCORD_SHARD_COUNT differs" in problem
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert [r.getMessage() for r in warnings] == [f"discord shard settings: {problem}"]
    # Heartbeats: the same problem is not logged again.
    for _ in range(3):
        clock.advance(10)
        await a.tick()
        await b.tick()
    assert a.shards.warnings == b.shards.warnings == [problem]
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 2  # once each
    # The instance with the other count stops: they agree again.
    await a.instance.remove()
    clock.advance(10)
    await b.tick()
    assert b.shards.warnings == []
    assert caplog.records[-1].getMessage() == "discord shard settings: the instances agree now"
    for engine in (b, slack_only):
        await engine.instance.remove()

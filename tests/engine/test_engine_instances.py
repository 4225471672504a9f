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

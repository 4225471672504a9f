"""SQLite: how many trips to aiosqlite's thread a message costs. On a busy
ingest path the trips, not the statements, are the cost: a message stored
and applied in one unit takes two (the insert with the reads it needs, then
the kept writes with the commit); a room's unit reads its state and waiting
messages in one. Without aiosqlite's queue of plain functions (not a
documented interface) the same writes go one call each, with the same
outcome."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from storage import sqlite_writes
from storage.base import MessageRow
from storage.sqlite import SqliteStorage

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
ROOM = "console:C1:T1"


def message(message_id: str) -> MessageRow:
    return MessageRow(platform="console", message_id=message_id, room_id=ROOM, author="a",
                      role="owner", text="x" * 2000, ts=T0, processed=False)


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The name of every function sent to aiosqlite's thread from now on."""
    sent: list[str] = []
    real = aiosqlite.Connection._execute

    async def counting(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(getattr(fn, "__name__", repr(fn)))
        return await real(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counting)
    yield sent


async def apply_fused(storage: SqliteStorage, row: MessageRow, state: str) -> bool:
    async with storage.transaction() as tx:
        stored = await tx.insert_message_taking_room(row)
        if stored.unit is None or stored.seq is None:
            return False
        await stored.unit.mark_processed(stored.seq, epoch=1, turn_no=1)
        await stored.unit.save_room_state(ROOM, "console", "C1", "T1", state, T0)
    return True


async def rows(storage: SqliteStorage) -> list[dict[str, Any]]:
    return await storage._all("SELECT message_id, processed, epoch, turn_no FROM messages"
                              " ORDER BY seq")


async def test_a_message_stored_and_applied_in_one_unit_takes_two_trips(
    tmp_path: Path, trips: list[str]
) -> None:
    storage = SqliteStorage(str(tmp_path / "t.db"))
    await storage.open()
    try:
        assert await apply_fused(storage, message("m1"), '"one"')
        trips.clear()
        assert await apply_fused(storage, message("m2"), '"two"')
        assert len(trips) == 2
        assert await rows(storage) == [
            {"message_id": "m1", "processed": 1, "epoch": 1, "turn_no": 1},
            {"message_id": "m2", "processed": 1, "epoch": 1, "turn_no": 1},
        ]
        assert await storage.load_room_state(ROOM) == '"two"'
    finally:
        await storage.close()


async def test_a_room_unit_reads_its_state_and_waiting_messages_in_one_trip(
    tmp_path: Path, trips: list[str]
) -> None:
    storage = SqliteStorage(str(tmp_path / "t.db"))
    await storage.open()
    try:
        async with storage.transaction() as tx:
            seq = await tx.insert_message(message("m1"))
        assert seq is not None
        trips.clear()
        async with storage.room(ROOM) as unit:
            waiting = await unit.unprocessed_messages()
            assert [m.seq for m in waiting] == [seq]
            await unit.mark_processed(seq, epoch=2, turn_no=None)  # a compare-and-set
            await unit.save_room_state(ROOM, "console", "C1", "T1", '"s"', T0)
        # The read, the compare-and-set, then the state with the commit.
        assert len(trips) == 3
        assert await storage.load_room_state(ROOM) == '"s"'
    finally:
        await storage.close()


async def test_without_the_one_trip_path_the_outcome_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_writes, "ONE_TRIP", False)
    storage = SqliteStorage(str(tmp_path / "t.db"))
    await storage.open()
    try:
        assert await apply_fused(storage, message("m1"), '"one"')
        async with storage.transaction() as tx:
            older = await tx.insert_message(message("m2"))
        assert not await apply_fused(storage, message("m3"), '"no"')  # m2 goes first
        assert older is not None
        async with storage.room(ROOM) as unit:
            assert [m.message_id for m in await unit.unprocessed_messages()] == ["m2", "m3"]
            await unit.save_room_state(ROOM, "console", "C1", "T1", '"kept"', T0)
            await unit.mark_processed(older, epoch=3, turn_no=None)  # after the kept write
        assert [(r["message_id"], r["processed"]) for r in await rows(storage)] == [
            ("m1", 1), ("m2", 1), ("m3", 0)]
        assert await storage.load_room_state(ROOM) == '"kept"'
    finally:
        await storage.close()


async def test_a_kept_write_that_fails_at_the_commit_rolls_the_unit_back(
    tmp_path: Path,
) -> None:
    storage = SqliteStorage(str(tmp_path / "t.db"))
    await storage.open()
    try:
        with pytest.raises(aiosqlite.IntegrityError):
            async with storage.transaction() as tx:
                stored = await tx.insert_message_taking_room(message("m1"))
                assert stored.unit is not None and stored.seq is not None
                await stored.unit.mark_processed(stored.seq, epoch=1, turn_no=1)
                # NULL state: refused by the schema, only when the commit sends it.
                await stored.unit.save_room_state(ROOM, "console", "C1", "T1",
                                                  None, T0)  # type: ignore[arg-type]
        assert await rows(storage) == []
        assert await apply_fused(storage, message("m1"), '"ok"')  # the room was let go
    finally:
        await storage.close()

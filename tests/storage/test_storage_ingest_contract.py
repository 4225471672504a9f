"""The storage contract for storing a message and taking its room in the same
transaction (`Transaction.insert_message_taking_room`), run against every
backend: the core stores and applies a message in one commit when its room is
free, and stores it without waiting when it is not."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from storage.base import MessageRow, Storage
from tests.storage.conftest import Backend

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
ROOM = "slack:C1:1.0"
OTHER = "slack:C1:2.0"
GUARD = 30  # seconds; only so that a broken lock fails the test instead of hanging it


def message(message_id: str, room_id: str = ROOM) -> MessageRow:
    return MessageRow(platform="slack", message_id=message_id, room_id=room_id, author="U1",
                      role="user", text=f"text of {message_id}", ts=T0, processed=False)


async def save_state(storage: Storage, room_id: str, state: str) -> None:
    async with storage.room(room_id) as unit:
        await unit.save_room_state(room_id, "slack", "C1", room_id.rsplit(":", 1)[1], state, T0)


async def processed(backend: Backend) -> dict[str, bool]:
    """message id -> applied, for every stored message."""
    rows = await backend.sql("SELECT message_id, processed FROM messages")
    return {str(r[0]): bool(r[1]) for r in rows}


async def store_and_apply(storage: Storage, row: MessageRow, state: str) -> tuple[int | None, bool]:
    """Store `row`; when its room is taken, apply it (mark it, save `state`)."""
    async with storage.transaction() as tx:
        stored = await tx.insert_message_taking_room(row)
        if stored.unit is not None:
            assert stored.seq is not None
            assert await stored.unit.mark_processed(stored.seq, epoch=1, turn_no=None)
            await stored.unit.save_room_state(ROOM, "slack", "C1", "1.0", state, T0)
    return stored.seq, stored.unit is not None


class TestInsertTakingRoom:
    async def test_a_free_room_is_taken_and_applied_in_the_same_commit(
        self, store: Storage, backend: Backend
    ) -> None:
        await save_state(store, ROOM, '{"epoch": 1}')
        async with store.transaction() as tx:
            stored = await tx.insert_message_taking_room(message("m1"))
            assert stored.seq is not None and stored.unit is not None
            unit = stored.unit
            assert unit.room_id == ROOM and unit.state == '{"epoch": 1}'
            assert await unit.mark_processed(stored.seq, epoch=1, turn_no=None)
            # A read of the unit sees the mark it kept for the commit.
            assert await unit.unprocessed_messages() == []
            await unit.save_room_state(ROOM, "slack", "C1", "1.0", '{"epoch": 2}', T0)
        assert await store.unprocessed_messages() == []
        assert await store.load_room_state(ROOM) == '{"epoch": 2}'
        assert await processed(backend) == {"m1": True}

    async def test_a_failure_keeps_neither_the_message_nor_its_application(
        self, store: Storage, backend: Backend
    ) -> None:
        await save_state(store, ROOM, '{"epoch": 1}')
        with pytest.raises(RuntimeError):
            async with store.transaction() as tx:
                stored = await tx.insert_message_taking_room(message("m1"))
                assert stored.seq is not None and stored.unit is not None
                await stored.unit.mark_processed(stored.seq, epoch=1, turn_no=None)
                await stored.unit.save_room_state(ROOM, "slack", "C1", "1.0", '"x"', T0)
                raise RuntimeError("boom")
        assert await processed(backend) == {}
        assert await store.load_room_state(ROOM) == '{"epoch": 1}'
        # The room is free again, and the message can come again.
        seq, taken = await store_and_apply(store, message("m1"), '{"epoch": 2}')
        assert seq is not None and taken
        assert await processed(backend) == {"m1": True}

    async def test_a_room_held_by_a_unit_is_not_waited_for(
        self, store: Storage, backend: Backend
    ) -> None:
        release, inside = asyncio.Event(), asyncio.Event()
        seen: list[str] = []

        async def holder() -> None:
            async with store.room(ROOM) as unit:
                inside.set()
                seen.extend(m.message_id for m in await unit.unprocessed_messages())
                await release.wait()

        held = asyncio.create_task(holder())
        await asyncio.wait_for(inside.wait(), GUARD)
        storing = asyncio.create_task(store_and_apply(store, message("m1"), '"applied"'))
        if backend.name == "postgres":
            # Its own connection: stored while the room is held, not taken.
            seq, taken = await asyncio.wait_for(asyncio.shield(storing), GUARD)
            assert seq is not None and not taken and not held.done()
            release.set()
            await held
            assert await processed(backend) == {"m1": False}  # it waits, stored
            return
        # SQLite: one connection, which the holder has; once it is handed on
        # the room is free (nobody else asked for it), so it is taken.
        for _ in range(5):
            await asyncio.sleep(0)
        release.set()
        await held
        seq, taken = await asyncio.wait_for(storing, GUARD)
        assert seen == [] and seq is not None and taken
        assert await processed(backend) == {"m1": True}

    async def test_a_room_with_a_unit_waiting_for_it_is_not_taken(
        self, store: Storage, backend: Backend
    ) -> None:
        """Units of a room keep their order: one that asked for the room before
        the message came applies it (it is only stored)."""
        release, inside = asyncio.Event(), asyncio.Event()
        seen: dict[str, list[str]] = {}

        async def unit(name: str) -> None:
            async with store.room(ROOM) as unit:
                seen[name] = [m.message_id for m in await unit.unprocessed_messages()]
                inside.set()
                await release.wait()

        first = asyncio.create_task(unit("first"))
        await asyncio.wait_for(inside.wait(), GUARD)
        second = asyncio.create_task(unit("second"))
        for _ in range(20):
            await asyncio.sleep(0)
        storing = asyncio.create_task(store_and_apply(store, message("m1"), '"no"'))
        if backend.name == "postgres":  # its own connection: done while the room is held
            await asyncio.wait_for(asyncio.shield(storing), GUARD)
        else:  # one connection, handed out in order: before the waiting unit
            for _ in range(5):
                await asyncio.sleep(0)
        release.set()
        await asyncio.wait_for(asyncio.gather(first, second), GUARD)
        seq, taken = await storing
        assert seq is not None and not taken
        assert seen == {"first": [], "second": ["m1"]}
        assert await processed(backend) == {"m1": False}
        # Free now: the room's next message is taken (once m1 is applied).
        assert not (await store_and_apply(store, message("m2"), '"x"'))[1]
        assert (await store_and_apply(store, message("o1", OTHER), '"x"'))[1]

    async def test_an_older_unapplied_message_goes_first(
        self, store: Storage, backend: Backend
    ) -> None:
        async with store.transaction() as tx:
            older = await tx.insert_message(message("m1"))
        seq, taken = await store_and_apply(store, message("m2"), '"no"')
        assert older is not None and seq is not None and seq > older and not taken
        assert await processed(backend) == {"m1": False, "m2": False}
        # Another room's waiting message is no reason to wait.
        assert (await store_and_apply(store, message("o1", OTHER), '"x"'))[1]

    async def test_a_redelivery_stores_nothing_and_takes_nothing(
        self, store: Storage, backend: Backend
    ) -> None:
        await store_and_apply(store, message("m1"), '{"epoch": 2}')
        async with store.transaction() as tx:
            stored = await tx.insert_message_taking_room(message("m1"))
        assert stored.seq is None and stored.unit is None
        assert await processed(backend) == {"m1": True}
        assert await store.load_room_state(ROOM) == '{"epoch": 2}'

    async def test_the_room_is_held_until_the_transaction_ends(self, store: Storage) -> None:
        entered = asyncio.Event()
        seen: list[str | None] = []

        async def later() -> None:
            async with store.room(ROOM) as unit:
                seen.append(unit.state)
                entered.set()

        async with store.transaction() as tx:
            stored = await tx.insert_message_taking_room(message("m1"))
            assert stored.seq is not None and stored.unit is not None
            waiter = asyncio.create_task(later())
            for _ in range(20):
                await asyncio.sleep(0)
            assert not entered.is_set()
            await stored.unit.mark_processed(stored.seq, epoch=1, turn_no=None)
            await stored.unit.save_room_state(ROOM, "slack", "C1", "1.0", '"applied"', T0)
        await asyncio.wait_for(waiter, GUARD)
        assert seen == ['"applied"']

    async def test_a_unit_reads_the_state_and_the_waiting_messages_of_its_room(
        self, store: Storage
    ) -> None:
        """`Storage.room` may read both at once; a first read that follows a
        write of the unit sees the write."""
        await save_state(store, ROOM, '{"epoch": 4}')
        async with store.transaction() as tx:
            first = await tx.insert_message(message("m1"))
            await tx.insert_message(message("m2"))
            await tx.insert_message(message("o1", OTHER))
        assert first is not None
        async with store.room(ROOM) as unit:
            assert unit.state == '{"epoch": 4}'
            await unit.mark_processed(first, epoch=4, turn_no=None)
            assert [m.message_id for m in await unit.unprocessed_messages()] == ["m2"]
        async with store.room(ROOM) as unit:
            waiting = await unit.unprocessed_messages()
            assert [m.message_id for m in waiting] == ["m2"]
            assert waiting[0].room_id == ROOM and waiting[0].text == "text of m2"
            assert await unit.unprocessed_messages() == waiting  # read again: the same
        async with store.room("slack:C9:9.9") as unit:
            assert unit.state is None and await unit.unprocessed_messages() == []


@pytest.mark.postgres
async def test_another_instance_holding_the_room_is_not_waited_for(
    postgres_database: str,
) -> None:
    """PostgreSQL: the room's lock is cluster-wide; another instance's unit
    keeps this one from taking the room, and a state it committed before
    this one took the room is the state this unit sees."""
    backend = Backend("postgres", postgres_database)
    try:
        here, there = await backend.open(), await backend.open()
        release, inside = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with there.room(ROOM) as unit:
                inside.set()
                await release.wait()
                await unit.save_room_state(ROOM, "slack", "C1", "1.0", '"there"', T0)

        held = asyncio.create_task(holder())
        await asyncio.wait_for(inside.wait(), GUARD)
        seq, taken = await asyncio.wait_for(store_and_apply(here, message("m1"), '"no"'), GUARD)
        assert seq is not None and not taken and not held.done()
        release.set()
        await held
        async with here.transaction() as tx:  # m1 waits: the next is not taken
            assert (await tx.insert_message_taking_room(message("m2"))).unit is None
        async with there.room(ROOM) as unit:  # the other instance applies both
            for row in await unit.unprocessed_messages():
                await unit.mark_processed(row.seq, epoch=1, turn_no=None)
            await unit.save_room_state(ROOM, "slack", "C1", "1.0", '"both"', T0)
        async with here.transaction() as tx:
            stored = await tx.insert_message_taking_room(message("m3"))
            assert stored.unit is not None and stored.unit.state == '"both"'
    finally:
        await backend.close_all()

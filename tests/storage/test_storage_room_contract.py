"""The storage contract for units of work (`Storage.room`), run against every
backend (SQLite on a real file, PostgreSQL on a real server): the core relies
on each of these behaviours."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from storage.base import ActionRow, EscalationRow, MessageRow, Storage
from tests.storage.conftest import Backend

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
ROOM = "slack:C1:1.0"
OTHER = "slack:C1:2.0"


@pytest.fixture
def storage(store: Storage) -> Storage:
    """Every backend of tests/storage/conftest.py: SQLite and PostgreSQL."""
    return store


def message(message_id: str, room_id: str = ROOM, *, processed: bool = True) -> MessageRow:
    return MessageRow(platform="slack", message_id=message_id, room_id=room_id, author="U1",
                      role="user", text=f"text of {message_id}", ts=T0, processed=processed)


async def save_state(storage: Storage, room_id: str, state: str) -> None:
    async with storage.room(room_id) as unit:
        await unit.save_room_state(room_id, "slack", "C1", room_id.rsplit(":", 1)[1], state, T0)


class TestStorageContract:
    async def test_a_message_is_stored_once_per_room(self, storage: Storage) -> None:
        async with storage.transaction() as tx:
            first = await tx.insert_message(message("m1"))
            again = await tx.insert_message(message("m1"))
            elsewhere = await tx.insert_message(message("m1", OTHER))
        assert first is not None and elsewhere is not None and elsewhere > first
        assert again is None

    async def test_a_failed_unit_changes_nothing(self, storage: Storage) -> None:
        with pytest.raises(RuntimeError):
            async with storage.transaction() as tx:
                await tx.insert_message(message("m1", processed=False))
                raise RuntimeError("boom")
        assert await storage.unprocessed_messages() == []
        await save_state(storage, ROOM, '{"epoch": 1}')
        with pytest.raises(RuntimeError):
            async with storage.room(ROOM) as unit:
                await unit.save_room_state(ROOM, "slack", "C1", "1.0", '{"epoch": 2}', T0)
                raise RuntimeError("boom")
        assert await storage.load_room_state(ROOM) == '{"epoch": 1}'

    async def test_a_room_unit_loads_the_state_and_offers_its_messages(
        self, storage: Storage
    ) -> None:
        async with storage.room(ROOM) as unit:
            assert unit.room_id == ROOM and unit.state is None
        await save_state(storage, ROOM, '{"epoch": 3}')
        async with storage.transaction() as tx:
            seq = await tx.insert_message(message("m1", processed=False))
            await tx.insert_message(message("m2", OTHER, processed=False))
        assert seq is not None
        async with storage.room(ROOM) as unit:
            assert unit.state == '{"epoch": 3}'
            waiting = await unit.unprocessed_messages()
            assert [m.message_id for m in waiting] == ["m1"]
            assert waiting[0].claimed_by is None and waiting[0].lease_until is None
            await unit.mark_processed(seq, epoch=3, turn_no=None)
        assert [m.room_id for m in await storage.unprocessed_messages()] == [OTHER]

    async def test_units_of_one_room_run_one_at_a_time_in_order(self, storage: Storage) -> None:
        entered: list[str] = []
        release, inside = asyncio.Event(), asyncio.Event()

        async def first() -> None:
            async with storage.room(ROOM) as unit:
                entered.append("first")
                inside.set()
                await release.wait()
                await unit.save_room_state(ROOM, "slack", "C1", "1.0", '{"epoch": 1}', T0)

        async def later(name: str) -> None:
            async with storage.room(ROOM) as unit:
                entered.append(name)
                await unit.save_room_state(ROOM, "slack", "C1", "1.0", f'"{name}"', T0)
                assert unit.state is not None

        holder = asyncio.create_task(first())
        await inside.wait()
        waiters = [asyncio.create_task(later("second")), asyncio.create_task(later("third"))]
        for _ in range(20):
            await asyncio.sleep(0)
        assert entered == ["first"]  # the room is held: nobody else is in it
        release.set()
        await asyncio.gather(holder, *waiters)
        assert entered == ["first", "second", "third"]
        assert await storage.load_room_state(ROOM) == '"third"'

    async def test_a_store_queues_before_units_still_waiting_for_the_room(
        self, storage: Storage, backend: Backend
    ) -> None:
        """Storing an incoming event does not wait for the room's queue: a unit
        that asked for the room earlier sees the event once it gets in."""
        release = asyncio.Event()
        inside = asyncio.Event()
        seen: list[str] = []

        async def holder() -> None:
            async with storage.room(ROOM):
                inside.set()
                await release.wait()

        async def waiter() -> None:
            async with storage.room(ROOM) as unit:
                seen.extend(m.message_id for m in await unit.unprocessed_messages())

        async def store() -> None:
            async with storage.transaction() as tx:
                await tx.insert_message(message("m1", processed=False))

        held = asyncio.create_task(holder())
        await inside.wait()
        waiting = asyncio.create_task(waiter())
        for _ in range(5):
            await asyncio.sleep(0)
        stored = asyncio.create_task(store())
        if backend.name == "postgres":
            # Its own connection: the store completes while the room is held.
            await asyncio.wait_for(asyncio.shield(stored), timeout=30)
            assert not waiting.done()
        else:
            # One connection, handed out in order: the store gets it before the
            # unit that is still waiting for the room.
            for _ in range(5):
                await asyncio.sleep(0)
        release.set()
        await asyncio.gather(held, waiting, stored)
        assert seen == ["m1"]

    async def test_reads_inside_a_unit_see_its_own_writes(self, storage: Storage) -> None:
        async with storage.room(ROOM) as unit:
            outbox_id = await unit.enqueue(ROOM, "verdict", {"kind": "verdict", "text": "v"}, T0)
            await unit.create_escalation(EscalationRow(
                id=7, room_id=ROOM, options=[{"n": 1, "label": "a"}], allowed=["U1"],
                status="pending", verdict_outbox_id=outbox_id, created_at=T0))
            escalation = await unit.get_escalation(7)
            post = await unit.get_outbox(outbox_id)
        assert escalation is not None and escalation.verdict_outbox_id == outbox_id
        assert post is not None and post.payload["text"] == "v" and post.status == "pending"
        assert post.claimed_by is None and post.lease_until is None

    async def test_exactly_one_answer_wins(self, storage: Storage) -> None:
        async with storage.transaction() as tx:
            await tx.create_escalation(EscalationRow(
                id=1, room_id=ROOM, options=[], allowed=[], status="pending", created_at=T0))
            await tx.create_escalation(EscalationRow(
                id=2, room_id=ROOM, options=[], allowed=[], status="pending", created_at=T0))
        outcomes = []
        for who in ("U1", "U2"):
            async with storage.room(ROOM) as unit:
                outcomes.append(await unit.answer_escalation(
                    1, option=1, label="a", text=None, kind="digit", by=who, at=T0))
                await unit.cancel_other_escalations(ROOM, keep=1)
        assert outcomes == [True, False]
        won, other = await storage.get_escalation(1), await storage.get_escalation(2)
        assert won is not None and won.answered_by == "U1" and won.status == "answered"
        assert other is not None and other.status == "cancelled"

    async def test_arbitrations_from_pending_to_done(self, storage: Storage) -> None:
        async with storage.room(ROOM) as unit:
            first = await unit.create_arbitration(ROOM, 1, "no_progress", {"rounds": 2}, T0)
            second = await unit.create_arbitration(ROOM, 1, "manual", {}, T0)
        assert second > first
        assert [a.id for a in await storage.unfinished_arbitrations()] == [first, second]
        async with storage.transaction() as tx:
            await tx.update_arbitration(first, status="done", verdict="PROCEED",
                                        options=[{"n": 1, "label": "x"}], finished_at=T0)
            with pytest.raises(ValueError):
                await tx.update_arbitration(second, no_such_field=1)
        row = await storage.get_arbitration(first)
        assert row is not None and row.verdict == "PROCEED" and row.evidence == {"rounds": 2}
        assert row.options == [{"n": 1, "label": "x"}]
        assert [a.id for a in await storage.room_arbitrations(ROOM)] == [first]
        assert [a.id for a in await storage.unfinished_arbitrations()] == [second]

    async def test_the_outbox_keeps_each_rooms_order(self, storage: Storage) -> None:
        async with storage.transaction() as tx:
            ids = [await tx.enqueue(ROOM, "notice", {"text": str(n)}, T0) for n in range(3)]
            await tx.enqueue("discord:9:None", "notice", {"text": "d"}, T0)
        assert await storage.pending_rooms(["slack"]) == [ROOM]
        assert [r.id for r in await storage.pending_outbox(ROOM)] == ids
        async with storage.transaction() as tx:
            await tx.mark_outbox(ids[0], "sent", platform_message_id="p1", at=T0)
            await tx.mark_outbox(ids[1], "pending", error="later",
                                 next_attempt_at=T0 + timedelta(seconds=5))
        pending = await storage.pending_outbox(ROOM)
        assert [r.id for r in pending] == ids[1:]
        assert pending[0].attempts == 1 and pending[0].last_error == "later"
        sent = await storage.get_outbox(ids[0])
        assert sent is not None and sent.platform_message_id == "p1" and sent.status == "sent"

    async def test_settings_and_bindings(self, storage: Storage) -> None:
        async with storage.transaction() as tx:
            await tx.set_setting("channel", "slack:C1", "stall_threshold", 3)
            await tx.set_setting("channel", "slack:C1", "paused", True)
            await tx.set_bindings("slack", "C1", "owner", ["B1", "B2"])
        async with storage.transaction() as tx:
            await tx.set_setting("channel", "slack:C1", "paused", None)
            await tx.set_bindings("slack", "C1", "owner", ["B3"])
        assert await storage.get_settings("channel", "slack:C1") == {"stall_threshold": 3}
        assert await storage.get_bindings("slack", "C1") == {"owner": ["B3"]}

    async def test_catch_up_marks_name_each_rooms_latest_message(self, storage: Storage) -> None:
        async with storage.transaction() as tx:
            for i, room in enumerate((ROOM, ROOM, OTHER)):
                row = message(f"m{i}", room).model_copy(update={"ts": T0 + timedelta(seconds=i)})
                await tx.insert_message(row)
        await save_state(storage, ROOM, '{"task_active": true, "approved": false}')
        await save_state(storage, OTHER, '{"task_active": true, "approved": true}')
        marks = {m.room_id: m for m in await storage.catch_up_marks("slack")}
        assert set(marks) == {ROOM, OTHER}
        assert marks[ROOM].last_message_id == "m1" and marks[ROOM].open_task
        assert marks[OTHER].last_message_id == "m2" and not marks[OTHER].open_task
        assert await storage.catch_up_marks("discord") == []

    async def test_a_click_is_stored_once_and_applied_once(self, storage: Storage) -> None:
        def click(delivery: str) -> ActionRow:
            return ActionRow(platform="slack", delivery_id=delivery, kind="click", room_id=ROOM,
                             payload={"escalation_id": 7, "option": 2}, received_at=T0)

        async with storage.transaction() as tx:
            first = await tx.insert_action(click("t1"))
            again = await tx.insert_action(click("t1"))  # the platform redelivers it
            second = await tx.insert_action(click("t2"))
        assert first is not None and second is not None and second > first and again is None
        assert [a.delivery_id for a in await storage.unprocessed_actions()] == ["t1", "t2"]
        stored = await storage.get_action(first)
        assert stored is not None and stored.payload == {"escalation_id": 7, "option": 2}
        assert stored.claimed_by is None and stored.lease_until is None
        async with storage.room(ROOM) as unit:
            assert await unit.mark_action_processed(first)
            assert not await unit.mark_action_processed(first)  # applied exactly once
        assert [a.delivery_id for a in await storage.unprocessed_actions()] == ["t2"]

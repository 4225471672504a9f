"""The storage contract for several instances on one database: arbitration
leases with fencing tokens, stored messages applied once, and the shared
pacing of platform calls. Run against every backend (tests/storage/conftest.py);
"instances" are separate `Storage` objects on the same database, as separate
processes would hold."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from storage.base import InstanceRow, MessageRow, Storage, Transaction
from tests.storage.conftest import Backend

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)
ROOM = "slack:C1:1.0"


async def register(tx: Transaction, *ids: str) -> None:
    for instance_id in ids:
        await tx.save_instance(InstanceRow(id=instance_id, host="h", pid=1, started_at=NOW,
                                           last_seen=NOW))


async def new_arbitration(store: Storage, *instances: str) -> int:
    async with store.transaction() as tx:
        await register(tx, *instances)
        return await tx.create_arbitration(ROOM, 0, "no_progress", {"k": 1}, NOW)


class TestArbitrationLeases:
    async def test_a_claim_takes_the_lease_and_a_new_token(self, store: Storage) -> None:
        arbitration_id = await new_arbitration(store, "a", "b")
        fresh = await store.get_arbitration(arbitration_id)
        assert fresh is not None
        assert (fresh.claimed_by, fresh.lease_until, fresh.fence) == (None, None, 0)
        async with store.room(ROOM) as unit:
            claimed = await unit.claim_arbitration(arbitration_id, "a", NOW, NOW + LEASE)
        assert claimed is not None
        assert (claimed.claimed_by, claimed.lease_until, claimed.fence) == ("a", NOW + LEASE, 1)
        assert claimed.evidence == {"k": 1} and claimed.status == "pending"
        assert await store.get_arbitration(arbitration_id) == claimed
        # Held: another instance is refused while the lease lives ...
        async with store.transaction() as tx:
            assert await tx.claim_arbitration(
                arbitration_id, "b", NOW + LEASE - timedelta(seconds=1), NOW + 2 * LEASE
            ) is None
        # ... the holder may claim again (a new token: its older work is fenced out) ...
        async with store.transaction() as tx:
            again = await tx.claim_arbitration(arbitration_id, "a", NOW, NOW + LEASE)
        assert again is not None and again.fence == 2
        # ... and once the lease ran out, another takes it over.
        later = NOW + LEASE
        async with store.transaction() as tx:
            taken = await tx.claim_arbitration(arbitration_id, "b", later, later + LEASE)
        assert taken is not None and (taken.claimed_by, taken.fence) == ("b", 3)

    async def test_fenced_writes_fail_once_the_lease_was_taken_over(
        self, store: Storage
    ) -> None:
        arbitration_id = await new_arbitration(store, "a", "b")
        async with store.transaction() as tx:
            mine = await tx.claim_arbitration(arbitration_id, "a", NOW, NOW + LEASE)
        assert mine is not None
        async with store.transaction() as tx:
            assert await tx.update_arbitration(arbitration_id, fence=mine.fence, status="running")
            assert await tx.renew_arbitration(
                arbitration_id, "a", mine.fence, NOW + 2 * LEASE
            )
        row = await store.get_arbitration(arbitration_id)
        assert row is not None and row.lease_until == NOW + 2 * LEASE
        later = NOW + 2 * LEASE
        async with store.transaction() as tx:
            theirs = await tx.claim_arbitration(arbitration_id, "b", later, later + LEASE)
        assert theirs is not None and theirs.fence == mine.fence + 1
        # The old holder's writes change nothing now: no renewal, no verdict.
        async with store.transaction() as tx:
            assert not await tx.renew_arbitration(arbitration_id, "a", mine.fence, later + LEASE)
            assert not await tx.update_arbitration(
                arbitration_id, fence=mine.fence, status="done", verdict="REVISE"
            )
        row = await store.get_arbitration(arbitration_id)
        assert row is not None
        assert (row.status, row.verdict, row.claimed_by) == ("running", None, "b")
        # The new holder's do; after that the arbitration is finished for every token.
        async with store.transaction() as tx:
            assert await tx.update_arbitration(
                arbitration_id, fence=theirs.fence, status="done", verdict="ESCALATE"
            )
            assert not await tx.update_arbitration(arbitration_id, fence=theirs.fence,
                                                   status="cancelled")
            assert not await tx.renew_arbitration(arbitration_id, "b", theirs.fence, later)
            assert await tx.claim_arbitration(arbitration_id, "b", later, later + LEASE) is None
        row = await store.get_arbitration(arbitration_id)
        assert row is not None and (row.status, row.verdict) == ("done", "ESCALATE")

    async def test_the_lease_columns_are_not_plain_fields(self, store: Storage) -> None:
        arbitration_id = await new_arbitration(store)
        async with store.transaction() as tx:
            for name in ("claimed_by", "lease_until", "id"):  # `fence=` is the token
                with pytest.raises(ValueError, match="unknown arbitration fields"):
                    await tx.update_arbitration(arbitration_id, **{name: None})

    async def test_a_claim_of_an_unregistered_or_stopped_instance_holds_nothing(
        self, store: Storage
    ) -> None:
        arbitration_id = await new_arbitration(store, "a", "b")
        async with store.transaction() as tx:
            assert await tx.claim_arbitration(arbitration_id, "gone", NOW, NOW + LEASE)
        async with store.transaction() as tx:
            held = await tx.claim_arbitration(arbitration_id, "a", NOW, NOW + LEASE)
        assert held is not None and held.claimed_by == "a"
        # "a" stops cleanly (or is found dead at another's start): released at once.
        async with store.transaction() as tx:
            await tx.remove_instance("a")
        row = await store.get_arbitration(arbitration_id)
        assert row is not None and (row.claimed_by, row.lease_until) == (None, None)
        async with store.transaction() as tx:
            taken = await tx.claim_arbitration(arbitration_id, "b", NOW, NOW + LEASE)
        assert taken is not None and taken.fence == held.fence + 1
        # A finished arbitration keeps who ran it; a removal does not touch it.
        async with store.transaction() as tx:
            assert await tx.update_arbitration(arbitration_id, fence=taken.fence, status="done")
            await tx.remove_instance("b")
        row = await store.get_arbitration(arbitration_id)
        assert row is not None and row.claimed_by == "b"

    async def test_of_instances_claiming_at_once_exactly_one_wins(
        self, backend: Backend, store: Storage
    ) -> None:
        others = [store, *[await backend.open() for _ in range(3)]]
        names = [f"i{n}" for n in range(len(others))]
        ids = [await new_arbitration(store, *names) for _ in range(5)]

        async def claim(storage: Storage, name: str, arbitration_id: int) -> str | None:
            async with storage.transaction() as tx:
                row = await tx.claim_arbitration(arbitration_id, name, NOW, NOW + LEASE)
            return None if row is None else name

        for arbitration_id in ids:
            won = await asyncio.gather(*(claim(s, n, arbitration_id)
                                         for s, n in zip(others, names, strict=True)))
            winners = [w for w in won if w is not None]
            assert len(winners) == 1, won
            row = await store.get_arbitration(arbitration_id)
            assert row is not None and (row.claimed_by, row.fence) == (winners[0], 1)

    async def test_a_fenced_write_keeps_a_racing_claim_out_until_its_unit_ends(
        self, backend: Backend, store: Storage
    ) -> None:
        other = await backend.open()
        arbitration_id = await new_arbitration(store, "a", "b")
        async with store.transaction() as tx:
            mine = await tx.claim_arbitration(arbitration_id, "a", NOW, NOW + LEASE)
        assert mine is not None
        later = NOW + 2 * LEASE  # "a"'s lease ran out: "b" may take it over ...

        async def take_over() -> object:
            async with other.transaction() as tx:
                return await tx.claim_arbitration(arbitration_id, "b", later, later + LEASE)

        async with store.room(ROOM) as unit:
            # ... but "a" records its verdict first: the fenced write holds the row.
            assert await unit.update_arbitration(arbitration_id, fence=mine.fence,
                                                 status="done", verdict="REVISE")
            claim = asyncio.create_task(take_over())
            await asyncio.sleep(0.2)  # the claim waits (PostgreSQL) or is refused later
            await unit.enqueue(ROOM, "verdict", {"text": "v"}, NOW)
        assert await claim is None  # it sees the arbitration finished
        row = await store.get_arbitration(arbitration_id)
        assert row is not None and (row.status, row.claimed_by, row.fence) == ("done", "a", 1)


def unprocessed(message_id: str) -> MessageRow:
    return MessageRow(platform="slack", message_id=message_id, room_id=ROOM, author="U1",
                      role="user", text="hi", ts=NOW, processed=False)


class TestMessagesAppliedOnce:
    async def test_marking_a_message_applied_is_a_compare_and_set(self, store: Storage) -> None:
        async with store.transaction() as tx:
            seq = await tx.insert_message(unprocessed("m1"))
        assert seq is not None
        async with store.room(ROOM) as unit:
            assert await unit.mark_processed(seq, epoch=2, turn_no=1)
            assert not await unit.mark_processed(seq, epoch=3, turn_no=9)
        assert await store.unprocessed_messages(ROOM) == []
        rows, _ = await store.human_messages(ROOM, 0, 5)
        assert [(r.epoch, r.turn_no) for r in rows] == [(2, 1)]

    async def test_instances_racing_for_a_rooms_messages_apply_each_once(
        self, backend: Backend, store: Storage
    ) -> None:
        """What the engine does per message (take the oldest unapplied one, mark
        it, in the room's unit), from three instances at once."""
        instances = [store, await backend.open(), await backend.open()]
        async with store.transaction() as tx:
            for n in range(12):
                await tx.insert_message(unprocessed(f"m{n}"))
        applied: list[tuple[int, int]] = []

        async def worker(n: int, storage: Storage) -> None:
            while True:
                async with storage.room(ROOM) as unit:
                    rows = await unit.unprocessed_messages()
                    if not rows:
                        return
                    await asyncio.sleep(0)  # let the others in, where they can be
                    if await unit.mark_processed(rows[0].seq, epoch=n, turn_no=None):
                        applied.append((n, rows[0].seq))

        await asyncio.gather(*(worker(n, s) for n, s in enumerate(instances)))
        seqs = [seq for _, seq in applied]
        assert len(seqs) == 12 and len(set(seqs)) == 12, applied
        assert await store.unprocessed_messages() == []


class TestSharedPacing:
    async def test_reservations_of_one_key_are_spaced(self, store: Storage) -> None:
        step = timedelta(seconds=1.5)
        first = await store.reserve_slot("slack:chat.postMessage:C1", NOW, step)
        second = await store.reserve_slot("slack:chat.postMessage:C1", NOW, step)
        third = await store.reserve_slot("slack:chat.postMessage:C1", NOW + step * 5, step)
        other = await store.reserve_slot("slack:chat.postMessage:C2", NOW, step)
        assert (first, second, third, other) == (NOW, NOW + step, NOW + step * 5, NOW)
        # A call that ended late pushes the next free moment; an earlier one does not.
        await store.push_slot("slack:chat.postMessage:C1", NOW + step * 9)
        await store.push_slot("slack:chat.postMessage:C1", NOW)
        assert await store.reserve_slot("slack:chat.postMessage:C1", NOW, step) == NOW + step * 9
        await store.push_slot("never:reserved", NOW)  # nothing to push: no error, no row
        assert await store.reserve_slot("never:reserved", NOW, step) == NOW

    async def test_instances_reserving_at_once_get_distinct_moments(
        self, backend: Backend, store: Storage
    ) -> None:
        instances = [store, await backend.open(), await backend.open()]
        step = timedelta(milliseconds=250)
        got = await asyncio.gather(*(
            s.reserve_slot("slack:chat.update:", NOW, step) for s in instances for _ in range(4)
        ))
        assert sorted(got) == [NOW + step * n for n in range(12)]


class TestOutboxLeases:
    async def test_claims_are_renewed_while_posts_go_out(self, store: Storage) -> None:
        async with store.transaction() as tx:
            await register(tx, "a", "b")
            first = await tx.enqueue(ROOM, "notice", {}, NOW)
            second = await tx.enqueue(ROOM, "notice", {}, NOW)
            elsewhere = await tx.enqueue("slack:C2:1", "notice", {}, NOW)
        assert len(await store.claim_outbox(ROOM, "a", NOW, NOW + LEASE)) == 2
        await store.claim_outbox("slack:C2:1", "b", NOW, NOW + LEASE)
        async with store.transaction() as tx:
            await tx.mark_outbox(first, "sent", at=NOW)
            renewed = await tx.renew_outbox(ROOM, "a", NOW + 2 * LEASE)
            assert renewed == 1  # the unsent one; a sent post holds no claim
            assert await tx.renew_outbox("slack:C2:1", "a", NOW + 2 * LEASE) == 0
        row = await store.get_outbox(second)
        assert row is not None and (row.claimed_by, row.lease_until) == ("a", NOW + 2 * LEASE)
        other = await store.get_outbox(elsewhere)
        assert other is not None and other.lease_until == NOW + LEASE  # not "a"'s to renew
        # Renewed past the first lease: still held against "b".
        assert await store.claim_outbox(ROOM, "b", NOW + LEASE, NOW + 2 * LEASE) == []

    async def test_a_post_taken_over_names_the_instance_it_was_taken_from(
        self, store: Storage
    ) -> None:
        async with store.transaction() as tx:
            await register(tx, "a", "b")
            post = await tx.enqueue(ROOM, "verdict", {}, NOW)
        [mine] = await store.claim_outbox(ROOM, "a", NOW, NOW + LEASE)
        assert (mine.claimed_by, mine.taken_from) == ("a", None)
        [again] = await store.claim_outbox(ROOM, "a", NOW, NOW + LEASE)
        assert again.taken_from is None  # its own claim
        later = NOW + LEASE
        [theirs] = await store.claim_outbox(ROOM, "b", later, later + LEASE)
        assert (theirs.id, theirs.claimed_by, theirs.taken_from) == (post, "b", "a")
        stored = await store.get_outbox(post)
        assert stored is not None and stored.taken_from is None  # not stored: a claim's news

"""The storage contract of named leases (migrations 009 and 010): work one instance at a
time holds, such as Discord's gateway connection or one of its shards. Claim,
renew and release are compare-and-set with a fencing token, by the rule of
the arbitration claims: a lease that ran out, or one held by an instance no
longer registered, holds nothing. Run against every backend
(tests/storage/conftest.py); "instances" are separate `Storage` objects on the
same database, as separate processes would hold."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

from storage.base import DiscordShards, InstanceRow, LeaseRow, Storage
from tests.storage.conftest import Backend

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)
GATEWAY = "discord:gateway"


async def register(store: Storage, *ids: str) -> None:
    async with store.transaction() as tx:
        for instance_id in ids:
            await tx.save_instance(InstanceRow(id=instance_id, host="h", pid=1, started_at=NOW,
                                               last_seen=NOW))


async def claim(store: Storage, name: str, instance_id: str, now: datetime = NOW,
                lease: timedelta = LEASE) -> LeaseRow | None:
    async with store.transaction() as tx:
        return await tx.claim_lease(name, instance_id, now, now + lease)


class TestNamedLeases:
    async def test_a_first_claim_creates_the_lease_with_token_one(self, store: Storage) -> None:
        await register(store, "a", "b")
        assert await store.leases() == []
        claimed = await claim(store, GATEWAY, "a")
        assert claimed == LeaseRow(name=GATEWAY, holder="a", lease_until=NOW + LEASE, fence=1)
        assert await store.leases() == [claimed]
        # Held: another instance is refused while it lives ...
        assert await claim(store, GATEWAY, "b", NOW + LEASE - timedelta(seconds=1)) is None
        # ... the holder may claim again, for a newer token ...
        again = await claim(store, GATEWAY, "a")
        assert again is not None and (again.holder, again.fence) == ("a", 2)
        # ... and once it ran out another takes it over.
        taken = await claim(store, GATEWAY, "b", NOW + LEASE)
        assert taken is not None and (taken.holder, taken.fence) == ("b", 3)
        assert taken.lease_until == NOW + 2 * LEASE
        assert await store.leases() == [taken]

    async def test_renewals_and_releases_carry_the_token(self, store: Storage) -> None:
        await register(store, "a", "b")
        mine = await claim(store, GATEWAY, "a")
        assert mine is not None
        async with store.transaction() as tx:
            assert await tx.renew_lease(GATEWAY, "a", mine.fence, NOW + 2 * LEASE)
            assert not await tx.renew_lease(GATEWAY, "b", mine.fence, NOW + 9 * LEASE)  # not b's
            assert not await tx.renew_lease(GATEWAY, "a", mine.fence + 1, NOW + 9 * LEASE)
        [row] = await store.leases()
        assert row.lease_until == NOW + 2 * LEASE
        # Renewed past the first lease: still held against "b".
        assert await claim(store, GATEWAY, "b", NOW + LEASE) is None
        later = NOW + 2 * LEASE
        theirs = await claim(store, GATEWAY, "b", later)
        assert theirs is not None and theirs.fence == mine.fence + 1
        # The old holder's token changes nothing now: no renewal, no release.
        async with store.transaction() as tx:
            assert not await tx.renew_lease(GATEWAY, "a", mine.fence, later + 5 * LEASE)
            assert not await tx.release_lease(GATEWAY, "a", mine.fence)
        assert await store.leases() == [theirs]
        # The holder's release frees it at once, keeping the token for the next claim.
        async with store.transaction() as tx:
            assert await tx.release_lease(GATEWAY, "b", theirs.fence)
            assert not await tx.release_lease(GATEWAY, "b", theirs.fence)  # once
            assert not await tx.renew_lease(GATEWAY, "b", theirs.fence, later + LEASE)
        [row] = await store.leases()
        assert (row.holder, row.lease_until, row.fence) == (None, None, theirs.fence)
        back = await claim(store, GATEWAY, "a", later)
        assert back is not None and (back.holder, back.fence) == ("a", theirs.fence + 1)

    async def test_a_lease_of_an_unregistered_or_removed_instance_holds_nothing(
        self, backend: Backend, store: Storage
    ) -> None:
        await register(store, "a", "b", "c")
        assert await claim(store, GATEWAY, "gone") is not None  # never registered
        held = await claim(store, GATEWAY, "a")
        assert held is not None and (held.holder, held.fence) == ("a", 2)
        assert await claim(store, "discord:shard:0", "a") is not None
        # "a" stops cleanly (or is found dead at another's start): its leases go at once.
        async with store.transaction() as tx:
            await tx.remove_instance("a")
        assert [(r.name, r.holder, r.lease_until) for r in await store.leases()] == [
            ("discord:gateway", None, None), ("discord:shard:0", None, None)]
        taken = await claim(store, GATEWAY, "b")
        assert taken is not None and taken.fence == held.fence + 1
        # A holder whose instance row is gone some other way (an operator deleted
        # it) holds nothing either, though its lease row still names it.
        assert await claim(store, "discord:shard:1", "c") is not None
        await backend.sql("DELETE FROM instances WHERE id = 'c'")
        [row] = await store.leases("discord:shard:1")
        assert row.holder == "c" and row.lease_until == NOW + LEASE
        taken = await claim(store, "discord:shard:1", "b")
        assert taken is not None and (taken.holder, taken.fence) == ("b", 2)

    async def test_leases_are_listed_by_prefix(self, store: Storage) -> None:
        await register(store, "a")
        for name in ("discord:shard:1", "discord:gateway", "discord:shard:0", "slack:x",
                     "discord:shard_x"):
            assert await claim(store, name, "a") is not None
        assert [r.name for r in await store.leases("discord:shard:")] == [
            "discord:shard:0", "discord:shard:1"]
        assert [r.name for r in await store.leases("discord:")] == [
            "discord:gateway", "discord:shard:0", "discord:shard:1", "discord:shard_x"]
        assert len(await store.leases()) == 5
        assert await store.leases("nothing:") == []

    async def test_of_instances_claiming_at_once_exactly_one_wins(
        self, backend: Backend, store: Storage
    ) -> None:
        stores = [store, *[await backend.open() for _ in range(3)]]
        names = [f"i{n}" for n in range(len(stores))]
        await register(store, *names)
        for round_no in range(5):
            name = f"discord:shard:{round_no}"  # a new lease: every claim races to create it
            won = await asyncio.gather(*(claim(s, name, n) for s, n in zip(stores, names,
                                                                          strict=True)))
            winners = [row for row in won if row is not None]
            assert len(winners) == 1, won
            assert winners[0].fence == 1
            # Again, on the existing row, once the winner's lease ran out.
            later = NOW + LEASE * (round_no + 1)
            won = await asyncio.gather(*(claim(s, name, n, later) for s, n in zip(
                stores, names, strict=True)))
            winners = [row for row in won if row is not None]
            assert len(winners) == 1 and winners[0].fence == 2, won

    async def test_the_work_is_recorded_with_the_token_and_cleared_when_finished(
        self, store: Storage
    ) -> None:
        """Migration 010: `work` says what the holder is doing, for whoever takes it
        over; `finished` is the token of the claim that finished it. A plain
        release, a removal or a claim since leaves the work behind, unfinished."""
        await register(store, "a", "b")
        name = "catchup:slack"
        first = await claim(store, name, "a")
        assert first is not None and (first.work, first.finished) == (None, 0)
        async with store.transaction() as tx:
            assert await tx.set_lease_work(name, "a", first.fence, '{"plan": 1}')
            assert not await tx.set_lease_work(name, "b", first.fence, "theirs")  # not b's
            assert await tx.release_lease(name, "a", first.fence)  # not finished: stopped
        [row] = await store.leases(name)
        assert (row.holder, row.fence, row.work, row.finished) == (None, 1, '{"plan": 1}', 0)
        # The next claim sees what was left, unfinished (finished != fence - 1).
        second = await claim(store, name, "b")
        assert second is not None
        assert (second.fence, second.work, second.finished) == (2, '{"plan": 1}', 0)
        async with store.transaction() as tx:
            # Only the current token may write or finish it.
            assert not await tx.set_lease_work(name, "a", first.fence, "stale")
            assert not await tx.release_lease(name, "a", first.fence, finished=True)
            assert await tx.set_lease_work(name, "b", second.fence, '{"plan": 2}')
            assert await tx.release_lease(name, "b", second.fence, finished=True)
        [row] = await store.leases(name)
        assert (row.holder, row.lease_until, row.fence, row.work, row.finished) == (
            None, None, 2, None, 2)
        # A new claim (a new start's catch-up) is new work: not finished.
        third = await claim(store, name, "a")
        assert third is not None and (third.fence, third.work, third.finished) == (3, None, 2)
        async with store.transaction() as tx:
            assert await tx.set_lease_work(name, "a", third.fence, '{"plan": 3}')
        # An instance's removal releases it unfinished, its work kept.
        async with store.transaction() as tx:
            await tx.remove_instance("a")
        [row] = await store.leases(name)
        assert (row.holder, row.fence, row.work, row.finished) == (None, 3, '{"plan": 3}', 2)


class TestInstanceShardSettings:
    async def test_an_instance_is_stored_with_its_discord_shard_settings(
        self, backend: Backend, store: Storage
    ) -> None:
        rows = [
            InstanceRow(id="slack-only", host="h", pid=1, started_at=NOW, last_seen=NOW),
            InstanceRow(id="unsharded", host="h", pid=2, started_at=NOW, last_seen=NOW,
                        discord=DiscordShards()),
            InstanceRow(id="leased", host="h", pid=3, started_at=NOW, last_seen=NOW,
                        discord=DiscordShards(shard_count=4)),
            InstanceRow(id="fixed", host="h", pid=4, started_at=NOW, last_seen=NOW,
                        discord=DiscordShards(shard_count=4, shard_ids=[3, 1])),
        ]
        async with store.transaction() as tx:
            for row in rows:
                await tx.save_instance(row)
        assert await store.instances() == sorted(rows, key=lambda r: r.id)  # same start: by id
        # A heartbeat renews `last_seen` and keeps the settings.
        later = NOW + timedelta(seconds=5)
        async with store.transaction() as tx:
            await tx.save_instance(rows[3].model_copy(update={"last_seen": later}))
        stored = {r.id: r for r in await store.instances()}
        assert stored["fixed"].last_seen == later
        assert stored["fixed"].discord == DiscordShards(shard_count=4, shard_ids=[3, 1])
        # Stored as JSON text an operator can read.
        [(text,)] = await backend.sql("SELECT discord FROM instances WHERE id = 'fixed'")
        assert json.loads(text) == {"shard_count": 4, "shard_ids": [3, 1]}
        assert await backend.sql("SELECT discord FROM instances WHERE id = 'slack-only'") == [
            (None,)]

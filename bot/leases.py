"""Named leases: work that one instance at a time may do.

Several instances on one PostgreSQL database share the rooms' work through
storage, but some work belongs to one process at a time: Discord delivers a
guild's events to one gateway connection (shard), so exactly one instance
holds it. Such work is claimed by name (`Storage` `claim_lease`, migration
009): a compare-and-set that succeeds when no other registered instance holds
a lease that has not run out, and that hands out a new fencing token. The
holder renews it by heartbeat (at least thrice per `TRIBUNAL_LEASE_SECONDS`);
a renewal that finds the token changed, or that cannot be made before the
lease runs out, means the work is no longer this instance's and must stop. A
clean stop releases its leases at once (so does the instance's removal);
after a crash another instance takes them over when they run out.

The engine offers this to adapters as `bot.ports.SharesLeases` only when the
database may be shared (`Storage.shared`): on SQLite, one process's database,
there is nothing to share and the adapters behave as they always did.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.clock import Clock
from bot.instances import MAX_BEAT_SECONDS
from storage.base import LeaseRow, Storage

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease this instance holds: its name, token and end. `left`: what an
    earlier holder recorded doing and did not finish (`record`), if anything."""

    name: str
    fence: int
    until: datetime
    left: str | None = None


def is_live(row: LeaseRow, now: datetime, registered: set[str]) -> bool:
    """Whether someone holds the lease now: a registered instance whose lease has
    not run out (the rule every claim applies, `storage.base.held_by_another`)."""
    return (
        row.holder is not None
        and row.holder in registered
        and row.lease_until is not None
        and row.lease_until > now
    )


class NamedLeases:
    """This instance's side of the `leases` table (`bot.ports.Leases`)."""

    def __init__(
        self, storage: Storage, clock: Clock, instance_id: str, lease_seconds: float
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.instance_id = instance_id
        self.lease = timedelta(seconds=lease_seconds)
        self.beat_seconds = min(MAX_BEAT_SECONDS, lease_seconds / 3)

    async def claim(self, name: str) -> Lease | None:
        """The lease for this instance with a new token, or None while another
        instance holds it."""
        now = self.clock.now()
        async with self.storage.transaction() as tx:
            row = await tx.claim_lease(name, self.instance_id, now, now + self.lease)
        if row is None or row.lease_until is None:
            return None
        return Lease(name, row.fence, row.lease_until, row.work)

    async def renew(self, lease: Lease) -> Lease | None:
        """The lease extended by one lease time, or None when it is no longer
        this instance's (another claimed it since, or it was released)."""
        until = self.clock.now() + self.lease
        async with self.storage.transaction() as tx:
            kept = await tx.renew_lease(lease.name, self.instance_id, lease.fence, until)
        return Lease(lease.name, lease.fence, until, lease.left) if kept else None

    async def record(self, lease: Lease, work: str) -> bool:
        """Write down what this instance is doing under the lease, for whoever
        takes it over unfinished; False when the lease is no longer this
        instance's (nothing written: the write carries the token)."""
        async with self.storage.transaction() as tx:
            return await tx.set_lease_work(lease.name, self.instance_id, lease.fence, work)

    async def release(self, lease: Lease, *, finished: bool = False) -> None:
        """Give the lease up now (nothing happens if it was taken over since);
        `finished`: its work is done, so nobody waiting for it takes it over."""
        async with self.storage.transaction() as tx:
            await tx.release_lease(lease.name, self.instance_id, lease.fence, finished=finished)

    async def finished(self, name: str) -> bool:
        """Whether the latest claim of the lease was released with its work done."""
        rows = [row for row in await self.storage.leases(name) if row.name == name]
        return bool(rows) and rows[0].finished == rows[0].fence > 0

    async def holders(self, prefix: str) -> dict[str, str]:
        """name -> holding instance, for the live leases whose name starts with
        `prefix` (this instance's included)."""
        rows = await self.storage.leases(prefix)
        if not rows:
            return {}
        registered = {row.id for row in await self.storage.instances()}
        now = self.clock.now()
        return {row.name: row.holder for row in rows
                if row.holder is not None and is_live(row, now, registered)}

    def expired(self, lease: Lease) -> bool:
        """Whether the lease has run out by this instance's clock (its renewals
        failed): another instance may hold it now."""
        return self.clock.now() >= lease.until

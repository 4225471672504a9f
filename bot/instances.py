"""This process as one of several instances sharing a database.

`tribunal run` registers a random instance id at start (host, pid, start
time, and its Discord shard settings when it runs Discord), renews
`last_seen` from `tick()` every few seconds and removes itself on a clean
stop, releasing its outbox claims. An instance whose `last_seen`
is older than `TRIBUNAL_LEASE_SECONDS` counts as dead (`tribunal status`).
At registration, instances of this host whose process is gone (a crash) are
removed at once, so their claims do not wait for the lease to run out.
The outbox claims posts under this id whether registered or not (a replay
never registers; its claims then hold nothing against anyone).
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from datetime import datetime, timedelta

from bot.clock import Clock
from storage.base import DiscordShards, InstanceRow, Storage

log = logging.getLogger(__name__)

MAX_BEAT_SECONDS = 5.0  # a heartbeat at least this often, and thrice per lease


def is_alive(row: InstanceRow, now: datetime, lease_seconds: float) -> bool:
    return now - row.last_seen <= timedelta(seconds=lease_seconds)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


class Instance:
    def __init__(self, storage: Storage, clock: Clock, lease_seconds: float,
                 discord: DiscordShards | None = None) -> None:
        """`discord`: this process's Discord shard settings when it runs Discord,
        registered with it for the other instances to check (`bot.shards`)."""
        self.storage = storage
        self.discord = discord
        self.clock = clock
        self.id = uuid.uuid4().hex
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.lease = timedelta(seconds=lease_seconds)
        self.beat_every = timedelta(seconds=min(MAX_BEAT_SECONDS, lease_seconds / 3))
        self.started_at = clock.now()
        self.registered = False
        self._last_beat: datetime | None = None

    def _row(self, now: datetime) -> InstanceRow:
        return InstanceRow(id=self.id, host=self.host, pid=self.pid,
                           started_at=self.started_at, last_seen=now, discord=self.discord)

    async def register(self) -> None:
        now = self.clock.now()
        gone = [row.id for row in await self.storage.instances()
                if row.host == self.host and row.pid != self.pid
                and not _process_exists(row.pid)]
        async with self.storage.transaction() as tx:
            for instance_id in gone:
                await tx.remove_instance(instance_id)
            await tx.save_instance(self._row(now))
        for instance_id in gone:
            log.info("instance %s of this host is gone (its process ended): removed",
                     instance_id)
        self.registered = True
        self._last_beat = now
        log.info("instance %s registered (%s, pid %s)", self.id, self.host, self.pid)

    async def heartbeat(self) -> bool:
        """Renew `last_seen` when a beat is due (called from `tick()`); True when
        it beat (the engine then looks for leases that ran out)."""
        now = self.clock.now()
        if not self.registered or (
            self._last_beat is not None and now - self._last_beat < self.beat_every
        ):
            return False
        async with self.storage.transaction() as tx:
            await tx.save_instance(self._row(now))
        self._last_beat = now
        return True

    async def remove(self) -> None:
        if not self.registered:
            return
        async with self.storage.transaction() as tx:
            await tx.remove_instance(self.id)
        self.registered = False
        log.info("instance %s removed", self.id)

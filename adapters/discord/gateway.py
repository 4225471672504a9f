"""Which of Discord's gateway connections this instance holds.

Discord delivers a guild's events to one gateway connection: the one shard
(`(guild_id >> 22) % shard_count`) that guild belongs to. Several instances on
one database therefore share the gateway by named leases (`bot.leases`):

- without shard settings, the instance holding the lease `discord:gateway`
  connects; the others stay logged in over REST only, and claim the lease at
  every heartbeat, so one of them takes over within the lease time when the
  holder dies;
- with `TRIBUNAL_DISCORD_SHARD_COUNT` = N (and no fixed shard ids), the
  shards are leases `discord:shard:0` ... `discord:shard:{N-1}`. Each instance
  that runs Discord keeps a lease `discord:member:<instance id>` so the others
  can count it, and claims free shards up to its share, ceil(N / members),
  from a place in the shard list that depends on its rank among the members
  (so instances starting together seldom race for the same shard); one that
  holds more than its share lets the extra go (after disconnecting them) for
  a newcomer. A dead instance's shards run out with its lease and are claimed
  by the others, its member lease with them, so their shares grow;
- with `TRIBUNAL_DISCORD_SHARD_IDS` the shards are fixed: no leases.

`GatewayLeases.beat()` renews what this instance holds, claims what it should,
and says what to connect (a `Plan`); the adapter (`runner.py`) connects or
reconnects accordingly, then calls `let_go()` to release what it no longer
connects. A lease whose renewal fails is kept until it runs out by this
instance's clock (a slow database is not a lost lease), then dropped.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from bot.leases import Lease
from bot.ports import Leases

log = logging.getLogger(__name__)

GATEWAY_LEASE = "discord:gateway"
SHARD_PREFIX = "discord:shard:"
MEMBER_PREFIX = "discord:member:"


@dataclass(frozen=True, slots=True)
class Plan:
    """What to connect: the whole gateway unsharded (`shard_count` None), or
    these shards of `shard_count` (`shard_ids` None: all of them)."""

    shard_count: int | None = None
    shard_ids: tuple[int, ...] | None = None

    def describe(self) -> str:
        if self.shard_count is None:
            return "the gateway"
        ids = range(self.shard_count) if self.shard_ids is None else self.shard_ids
        return f"shard(s) {', '.join(map(str, ids))} of {self.shard_count}"


def shard_lease(shard_id: int) -> str:
    return f"{SHARD_PREFIX}{shard_id}"


class GatewayLeases:
    def __init__(self, leases: Leases, shard_count: int | None) -> None:
        self.leases = leases
        self.shard_count = shard_count
        self.held: dict[str, Lease] = {}  # name -> lease, member lease included
        self._extra: list[str] = []  # held shards to let go once disconnected

    @property
    def member_lease(self) -> str:
        return f"{MEMBER_PREFIX}{self.leases.instance_id}"

    async def beat(self) -> Plan | None:
        """Renew, claim, and say what to connect now (None: nothing). A claim
        the database refuses to answer raises; `plan()` still says what this
        instance holds."""
        await self._renew()
        if self.shard_count is None:
            if GATEWAY_LEASE not in self.held:
                await self._claim(GATEWAY_LEASE)
        else:
            if self.member_lease not in self.held:
                await self._claim(self.member_lease)
            await self._share_shards(self.shard_count)
        return self.plan()

    def plan(self) -> Plan | None:
        """What the leases held now say to connect."""
        if self.shard_count is None:
            return Plan() if GATEWAY_LEASE in self.held else None
        shards = tuple(sorted(self._shard_ids()))
        return Plan(self.shard_count, shards) if shards else None

    async def _renew(self) -> None:
        for name, lease in list(self.held.items()):
            try:
                renewed = await self.leases.renew(lease)
            except Exception as exc:
                if self.leases.expired(lease):
                    log.warning("discord: lease %s ran out while it could not be renewed (%s)",
                                name, exc)
                    del self.held[name]
                else:
                    log.warning("discord: lease %s not renewed (%s); trying again", name, exc)
                continue
            if renewed is None:
                log.warning("discord: lease %s was taken over by another instance", name)
                del self.held[name]
            else:
                self.held[name] = renewed

    async def _claim(self, name: str) -> bool:
        lease = await self.leases.claim(name)
        if lease is None:
            return False
        self.held[name] = lease
        log.info("discord: lease %s taken (token %d)", name, lease.fence)
        return True

    def _shard_ids(self) -> set[int]:
        return {int(name[len(SHARD_PREFIX):]) for name in self.held
                if name.startswith(SHARD_PREFIX) and name not in self._extra}

    async def _share_shards(self, count: int) -> None:
        members = set((await self.leases.holders(MEMBER_PREFIX)).values())
        members.add(self.leases.instance_id)
        share = math.ceil(count / len(members))
        mine = sorted(self._shard_ids())
        if len(mine) > share:
            # A newcomer's share: the highest ones go, once disconnected (`let_go`).
            self._extra.extend(shard_lease(k) for k in mine[share:])
            return
        if len(mine) == share:
            return
        taken = await self.leases.holders(SHARD_PREFIX)
        rank = sorted(members).index(self.leases.instance_id)
        start = (rank * share) % count
        for k in [*range(start, count), *range(start)]:
            if len(mine) >= share:
                break
            name = shard_lease(k)
            if name not in taken and name not in self.held and await self._claim(name):
                mine.append(k)

    async def let_go(self) -> None:
        """Release the shards `beat()` gave up, now that they are disconnected."""
        extra, self._extra = self._extra, []
        for name in extra:
            lease = self.held.pop(name, None)
            if lease is not None:
                await self._release(lease)

    async def release_all(self) -> None:
        """Release everything (a clean stop, after disconnecting)."""
        held, self.held, self._extra = self.held, {}, []
        for lease in held.values():
            await self._release(lease)

    async def _release(self, lease: Lease) -> None:
        try:
            await self.leases.release(lease)
            log.info("discord: lease %s released", lease.name)
        except Exception as exc:  # it runs out by itself (and goes with the instance)
            log.warning("discord: lease %s not released (%s)", lease.name, exc)

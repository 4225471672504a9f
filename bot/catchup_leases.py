"""A catch-up held by a named lease: one instance reads what the rooms missed.

On a database several instances share, every instance that starts (or, on
Discord, takes a shard over) would read the same history, and storage would
drop what the others stored already. Instead a catch-up is claimed by name
(`catchup:slack`; `catchup:discord`, or `catchup:discord:<shard>` with
shards) through `bot.leases`, renewed by heartbeat while it runs (at least
thrice per `TRIBUNAL_LEASE_SECONDS`), and released when it ends, marked
finished when it read everything it planned.

An instance that finds a catch-up held by another live instance does not
repeat it: it *owes* it, and looks again at every beat. Once the latest
claim is finished it forgets it; when the lease ran out (its holder died)
or was released unfinished (its holder stopped half-way) it claims it and
does it, from where the holder meant to read: the holder records its plan
with the lease (a fenced write), and a catch-up that takes one over merges
that plan with its own, the earlier mark of each channel and room winning,
so what the first one stored, or live messages since, do not move where it
reads from.

Fencing: the adapter checks the lease before every history read
(`CatchUpRun.check`); a lease taken over by another instance, or run out by
this instance's clock because its renewals failed, stops the reading
(`CatchUpLost`). What it stored before stays, deduplicated like everything
stored.

Without leases (SQLite, one process; or Discord shards fixed by
`TRIBUNAL_DISCORD_SHARD_IDS`) a catch-up holds every name at once and runs
as it always did.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable

from bot.catchup import CatchUpPlan
from bot.leases import Lease
from bot.ports import Leases

log = logging.getLogger(__name__)

PREFIX = "catchup:"


class CatchUpLost(Exception):
    """The catch-up's lease is no longer this instance's: stop reading history."""

    def __init__(self, name: str) -> None:
        super().__init__(f"catch-up lease {name} lost")
        self.name = name


class CatchUpRun:
    """The names one catch-up run holds, and whether it still holds each."""

    def __init__(self, names: Iterable[str], leases: Leases | None = None,
                 held: dict[str, Lease] | None = None) -> None:
        self.leases = leases
        self.held = dict(held or {})
        self.names = tuple(names) if leases is None else tuple(self.held)
        self.lost: set[str] = set()

    def holds(self, name: str) -> bool:
        """Whether this run may read the history `name` covers now."""
        if self.leases is None:
            return name in self.names
        lease = self.held.get(name)
        return lease is not None and name not in self.lost and not self.leases.expired(lease)

    def check(self, name: str) -> None:
        """Before a history read: raise `CatchUpLost` unless the run still holds `name`."""
        if not self.holds(name):
            raise CatchUpLost(name)

    def lose(self, name: str, why: str) -> None:
        if name not in self.lost:
            self.lost.add(name)
            log.warning("catch-up %s stopped: its lease %s", name, why)

    async def plan(self, fresh: CatchUpPlan,
                   lease_of: Callable[[str], str | None] | None = None) -> CatchUpPlan:
        """The plan to read: `fresh` (from storage now), merged with what the
        earlier holders of these leases left unfinished, and recorded with
        each lease for whoever takes it over. `lease_of(channel)`: the name
        whose lease covers the channel (None: every one), so each lease
        records its own part."""
        if self.leases is None:
            return fresh
        plan = fresh
        for lease in self.held.values():
            if lease.left is None:
                continue
            try:
                plan = plan.merged(CatchUpPlan.from_json(lease.left))
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("catch-up %s: the plan its earlier holder left is unreadable (%s);"
                            " reading from what is stored", lease.name, exc)
            else:
                log.info("catch-up %s: taking over from an earlier holder that did not finish",
                         lease.name)
        for name, lease in self.held.items():
            part = plan if lease_of is None else plan.part(_covered_by(lease_of, name))
            try:
                if not await self.leases.record(lease, part.to_json()):
                    self.lose(name, "was taken over by another instance")
            except Exception as exc:  # a takeover then reads from what is stored
                log.warning("catch-up %s: plan not recorded (%s)", name, exc)
        return plan


def _covered_by(lease_of: Callable[[str], str | None], name: str) -> Callable[[str], bool]:
    return lambda channel: lease_of(channel) in (None, name)


Work = Callable[[CatchUpRun], Awaitable[int]]


class LeasedCatchUp:
    """One adapter's catch-ups: claim, renew, release, and the ones it owes."""

    def __init__(self, leases: Leases | None) -> None:
        self.leases = leases
        self.owed: set[str] = set()  # held by another instance when this one wanted them

    @property
    def beat_seconds(self) -> float:
        return self.leases.beat_seconds if self.leases is not None else 1.0

    async def run(self, names: Iterable[str], work: Work) -> int | None:
        """Claim `names` and run `work` on those claimed, renewing their leases
        meanwhile; release them after (finished when `work` returned). Returns
        `work`'s count, or None when nothing was claimed or the work stopped
        because its leases were lost."""
        wanted = list(dict.fromkeys(names))
        if self.leases is None:
            return await work(CatchUpRun(wanted))
        held: dict[str, Lease] = {}
        try:
            for name in wanted:
                lease = await self.leases.claim(name)
                if lease is None:
                    if name not in self.owed:
                        log.info("catch-up %s is being done by another instance; not repeated"
                                 " here (taken over if it stops unfinished)", name)
                    self.owed.add(name)
                else:
                    held[name] = lease
                    self.owed.discard(name)
        except BaseException:
            await self._release(held.values(), finished=False)
            raise
        if not held:
            return None
        run = CatchUpRun(held, self.leases, held)
        renewing = asyncio.create_task(self._renew(run), name="tribunal-catch-up-lease")
        finished = False
        try:
            result = await work(run)
            finished = True
            return result
        except CatchUpLost as exc:
            log.warning("catch-up stopped: %s; what it stored stays", exc)
            return None
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            await self._release([run.held[n] for n in run.held if n not in run.lost],
                                finished=finished)

    async def due(self) -> list[str]:
        """Of the catch-ups this instance owes (found held by another), those to
        do now: their lease ran out, or was released unfinished. Those finished
        by another instance are forgotten."""
        if self.leases is None or not self.owed:
            return []
        live = await self.leases.holders(PREFIX)
        out: list[str] = []
        for name in sorted(self.owed):
            if name in live:
                continue  # still being done (by another instance, or a run of this one)
            if await self.leases.finished(name):
                self.owed.discard(name)
                log.info("catch-up %s was finished by another instance", name)
                continue
            out.append(name)
        return out

    async def wait_owed(self, work: Callable[[list[str]], Awaitable[object]],
                        interrupted: Callable[[], bool] = lambda: False) -> None:
        """Look at the owed catch-ups every beat until none is left (or
        `interrupted()`), and do those whose holder did not finish them."""
        while self.owed and not interrupted():
            await asyncio.sleep(self.beat_seconds)
            try:
                due = await self.due()
            except Exception as exc:
                log.warning("catch-up leases not checked (%s); trying again", exc)
                continue
            if due:
                await work(due)

    async def _renew(self, run: CatchUpRun) -> None:
        assert self.leases is not None
        while True:
            await asyncio.sleep(self.leases.beat_seconds)
            for name, lease in list(run.held.items()):
                if name in run.lost:
                    continue
                try:
                    renewed = await self.leases.renew(lease)
                except Exception as exc:
                    if self.leases.expired(lease):
                        run.lose(name, f"ran out while it could not be renewed ({exc})")
                    else:
                        log.warning("catch-up lease %s not renewed (%s); trying again", name, exc)
                    continue
                if renewed is None:
                    run.lose(name, "was taken over by another instance")
                else:
                    run.held[name] = renewed

    async def _release(self, leases: Iterable[Lease], *, finished: bool) -> None:
        assert self.leases is not None
        for lease in leases:
            try:
                await self.leases.release(lease, finished=finished)
            except Exception as exc:  # it runs out by itself (and goes with the instance)
                log.warning("catch-up lease %s not released (%s)", lease.name, exc)

"""Discord shard settings across the instances that share a database.

Each instance running Discord records its `TRIBUNAL_DISCORD_SHARD_COUNT` and
`TRIBUNAL_DISCORD_SHARD_IDS` with its registration (`instances.discord`,
migration 010). A setting impossible on its own (an id not below the count,
an id named twice, ids without a count) stops the start (`bot.config`); what
only the instances together get wrong is found here, among the live ones, and
reported as warnings: in the log of every instance running Discord (at start
and when it changes: `ShardWatch`), by `tribunal status` and by
`/healthz`. Each warning is one line that says what is wrong and what to do:

- two shard counts in use (or sharded and unsharded instances): each instance
  routes guilds to shards by its own count, so some guilds are heard on two
  connections and others possibly on none;
- a shard fixed on two instances: both connect it;
- fixed shards beside instances sharing the count's shards by lease: a leased
  instance may claim a shard another runs fixed, and connect it too;
- shards of the count that no instance covers (every instance of the count
  fixes its shards, and none names these): their guilds are not heard.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from bot.instances import is_alive
from storage.base import DiscordShards, InstanceRow

log = logging.getLogger(__name__)


def describe(row: InstanceRow) -> str:
    return f"{row.id[:12]} ({row.host} pid {row.pid})"


def settings_of(shards: DiscordShards | None) -> str:
    """An instance's Discord shard settings, for `tribunal status`."""
    if shards is None:
        return "no Discord"
    if shards.shard_count is None:
        return "Discord unsharded"
    if shards.shard_ids:
        return (f"Discord shards {','.join(map(str, shards.shard_ids))} of "
                f"{shards.shard_count} (fixed)")
    return f"Discord shards of {shards.shard_count} (all, or a share by lease)"


def _ids(ids: Iterable[int]) -> str:
    listed = sorted(set(ids))
    return ("shard " if len(listed) == 1 else "shards ") + ", ".join(map(str, listed))


def problems(rows: Iterable[InstanceRow], now: datetime, lease_seconds: float) -> list[str]:
    """What the live instances' Discord shard settings get wrong together."""
    running = [row for row in rows
               if row.discord is not None and is_alive(row, now, lease_seconds)]
    counts: dict[int | None, list[InstanceRow]] = {}
    for row in running:
        assert row.discord is not None
        counts.setdefault(row.discord.shard_count, []).append(row)
    if len(counts) > 1:
        uses = "; ".join(
            f"{'unset' if count is None else count} on {', '.join(map(describe, group))}"
            for count, group in sorted(counts.items(), key=lambda item: item[0] or 0))
        return [f"TRIBUNAL_DISCORD_SHARD_COUNT differs between the instances running Discord "
                f"({uses}): each sends guilds to shards by its own count, so some guilds are "
                "heard twice and others perhaps not at all; give every instance the same count"]
    if not counts:
        return []
    count, group = next(iter(counts.items()))
    if count is None:
        return []
    out: list[str] = []
    fixed = [row for row in group if row.discord is not None and row.discord.shard_ids]
    leased = [row for row in group if row not in fixed]
    by_shard: dict[int, list[InstanceRow]] = {}
    for row in fixed:
        assert row.discord is not None
        for shard in row.discord.shard_ids:
            by_shard.setdefault(shard, []).append(row)
    for shard, holders in sorted(by_shard.items()):
        if len(holders) > 1:
            out.append(f"shard {shard} of {count} is in TRIBUNAL_DISCORD_SHARD_IDS of "
                       f"{len(holders)} instances ({', '.join(map(describe, holders))}): each "
                       "connects it; name every shard on one instance only")
    if fixed and leased:
        out.append(f"{_ids(by_shard)} of {count} fixed by TRIBUNAL_DISCORD_SHARD_IDS on "
                   f"{', '.join(map(describe, fixed))}, while "
                   f"{', '.join(map(describe, leased))} share the shards by lease and may "
                   "connect a fixed one too; set TRIBUNAL_DISCORD_SHARD_IDS on every instance "
                   "or on none")
    if fixed and not leased:
        missing = sorted(set(range(count)) - set(by_shard))
        if missing:
            out.append(f"{_ids(missing)} of {count} run on no instance (each fixes its shards "
                       "with TRIBUNAL_DISCORD_SHARD_IDS and none names "
                       f"{'it' if len(missing) == 1 else 'them'}): the guilds on "
                       f"{'it' if len(missing) == 1 else 'them'} are not heard; name every "
                       "shard on some instance")
    return out


class ShardWatch:
    """The problems one instance last found, so each is logged once: a
    warning when it appears, a line when they are all gone."""

    def __init__(self, lease_seconds: float) -> None:
        self.lease_seconds = lease_seconds
        self.warnings: list[str] = []

    def check(self, rows: Iterable[InstanceRow], now: datetime) -> list[str]:
        found = problems(rows, now, self.lease_seconds)
        for problem in found:
            if problem not in self.warnings:
                log.warning("discord shard settings: %s", problem)
        if self.warnings and not found:
            log.info("discord shard settings: the instances agree now")
        self.warnings = found
        return found

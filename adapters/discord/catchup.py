"""Catch-up for Discord: what the watched channels said while the bot was away.

Run in the background after every READY (a start, or a new gateway session)
and every RESUMED, so the bot serves live events at once. A RESUME makes
Discord replay what the session missed, but reading costs little and the
core drops what it already has, so a resumed session is read too.

For each watched channel with a stored message: the channel's own messages
since its latest stored one (`GET /channels/{id}/messages?after=`), and the
threads of the guild's active ones (`GET /guilds/{id}/threads/active`) under
that channel with a message since then. Then every room with an open task,
from its own latest stored message, most recently active first. Snowflakes
are ordered by time, so one channel's latest stored id is a valid `after`
for every thread under it. discord.py paces every call by Discord's
rate-limit headers (and waits out a 429 itself). The core stores what is new
(deduplicated by room and message id) and applies it in snowflake order,
before the room's live messages that arrive meanwhile.

With some of the bot's gateway shards (several instances, or
TRIBUNAL_DISCORD_SHARD_IDS), only the rooms of guilds on those shards are
read: the instance holding the others reads theirs after its own READY, so a
shard taken over from a dead instance is caught up by its new holder.

On a database several instances share (the gateway held by lease), the
catch-up is held by leases too (`bot.catchup_leases`): `catchup:discord`
for the unsharded gateway, `catchup:discord:<k>` for shard k. Only the rooms
of guilds on shards whose catch-up lease this run holds are read, each read
first checking the lease is still held; a shard whose catch-up another
instance is doing is left to it (and taken over if it stops unfinished).

Not caught up: channels with no stored message yet, and threads archived
during the outage that had no open task (Discord lists only active threads).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import aiohttp
import discord

from adapters.discord import translate
from bot.catchup_leases import CatchUpLost, CatchUpRun
from bot.models import IncomingMessage, RoomKey
from bot.ports import Core, TransportError

log = logging.getLogger(__name__)

# Per room: an outage longer than this many messages is cut, and logged.
MAX_MESSAGES = 5000
LEASE = "catchup:discord"  # the unsharded gateway's catch-up lease
SHARD_LEASE_PREFIX = "catchup:discord:"  # + the shard number


@dataclass(frozen=True, slots=True)
class Target:
    room: RoomKey
    after: int  # the snowflake to read from (exclusive)
    activity: int  # a snowflake of the room's latest activity, for the order
    guild_id: int | None
    lease: str  # the catch-up lease that covers it


class DiscordCatchUp:
    def __init__(self, core: Core, client: discord.Client) -> None:
        self.core = core
        self.client = client
        self.names = lease_names(client)
        self.lease = CatchUpRun(self.names)  # unleased until `run` is given one

    async def run(self, lease: CatchUpRun | None = None) -> int:
        """Catch every watched channel up; returns how many messages were new.
        Held by `lease`, only the rooms of the shards it holds are read, and a
        room's reading stops at the first read after its lease was lost."""
        if lease is not None:
            self.lease = lease
        plan = await self.lease.plan(await self.core.catch_up_plan(translate.PLATFORM),
                                     self._lease_of_channel)
        some_shards = not holds_every_shard(self.client)
        open_rooms: dict[str, Target] = {}
        for mark in plan.rooms:
            mark_id = _snowflake(mark.last_message_id)
            guild_id = self._guild_of(mark.room.channel)
            if some_shards and guild_id is None:
                continue  # a guild of another shard: its holder reads it
            name = self._lease_of_guild(guild_id)
            if mark_id is not None and self.lease.holds(name):
                open_rooms[mark.room.id] = Target(mark.room, mark_id, mark_id, guild_id, name)
        fresh: dict[str, Target] = {}
        threads = await self._active_threads()
        for channel, mark in plan.channels.items():
            since = _snowflake(mark.last_message_id)
            guild_id = self._guild_of(channel)
            if since is None or guild_id is None:
                continue  # a channel of a guild we are no longer in
            name = self._lease_of_guild(guild_id)
            if not self.lease.holds(name):
                continue  # another instance's catch-up reads it
            top = RoomKey(translate.PLATFORM, channel, None)
            if top.id not in open_rooms:
                fresh[top.id] = Target(top, since, since, guild_id, name)
            for thread in threads.get(int(channel), []):
                room = RoomKey(translate.PLATFORM, channel, str(thread.id))
                last = thread.last_message_id or 0
                if room.id in open_rooms or last <= since:
                    continue  # read below, or quiet since our latest message
                fresh[room.id] = Target(room, since, last, guild_id, name)
        ordered = [*sorted(fresh.values(), key=lambda t: t.activity, reverse=True),
                   *sorted(open_rooms.values(), key=lambda t: t.activity, reverse=True)]
        new = read = 0
        for target in ordered:
            if not self.lease.holds(target.lease):
                continue  # lost meanwhile: stopped (`CatchUpRun.lose` said so)

            async def fetch(target: Target = target) -> list[IncomingMessage]:
                return await self._history(target)

            read += 1
            try:
                new += await self.core.catch_up(target.room, fetch)
            except TransportError as exc:
                log.warning("discord catch-up of %s failed: %s; the next start tries again",
                            target.room.id, exc)
            except CatchUpLost:
                continue
        log.info("discord catch-up done: %d room(s) read, %d missed message(s)", read, new)
        return new

    def _lease_of_guild(self, guild_id: int | None) -> str:
        """The catch-up lease covering a guild's rooms: its shard's (a guild not
        in the cache: the first of this client's)."""
        count = getattr(self.client, "shard_count", None)
        if not isinstance(self.client, discord.AutoShardedClient) or not count:
            return LEASE
        if guild_id is None:
            return self.names[0]
        return shard_lease((guild_id >> 22) % count)

    def _lease_of_channel(self, channel: str) -> str | None:
        guild_id = self._guild_of(channel)
        return None if guild_id is None else self._lease_of_guild(guild_id)

    def _guild_of(self, channel: str) -> int | None:
        found = self.client.get_channel(int(channel)) if channel.isdigit() else None
        guild = getattr(found, "guild", None)
        return guild.id if guild is not None else None

    async def _active_threads(self) -> dict[int, list[discord.Thread]]:
        """Active threads by parent channel, over REST (the cache misses
        threads created while we were away)."""
        out: dict[int, list[discord.Thread]] = {}
        for guild in self.client.guilds:
            if not self.lease.holds(self._lease_of_guild(guild.id)):
                continue  # another instance's catch-up reads this shard
            try:
                threads = await guild.active_threads()
            except discord.HTTPException as exc:
                log.warning("discord catch-up: active threads of guild %s: HTTP %s code %s",
                            guild.id, exc.status, exc.code)
                continue
            for thread in threads:
                if thread.parent_id is not None:
                    out.setdefault(thread.parent_id, []).append(thread)
        return out

    async def _history(self, target: Target) -> list[IncomingMessage]:
        room = target.room
        channel = self.client.get_partial_messageable(
            int(room.thread or room.channel), guild_id=target.guild_id)
        self_id = self.client.user.id if self.client.user else None
        out: list[IncomingMessage] = []
        self.lease.check(target.lease)  # fencing: no read once the lease is another's
        try:
            async for message in channel.history(after=discord.Object(id=target.after),
                                                 limit=MAX_MESSAGES, oldest_first=True):
                self.lease.check(target.lease)  # a page is read at most past a loss
                incoming = translate.to_incoming(
                    message, self_id=self_id, room=(room.channel, room.thread))
                if incoming is not None:
                    out.append(incoming)
        except discord.HTTPException as exc:
            # 403/404: the thread or channel is gone or closed to us; nothing to read.
            permanent = exc.status in (403, 404)
            raise TransportError(f"discord history of {room.id}: HTTP {exc.status} "
                                 f"code {exc.code}", permanent=permanent) from exc
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise TransportError(f"discord history of {room.id}: {type(exc).__name__}") from exc
        if len(out) >= MAX_MESSAGES:
            log.warning("discord catch-up of %s cut after %d messages", room.id, MAX_MESSAGES)
        return out


def holds_every_shard(client: discord.Client) -> bool:
    """Whether the client hears every guild: not sharded, or on all its shards.
    A client on some shards knows the guilds of those only (their channels are
    in its cache), and catches up their rooms alone."""
    if not isinstance(client, discord.AutoShardedClient):
        return True
    ids, count = client.shard_ids, client.shard_count
    return ids is None or count is None or len(set(ids)) >= count


def lease_names(client: discord.Client) -> tuple[str, ...]:
    """The catch-up leases of what the client hears: the unsharded gateway's,
    or one per shard it runs."""
    if not isinstance(client, discord.AutoShardedClient) or not client.shard_count:
        return (LEASE,)
    ids = client.shard_ids if client.shard_ids is not None else range(client.shard_count)
    return tuple(shard_lease(k) for k in sorted(ids))


def shard_lease(shard_id: int) -> str:
    return f"{SHARD_LEASE_PREFIX}{shard_id}"


def _snowflake(message_id: str) -> int | None:
    return int(message_id) if message_id.isdigit() else None

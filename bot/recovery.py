"""Finishing what a crash, an exception or a dead instance left unfinished.

Everything the bot has acknowledged is stored before it is acted on: a
message before it is applied, a click or a command before it is answered, an
arbitration row before its model call. Recovery finds what is stored and not
done and hands each piece to the flow that does it, each room in a task of
its own (a resumed model call can take minutes). Doing a piece twice at once
is harmless (a message or an action is marked applied by a compare-and-set;
an arbitration is claimed under a lease), so only arbitrations carried now,
here or under another instance's live lease, are skipped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from bot.arbitration_flow import ArbitrationFlow
from bot.clock import Clock
from bot.instances import Instance
from bot.models import RoomKey
from storage.base import ActionRow, ArbitrationRow, Storage, held_by_another

Spawn = Callable[[Coroutine[Any, Any, None]], object]


class Recovery:
    def __init__(
        self, *, storage: Storage, clock: Clock, instance: Instance,
        arbitration: ArbitrationFlow, spawn: Spawn,
        apply_stored: Callable[[RoomKey], Awaitable[None]],
        apply_action: Callable[[ActionRow], Coroutine[Any, Any, None]],
    ) -> None:
        """`apply_stored` applies a room's stored messages (`Engine.apply_stored`),
        `apply_action` a stored click or command."""
        self.storage = storage
        self.clock = clock
        self.instance = instance
        self.arbitration = arbitration
        self.spawn = spawn
        self.apply_stored = apply_stored
        self.apply_action = apply_action

    async def run(self) -> None:
        """Arbitrations no one carries, then the room's unapplied messages; and
        unapplied clicks and commands."""
        rooms: dict[str, list[int]] = {}
        for row in await self.arbitrations_to_take():
            rooms.setdefault(row.room_id, []).append(row.id)
        for message in await self.storage.unprocessed_messages():
            rooms.setdefault(message.room_id, [])
        for room_id, arbitration_ids in rooms.items():
            self.spawn(self._room(RoomKey.parse(room_id), arbitration_ids))
        for action in await self.storage.unprocessed_actions():
            self.spawn(self.apply_action(action))  # applied once: a compare-and-set

    async def others_registered(self) -> bool:
        """Whether other instances share the database now."""
        return any(row.id != self.instance.id for row in await self.storage.instances())

    async def take_over_arbitrations(self) -> None:
        """Run the arbitrations no live lease holds (their instance died or
        stopped, or a crash came between creating and claiming one)."""
        for row in await self.arbitrations_to_take():
            self.spawn(self.resume(RoomKey.parse(row.room_id), row.id))

    async def arbitrations_to_take(self) -> list[ArbitrationRow]:
        """Unfinished arbitrations neither carried here nor held by another
        instance's live lease. (The claim decides; this spares the units.)"""
        rows = await self.storage.unfinished_arbitrations()
        if not rows:
            return []
        now = self.clock.now()
        registered = {row.id for row in await self.storage.instances()}
        return [
            row for row in rows
            if row.id not in self.arbitration.carrying
            and not held_by_another(row.claimed_by, row.lease_until, self.instance.id, now,
                                    registered)
        ]

    async def resume(self, room: RoomKey, arbitration_id: int) -> None:
        """Carry one arbitration to its verdict, then apply what waited for it."""
        await self.arbitration.carry(room, arbitration_id)
        await self.apply_stored(room)

    async def _room(self, room: RoomKey, arbitration_ids: list[int]) -> None:
        for arbitration_id in arbitration_ids:
            await self.arbitration.carry(room, arbitration_id)
        await self.apply_stored(room)

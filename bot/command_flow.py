"""`/arbiter` commands stored before they are acknowledged, applied from storage.

An adapter hands a command to `StoredCommands.receive` before it acknowledges
(Slack) or defers (Discord) the platform's delivery: one insert into
`actions` (kind `command`; a redelivery, same delivery id, is dropped). The
command is then applied by `apply`, in a task, and again by the engine's
recovery after a crash, until it is marked applied:

- a command that changes something (a setting, the bindings, a summon) is
  marked applied in the transaction that makes the change (`bot.admin.Claim`,
  through the audit row every change writes), so it is applied exactly once;
- a command that only reads (`status`, `history`, a usage error, a refusal)
  is marked applied in the transaction that queues its reply.

The reply goes out through the outbox as a private post, along the adapter's
`route` (a Slack `response_url`, a Discord interaction token), so a reply
queued before a crash is still delivered after it. A change's reply is queued
just after the change commits, before what the change asks for is posted (a
summon's progress message): a crash in that instant keeps the change and
loses its reply (the command is not run twice to rebuild it); a summoned
arbitration left unstarted is resumed by recovery like any other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic import BaseModel, ValidationError

from bot import faults
from bot.admin import AdminCommands, Claim
from bot.clock import Clock
from bot.escalation_flow import enqueue_private
from bot.faults import armed
from bot.models import CommandRequest, RoomKey
from bot.outbox import Outbox
from bot.ports import Applying, ChecksAdmins, Transport
from bot.transitions import AlreadyApplied
from storage.base import ActionRow, Storage

log = logging.getLogger(__name__)

KIND = "command"


class StoredCommand(BaseModel):
    """The `payload` of a stored command (`ActionRow.kind == "command"`)."""

    request: CommandRequest
    route: dict[str, str] | None = None  # where the reply goes (the adapter's)
    ask_admin: bool = False  # the transport says, when applied, if the user is an admin


class StoredCommands:
    def __init__(
        self, *, storage: Storage, clock: Clock, admin: AdminCommands, outbox: Outbox,
        transports: dict[str, Transport],
        spawn: Callable[[Coroutine[Any, Any, None]], Applying],
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.admin = admin
        self.outbox = outbox
        self.transports = transports
        self.spawn = spawn  # the engine's: a task `drain()` waits for

    async def receive(self, request: CommandRequest, delivery_id: str, *,
                      route: dict[str, str] | None = None, ask_admin: bool = False) -> Applying:
        """Store the command, then apply it in a task (adapters: before the ack).

        Returns once it is stored, with the task applying it (None for a
        redelivery, or when the crash tests' `after_store` leaves it to the
        next start).
        """
        payload = StoredCommand(request=request, route=route, ask_admin=ask_admin)
        row = ActionRow(
            platform=request.platform, delivery_id=delivery_id, kind=KIND,
            room_id=self.room(request).id, payload=payload.model_dump(mode="json"),
            received_at=self.clock.now(),
        )
        async with self.storage.transaction() as tx:
            action_id = await tx.insert_action(row)
        if action_id is None:
            log.info("/arbiter: redelivery of %s dropped", delivery_id)
            return None
        if armed("after_store"):
            return None
        return self.spawn(self.apply(action_id))

    @staticmethod
    def room(request: CommandRequest) -> RoomKey:
        """Where the command was given: its reply's room in the outbox (a thread
        of another channel, refused, is answered in the channel it was typed in)."""
        if request.typed_in:
            return RoomKey(request.platform, request.typed_in)
        return RoomKey(request.platform, request.channel, request.thread)

    async def apply(self, action_id: int) -> None:
        """Apply a stored command once and queue its reply."""
        action = await self.storage.get_action(action_id)
        if action is None or action.processed:
            return
        try:
            stored = StoredCommand.model_validate(action.payload)
        except ValidationError:
            log.error("/arbiter: stored command %s is unreadable; dropped", action_id)
            async with self.storage.transaction() as tx:
                await tx.mark_action_processed(action_id)
            return
        request = stored.request
        if stored.ask_admin and not request.is_platform_admin:
            transport = self.transports.get(request.platform)
            if isinstance(transport, ChecksAdmins):
                try:
                    admin = await transport.is_platform_admin(request.user_id)
                except Exception as exc:  # the platform is unreachable: try again later
                    log.warning("/arbiter: admin rights of %s unknown (%s); the command waits"
                                " for the next recovery", request.user_id, type(exc).__name__)
                    return
                request.is_platform_admin = admin
        claim = Claim(action_id)
        try:
            reply = await self.admin.handle(request, claim=claim)
        except AlreadyApplied:
            return  # another task (recovery, a second instance) applied it
        room = self.room(request)
        async with self.storage.transaction() as tx:
            if not claim.taken and not await tx.mark_action_processed(action_id):
                return  # another task answered it
            await enqueue_private(tx, room, request.user_id, reply.text, self.clock.now(),
                                  stored.route)
        faults.hit("after_action")
        for effect_room, effects in claim.effects:
            await self.admin.run_effects(effect_room, effects)
        self.outbox.note(room.id)
        await self.outbox.flush(room.id)

"""Escalation buttons: a click stored before it is acknowledged, applied from storage.

An adapter hands a click to `StoredClicks.receive` before it acknowledges the
platform's delivery: one insert into `actions` (kind `click`; a redelivery,
same delivery id, is dropped). The click is then applied by `apply`, in a
task, and again by the engine's recovery after a crash, until it is marked
applied, in the room's unit that applies it. What the clicker alone should
read (accepted, refused, already answered) goes out through the outbox as a
private post along the adapter's `route`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from bot.clock import Clock
from bot.escalation_flow import enqueue_private
from bot.faults import armed, hit
from bot.models import AnswerResult, ButtonClick, RoomKey
from bot.outbox import Outbox
from bot.ports import Applying
from bot.transitions import Effects, RoomContext, Transitions
from prompts.strings import t
from storage.base import ActionRow, Storage

KIND = "click"


class StoredClicks:
    def __init__(
        self, *, storage: Storage, clock: Clock, transitions: Transitions, outbox: Outbox,
        language: str, context: Callable[[RoomKey], Awaitable[RoomContext]],
        run_effects: Callable[[RoomKey, Effects], Awaitable[None]],
        spawn: Callable[[Coroutine[Any, Any, None]], Applying],
    ) -> None:
        """`language`: what a click on an unknown escalation is answered in
        (no room to take it from); `context` reads a room's settings;
        `run_effects` runs what a committed answer asked for."""
        self.storage = storage
        self.clock = clock
        self.transitions = transitions
        self.outbox = outbox
        self.language = language
        self.context = context
        self.run_effects = run_effects
        self.spawn = spawn  # the engine's: a task `drain()` waits for

    async def receive(self, click: ButtonClick, delivery_id: str, *,
                      route: dict[str, str] | None = None) -> Applying:
        """Store a click, then apply it in a task. Once this returns the
        platform may be told we have it. The task applying it, or None: a
        redelivery, or (crash tests' `after_store`) left for the next start."""
        payload = click.model_dump(mode="json")
        if route:
            payload["route"] = route
        row = ActionRow(
            platform=click.platform, delivery_id=delivery_id, kind=KIND,
            room_id=RoomKey(click.platform, click.channel, click.thread).id,
            payload=payload, received_at=self.clock.now(),
        )
        async with self.storage.transaction() as tx:
            action_id = await tx.insert_action(row)
        if action_id is None or armed("after_store"):
            return None
        return self.spawn(self.apply(action_id))

    async def apply(self, action_id: int) -> None:
        """Apply a stored click in its room's unit (marked applied in the same unit)."""
        action = await self.storage.get_action(action_id)
        if action is None or action.processed:
            return
        click = ButtonClick.model_validate(action.payload)
        raw_route = action.payload.get("route")
        route = raw_route if isinstance(raw_route, dict) else None
        escalation = await self.storage.get_escalation(click.escalation_id)
        if escalation is None:
            room = RoomKey.parse(action.room_id)
            async with self.storage.transaction() as tx:
                if await tx.mark_action_processed(action_id):
                    await enqueue_private(tx, room, click.user_id,
                                          t("answer_unknown", self.language),
                                          self.clock.now(), route)
            hit("after_action")
            self.outbox.note(room.id)
            await self.outbox.flush(room.id)
            return
        room = RoomKey.parse(escalation.room_id)
        ctx = await self.context(room)
        async with self.storage.room(room.id) as unit:
            if not await unit.mark_action_processed(action_id):
                return  # another task applied it
            effects = await self.transitions.click(
                unit, room, escalation.id, click.user_id, click.option, ctx,
                platform_admin=click.is_platform_admin, tell_privately=True, route=route,
            )
        hit("after_action")
        await self.run_effects(room, effects)

    async def answer_now(self, click: ButtonClick) -> AnswerResult:
        """Apply a click now and return what the clicker alone should read
        (tests and the console; the adapters store clicks first: `receive`)."""
        row = await self.storage.get_escalation(click.escalation_id)
        if row is None:
            return AnswerResult(accepted=False, private_text=t("answer_unknown", self.language))
        room = RoomKey.parse(row.room_id)
        ctx = await self.context(room)
        async with self.storage.room(room.id) as unit:
            effects = await self.transitions.click(
                unit, room, row.id, click.user_id, click.option, ctx,
                platform_admin=click.is_platform_admin,
            )
        await self.run_effects(room, effects)
        reply = effects.reply
        assert reply is not None
        return AnswerResult(accepted=reply.kind is not None, private_text=reply.private_text)

"""Open turns, and closing them when they go quiet.

A turn closes when another role speaks (`bot.transitions`) or when it has
been quiet for `turn_quiet_seconds` (longer while a turn of several reviewers
waits for the others: `TRIBUNAL_REVIEWER_WAIT_SECONDS`). This module keeps
which rooms have an open turn and when it last moved, so the heartbeat opens
a room's unit of work only for turns that may have gone quiet, and it asks
the optional progress judge before a reviewer turn is closed (a model call is
never made inside a unit).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from datetime import datetime

from bot import detection
from bot.arbiter.judge import ProgressJudge
from bot.clock import Clock
from bot.models import Role, RoomKey
from bot.state import RoomState
from bot.transitions import (
    Effects,
    RoomContext,
    Transitions,
    load,
    turn_thresholds,
    waits_for_reviewers,
)
from storage.base import Storage


async def judged(storage: Storage, judge: ProgressJudge | None, room: RoomKey,
                 ctx: RoomContext, *, closing: bool = False) -> RoomContext:
    """With `TRIBUNAL_PROGRESS_JUDGE=llm`: if the next transition closes a
    reviewer turn whose round the rules are unsure of, ask the judge first.

    A dry closing of a copy of the stored state finds the questions; the
    call happens here, before the room's unit opens (never a model call
    inside one), and its answers ride in the context to the real closing.
    """
    if judge is None:
        return ctx
    raw = await storage.load_room_state(room.id)
    state = None if raw is None else RoomState.model_validate_json(raw)
    turn = state.open_turn if state is not None else None
    if state is None or turn is None or turn.role is not Role.REVIEWER:
        return ctx
    if not closing:
        rows = await storage.unprocessed_messages(room.id)
        if not rows or (
            Role(rows[0].role) is Role.REVIEWER
            and not detection.is_quiet(turn, rows[0].ts, turn_thresholds(state, ctx))
        ):
            return ctx  # the reviewer turn goes on: nothing closes
    copy = state.model_copy(deep=True)
    questions = [
        q for e in detection.close_turn(copy, ctx.thresholds)
        if isinstance(e, detection.TurnClosed) for q in e.questions
    ]
    if not questions:
        return ctx
    decisions, record = await judge.decide(questions)
    return replace(ctx, decisions=decisions, judge=record)


class TurnCloser:
    """The rooms with an open turn, and closing those that went quiet."""

    def __init__(
        self, *, storage: Storage, clock: Clock, transitions: Transitions,
        judge: ProgressJudge | None,
        context: Callable[[RoomKey], Awaitable[RoomContext]],
        run_effects: Callable[[RoomKey, Effects], Awaitable[None]],
    ) -> None:
        """`context` reads a room's settings (`Engine.context`); `run_effects`
        runs what a committed closing asked for, arbitrations in their own task."""
        self.storage = storage
        self.clock = clock
        self.transitions = transitions
        self.judge = judge
        self.context = context
        self.run_effects = run_effects
        # Room -> its open turn's last message and whether it waits for other
        # reviewers (None: not known yet; the next closing reads its state).
        self.open_turns: dict[str, tuple[datetime, bool] | None] = {}
        self.read = False

    def note(self, room: RoomKey, effects: Effects) -> None:
        """What a committed transition left open (or closed)."""
        if not effects.saved:
            return
        if effects.open_turn_at is not None:
            self.open_turns[room.id] = (effects.open_turn_at, effects.open_turn_waits)
        else:
            self.open_turns.pop(room.id, None)

    async def look_again(self) -> None:
        """The rooms whose turn another instance opened (it may be gone): for
        while other instances share the database. Alone, this process knows
        every open turn it made; those the last process left are read once,
        when turns are first closed (`read`)."""
        for room_id in await self.storage.rooms_with_open_turns():
            self.open_turns.setdefault(room_id, None)

    async def close_quiet(self, rooms: Iterable[str] | None = None, *,
                          force: bool = False) -> None:
        """Close the open turns that went quiet (or all of them now, `force`)."""
        if rooms is None and not self.read:
            for room_id in await self.storage.rooms_with_open_turns():
                self.open_turns.setdefault(room_id, None)
            self.read = True
        for room_id in list(rooms if rooms is not None else self.open_turns):
            await self.close(RoomKey.parse(room_id), force=force)

    async def close(self, room: RoomKey, *, force: bool) -> Effects | None:
        """Close the room's turn if it is quiet (now, `force`); what the
        closing did, or None when no turn was closed."""
        ctx = await self.context(room)
        known = self.open_turns.get(room.id)
        quiet = ctx.thresholds.turn_quiet_seconds
        if not force and known is not None and quiet is not None:
            last_at, waits = known
            if waits and ctx.reviewer_wait_seconds is not None:
                # Several reviewers: the turn waits for the others.
                quiet = max(quiet, ctx.reviewer_wait_seconds)
            if (self.clock.now() - last_at).total_seconds() < quiet:
                return None  # not quiet yet: next tick
        if ctx.channel.paused:
            return None  # a paused channel is not watched: its turns are not judged
        ctx = await judged(self.storage, self.judge, room, ctx, closing=True)
        async with self.storage.room(room.id) as unit:
            effects = await self.transitions.close_turn(unit, room, ctx, force=force)
            stored = load(unit) if effects is None else None
        if effects is not None:
            await self.run_effects(room, effects)
        elif stored is None or stored.open_turn is None:
            # Closed (or never open) as stored: another instance may have
            # applied the room's later messages.
            self.open_turns.pop(room.id, None)
        else:  # the stored turn's latest message
            self.open_turns[room.id] = (stored.open_turn.last_at, waits_for_reviewers(stored))
        return effects

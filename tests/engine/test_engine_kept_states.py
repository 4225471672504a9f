"""The state object a room's unit saved is kept, beside the exact JSON saved,
for the room's next unit (`bot.transitions.ParsedStates`): used only when the
stored JSON is that text, and then equal to what parsing it gives."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from engine_world import OBJECTIONS, PUSHBACKS, World

from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, RoomKey
from bot.state import RoomState
from bot.transitions import ParsedStates, load
from storage.backends import storage_for
from storage.base import Storage

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


async def engine_on(storage: Storage, clock: ManualClock) -> Engine:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    engine = Engine(settings, storage, clock, room_overrides={"turn_quiet_seconds": None})
    await engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=["reviewer-bot"], settings={})
    return engine


async def test_a_kept_state_object_is_what_parsing_its_json_gives(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every time a unit takes a kept state object instead of parsing the
    stored JSON, the object equals what parsing would give; a stored state
    that differs (written by anything else) is parsed."""
    taken: list[bool] = []  # per unit: the kept object was used
    real = ParsedStates.take

    def checked(self: ParsedStates, unit: Any) -> Any:
        kept = self._kept.get(unit.room_id)
        state = real(self, unit)
        taken.append(kept is not None and state is kept[1])
        assert state.model_dump() == load(unit).model_dump()
        return state

    monkeypatch.setattr(ParsedStates, "take", checked)
    await world.say("alice", "fix the login bug")
    await world.say("owner-bot", "STEP_DONE implemented the fix in src/auth.py", is_bot=True)
    for objection, pushback in zip(OBJECTIONS, [*PUSHBACKS, "fine"], strict=True):
        await world.say("reviewer-bot", objection, is_bot=True)
        await world.say("owner-bot", pushback, is_bot=True)
    room = world.engine_room()
    # Changed behind the engine's back: the next unit parses the stored JSON.
    async with world.storage.room(room.id) as unit:
        assert unit.state is not None
        changed = json.loads(unit.state)
        changed["open_turn"]["parts"][0]["text"] = "rewritten"
        await unit.save_room_state(room.id, "console", "C1", "T1", json.dumps(changed), T0)
    used = len(taken)
    await world.say("owner-bot", "more", is_bot=True)
    state = await world.engine.load_state(room)
    assert state.open_turn is not None and state.open_turn.text.startswith("rewritten\n")
    assert any(taken[:used]) and taken[used:] == [False]


@pytest.mark.postgres
async def test_the_state_another_instance_saved_is_never_taken_for_a_kept_one(
    postgres_database: str,
) -> None:
    """A room's state object kept since its last save is used only while the
    stored JSON is the one saved: another instance's save in between makes
    the next unit read what that instance wrote."""
    here, there = storage_for(postgres_database), storage_for(postgres_database)
    await here.open()
    await there.open()
    try:
        clock = ManualClock(T0)
        engine, other = await engine_on(here, clock), await engine_on(there, clock)
        n = 0

        async def say(side: Engine, author: str, text: str) -> None:
            nonlocal n
            n += 1
            clock.advance(1)
            await side.on_message(IncomingMessage(
                platform="console", channel="C1", thread="T1", message_id=f"m{n}",
                author_id=author, text=text, ts=clock.now(), is_bot=author != "alice"))

        await say(engine, "alice", "fix it")
        await say(engine, "owner-bot", "STEP_DONE part 1")  # kept here
        await say(other, "owner-bot", "part 2")  # saved there
        await say(engine, "owner-bot", "part 3")  # here again: reads part 2
        await say(other, "owner-bot", "part 4")
        state = await engine.load_state(RoomKey("console", "C1", "T1"))
        assert state.open_turn is not None
        assert state.open_turn.text == "STEP_DONE part 1\npart 2\npart 3\npart 4"
    finally:
        await here.close()
        await there.close()



def test_states_kept_between_messages_are_bounded() -> None:
    states = ParsedStates(size=2)
    for room in ("a", "b", "c"):
        states.keep(room, "{}", RoomState())
    assert len(states._kept) == 2
    states.keep("d", None, RoomState())  # nothing to key it by: not kept
    assert len(states._kept) == 2

"""Several reviewers, live (`tribunal run`: a real timer through `tick()`, here a
manual clock): a reviewer turn closes once every reviewer who has posted in
the task has spoken in it (after the usual quiet), or after
`TRIBUNAL_REVIEWER_WAIT_SECONDS` of silence; one reviewer keeps the quiet time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from engine_world import World, make_world

from bot.config import Settings
from bot.models import Role
from bot.state import RoomState
from storage.base import RoomTransaction

WAIT = 60.0
SEC = "`authz/cache.py` caches denied checks too, so a revoked user keeps access. Do not cache denials."
PERF = ("`authz/cache.py` builds the cache key from the whole resource path. "
        "Use `perm:{user_id}:{role_version}` instead.")
FIXED = ("STEP_DONE Denied checks are no longer cached and the key is now "
         "`perm:{user_id}:{role_version}` (`a1b2c3d`).")
SEC_OK = "LGTM"
PERF_OK = "LGTM"


async def world_with(tmp_path: Path, reviewers: list[str]) -> World:
    settings = Settings(_env_file=None, admin_ids=["boss"],  # type: ignore[call-arg]
                        reviewer_wait_seconds=WAIT)
    world = await make_world(tmp_path / "w.db", settings)  # quiet_close: as `tribunal run`
    await world.engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=reviewers, settings={})
    return world


@pytest.fixture
async def two(tmp_path: Path) -> AsyncIterator[World]:
    w = await world_with(tmp_path, ["sec-bot", "perf-bot"])
    yield w
    await w.engine.drain()
    await w.storage.close()


async def state(world: World) -> RoomState:
    return await world.engine.load_state(world.engine_room())


async def wait(world: World, seconds: float) -> None:
    """Time passes; `tribunal run` ticks about once a second."""
    world.clock.advance(seconds)
    await world.engine.tick()
    await world.engine.drain()


async def first_round(world: World) -> None:
    await world.say("alice", "Cache the permission checks of `has_permission()`, please.")
    await world.say("owner-bot", "STEP_DONE Added a Redis cache in `authz/cache.py`.",
                    is_bot=True)
    await world.say("sec-bot", SEC, is_bot=True)
    await world.say("perf-bot", PERF, is_bot=True)
    await wait(world, 4)  # both reviewers spoke: the usual quiet closes the turn
    got = await state(world)
    assert got.open_turn is None and got.task_rounds == 1
    assert got.task_reviewers == ["sec-bot", "perf-bot"]
    assert sorted(f.author for f in got.findings) == ["perf-bot", "sec-bot"]


def count_units(world: World) -> list[str]:
    """Record every room unit opened from now on (a tick opens one only for a
    turn that may have gone quiet)."""
    opened: list[str] = []
    original: Callable[[str], AbstractAsyncContextManager[RoomTransaction]] = world.storage.room

    def room(room_id: str) -> AbstractAsyncContextManager[RoomTransaction]:
        opened.append(room_id)
        return original(room_id)

    world.storage.room = room  # type: ignore[method-assign]
    return opened


async def test_the_turn_waits_for_the_other_reviewer_and_takes_it_in(two: World) -> None:
    world = two
    await first_round(world)
    await world.say("owner-bot", FIXED, is_bot=True)
    await world.say("sec-bot", SEC_OK, is_bot=True)
    turn_no = (await state(world)).open_turn.turn_no  # type: ignore[union-attr]
    opened = count_units(world)
    for _ in range(30):  # half a minute of ticks: perf-bot has not spoken yet
        await wait(world, 1)
    assert opened == []  # nothing to look at before the wait is over
    got = await state(world)
    assert got.open_turn is not None and got.open_turn.role is Role.REVIEWER
    assert not got.approved  # sec-bot's LGTM alone approves nothing

    await world.say("perf-bot", PERF_OK, is_bot=True, gap=5)
    got = await state(world)
    assert got.open_turn is not None and got.open_turn.turn_no == turn_no  # one reviewer turn
    assert got.open_turn.authors() == ["sec-bot", "perf-bot"]
    await wait(world, 2)
    assert (await state(world)).open_turn is not None  # still within the quiet time
    await wait(world, 2)
    got = await state(world)
    assert got.open_turn is None and got.approved  # both approved in one turn
    assert world.events[-1]["event"] == "approved"


async def test_the_wait_ends_the_turn_when_a_reviewer_stays_silent(two: World) -> None:
    world = two
    await first_round(world)
    await world.say("owner-bot", FIXED, is_bot=True)
    await world.say("sec-bot", SEC_OK, is_bot=True)
    await wait(world, WAIT - 2)
    got = await state(world)
    assert got.open_turn is not None and got.task_rounds == 1
    await wait(world, 3)
    got = await state(world)
    assert got.open_turn is None and got.task_rounds == 2  # the round was judged
    # perf-bot, silent, has an open finding: sec-bot's LGTM alone is not approval.
    assert [f.label for f in got.findings if f.author == "perf-bot" and f.is_open] == ["F2"]
    assert not got.approved and "approved" not in [e["event"] for e in world.events]


async def test_one_reviewer_closes_after_the_usual_quiet(tmp_path: Path) -> None:
    world = await world_with(tmp_path, ["sec-bot"])
    try:
        await world.say("alice", "Cache the permission checks of `has_permission()`, please.")
        await world.say("owner-bot", "STEP_DONE Added a Redis cache in `authz/cache.py`.",
                        is_bot=True)
        await world.say("sec-bot", SEC, is_bot=True)
        await wait(world, 4)
        got = await state(world)
        assert got.open_turn is None and got.task_rounds == 1
    finally:
        await world.engine.drain()
        await world.storage.close()


async def test_a_replay_has_no_timer(tmp_path: Path) -> None:
    # quiet_close=False (replays): the reviewer turn closes at the owner's next
    # message or at the end of input, never by a clock.
    settings = Settings(_env_file=None, reviewer_wait_seconds=WAIT)  # type: ignore[call-arg]
    world = await make_world(tmp_path / "r.db", settings, quiet_close=False)
    try:
        await world.engine.admin.configure_channel(
            "console", "C1", owner=["owner-bot"], reviewer=["sec-bot", "perf-bot"], settings={})
        await world.say("alice", "Cache the permission checks, please.")
        await world.say("owner-bot", "STEP_DONE Added a Redis cache.", is_bot=True)
        await world.say("sec-bot", SEC, is_bot=True)
        await world.say("perf-bot", PERF, is_bot=True, gap=WAIT * 10)
        got = await state(world)
        assert got.open_turn is not None and got.open_turn.authors() == ["sec-bot", "perf-bot"]
        ctx: Any = await world.engine.context(world.engine_room())
        assert ctx.reviewer_wait_seconds is None
    finally:
        await world.engine.drain()
        await world.storage.close()

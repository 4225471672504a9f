"""A message of a free room is stored and applied in one unit of work (one
commit); a busy room, or one with older messages waiting, gets it stored at
once and applied in its turn. Nothing is applied twice, nothing older is
overtaken, and a crash anywhere loses nothing."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from engine_world import World

from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, RoomKey
from storage.backends import storage_for
from storage.base import Storage, Transaction

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
GUARD = 30  # seconds; only so that a broken lock fails the test instead of hanging it


def count_units(storage: Storage) -> dict[str, int]:
    """How many transactions and room units are opened from now on."""
    opened = {"transaction": 0, "room": 0}
    transaction: Callable[[], AbstractAsyncContextManager[Transaction]] = storage.transaction
    room = storage.room

    def counted_transaction() -> AbstractAsyncContextManager[Transaction]:
        opened["transaction"] += 1
        return transaction()

    def counted_room(room_id: str) -> AbstractAsyncContextManager[Any]:
        opened["room"] += 1
        return room(room_id)

    storage.transaction = counted_transaction  # type: ignore[method-assign]
    storage.room = counted_room  # type: ignore[method-assign]
    return opened


async def messages(world: World) -> list[tuple[str, int, int | None]]:
    rows = await world.storage._all(
        "SELECT message_id, processed, turn_no FROM messages ORDER BY seq")
    return [(r["message_id"], r["processed"], r["turn_no"]) for r in rows]


def incoming(world: World, author: str, text: str, message_id: str) -> IncomingMessage:
    world.clock.advance(1)
    return IncomingMessage(platform="console", channel="C1", thread="T1", message_id=message_id,
                           author_id=author, text=text, ts=world.clock.now(),
                           is_bot=author.endswith("-bot"))


async def test_a_free_room_stores_and_applies_a_message_in_one_unit(world: World) -> None:
    await world.say("alice", "fix the login bug")
    await world.say("owner-bot", "STEP_DONE first part", is_bot=True)
    opened = count_units(world.storage)
    await world.say("owner-bot", "second part", is_bot=True, message_id="p2")
    assert opened == {"transaction": 1, "room": 0}
    assert (await messages(world))[-1] == ("p2", 1, 1)
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE first part\nsecond part"


async def test_the_turn_closing_and_its_deadlock_go_on_as_before(world: World) -> None:
    """A message that closes a deadlocking turn stays stored while its
    arbitration runs, then is applied (the none backend escalates)."""
    await world.say("alice", "fix it")
    await world.say("owner-bot", "BLOCKED: no access to staging", is_bot=True)
    await world.say("reviewer-bot", "agreed, blocked", is_bot=True, message_id="r1")
    await world.say("alice", "2", message_id="answer")
    assert world.kinds() == ["deadlock", "verdict", "escalation_answered"]
    assert [(m, p) for m, p, _ in await messages(world)][-2:] == [("r1", 1), ("answer", 1)]


async def test_a_message_waits_behind_older_stored_ones(world: World) -> None:
    await world.say("alice", "fix it")
    room = world.engine_room()
    assert await world.engine.store(incoming(world, "owner-bot", "STEP_DONE older", "o1"))
    opened = count_units(world.storage)
    await world.engine.on_message(incoming(world, "owner-bot", "newer", "o2"))
    assert opened["room"] == 2  # stored, then applied after the older one, one unit each
    assert [(m, p) for m, p, _ in await messages(world)] == [("m1", 1), ("o1", 1), ("o2", 1)]
    state = await world.engine.load_state(room)
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE older\nnewer"


async def test_a_redelivery_is_applied_once(world: World) -> None:
    await world.say("alice", "fix it")
    await world.say("owner-bot", "STEP_DONE part 1", is_bot=True, message_id="p1")
    await world.say("owner-bot", "STEP_DONE part 1", is_bot=True, message_id="p1")
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE part 1"
    # A first delivery that was stored but not applied: the redelivery applies it.
    assert await world.engine.store(incoming(world, "owner-bot", "part 2", "p2"))
    await world.engine.on_message(incoming(world, "owner-bot", "part 2", "p2"))
    await world.engine.on_message(incoming(world, "owner-bot", "part 2", "p2"))
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE part 1\npart 2"
    assert [(m, p) for m, p, _ in await messages(world)] == [("m1", 1), ("p1", 1), ("p2", 1)]


async def test_a_failure_in_the_unit_keeps_the_message_stored_for_recovery(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    await world.say("alice", "fix it")
    await world.say("owner-bot", "STEP_DONE part 1", is_bot=True)
    real = world.engine.transitions.message

    async def failing(*args: Any, **kwargs: Any) -> Any:
        await real(*args, **kwargs)  # its writes are made, then it fails
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(world.engine.transitions, "message", failing)
    with pytest.raises(RuntimeError):
        await world.say("owner-bot", "part 2", is_bot=True, message_id="p2")
    monkeypatch.undo()
    # Rolled back whole, then kept unapplied: the next recovery applies it.
    assert (await messages(world))[-1] == ("p2", 0, None)
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE part 1"
    await world.engine.recover()
    await world.engine.drain()
    assert (await messages(world))[-1] == ("p2", 1, 1)
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE part 1\npart 2"


async def test_a_message_of_a_room_a_unit_waits_for_is_stored_and_applied_after_it(
    world: World,
) -> None:
    """SQLite: a unit holds the room (and the one connection); another unit
    asks for the room; the message that comes meanwhile is stored before
    that unit gets in and applied after it, in its own unit."""
    await world.say("alice", "fix it")
    room = world.engine_room()
    release, inside = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def unit(name: str) -> None:
        async with world.storage.room(room.id) as unit:
            order.append(f"{name} saw {[m.message_id for m in await unit.unprocessed_messages()]}")
            inside.set()
            await release.wait()

    first = asyncio.create_task(unit("first"))
    await asyncio.wait_for(inside.wait(), GUARD)
    second = asyncio.create_task(unit("second"))
    for _ in range(20):
        await asyncio.sleep(0)
    delivering = asyncio.create_task(
        world.engine.on_message(incoming(world, "owner-bot", "STEP_DONE done", "o1")))
    for _ in range(5):
        await asyncio.sleep(0)
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second, delivering), GUARD)
    assert order == ["first saw []", "second saw ['o1']"]
    assert (await messages(world))[-1] == ("o1", 1, 1)


# -- several instances (PostgreSQL) ---------------------------------------------

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


async def engine_on(storage: Storage, clock: ManualClock) -> Engine:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    engine = Engine(settings, storage, clock, room_overrides={"turn_quiet_seconds": None})
    await engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=["reviewer-bot"], settings={})
    return engine


@pytest.mark.postgres
async def test_a_room_another_instance_holds_is_stored_at_once(postgres_database: str) -> None:
    """The room's lock is cluster-wide: while another instance holds it, a
    message is stored without waiting for it, then applied after that
    instance's unit, on the state it committed."""
    here, there = storage_for(postgres_database), storage_for(postgres_database)
    await here.open()
    await there.open()
    try:
        clock = ManualClock(T0)
        engine = await engine_on(here, clock)
        room = RoomKey("console", "C1", "T1")

        def message(author: str, text: str, message_id: str) -> IncomingMessage:
            clock.advance(1)
            return IncomingMessage(platform="console", channel="C1", thread="T1",
                                   message_id=message_id, author_id=author, text=text,
                                   ts=clock.now(), is_bot=author != "alice")

        await engine.on_message(message("alice", "fix it", "m1"))
        await engine.on_message(message("owner-bot", "STEP_DONE part 1", "m2"))
        release, inside = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with there.room(room.id) as unit:
                inside.set()
                await release.wait()
                assert unit.state is not None
                state = json.loads(unit.state)
                state["open_turn"]["parts"][0]["text"] = "changed there"
                await unit.save_room_state(room.id, "console", "C1", "T1", json.dumps(state), T0)

        held = asyncio.create_task(holder())
        await asyncio.wait_for(inside.wait(), GUARD)
        delivering = asyncio.create_task(engine.on_message(message("owner-bot", "part 2", "m3")))
        for _ in range(200):  # stored while the other instance holds the room
            rows = await here.unprocessed_messages(room.id)
            if rows:
                break
            await asyncio.sleep(0.01)
        assert [m.message_id for m in rows] == ["m3"] and not held.done()
        release.set()
        await asyncio.wait_for(asyncio.gather(held, delivering), GUARD)
        state = await engine.load_state(room)
        assert state.open_turn is not None and state.open_turn.text == "changed there\npart 2"
        assert await here.unprocessed_messages() == []
    finally:
        await here.close()
        await there.close()


# -- crashes: the real process, SIGKILLed after a message was applied ---------------


def run_process(database: Path, posts: Path, fault: str | None = None) -> int:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "TRIBUNAL_FAULT"}
    env["PYTHONPATH"] = str(ROOT)
    if fault is not None:
        env["TRIBUNAL_FAULT"] = fault
    done = subprocess.run(
        [sys.executable, str(HERE / "ingest_process.py"), str(database), str(posts)],
        env=env, cwd=ROOT, timeout=120, capture_output=True, text=True, check=False)
    if done.returncode not in (0, -9):
        raise AssertionError(f"exit {done.returncode}: {done.stderr}")
    return done.returncode


def outcome(database: Path, posts: Path) -> dict[str, Any]:
    with sqlite3.connect(database) as conn:
        rows = conn.execute(
            "SELECT message_id, processed, epoch, turn_no FROM messages ORDER BY message_id"
        ).fetchall()
        ids = dict(conn.execute("SELECT seq, message_id FROM messages").fetchall())
        states = []
        for room_id, text in conn.execute("SELECT id, state FROM rooms ORDER BY id"):
            # A seq is the database's (a redelivery may use one up): name the message.
            state = json.loads(text)
            state["task_start_seq"] = ids.get(state["task_start_seq"])
            states.append((room_id, state))
        arbitrations = conn.execute(
            "SELECT room_id, trigger, status, verdict FROM arbitrations ORDER BY id").fetchall()
    shown = [json.loads(line) for line in posts.read_text(encoding="utf-8").splitlines()]
    return {"messages": rows, "states": states, "arbitrations": arbitrations,
            "posts": sorted((p["op"], p["room"], p["kind"], p.get("key", "")) for p in shown)}


def test_a_kill_after_any_applied_message_loses_nothing_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    """`after_apply:<n>`: the process dies right after the n-th message was
    applied and committed, before what it asked for (posts, arbitrations)
    ran. Started again, the platform delivering everything again, it ends
    exactly where an uninterrupted run ends: every message applied once, in
    order, the same states and arbitrations, every post shown once."""
    clean = tmp_path / "clean"
    clean.mkdir()
    assert run_process(clean / "t.db", clean / "posts.jsonl") == 0
    expected = outcome(clean / "t.db", clean / "posts.jsonl")
    assert all(processed == 1 for _, processed, _, _ in expected["messages"])
    assert expected["arbitrations"] and expected["posts"]
    n, killed = 0, 0
    while True:
        n += 1
        trial = tmp_path / f"kill{n}"
        trial.mkdir()
        if run_process(trial / "t.db", trial / "posts.jsonl", f"after_apply:{n}") == 0:
            break  # fewer applied messages than n: every kill point was tried
        killed += 1
        assert run_process(trial / "t.db", trial / "posts.jsonl") == 0
        assert outcome(trial / "t.db", trial / "posts.jsonl") == expected, f"after_apply:{n}"
    assert killed >= len(expected["messages"])

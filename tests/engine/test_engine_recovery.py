"""Restarts and platform failures: nothing lost, nothing posted twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from engine_world import deadlock, make_world

from bot import arbitration_flow
from bot.arbiter.base import ArbitrationContext, ArbitrationOutcome
from bot.arbiter.service import Arbitrator
from bot.config import Settings
from bot.models import MessageKind, OutgoingMessage, RoomKey
from bot.ports import TransportError


class HangingArbitrator(Arbitrator):
    def __init__(self) -> None:
        self.entered = asyncio.Event()

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        self.entered.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_arbitration_in_flight_at_a_crash_is_resumed(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    hanging = HangingArbitrator()
    first = await make_world(db, quiet_close=False, arbitrator=hanging)
    task = asyncio.create_task(deadlock(first))
    await asyncio.wait_for(hanging.entered.wait(), 5)
    task.cancel()  # the process dies mid-call
    await asyncio.gather(task, return_exceptions=True)
    assert [m.kind for _, m in first.transport.posts] == [MessageKind.PROGRESS]
    await first.storage.close()

    second = await make_world(db, quiet_close=False)  # start() resumes
    assert second.kinds() == ["verdict"]
    assert second.transport.posts == []  # the progress message is not posted again
    [(_, message_id, verdict)] = second.transport.edits
    assert message_id == "bot-1" and verdict.kind is MessageKind.VERDICT
    rows = await second.storage._all("SELECT status FROM arbitrations")
    assert rows == [{"status": "done"}]
    await second.engine.start()  # a second restart posts nothing more
    assert len(second.transport.edits) == 1
    await second.storage.close()


class FlakyTransport:
    platform = "console"

    def __init__(self, failures: int, permanent: bool = False) -> None:
        self.failures = failures
        self.permanent = permanent
        self.posts: list[str] = []

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        if self.failures > 0:
            self.failures -= 1
            raise TransportError("rate limited", permanent=self.permanent)
        self.posts.append(message.text)
        return f"p{len(self.posts)}"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        self.posts.append("edit:" + message.text[:8])

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        self.posts.append("private:" + text)


async def test_failed_posts_stay_in_the_outbox_and_are_retried(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "o.db", quiet_close=False)
    flaky = FlakyTransport(failures=3)
    w.engine.register_transport(flaky)
    await deadlock(w)
    assert w.kinds() == ["deadlock", "verdict"]  # the engine went on
    pending = await w.storage.pending_outbox("console:C1:T1")
    assert [p.kind for p in pending] == ["progress", "verdict"]
    for _ in range(3):
        await w.engine.tick()  # backing off: no time has passed, nothing is retried
    assert flaky.posts == [] and flaky.failures == 2
    for _ in range(3):
        w.clock.advance(60)
        await w.engine.tick()
    assert flaky.posts[0].startswith("⚖️") and flaky.posts[1].startswith("edit:ESCALATE")
    assert await w.storage.pending_rooms(["console"]) == []
    await w.storage.close()


async def test_a_long_outage_loses_nothing(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "long.db", quiet_close=False)
    flaky = FlakyTransport(failures=40)
    w.engine.register_transport(flaky)
    await deadlock(w)
    for _ in range(200):  # about three hours of ticks a minute apart
        w.clock.advance(60)
        await w.engine.tick()
    assert flaky.failures == 0
    assert flaky.posts[0].startswith("⚖️") and flaky.posts[1].startswith("edit:ESCALATE")
    rows = await w.storage._all("SELECT status FROM outbox")
    assert {r["status"] for r in rows} == {"sent"}
    await w.storage.close()


async def test_posts_for_a_platform_without_adapter_do_not_starve_others(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "starve.db", quiet_close=False)
    async with w.storage.transaction() as tx:
        for i in range(600):
            await tx.enqueue(f"discord:{i}:", "notice", {"kind": "notice", "text": "x"}, w.clock.now())
    await deadlock(w)
    await w.engine.tick()
    kinds = [m.kind for _, m in w.transport.posts] + [m.kind for _, _, m in w.transport.edits]
    assert MessageKind.PROGRESS in kinds and MessageKind.VERDICT in kinds
    rows = await w.storage._all("SELECT COUNT(*) AS n FROM outbox WHERE status = 'pending'")
    assert rows[0]["n"] == 600  # kept for when the Discord adapter runs again
    await w.storage.close()


async def test_permanent_failure_does_not_block_the_room(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "p.db", quiet_close=False)
    flaky = FlakyTransport(failures=1, permanent=True)
    w.engine.register_transport(flaky)
    await deadlock(w)
    rows = await w.storage._all("SELECT kind, status FROM outbox ORDER BY id")
    assert rows[0] == {"kind": "progress", "status": "failed"}
    assert rows[1] == {"kind": "verdict", "status": "sent"}
    assert flaky.posts[0].startswith("ESCALATE")  # posted anew since the edit had no target
    await w.storage.close()


async def test_message_that_closed_a_deadlocking_turn_survives_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "closing.db"
    hanging = HangingArbitrator()
    first = await make_world(db, quiet_close=False, arbitrator=hanging)
    await first.say("alice", "fix it")
    await first.say("owner-bot", "BLOCKED: no access to staging", is_bot=True)
    task = asyncio.create_task(first.say("alice", "2", message_id="answer"))  # closes the turn
    await asyncio.wait_for(hanging.entered.wait(), 5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.storage.close()

    second = await make_world(db, quiet_close=False)  # start(): verdict, then the "2"
    assert second.kinds() == ["verdict", "escalation_answered"]
    assert second.events[1]["option"] == 2 and second.events[1]["by"] == "alice"
    rows = await second.storage._all("SELECT message_id, processed FROM messages ORDER BY seq")
    assert rows[-1] == {"message_id": "answer", "processed": 1}
    await second.storage.close()


async def test_cached_state_is_rolled_back_when_storage_fails(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "fail.db", quiet_close=False)
    await w.say("alice", "go")
    await w.say("owner-bot", "STEP_DONE part 1", is_bot=True)
    real = w.storage.transaction
    calls = {"n": 0}

    def failing():  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("database is locked")
        return real()

    w.storage.transaction = failing  # type: ignore[method-assign]
    try:
        await w.say("owner-bot", "part 2", is_bot=True, message_id="p2")
    except RuntimeError:
        pass
    state = await w.engine.load_state(w.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE part 1"
    await w.say("owner-bot", "part 2", is_bot=True, message_id="p2")  # the redelivery
    state = await w.engine.load_state(w.engine_room())
    assert state.open_turn is not None
    assert state.open_turn.text == "STEP_DONE part 1\npart 2"
    await w.storage.close()


async def test_messages_waiting_behind_an_arbitration_survive_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "queued.db"
    hanging = HangingArbitrator()
    first = await make_world(db, quiet_close=False, arbitrator=hanging)
    await first.say("alice", "fix it")
    await first.say("owner-bot", "BLOCKED: no access to staging", is_bot=True)
    closing = asyncio.create_task(first.say("reviewer-bot", "agreed, blocked", is_bot=True,
                                            message_id="r1"))
    await asyncio.wait_for(hanging.entered.wait(), 5)
    waiting = asyncio.create_task(first.say("alice", "3", message_id="answer"))
    for _ in range(100):  # the answer is stored although its room is busy
        rows = await first.storage._all("SELECT processed FROM messages WHERE message_id = 'answer'")
        if rows:
            break
        await asyncio.sleep(0.01)
    assert rows == [{"processed": 0}]
    for task in (closing, waiting):
        task.cancel()
    await asyncio.gather(closing, waiting, return_exceptions=True)
    await first.storage.close()

    second = await make_world(db, quiet_close=False)
    assert second.kinds() == ["verdict", "escalation_answered"]
    assert second.events[1]["option"] == 3
    rows = await second.storage._all("SELECT message_id, processed FROM messages ORDER BY seq")
    assert [r["message_id"] for r in rows][-2:] == ["r1", "answer"]
    assert {r["processed"] for r in rows} == {1}
    await second.storage.close()


class GateArbitrator(Arbitrator):
    """Waits for `gate` before answering like the `none` backend."""

    def __init__(self) -> None:
        super().__init__(Settings(_env_file=None))  # type: ignore[call-arg]
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        self.entered.set()
        await self.gate.wait()
        return await super().arbitrate(ctx)


async def test_messages_queued_behind_an_arbitration_keep_their_order(tmp_path: Path) -> None:
    gate = GateArbitrator()
    w = await make_world(tmp_path / "order.db", quiet_close=False, arbitrator=gate)
    await w.say("alice", "go")
    await w.say("owner-bot", "BLOCKED: need access", is_bot=True)
    closing = asyncio.create_task(w.say("reviewer-bot", "agreed", is_bot=True, message_id="r0"))
    await asyncio.wait_for(gate.entered.wait(), 5)
    authors = ["owner-bot", "reviewer-bot"] * 4
    queued = [
        asyncio.create_task(w.say(a, f"msg {i}", is_bot=True, message_id=f"q{i}", gap=0))
        for i, a in enumerate(authors)
    ]
    await asyncio.sleep(0.05)
    gate.gate.set()  # the room frees up while later messages are still being stored
    await asyncio.gather(closing, *queued)
    rows = await w.storage._all(
        "SELECT message_id, turn_no, processed FROM messages WHERE message_id LIKE 'q%' ORDER BY seq")
    assert [r["message_id"] for r in rows] == [f"q{i}" for i in range(8)]
    assert all(r["processed"] == 1 for r in rows)
    turns = [r["turn_no"] for r in rows]
    assert turns == sorted(turns) and len(set(turns)) == 8  # one turn each, in delivery order
    await w.storage.close()


async def test_a_failure_after_commit_is_recovered_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = await make_world(tmp_path / "later.db", quiet_close=False)
    # The read of the arbiter's context fails after the arbitration was marked
    # running. (A failure while recording the verdict no longer strands it: that
    # ends in a fallback ESCALATE, see test_engine_verdict_record.py.)
    real = arbitration_flow.load_context
    calls = {"n": 0}

    async def failing_once(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("disk I/O error")
        return await real(*args, **kwargs)

    monkeypatch.setattr(arbitration_flow, "load_context", failing_once)
    await w.say("alice", "go")
    await w.say("owner-bot", "BLOCKED: need access", is_bot=True)
    try:
        await w.say("alice", "1", message_id="answer")
    except RuntimeError:
        pass
    rows = await w.storage._all("SELECT status FROM arbitrations")
    assert rows == [{"status": "running"}]
    w.clock.advance(31)
    await w.engine.tick()
    await w.engine.drain()
    assert "verdict" in w.kinds() and w.events[-1]["event"] == "escalation_answered"
    rows = await w.storage._all("SELECT processed FROM messages WHERE message_id = 'answer'")
    assert rows == [{"processed": 1}]
    await w.storage.close()


async def test_start_does_not_wait_for_resumed_model_calls(tmp_path: Path) -> None:
    db = tmp_path / "start.db"
    hanging = HangingArbitrator()
    first = await make_world(db, quiet_close=False, arbitrator=hanging)
    task = asyncio.create_task(deadlock(first))
    await asyncio.wait_for(hanging.entered.wait(), 5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.storage.close()

    from bot.clock import ManualClock
    from bot.engine import Engine
    from storage.sqlite import SqliteStorage

    storage = SqliteStorage(str(db))
    await storage.open()
    again = HangingArbitrator()
    engine = Engine(Settings(_env_file=None), storage, ManualClock(), arbitrator=again)  # type: ignore[call-arg]
    await asyncio.wait_for(engine.start(), 2)  # returns while the model call hangs
    await asyncio.wait_for(again.entered.wait(), 5)
    for t in list(engine.background.tasks):
        t.cancel()
    await asyncio.gather(*engine.background.tasks, return_exceptions=True)
    await storage.close()


async def test_an_arbitration_from_an_ended_epoch_is_cancelled(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "epoch.db", quiet_close=False)
    await w.say("alice", "go")
    room = w.engine_room()
    state = await w.engine.load_state(room)
    async with w.storage.transaction() as tx:
        stale = await tx.create_arbitration(room.id, state.epoch, "blocked",
                                            {"after_message": "m1"}, w.clock.now())
    await w.say("alice", "never mind, do something else")  # a new epoch
    await w.engine.recovery.resume(room, stale)
    assert "verdict" not in w.kinds()
    row = await w.storage.get_arbitration(stale)
    assert row is not None and row.status == "cancelled" and "epoch" in row.overrides[0]
    await w.storage.close()


def _spy_ingest(engine: object) -> list[str]:
    """Record which messages the engine applies, in order (a message left stored
    because the turn it closed is arbitrated first is applied later, once)."""
    applied: list[str] = []
    transitions = engine.transitions  # type: ignore[attr-defined]
    real = transitions.message

    async def spy(unit, room, row, ctx):  # type: ignore[no-untyped-def]
        effects = await real(unit, room, row, ctx)
        if effects is not None and effects.consumed:
            applied.append(row.message_id)
        return effects

    transitions.message = spy
    return applied


async def test_recovery_and_live_messages_apply_each_message_once(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "once.db", quiet_close=False,
                         arbitrator=GateArbitrator())
    gate = w.engine.arbitration.arbitrator
    room = w.engine_room()
    await w.say("alice", "fix it")
    await w.say("owner-bot", "STEP_DONE working on it", is_bot=True)
    state = await w.engine.load_state(room)
    async with w.storage.transaction() as tx:  # an arbitration a crash left behind
        await tx.create_arbitration(room.id, state.epoch, "manual", {"after_message": "m2"},
                                    w.clock.now())
    applied = _spy_ingest(w.engine)
    await w.engine.recover()
    await asyncio.wait_for(gate.entered.wait(), 5)  # recovery is in the model call
    live = [asyncio.create_task(w.say("reviewer-bot", f"review part {i}", is_bot=True,
                                      message_id=f"r{i}")) for i in (1, 2)]
    await asyncio.sleep(0.05)
    gate.gate.set()
    await asyncio.gather(*live)
    await w.engine.drain()
    assert applied == ["r1", "r2"]
    state = await w.engine.load_state(room)
    assert state.open_turn is not None and state.open_turn.text == "review part 1\nreview part 2"
    await w.storage.close()


async def test_after_a_restart_older_stored_messages_go_before_new_ones(tmp_path: Path) -> None:
    db = tmp_path / "backlog.db"
    hanging = HangingArbitrator()
    first = await make_world(db, quiet_close=False, arbitrator=hanging)
    room = first.engine_room()
    await first.say("alice", "fix it")
    await first.say("owner-bot", "STEP_DONE first attempt", is_bot=True)
    from bot.models import CommandRequest

    reply = await first.engine.on_command(CommandRequest(
        platform="console", channel="C1", thread="T1", user_id="boss", text="summon"))
    assert reply.ok
    await asyncio.wait_for(hanging.entered.wait(), 5)  # the room is busy (a model call)
    for i in (1, 2):  # stored; they wait for the verdict
        await first.say("reviewer-bot", f"review {i}", is_bot=True, message_id=f"u{i}")
    await first.engine.shutdown()  # the process dies
    await first.storage.close()

    from bot.clock import ManualClock
    from bot.engine import Engine
    from bot.models import IncomingMessage
    from storage.sqlite import SqliteStorage

    storage = SqliteStorage(str(db))
    await storage.open()
    clock = ManualClock(first.clock.now())
    engine = Engine(Settings(_env_file=None), storage, clock)  # type: ignore[call-arg]
    applied = _spy_ingest(engine)
    await engine.start()  # the room's recovery runs in a task
    clock.advance(1)
    await engine.on_message(IncomingMessage(
        platform="console", channel="C1", thread="T1", message_id="live1",
        author_id="owner-bot", is_bot=True, text="STEP_DONE second attempt", ts=clock.now()))
    await engine.drain()
    assert applied == ["u1", "u2", "live1"]
    state = await engine.load_state(room)
    assert state.open_turn is not None and state.open_turn.role.value == "owner"
    await storage.close()


async def test_shutdown_cuts_model_calls_short_and_the_next_start_resumes_them(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shutdown.db"
    hanging = HangingArbitrator()
    first = await make_world(db, quiet_close=False, arbitrator=hanging)
    task = asyncio.create_task(deadlock(first))
    await asyncio.wait_for(hanging.entered.wait(), 5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.storage.close()

    from bot.clock import ManualClock
    from bot.engine import Engine
    from storage.sqlite import SqliteStorage

    storage = SqliteStorage(str(db))
    await storage.open()
    again = HangingArbitrator()
    engine = Engine(Settings(_env_file=None), storage, ManualClock(), arbitrator=again)  # type: ignore[call-arg]
    await engine.start()
    await asyncio.wait_for(again.entered.wait(), 5)
    await asyncio.wait_for(engine.shutdown(), 5)  # does not wait for the model
    assert not engine.background.tasks
    [row] = await storage.unfinished_arbitrations()
    room = RoomKey.parse(row.room_id)
    engine.spawn(engine.recovery.resume(room, row.id))  # refused while shutting down
    assert not engine.background.tasks and row.status == "running"
    await storage.close()

    third = await make_world(db, quiet_close=False)  # start() resumes it
    assert third.kinds() == ["verdict"]
    await third.storage.close()


async def test_a_turn_left_open_by_the_last_process_closes_at_the_first_tick(
    tmp_path: Path,
) -> None:
    db = tmp_path / "open.db"
    first = await make_world(db)
    await first.say("alice", "로그인 버그 고쳐줘")
    await first.say("owner-bot", "BLOCKED: I need the staging credentials.", is_bot=True)
    await first.storage.close()  # stopped before the turn went quiet

    second = await make_world(db)
    room = second.engine_room()
    # Reading every room's state is not part of getting ready...
    assert second.engine.turns.open_turns == {}
    assert (await second.engine.load_state(room)).open_turn is not None
    second.clock.advance(60)
    await second.engine.tick()  # ...the first tick reads the open turns and closes this one
    await second.engine.drain()
    assert (await second.engine.load_state(room)).open_turn is None
    assert second.kinds() == ["deadlock", "verdict"]  # a BLOCKED owner turn
    await second.storage.close()

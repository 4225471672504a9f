"""Restarts and platform failures: nothing lost, nothing posted twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine_world import deadlock, make_world

from bot.arbiter.base import ArbitrationContext, ArbitrationOutcome
from bot.arbiter.service import Arbitrator
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
    pending = await w.storage.pending_outbox()
    assert [p.kind for p in pending] == ["progress", "verdict"]
    for _ in range(3):
        await w.engine.tick()
    assert flaky.posts[0].startswith("⚖️") and flaky.posts[1].startswith("edit:ESCALATE")
    assert await w.storage.pending_outbox() == []
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

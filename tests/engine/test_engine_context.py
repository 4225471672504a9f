"""What the arbiter is shown: the current task's turns only, and a bounded human window."""

from __future__ import annotations

from pathlib import Path

from engine_world import World, make_world

from bot.arbiter.base import ArbitrationContext, ArbitrationOutcome
from bot.arbiter.context import OMITTED_HUMANS, render_prompt
from bot.arbiter.service import Arbitrator
from bot.config import Settings


class Revise:
    """Stands in for a model: always rules REVISE (so the task goes on, no escalation)."""

    name = "scripted"
    model = "scripted-1"

    async def complete(self, system: str, prompt: str) -> str:
        return "REVISE 리뷰어 의견대로 수정하세요."


class Recording(Arbitrator):
    """The real arbitrator, remembering every context it was given."""

    def __init__(self) -> None:
        settings = Settings(_env_file=None, arbiter_backend="command")  # type: ignore[call-arg]
        super().__init__(settings, backend=Revise())
        self.seen: list[ArbitrationContext] = []

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        self.seen.append(ctx)
        return await super().arbitrate(ctx)


async def _world(tmp_path: Path) -> tuple[World, Recording]:
    recording = Recording()
    return await make_world(tmp_path / "ctx.db", arbitrator=recording, quiet_close=False), recording


async def test_second_task_context_has_no_agent_turn_of_the_first(tmp_path: Path) -> None:
    w, recording = await _world(tmp_path)
    try:
        await w.say("alice", "TASK-ONE 결제 버그 고쳐줘")
        await w.say("owner-bot", "BLOCKED: task-one owner turn, need `billing` credentials",
                    is_bot=True)
        await w.say("reviewer-bot", "task-one reviewer turn: agreed, credentials needed",
                    is_bot=True)
        await w.engine.drain()
        assert len(recording.seen) == 1  # task one's arbitration
        await w.say("owner-bot", "STEP_DONE task-one owner fixed `charge()`", is_bot=True)
        await w.say("reviewer-bot", "APPROVED task-one looks good", is_bot=True)
        await w.say("alice", "TASK-TWO 로그인 버그 고쳐줘")  # a new task in the same room
        await w.say("owner-bot", "BLOCKED: task-two owner turn, need staging access",
                    is_bot=True)
        await w.say("reviewer-bot", "task-two reviewer turn: cannot proceed", is_bot=True)
        await w.engine.drain()
        assert len(recording.seen) == 2
        second = recording.seen[1]
        texts = [t.text for t in second.agent_turns]
        assert texts and all("task-two" in t for t in texts), texts
        assert second.omitted_turns == 0
        assert [m.text for m in second.human_messages] == ["TASK-TWO 로그인 버그 고쳐줘"]
        prompt = render_prompt(second, budget=60_000)
        assert "task-one" not in prompt and "TASK-ONE" not in prompt
        first = recording.seen[0]
        assert any("task-one" in t.text for t in first.agent_turns)
    finally:
        await w.engine.drain()
        await w.storage.close()


async def test_human_window_is_the_request_plus_the_latest_twenty(tmp_path: Path) -> None:
    w, recording = await _world(tmp_path)
    try:
        await w.say("alice", "REQUEST 로그인 버그 고쳐줘")
        await w.say("owner-bot", "STEP_DONE started on src/auth.py", is_bot=True)
        for i in range(1, 31):  # 30 more human messages inside the same task
            await w.say("alice", f"human note {i}")
        await w.say("owner-bot", "BLOCKED: need the staging database password", is_bot=True)
        await w.say("reviewer-bot", "agreed, blocked", is_bot=True)
        await w.engine.drain()
        assert len(recording.seen) == 1
        ctx = recording.seen[0]
        texts = [m.text for m in ctx.human_messages]
        assert texts == ["REQUEST 로그인 버그 고쳐줘"] + [f"human note {i}" for i in range(11, 31)]
        assert ctx.omitted_human_messages == 10 and ctx.first_human_is_request
        prompt = render_prompt(ctx, budget=60_000)
        request = prompt.index("REQUEST")
        marker = prompt.index(OMITTED_HUMANS.format(n=10))
        assert request < marker < prompt.index("human note 11")
        assert "human note 10" not in prompt
    finally:
        await w.engine.drain()
        await w.storage.close()


async def test_agent_turns_are_the_tasks_last_k(tmp_path: Path) -> None:
    w, recording = await _world(tmp_path)
    await w.engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=["reviewer-bot"],
        settings={"max_rounds": 20})
    try:
        await w.say("alice", "old task")
        for i in range(3):
            await w.say("owner-bot", f"STEP_DONE old owner {i} in src/old_{i}.py", is_bot=True)
            await w.say("reviewer-bot", f"old reviewer {i}: see src/old_{i}.py:{i + 1}",
                        is_bot=True)
        await w.say("reviewer-bot", "APPROVED", is_bot=True)
        await w.say("alice", "new task")
        for i in range(6):  # 12 turns, each naming a new file: progress, no deadlock
            await w.say("owner-bot", f"STEP_DONE new owner {i} in src/new_{i}.py", is_bot=True)
            await w.say("reviewer-bot", f"new reviewer {i}: see src/new_{i}.py:{i + 1}",
                        is_bot=True)
        await w.say("owner-bot", "BLOCKED: new owner needs access", is_bot=True)
        await w.say("reviewer-bot", "new reviewer: agreed", is_bot=True)
        await w.engine.drain()
        assert len(recording.seen) == 1
        ctx = recording.seen[0]  # judged when the BLOCKED owner turn closed: 13 turns
        assert len(ctx.agent_turns) == 8 and all("new " in t.text for t in ctx.agent_turns)
        assert ctx.omitted_turns == 13 - 8  # the task's earlier turns, none of the old task's
    finally:
        await w.engine.drain()
        await w.storage.close()

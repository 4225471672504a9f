"""The whole pipeline on real storage: detection -> verdict -> answers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine_world import OBJECTIONS, PUSHBACKS, World, deadlock, later, make_world

from bot.arbiter.base import ArbitrationContext, ArbitrationOutcome
from bot.arbiter.service import Arbitrator
from bot.config import Settings
from bot.models import ButtonClick, MessageKind


async def test_deadlock_escalates_and_digit_answers(world: World) -> None:
    await deadlock(world)
    assert world.kinds() == ["deadlock", "verdict"]
    verdict = world.events[1]
    assert verdict["verdict"] == "ESCALATE" and verdict["source"] == "none"
    assert len(verdict["options"]) >= 2
    assert verdict["text"].startswith("ESCALATE 사용자 결정이 필요합니다")
    # progress message posted first, then edited into the verdict (with buttons)
    assert world.transport.posts[0][1].kind is MessageKind.PROGRESS
    edited = world.transport.edits[0][2]
    assert edited.kind is MessageKind.VERDICT and edited.escalation_id is not None
    assert [o.n for o in edited.options] == [1, 2, 3, 4]
    assert edited.mention_user_ids == ["alice"]

    await world.say("alice", "２번")
    assert world.events[-1] == {
        "event": "escalation_answered", "room": "C1", "option": 2, "by": "alice", "kind": "digit"
    }
    confirmation = world.transport.posts[-1][1]
    assert confirmation.text == "✅ 사용자 결정: 2. 리뷰어 의견대로 수정"
    decided = world.transport.edits[-1][2]
    assert decided.decided is not None and decided.decided.n == 2
    row = await world.storage.get_escalation(edited.escalation_id)
    assert row is not None and row.status == "answered" and row.answer_kind == "digit"


async def test_out_of_range_digit_keeps_the_escalation_pending(world: World) -> None:
    await deadlock(world)
    await world.say("alice", "7")
    assert world.events[-1] == {
        "event": "answer_rejected", "room": "C1", "by": "alice", "reason": "out_of_range"
    }
    _room_id, user, text = world.transport.private[-1]
    assert user == "alice" and "7번 선택지는 없습니다" in text and "1부터 4까지" in text
    await world.say("alice", "옵션 1")
    assert world.events[-1]["event"] == "escalation_answered"
    assert world.events[-1]["option"] == 1


async def test_strangers_cannot_answer_but_admins_can(world: World) -> None:
    await deadlock(world)
    await world.say("mallory", "1")
    assert world.events[-1]["reason"] == "not_allowed"
    assert world.transport.private[-1][1] == "mallory"
    await world.say("boss", "3")  # TRIBUNAL_ADMIN_IDS
    assert world.events[-1]["event"] == "escalation_answered"
    assert world.events[-1]["by"] == "boss"


async def test_free_text_answers_and_starts_a_new_epoch(world: World) -> None:
    await deadlock(world)
    state = await world.engine.load_state(world.engine_room())
    epoch = state.epoch
    await world.say("alice", "둘 다 틀렸어. 토큰 대신 세션 쿠키를 쓰자")
    assert world.events[-1]["kind"] == "free_text" and world.events[-1]["option"] is None
    state = await world.engine.load_state(world.engine_room())
    assert state.awaiting_escalation is None and state.epoch > epoch
    assert world.transport.posts[-1][1].text.startswith("✅ 사용자 결정(자유 입력)")


async def test_button_click_then_late_click_is_told_who_decided(world: World) -> None:
    await deadlock(world)
    esc_id = world.transport.edits[0][2].escalation_id
    assert esc_id is not None
    first = await world.engine.on_button(ButtonClick(
        platform="console", channel="C1", thread="T1", escalation_id=esc_id, option=3,
        user_id="alice"))
    assert first.accepted and first.private_text is None
    late = await world.engine.on_button(ButtonClick(
        platform="console", channel="C1", thread="T1", escalation_id=esc_id, option=1,
        user_id="alice"))
    assert not late.accepted and late.private_text is not None
    assert "이미 결정되었습니다" in late.private_text and "alice" in late.private_text
    assert "3. 새 방향으로 다시 시작" in late.private_text
    assert [e["kind"] for e in world.events if e["event"] == "escalation_answered"] == ["button"]


async def test_concurrent_answers_exactly_one_wins(world: World) -> None:
    await deadlock(world)
    esc_id = world.transport.edits[0][2].escalation_id
    assert esc_id is not None
    results = await asyncio.gather(
        *(world.engine.on_button(ButtonClick(
            platform="console", channel="C1", thread="T1", escalation_id=esc_id,
            option=1 + i % 4, user_id="boss" if i % 2 else "alice")) for i in range(8)),
        world.say("alice", "2"),
    )
    accepted = [r for r in results[:8] if r.accepted]  # type: ignore[union-attr]
    answered = [e for e in world.events if e["event"] == "escalation_answered"]
    assert len(answered) == 1
    assert len(accepted) == (1 if answered[0]["kind"] == "button" else 0)
    confirmations = [m for _, m in world.transport.posts if m.kind is MessageKind.CONFIRMATION]
    assert len(confirmations) == 1


async def test_unwatched_channels_and_unbound_bots_are_ignored(world: World) -> None:
    await world.say("alice", "hello", channel="C-other")
    await world.say("random-bot", "beep", is_bot=True)
    await world.say("alice", "real message")
    rows = await world.storage._all("SELECT author, room_id FROM messages")
    assert rows == [{"author": "alice", "room_id": "console:C1:T1"}]


async def test_duplicate_deliveries_are_processed_once(world: World) -> None:
    await world.say("alice", "fix it", message_id="dup-1")
    await world.say("owner-bot", "STEP_DONE x", is_bot=True, message_id="dup-2")
    await world.say("owner-bot", "STEP_DONE x", is_bot=True, message_id="dup-2")
    rows = await world.storage._all("SELECT message_id FROM messages ORDER BY seq")
    assert [r["message_id"] for r in rows] == ["dup-1", "dup-2"]
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None and state.open_turn.text == "STEP_DONE x"


async def test_quiet_turns_close_on_tick(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "q.db")
    try:
        await w.say("alice", "go")
        await w.say("owner-bot", "BLOCKED: need staging credentials", is_bot=True)
        await w.engine.tick()
        assert "deadlock" not in w.kinds()
        w.clock.advance(3)
        await w.engine.tick()
        await w.engine.drain()
        assert w.kinds()[:2] == ["deadlock", "verdict"]
        assert w.events[0]["trigger"] == "blocked"
    finally:
        await w.storage.close()


class SlowForOneRoom(Arbitrator):
    """Never answers for thread T-slow; answers at once elsewhere."""

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        if ctx.room.thread == "T-slow":
            await asyncio.Event().wait()
        return await super().arbitrate(ctx)


async def test_a_slow_arbitration_does_not_hold_up_other_rooms(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "slow.db", arbitrator=SlowForOneRoom(Settings(_env_file=None)))
    try:
        for thread in ("T-slow", "T-fast"):
            await w.say("alice", "go", thread=thread, gap=0)
            await w.say("owner-bot", "BLOCKED: need credentials", thread=thread, is_bot=True,
                        gap=0)
        w.clock.advance(5)
        await asyncio.wait_for(w.engine.tick(), 5)  # returns although T-slow never ends
        for _ in range(100):
            if "verdict" in w.kinds():
                break
            await asyncio.sleep(0.01)
        assert w.kinds().count("deadlock") == 2 and w.kinds().count("verdict") == 1
        # and the fast room's humans are served meanwhile
        await w.say("alice", "1", thread="T-fast")
        assert w.events[-1]["event"] == "escalation_answered"
    finally:
        for task in list(w.engine.background.tasks):
            task.cancel()
        await asyncio.gather(*w.engine.background.tasks, return_exceptions=True)
        await w.storage.close()


async def test_one_reminder_and_timeouts_never_decide(world: World) -> None:
    await deadlock(world)
    later(world, 3)
    await world.engine.tick()
    assert not [m for _, m in world.transport.posts if m.kind is MessageKind.REMINDER]
    later(world, 2)
    await world.engine.tick()
    await world.engine.tick()
    reminders = [m for _, m in world.transport.posts if m.kind is MessageKind.REMINDER]
    assert len(reminders) == 1 and reminders[0].mention_user_ids == ["alice"]
    state = await world.engine.load_state(world.engine_room())
    assert state.awaiting_escalation is not None


async def test_new_task_after_approval_and_verdict_budget(world: World) -> None:
    await world.say("alice", "task one")
    await world.say("owner-bot", "STEP_DONE did it", is_bot=True)
    await world.say("reviewer-bot", "LGTM", is_bot=True)
    await world.engine.close_turns(force=True)
    await world.engine.drain()
    assert world.kinds() == ["approved"]
    state = await world.engine.load_state(world.engine_room())
    assert state.approved and not state.task_active
    await world.say("bob", "task two")
    state = await world.engine.load_state(world.engine_room())
    assert state.task_active and state.humans == ["bob"]


async def test_messages_are_never_lost_when_oversized(world: World) -> None:
    await world.say("alice", "x" * 100_000)
    rows = await world.storage._all("SELECT length(text) AS n FROM messages")
    assert 40_000 <= rows[0]["n"] < 40_100


async def test_objection_constants_are_distinct() -> None:
    assert len(set(OBJECTIONS)) == 3 and len(set(PUSHBACKS)) == 2


async def test_messages_of_a_room_are_applied_in_delivery_order(world: World) -> None:
    await world.say("alice", "go")
    world.engine.channels.invalidate("console", "C1")  # the first lookup must await storage
    await asyncio.gather(*(
        world.say("owner-bot", f"part {i}", is_bot=True, message_id=f"p{i}", gap=0)
        for i in range(20)
    ))
    state = await world.engine.load_state(world.engine_room())
    assert state.open_turn is not None
    assert state.open_turn.text == "\n".join(f"part {i}" for i in range(20))


async def test_room_names_with_colons_keep_their_label(world: World) -> None:
    from bot.models import RoomKey

    key = RoomKey("console", "team:alpha", None)
    assert RoomKey.parse(key.id) == key and key.label == "team:alpha"
    assert RoomKey.parse("slack:C1:1700000000.000100").thread == "1700000000.000100"


async def test_a_late_digit_is_told_who_decided(world: World) -> None:
    await deadlock(world)
    await world.say("alice", "2")
    state = await world.engine.load_state(world.engine_room())
    epoch = state.epoch
    await world.say("bob", "3")
    assert world.events[-1] == {
        "event": "answer_rejected", "room": "C1", "by": "bob", "reason": "already_answered"
    }
    _, user, text = world.transport.private[-1]
    assert user == "bob" and "alice" in text and "2. 리뷰어 의견대로 수정" in text
    state = await world.engine.load_state(world.engine_room())
    assert state.epoch == epoch  # a late digit is not a new instruction
    await world.say("alice", "이제 PR 올려줘")  # free text after the decision: a new epoch
    state = await world.engine.load_state(world.engine_room())
    assert state.epoch == epoch + 1


async def test_tick_skips_a_room_busy_with_a_summoned_arbitration(tmp_path: Path) -> None:
    from bot.models import CommandRequest

    w = await make_world(tmp_path / "busy.db", arbitrator=SlowForOneRoom(Settings(_env_file=None)))
    try:
        await w.say("alice", "go", thread="T-slow", gap=0)
        await w.say("owner-bot", "STEP_DONE working", thread="T-slow", is_bot=True, gap=0)
        reply = await w.engine.on_command(CommandRequest(
            platform="console", channel="C1", thread="T-slow", user_id="boss", text="summon"))
        assert reply.ok
        await asyncio.sleep(0.05)  # the summoned arbitration now holds T-slow
        await w.say("alice", "go", thread="T-fast", gap=0)
        await w.say("owner-bot", "BLOCKED: need credentials", thread="T-fast", is_bot=True,
                    gap=0)
        w.clock.advance(5)
        await asyncio.wait_for(w.engine.tick(), 2)
        for _ in range(100):
            if "verdict" in w.kinds():
                break
            await asyncio.sleep(0.01)
        assert [e["trigger"] for e in w.events if e["event"] == "deadlock"] == ["manual", "blocked"]
        assert w.kinds().count("verdict") == 1
    finally:
        for task in list(w.engine.background.tasks):
            task.cancel()
        await asyncio.gather(*w.engine.background.tasks, return_exceptions=True)
        await w.storage.close()


async def test_a_digit_is_an_ordinary_message_once_the_agents_moved_on(world: World) -> None:
    await deadlock(world)
    await world.say("alice", "2")
    await world.say("owner-bot", "Which do you prefer: 1) keep the API or 2) break it?",
                    is_bot=True)
    state = await world.engine.load_state(world.engine_room())
    epoch = state.epoch
    await world.say("alice", "2")  # answers the agent, not the old escalation
    assert world.events[-1]["event"] != "answer_rejected"
    state = await world.engine.load_state(world.engine_room())
    assert state.epoch == epoch + 1


async def test_a_digit_long_after_the_decision_is_an_ordinary_message(world: World) -> None:
    await deadlock(world)
    await world.say("alice", "2")
    later(world, 1)
    await world.say("bob", "3")
    assert world.events[-1]["event"] == "escalation_answered"  # nothing new was emitted


async def test_close_turn_closes_now_and_says_what_it_decided(tmp_path: Path) -> None:
    w = await make_world(tmp_path / "close.db", quiet_close=False)
    room = w.engine_room()
    assert await w.engine.close_turn(room) is None  # no turn open
    await w.say("alice", "로그인 버그 고쳐줘")
    await w.say("owner-bot", "STEP_DONE implemented the fix in src/auth.py", is_bot=True)
    assert await w.engine.close_turn(room) == []  # closed; nothing decided
    assert (await w.engine.load_state(room)).open_turn is None
    before = await w.engine.load_state(room)
    await w.say("reviewer-bot", OBJECTIONS[0], is_bot=True)
    await w.engine.restore_state(room, before)  # as if the reviewer had not spoken yet
    assert (await w.engine.load_state(room)).open_turn is None
    await w.say("owner-bot", "BLOCKED: I need the staging credentials.", is_bot=True)
    [event] = await w.engine.close_turn(room) or []
    assert event["event"] == "deadlock" and event["trigger"] == "blocked"
    await w.engine.drain()
    assert w.kinds() == ["deadlock", "verdict"]
    await w.storage.close()

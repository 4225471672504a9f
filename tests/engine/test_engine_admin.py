"""`/arbiter` through the engine: rights, validation, scopes, audit."""

from __future__ import annotations

import asyncio
import json

from engine_world import World, deadlock

from bot.models import CommandRequest


def req(text: str, user: str = "boss", *, thread: str | None = None, channel: str = "C1",
        platform_admin: bool = False) -> CommandRequest:
    return CommandRequest(platform="console", channel=channel, thread=thread, user_id=user,
                          text=text, is_platform_admin=platform_admin)


async def test_non_admin_cannot_change_threshold(world: World) -> None:
    reply = await world.engine.on_command(req("threshold 3", user="alice"))
    assert not reply.ok and reply.ephemeral and "관리자만" in reply.text
    assert await world.storage.list_audit("console", "C1") == []


async def test_platform_admin_flag_counts_as_admin(world: World) -> None:
    reply = await world.engine.on_command(req("threshold 3", user="alice", platform_admin=True))
    assert reply.ok


async def test_admin_threshold_change_is_used_by_the_next_room(world: World) -> None:
    reply = await world.engine.on_command(req("threshold 1"))
    assert reply.ok and "2 → 1" in reply.text
    [audit] = await world.storage.list_audit("console", "C1")
    assert (audit.user_id, audit.action, json.loads(audit.before or "null"),
            json.loads(audit.after or "null")) == ("boss", "threshold", 2, 1)
    # a brand-new room in the channel deadlocks after one stalled round
    await world.say("alice", "go", thread="T9")
    await world.say("owner-bot", "STEP_DONE did it", thread="T9", is_bot=True)
    await world.say("reviewer-bot", "src/a.py:1 `f()` is wrong, fix it", thread="T9", is_bot=True)
    await world.say("owner-bot", "no, `f()` is right as it is", thread="T9", is_bot=True)
    await world.say("reviewer-bot", "`f()` in src/a.py:1 is still wrong, fix it", thread="T9",
                    is_bot=True)
    await world.engine.close_turns(force=True)
    await world.engine.drain()
    assert world.events[0]["trigger"] == "no_progress"
    assert world.events[0]["stalled_rounds"] == 1


async def test_room_scope_overrides_channel_scope(world: World) -> None:
    await world.engine.on_command(req("max-rounds 10"))
    await world.engine.on_command(req("max-rounds 4", thread="T1"))
    room = await world.engine.channels.room_settings(world.engine_room())
    other = await world.engine.channels.room_settings(world.engine_room(thread="T2"))
    assert room["max_rounds"] == 4 and other["max_rounds"] == 10


async def test_bad_arguments_get_usage(world: World) -> None:
    reply = await world.engine.on_command(req("threshold 99"))
    # One language per reply (by design): the room's; here Korean, the default.
    assert not reply.ok and "1부터 20" in reply.text and "사용법" in reply.text


async def test_roles_bind_and_watch_a_new_channel(world: World) -> None:
    reply = await world.engine.on_command(
        req("roles owner:<@U1|o> reviewer:<@U2>", channel="C2"))
    assert reply.ok
    await world.say("alice", "hi", channel="C2")
    await world.say("U1", "STEP_DONE", channel="C2", is_bot=True)
    rows = await world.storage._all("SELECT role FROM messages WHERE room_id LIKE 'console:C2%' ORDER BY seq")
    assert [r["role"] for r in rows] == ["user", "owner"]
    [audit] = await world.storage.list_audit("console", "C2")
    assert json.loads(audit.after or "{}") == {"owner": ["U1"], "reviewer": ["U2"]}


async def test_pause_stops_watching_and_resume_restarts(world: World) -> None:
    await world.engine.on_command(req("pause"))
    await world.say("alice", "ignored while paused")
    assert await world.storage._all("SELECT * FROM messages") == []
    await world.engine.on_command(req("resume"))
    await world.say("alice", "seen again")
    assert len(await world.storage._all("SELECT * FROM messages")) == 1


async def test_summon_arbitrates_now_and_status_history_explain(world: World) -> None:
    reply = await world.engine.on_command(req("summon"))
    assert not reply.ok  # no room yet
    await world.say("alice", "please fix")
    await world.say("owner-bot", "STEP_DONE working", is_bot=True)
    reply = await world.engine.on_command(req("summon"))
    assert reply.ok
    await world.engine.drain()
    assert world.kinds() == ["deadlock", "verdict"]
    assert world.events[0]["trigger"] == "manual"
    status = await world.engine.on_command(req("status", user="alice"))
    # The task was asked in English, so the room answers in English (by design).
    assert status.ok and "ESCALATE" in status.text and "Pending decision" in status.text
    assert "threshold=2" in status.text
    history = await world.engine.on_command(req("history", user="alice"))
    # The trigger and the verdict's source in words, not codes (one voice per room).
    assert "ESCALATE" in history.text and "arbitration requested" in history.text
    assert "[manual" not in history.text and "none]" not in history.text
    again = await world.engine.on_command(req("summon"))
    assert not again.ok  # already waiting for a human


async def test_status_explains_the_last_detection(world: World) -> None:
    await deadlock(world)
    status = await world.engine.on_command(req("status", thread="T1", user="alice"))
    # Korean room: the counters read in Korean (by design); the trigger keeps its name.
    assert "no_progress" in status.text and "진전 없는 라운드 2" in status.text


async def test_two_summons_at_once_give_one_verdict(world: World) -> None:
    await world.say("alice", "please fix")
    await world.say("owner-bot", "STEP_DONE working", is_bot=True)
    first, _second = await asyncio.gather(
        world.engine.on_command(req("summon")), world.engine.on_command(req("summon")))
    await world.engine.drain()
    assert first.ok
    assert world.kinds().count("verdict") == 1
    rows = await world.storage._all("SELECT status FROM arbitrations ORDER BY id")
    assert [r["status"] for r in rows] in (["done"], ["done", "cancelled"])
    escalations = await world.storage._all("SELECT status FROM escalations")
    assert [e["status"] for e in escalations] == ["pending"]


async def test_paused_channel_turns_are_not_judged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from engine_world import make_world

    w = await make_world(tmp_path / "pause.db")
    try:
        await w.say("alice", "go")
        await w.say("owner-bot", "BLOCKED: need access", is_bot=True)
        await w.engine.on_command(req("pause"))
        w.clock.advance(10)
        await w.engine.tick()
        await w.engine.drain()
        assert "deadlock" not in w.kinds()
    finally:
        await w.storage.close()


# -- which room a room subcommand is about ------------------------------------------


async def test_a_room_subcommand_without_a_thread_says_which_room_it_is_about(
    world: World,
) -> None:
    from bot.markup import plain

    await world.say("alice", "please fix the login bug", thread="T1")
    await world.say("alice", "and the logout bug too", thread="T2")
    for name in ("status", "history"):
        reply = await world.engine.on_command(req(name, user="alice"))
        first = plain(reply.text).splitlines()[0]
        # The latest room, named; the room speaks English (its task's language).
        assert "latest thread" in first and first.endswith("#C1/T2"), first
    named = await world.engine.on_command(req("status", user="alice", thread="T1"))
    assert "latest thread" not in plain(named.text)


async def test_a_room_subcommand_about_an_unseen_thread_does_nothing(world: World) -> None:
    await world.say("alice", "please fix", thread="T1")
    for name in ("status", "history", "summon"):
        reply = await world.engine.on_command(req(name, thread="T404"))
        assert not reply.ok and "받은 메시지가 없습니다" in reply.text, name
    assert world.kinds() == []  # nothing was arbitrated
    assert await world.storage.list_audit("console", "C1") == []


async def test_a_thread_of_another_channel_is_refused_where_it_was_typed(
    world: World,
) -> None:
    await world.say("alice", "please fix", thread="T1")
    request = req("summon", thread="T1").model_copy(update={"typed_in": "C2"})
    reply = await world.engine.on_command(request)
    assert not reply.ok and "다른 채널" in reply.text
    assert world.kinds() == []
    same = req("status", user="alice", thread="T1").model_copy(update={"typed_in": "C1"})
    assert (await world.engine.on_command(same)).ok  # typed in the thread's own channel

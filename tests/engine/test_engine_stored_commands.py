"""`/arbiter` commands stored before the ack and applied from storage, once
(`Engine.receive_command`, bot/command_flow.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from engine_world import World, make_world

from adapters.console import ConsoleTransport
from bot.faults import FAULT_ENV
from bot.models import CommandRequest, RoomKey

ROUTE = {"response_url": "https://hooks.example/commands/1"}


def req(text: str, user: str = "boss", *, thread: str | None = None,
        platform_admin: bool = False) -> CommandRequest:
    return CommandRequest(platform="console", channel="C1", thread=thread, user_id=user,
                          text=text, is_platform_admin=platform_admin)


async def stored_only(world: World, monkeypatch: pytest.MonkeyPatch, request: CommandRequest,
                      delivery: str, **kwargs: Any) -> int:
    """Stored as an adapter stores it before its ack, never applied (a crash after the ack)."""
    monkeypatch.setenv(FAULT_ENV, "after_store")
    assert await world.engine.receive_command(request, delivery, **kwargs) is None
    monkeypatch.delenv(FAULT_ENV)
    [action] = [a for a in await world.storage.unprocessed_actions() if a.delivery_id == delivery]
    assert action.kind == "command"
    return action.id


async def private_rows(world: World) -> list[dict[str, Any]]:
    rows = await world.storage._all("SELECT payload FROM outbox WHERE kind = 'private' ORDER BY id")
    return [r["payload"] if isinstance(r["payload"], dict) else json.loads(r["payload"])
            for r in rows]


async def test_a_stored_change_is_applied_once_however_many_tasks_apply_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    action = await stored_only(world, monkeypatch, req("threshold 4"), "command:t1", route=ROUTE)
    assert await world.storage.list_audit("console", "C1") == []
    # The live task, recovery and a second instance may all get to it.
    await asyncio.gather(*(world.engine.commands.apply(action) for _ in range(3)))
    await world.engine.drain()
    [audit] = await world.storage.list_audit("console", "C1")
    assert (audit.action, json.loads(audit.after or "null")) == ("threshold", 4)
    [reply] = await private_rows(world)
    assert reply["user_id"] == "boss" and "2 → 4" in reply["text"]
    assert reply["route"] == ROUTE  # answered where it was asked
    assert (await world.storage.get_action(action)).processed  # type: ignore[union-attr]


async def test_a_stored_summon_arbitrates_once_and_answers_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    await world.say("alice", "로그인 버그 고쳐줘")
    action = await stored_only(world, monkeypatch, req("summon"), "command:t2")
    await asyncio.gather(*(world.engine.commands.apply(action) for _ in range(3)))
    await world.engine.drain()
    rows = await world.storage._all("SELECT trigger FROM arbitrations")
    assert [r["trigger"] for r in rows] == ["manual"]
    assert [a.action for a in await world.storage.list_audit("console", "C1")] == ["summon"]
    [reply] = await private_rows(world)  # after the line naming the room it acted on
    assert reply["text"].splitlines()[-1] == "⚖️ 중재를 요청했습니다."


async def test_a_read_only_command_answers_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    action = await stored_only(world, monkeypatch, req("status", user="alice"), "command:t3")
    await asyncio.gather(*(world.engine.commands.apply(action) for _ in range(3)))
    await world.engine.drain()
    [reply] = await private_rows(world)
    assert reply["user_id"] == "alice" and "Tribunal" in reply["text"]
    assert ("console:C1:", "alice", reply["text"]) in world.transport.private  # sent


async def test_recovery_applies_what_a_crash_left_and_a_redelivery_is_dropped(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    await stored_only(world, monkeypatch, req("max-rounds 9"), "command:t4")
    # Delivered again (a Socket Mode envelope sent twice): stored once.
    assert await world.engine.receive_command(req("max-rounds 9"), "command:t4") is None
    await world.engine.recover()  # at start, and every 30 s from tick()
    await world.engine.drain()
    assert await world.storage.unprocessed_actions() == []
    settings = await world.engine.channels.room_settings(RoomKey("console", "C1", None))
    assert settings["max_rounds"] == 9
    assert len(await private_rows(world)) == 1


async def test_a_live_command_is_applied_in_a_task_after_it_is_stored(world: World) -> None:
    task = await world.engine.receive_command(req("pause"), "command:t5")
    assert task is not None
    await task
    assert (await world.engine.channels.get("console", "C1")).paused
    assert [r["text"] for r in await private_rows(world)] == [
        world.transport.private[-1][2]]


class AdminChecking(ConsoleTransport):
    """A transport that knows platform admins (as Slack's asks users.info)."""

    def __init__(self, admins: set[str], *, down: bool = False) -> None:
        super().__init__()
        self.admins, self.down = admins, down
        self.asked: list[str] = []

    async def is_platform_admin(self, user_id: str) -> bool:
        self.asked.append(user_id)
        if self.down:
            raise ConnectionError("platform unreachable")
        return user_id in self.admins


async def test_admin_rights_are_asked_of_the_transport_when_the_command_is_applied(
    tmp_path: Path,
) -> None:
    w = await make_world(tmp_path / "a.db")
    try:
        transport = AdminChecking({"carol"})
        w.engine.register_transport(transport)
        task = await w.engine.receive_command(req("threshold 5", user="carol"), "command:a1",
                                              ask_admin=True)
        assert task is not None
        await task
        assert transport.asked == ["carol"]
        assert [a.user_id for a in await w.storage.list_audit("console", "C1")] == ["carol"]
    finally:
        await w.engine.drain()
        await w.storage.close()


async def test_a_command_whose_admin_rights_cannot_be_asked_waits_for_recovery(
    tmp_path: Path,
) -> None:
    w = await make_world(tmp_path / "b.db")
    try:
        transport = AdminChecking({"carol"}, down=True)
        w.engine.register_transport(transport)
        task = await w.engine.receive_command(req("threshold 5", user="carol"), "command:b1",
                                              ask_admin=True)
        assert task is not None
        await task
        [waiting] = await w.storage.unprocessed_actions()  # neither refused nor lost
        transport.down = False
        await w.engine.recover()
        await w.engine.drain()
        assert await w.storage.unprocessed_actions() == []
        assert [a.action for a in await w.storage.list_audit("console", "C1")] == ["threshold"]
        assert waiting.delivery_id == "command:b1"
    finally:
        await w.engine.drain()
        await w.storage.close()

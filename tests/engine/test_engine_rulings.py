"""Rulings on findings through the engine: stored with the arbitration or the
answer, shown by `/arbiter history` in the room's language; and "stop the
task" on a contradiction's escalation ends the task."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from engine_world import World, make_world

from bot.arbiter.service import Arbitrator
from bot.config import Settings
from bot.markup import mention, plain
from bot.models import ButtonClick, CommandRequest, MessageKind

CORPUS = Path(__file__).parent.parent / "detection" / "corpus"
RULED = ("REVISE 권한 회수가 즉시 반영되어야 하므로 보안 요구가 우선합니다. "
         "`authz/cache.py`의 `PERMISSION_CACHE_TTL`을 60초로 두십시오.\n"
         "UPHELD: F1\nRETIRED: F3")


class Scripted:
    name = "scripted"
    model = "scripted-1"

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, system: str, prompt: str) -> str:
        return self.text


def settings() -> Settings:
    return Settings(_env_file=None, admin_ids=["boss"])  # type: ignore[call-arg]


async def two_reviewers(tmp_path: Path, backend: Scripted | None = None) -> World:
    s = settings()
    arbitrator = Arbitrator(s, backend=backend) if backend is not None else None
    world = await make_world(tmp_path / "r.db", s, quiet_close=False, arbitrator=arbitrator)
    await world.engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=["sec-bot", "perf-bot"], settings={})
    return world


@pytest.fixture
async def ko_world(tmp_path: Path) -> AsyncIterator[World]:
    w = await two_reviewers(tmp_path)
    yield w
    await w.engine.drain()
    await w.storage.close()


async def play(world: World, case: str, *, replace: dict[str, str] | None = None) -> None:
    """A corpus transcript's messages, then its end of input (the turn closes)."""
    for line in (CORPUS / f"{case}.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["type"] != "message":
            continue
        text = (replace or {}).get(row["id"], row["text"])
        await world.say(row["author"], text, is_bot=row["author"].endswith("-bot"),
                        message_id=f"{case}-{row['id']}")
    await world.engine.close_turns(force=True)
    await world.engine.drain()


def history(world: World) -> CommandRequest:
    return CommandRequest(platform="console", channel="C1", thread="T1", user_id="boss",
                          text="history")


async def test_a_human_choosing_a_side_is_stored_and_shown_in_history(ko_world: World) -> None:
    world = ko_world
    await play(world, "multi_03")
    assert [e["event"] for e in world.events] == ["deadlock", "verdict"]
    assert world.events[0]["trigger"] == "contradiction"
    await world.say("minji", "2")
    answered = world.events[-1]
    assert answered["ruling"] == {"upheld": "F3", "retired": "F1"}
    escalation_id = world.transport.edits[0][2].escalation_id
    assert escalation_id is not None
    row = await world.storage.get_escalation(escalation_id)
    assert row is not None and row.answer_ruling is not None
    assert (row.answer_ruling["upheld"], row.answer_ruling["retired"]) == ("F3", "F1")
    assert row.answer_ruling["upheld_author"] == "perf-bot"
    assert row.answer_ruling["retired_summary"].startswith("`PERMISSION_CACHE_TTL`이 5분이면")

    text = plain((await world.engine.on_command(history(world))).text)
    assert "ESCALATE" in text and "상충하는 요구" in text and "contradiction" not in text
    assert "✅ @minji님이" in text and "2. F3 유지 (F1: 더 이상 적용되지 않음)" in text  # who, when, what
    assert "⚖️ 사용자 판정: F3 요구(@perf-bot: " in text
    assert "F1 요구(@sec-bot: `PERMISSION_CACHE_TTL`이 5분이면" in text
    assert "더 이상 적용되지 않습니다" in text


async def test_an_arbiters_ruling_is_stored_and_shown_in_history(tmp_path: Path) -> None:
    world = await two_reviewers(tmp_path, Scripted(RULED))
    try:
        await play(world, "multi_03")
        verdict = world.events[1]
        assert verdict["ruling"] == {"upheld": "F1", "retired": "F3"}
        [row] = await world.storage.room_arbitrations(world.engine_room().id)
        assert row.ruling is not None and row.ruling["applied"] is True
        assert (row.ruling["upheld"], row.ruling["upheld_author"]) == ("F1", "sec-bot")
        assert (row.ruling["retired"], row.ruling["retired_author"]) == ("F3", "perf-bot")
        # The posted verdict names the people as the platform shows them (a mention).
        posted = world.transport.edits[0][2]
        assert posted.kind is MessageKind.VERDICT and "UPHELD" not in posted.text
        assert posted.text.endswith("더 이상 적용되지 않습니다.")
        assert f"F1 요구({mention('sec-bot')}: " in posted.text

        text = plain((await world.engine.on_command(history(world))).text)
        assert "REVISE" in text
        assert "⚖️ 판정: F1 요구(@sec-bot: " in text and "F3 요구(@perf-bot: " in text
        # The next task relabels findings: history still says what F1 and F3 were.
        state = await world.engine.load_state(world.engine_room())
        state.findings = []
        async with world.storage.room(world.engine_room().id) as unit:
            await unit.save_room_state(unit.room_id, "console", "C1", "T1",
                                       state.model_dump_json(), world.clock.now())
        assert plain((await world.engine.on_command(history(world))).text) == text
    finally:
        await world.engine.drain()
        await world.storage.close()


async def test_a_ruling_a_guardrail_overrode_is_recorded_not_applied(tmp_path: Path) -> None:
    world = await two_reviewers(tmp_path, Scripted(RULED))
    try:
        # The owner asks the user something: the verdict must be the user's.
        await play(world, "multi_03", replace={"m5": (
            "STEP_DONE\n캐시 키를 `perm:{user_id}:{role_version}`으로 바꿨습니다(`d41e0a7`). "
            "사용자님, 이대로 배포할까요?")})
        verdict = world.events[1]
        assert verdict["verdict"] == "ESCALATE" and verdict["source"] == "guardrail"
        assert "ruling" not in verdict
        [row] = await world.storage.room_arbitrations(world.engine_room().id)
        assert row.ruling is not None and row.ruling["applied"] is False
        state = await world.engine.load_state(world.engine_room())
        assert {f.label: f.status.value for f in state.findings}["F3"] != "retired"
        text = (await world.engine.on_command(history(world))).text
        assert "⚖️ 중재자 판정(적용되지 않음" in text and "⏳" in text
    finally:
        await world.engine.drain()
        await world.storage.close()


async def test_stop_the_task_ends_it_and_the_next_message_starts_a_new_one(
    ko_world: World,
) -> None:
    world = ko_world
    await play(world, "multi_03")
    verdict = world.transport.edits[0][2]
    assert [o.ends_task for o in verdict.options] == [False, False, True]
    before = await world.engine.load_state(world.engine_room())
    assert before.task_active and before.findings

    await world.say("minji", "3")
    answered = world.events[-1]
    assert answered == {"event": "escalation_answered", "room": "C1", "option": 3,
                        "by": "minji", "kind": "digit", "task_ended": True}
    confirmation = world.transport.posts[-1][1]
    assert confirmation.kind is MessageKind.CONFIRMATION
    assert confirmation.text.startswith("✅ 사용자 결정: 3. 작업 중단\n")
    assert "작업을 종료했습니다" in confirmation.text
    state = await world.engine.load_state(world.engine_room())
    assert not state.task_active and state.awaiting_escalation is None
    assert (state.findings, state.rounds, state.stalled_rounds, state.task_rounds) == ([], 0, 0, 0)
    status = (await world.engine.on_command(CommandRequest(
        platform="console", channel="C1", thread="T1", user_id="boss", text="status"))).text
    assert "F1" not in status  # nothing of the stopped task is open

    # The next human message starts a new task, in its own language.
    await world.say("minji", "Please add audit logging to the permission checks.")
    state = await world.engine.load_state(world.engine_room())
    assert state.task_active and state.language == "en" and state.findings == []
    await world.say("sec-bot", "`authz/audit.py` must log every denied check. Please add it.",
                    is_bot=True)
    await world.engine.close_turns(force=True)
    state = await world.engine.load_state(world.engine_room())
    assert [f.label for f in state.findings] == ["F1"]  # a new ledger: labels start again


async def test_stop_by_button_ends_the_task_in_an_english_room(tmp_path: Path) -> None:
    world = await two_reviewers(tmp_path)
    try:
        await play(world, "multi_04")
        assert world.events[0]["trigger"] == "contradiction"
        verdict = world.transport.edits[0][2]
        assert verdict.escalation_id is not None
        stop = next(o for o in verdict.options if o.ends_task)
        assert stop.label == "Stop the task"
        result = await world.engine.on_button(ButtonClick(
            platform="console", channel="C1", thread="T1", escalation_id=verdict.escalation_id,
            option=stop.n, user_id="erin"))
        await world.engine.drain()
        assert result.accepted
        assert world.events[-1]["task_ended"] is True
        confirmation = world.transport.posts[-1][1]
        assert confirmation.text == (f"✅ User decision: {stop.n}. Stop the task\nThis task has "
                                     "ended: its findings and counters are cleared, and the next "
                                     "user message starts a new task.")
        state = await world.engine.load_state(world.engine_room())
        assert not state.task_active and state.findings == []
    finally:
        await world.engine.drain()
        await world.storage.close()

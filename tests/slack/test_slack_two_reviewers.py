"""Two reviewer bots in one Slack thread, bound by repeating `reviewer:` in
`/arbiter roles` (or by the TOML file's list): their messages form one
reviewer turn and each finding of the ledger keeps its own author."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.models import RoomKey
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import CHANNEL, make_settings, message_event
from tests.slack.slack_world import (
    HUMAN,
    OWNER_BOT,
    OWNER_SAYS,
    REVIEWER_USER,
    ScriptedBackend,
    World,
)

SECOND_USER, SECOND_BOT = "UREVIEW2", "BREVIEW2"
FIRST_FINDING = "`src/auth/login.py` 의 `validate_token` 에서 만료 검사가 빠졌습니다. 수정해 주세요."
SECOND_FINDING = "`src/api/upload.py` 의 업로드 제한 20MB 는 너무 큽니다. 10MB 로 줄여 주세요."


@pytest.fixture(params=["command", "toml"])
async def world(request: pytest.FixtureRequest, slack_api: FakeSlackAPI,
                tmp_path: Path) -> AsyncIterator[World]:
    settings = make_settings(slack_api, tmp_path)
    if request.param == "toml":
        config = tmp_path / "two.toml"
        config.write_text(
            f'[[channels]]\nplatform = "slack"\nchannel = "{CHANNEL}"\n'
            f'owner = ["{OWNER_BOT}"]\nreviewer = ["{REVIEWER_USER}", "{SECOND_USER}"]\n',
            encoding="utf-8")
        settings = make_settings(slack_api, tmp_path, config=config)
    w = await World.create(slack_api, settings)
    if request.param == "command":
        reply = await w.command(
            f"roles owner:{OWNER_BOT} reviewer:<@{REVIEWER_USER}|first> "
            f"reviewer:<@{SECOND_USER}|second>", user="UADMIN")
        assert "✅" in reply, reply
        assert set((await w.storage.get_bindings("slack", CHANNEL))["reviewer"]) == {
            REVIEWER_USER, SECOND_USER}
    yield w
    await w.close()


async def test_two_reviewers_form_one_turn_and_keep_their_findings(world: World) -> None:
    thread = await world.human("로그인 버그 고쳐줘")
    await world.owner(OWNER_SAYS, thread)
    first = await world.reviewer(FIRST_FINDING, thread)
    second = world.next_ts()
    await world.deliver(message_event(SECOND_FINDING, user=SECOND_USER, bot_id=SECOND_BOT,
                                      thread_ts=thread, ts=second))
    await world.owner("검토하겠습니다.", thread)  # closes the reviewer turn

    with sqlite3.connect(world.storage.path) as db:
        turns = dict(db.execute("SELECT message_id, turn_no FROM messages").fetchall())
    assert turns[f"{CHANNEL}:{first}"] == turns[f"{CHANNEL}:{second}"] is not None
    state = await world.engine.load_state(RoomKey("slack", CHANNEL, thread))
    authors = sorted(f.author for f in state.findings)
    assert authors == sorted([REVIEWER_USER, SECOND_USER]), state.findings


# -- a contradiction between the two, live (a manual clock, `tick()` as `tribunal run`) --

WAIT = 120.0  # TRIBUNAL_REVIEWER_WAIT_SECONDS of these tests
ASK = "권한 확인 결과를 Redis에 캐시해서 `has_permission()` 호출 비용을 줄여 주세요."
CACHED = ("STEP_DONE\n`authz/cache.py`에 `PERMISSION_CACHE_TTL = 300`(5분)으로 캐시를 추가했습니다. "
          "키는 `perm:{user_id}:{resource}`입니다. 테스트 27개 모두 통과했습니다.")
SHORTER = ("`PERMISSION_CACHE_TTL`이 5분이면 권한을 회수해도 최대 5분 동안 접근이 허용됩니다. "
           "1분(60초)으로 줄여 주십시오.")
KEY = ("캐시 키에 `resource`가 통째로 들어가서 키 수가 사용자 수 × 리소스 수로 늘어납니다. "
       "역할 단위인 `perm:{user_id}:{role_version}`으로 바꿔 주십시오.")
KEY_DONE = ("STEP_DONE\n캐시 키를 `perm:{user_id}:{role_version}`으로 바꿨습니다(`d41e0a7`). "
            "TTL은 아직 5분 그대로이며, 부하 측정 후 조정하겠습니다.")
LONGER = ("키 변경을 확인했습니다. Redis 메모리 사용량이 1.2GB에서 90MB로 줄었습니다. "
          "그리고 `PERMISSION_CACHE_TTL`은 1시간(3600초)으로 늘려 주십시오. 캐시 미스마다 "
          "권한 DB를 조회하는데, 지금의 5분 TTL로도 권한 DB CPU가 70%입니다.")
STILL_SHORTER = "TTL을 1분으로 줄여 달라는 요청은 아직 반영되지 않았습니다."
RULED = ("REVISE 권한 회수가 즉시 반영되어야 하므로 보안 요구가 우선합니다. "
         "`authz/cache.py`의 `PERMISSION_CACHE_TTL`을 60초로 두십시오.\n"
         "UPHELD: F1\nRETIRED: F3")


async def contradiction_world(slack_api: FakeSlackAPI, tmp_path: Path,
                              backend: ScriptedBackend | None = None) -> World:
    overrides: dict[str, object] = {"reviewer_wait_seconds": WAIT}
    if backend is not None:
        overrides.update(arbiter_backend="openai", arbiter_model="scripted-1")
    w = await World.create(slack_api, make_settings(slack_api, tmp_path, **overrides),
                           backend=backend)
    reply = await w.command(
        f"roles owner:{OWNER_BOT} reviewer:<@{REVIEWER_USER}|sec> "
        f"reviewer:<@{SECOND_USER}|perf>", user="UADMIN")
    assert "✅" in reply, reply
    return w


async def second_reviewer(w: World, text: str, thread: str) -> str:
    ts = w.next_ts()
    await w.deliver(message_event(text, user=SECOND_USER, bot_id=SECOND_BOT, thread_ts=thread,
                                  ts=ts))
    return ts


async def reviewers_disagree(w: World) -> str:
    """sec (the first reviewer) wants the TTL at 1 minute; perf, later, at 1 hour.
    The last reviewer turn waits for sec well past the quiet time; then sec speaks
    in it, the turn closes and the contradiction fires. The thread's ts."""
    thread = await w.human(ASK)
    await w.owner(CACHED, thread)
    await w.reviewer(SHORTER, thread)
    await second_reviewer(w, KEY, thread)
    await w.quiet(5)  # both spoke: the usual quiet closes the first reviewer turn
    await w.owner(KEY_DONE, thread)
    longer = await second_reviewer(w, LONGER, thread)
    await w.quiet(WAIT / 2)  # a minute of ticks: the turn waits for sec
    assert w.thread_posts(thread) == []  # nothing judged yet
    still = await w.reviewer(STILL_SHORTER, thread)
    await w.quiet(5)
    with sqlite3.connect(w.storage.path) as db:
        turns = dict(db.execute("SELECT message_id, turn_no FROM messages").fetchall())
    assert turns[f"{CHANNEL}:{longer}"] == turns[f"{CHANNEL}:{still}"] is not None
    return thread


async def test_a_contradiction_between_two_reviewer_bots_gets_a_ruling(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    w = await contradiction_world(slack_api, tmp_path, ScriptedBackend(RULED))
    try:
        thread = await reviewers_disagree(w)
        room = RoomKey("slack", CHANNEL, thread)
        [arbitration] = await w.storage.room_arbitrations(room.id)
        assert arbitration.trigger == "contradiction" and arbitration.verdict == "REVISE"
        assert arbitration.ruling is not None and arbitration.ruling["applied"] is True
        assert (arbitration.ruling["upheld_author"], arbitration.ruling["retired_author"]) == (
            REVIEWER_USER, SECOND_USER)
        _, verdict = w.verdict(thread)
        shown = json.dumps([verdict["text"], verdict.get("blocks")], ensure_ascii=False)
        assert verdict["text"].startswith("REVISE") and "UPHELD" not in shown
        # Which demand stands and which no longer applies, naming both reviewers.
        assert f"F1 요구(<@{REVIEWER_USER}>: " in shown
        assert f"F3 요구(<@{SECOND_USER}>: " in shown and "더 이상 적용되지 않습니다" in shown
        state = await w.engine.load_state(room)
        assert {f.label: f.status.value for f in state.findings}["F3"] == "retired"

        history = await w.command("history", user="UADMIN")
        assert "REVISE" in history and "⚖️ 판정: F1 요구(" in history
        assert f"<@{SECOND_USER}>" in history
    finally:
        await w.close()


@pytest.mark.parametrize("answer", ["button", "stop"])
async def test_without_a_model_the_human_rules_between_the_two(
    slack_api: FakeSlackAPI, tmp_path: Path, answer: str
) -> None:
    w = await contradiction_world(slack_api, tmp_path)
    try:
        thread = await reviewers_disagree(w)
        room = RoomKey("slack", CHANNEL, thread)
        verdict_ts, verdict = w.verdict(thread)
        assert verdict["text"].startswith("ESCALATE")
        values = w.button_values(verdict)
        assert len(values) == 3
        if answer == "button":
            await w.click(values[1], user=HUMAN, thread=thread, message_ts=verdict_ts)
            confirmation = w.thread_posts(thread)[-1].args["text"]
            assert confirmation == "✅ 사용자 결정: 2. F3 유지 (F1: 더 이상 적용되지 않음)"
            state = await w.engine.load_state(room)
            assert {f.label: f.status.value for f in state.findings}["F1"] == "retired"
            history = await w.command("history", user="UADMIN")
            assert "⚖️ 사용자 판정: F3 요구(" in history and "F1 요구(" in history
        else:
            await w.human("3", thread)
            confirmation = w.thread_posts(thread)[-1].args["text"]
            assert confirmation.startswith("✅ 사용자 결정: 3. 작업 중단\n")
            assert "작업을 종료했습니다" in confirmation
            state = await w.engine.load_state(room)
            assert not state.task_active and state.findings == []
        assert w.button_values(w.message(verdict_ts)) == []  # the buttons are closed
    finally:
        await w.close()

"""Two reviewer bots in one Slack thread, bound by repeating `reviewer:` in
`/arbiter roles` (or by the TOML file's list): their messages form one
reviewer turn and each finding of the ledger keeps its own author."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.models import RoomKey
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import CHANNEL, make_settings, message_event
from tests.slack.slack_world import OWNER_BOT, OWNER_SAYS, REVIEWER_USER, World

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

"""Two reviewer bots in one Discord thread: bound by `/arbiter roles` (reviewer
and reviewer2) or by the TOML file, their messages form one reviewer turn and
each finding of the ledger keeps its own author."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord_payloads as P
import pytest
from discord_helpers import until
from test_discord_scenarios import Bot

from bot.models import RoomKey

SECOND = "2004"  # the second reviewer bot
FIRST_FINDING = ("리뷰: `src/auth/login.py` 의 `validate_token` 에서 만료 검사가 빠졌습니다. "
                 "수정해 주세요.")
SECOND_FINDING = ("보안 리뷰: `src/api/upload.py` 의 업로드 제한 20MB 는 너무 큽니다. "
                  "10MB 로 줄여 주세요.")


async def bind_by_command(bot: Bot) -> None:
    payload = P.slash("roles", invoker=P.ADMIN, permissions=P.ADMIN_PERMS)
    payload["data"]["options"][0]["options"] = [
        {"name": "owner", "type": 6, "value": P.OWNER},
        {"name": "reviewer", "type": 6, "value": P.REVIEWER},
        {"name": "reviewer2", "type": 6, "value": SECOND},
    ]
    payload["data"]["resolved"] = {"users": {
        u: P.user(u, bot=True) for u in (P.OWNER, P.REVIEWER, SECOND)}}
    await bot.fake.dispatch("INTERACTION_CREATE", payload)
    await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert await bot.storage.get_bindings("discord", P.CHANNEL) == {
        "owner": [P.OWNER], "reviewer": sorted([P.REVIEWER, SECOND])}


@pytest.mark.parametrize("binding", ["command", "toml"])
async def test_two_reviewers_form_one_turn_and_keep_their_findings(
    fake_discord: Any, make_settings: Any, start_adapter: Any, tmp_path: Path, binding: str
) -> None:
    overrides: dict[str, Any] = {}
    if binding == "toml":
        config = tmp_path / "two.toml"
        config.write_text(
            "[[channels]]\n"
            f'platform = "discord"\nchannel = "{P.CHANNEL}"\n'
            f'owner = ["{P.OWNER}"]\nreviewer = ["{P.REVIEWER}", "{SECOND}"]\n',
            encoding="utf-8")
        overrides["config"] = config
    bot = await Bot(fake_discord, make_settings, start_adapter,
                    str(tmp_path / "tribunal.db")).boot(**overrides)
    try:
        if binding == "command":
            await bind_by_command(bot)
        await bot.say("로그인 버그 고쳐줘")
        await bot.say("STEP_DONE: 로그인 흐름을 고쳤습니다.", author=P.OWNER)
        first = await bot.say(FIRST_FINDING, author=P.REVIEWER)
        second = P.message(SECOND_FINDING, author=SECOND, bot=True)
        bot.said.append(second["id"])
        await fake_discord.dispatch("MESSAGE_CREATE", second)
        await bot.say("검토하겠습니다.", author=P.OWNER)  # closes the reviewer turn
        await until(lambda: set(bot.said) <= set(bot.seen))
        await bot.engine.drain()

        turns = dict(await _turns(bot))
        assert turns[first] == turns[second["id"]] is not None  # one reviewer turn
        state = await bot.engine.load_state(RoomKey("discord", P.CHANNEL, P.THREAD))
        authors = {f.label: f.author for f in state.findings}
        assert sorted(authors.values()) == sorted([P.REVIEWER, SECOND]), authors
    finally:
        await bot.shutdown()


async def _turns(bot: Bot) -> list[tuple[str, int | None]]:
    import sqlite3

    with sqlite3.connect(bot.db) as db:
        return db.execute("SELECT message_id, turn_no FROM messages").fetchall()

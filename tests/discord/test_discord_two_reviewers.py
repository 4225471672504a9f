"""Two reviewer bots in one Discord thread: bound by `/arbiter roles` (reviewer
and reviewer2) or by the TOML file, their messages form one reviewer turn and
each finding of the ledger keeps its own author."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import discord_payloads as P
import pytest
from discord_helpers import until
from test_discord_scenarios import Bot, custom_ids

from bot import buttons
from bot.arbiter.service import Arbitrator
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


# -- a contradiction between the two reviewer bots ----------------------------------

CORPUS = Path(__file__).parent.parent / "detection" / "corpus"
RULED = ("REVISE 권한 회수가 즉시 반영되어야 하므로 보안 요구가 우선합니다. "
         "`authz/cache.py`의 `PERMISSION_CACHE_TTL`을 60초로 두십시오.\n"
         "UPHELD: F1\nRETIRED: F3")


class Scripted:
    """Stands in for the model: always the same answer."""

    name = "scripted"
    model = "scripted-1"

    async def complete(self, system: str, prompt: str) -> str:
        return RULED


async def disagree(bot: Bot) -> None:
    """The permission-cache case of the labelled corpus (multi_03) in one thread:
    the first reviewer (sec) wants the TTL at one minute, the second (perf), a
    round later, at one hour; the reviewer turn closes with both in it."""
    speakers = {"owner-bot": P.OWNER, "sec-bot": P.REVIEWER, "perf-bot": SECOND}
    for line in (CORPUS / "multi_03.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["type"] != "message":
            continue
        author = speakers.get(row["author"], P.ALICE)
        if author == SECOND:
            payload = P.message(row["text"], author=SECOND, bot=True)
            bot.said.append(payload["id"])
            await bot.fake.dispatch("MESSAGE_CREATE", payload)
        else:
            await bot.say(row["text"], author=author)
    await bot.settle()  # the reviewers' turn goes quiet: it closes and is judged


async def two_reviewer_bot(fake_discord: Any, make_settings: Any, start_adapter: Any,
                           tmp_path: Path, **overrides: Any) -> Bot:
    bot = await Bot(fake_discord, make_settings, start_adapter,
                    str(tmp_path / "tribunal.db")).boot(**overrides)
    await bind_by_command(bot)
    return bot


async def test_a_contradiction_between_two_reviewer_bots_gets_a_ruling(
    fake_discord: Any, make_settings: Any, start_adapter: Any, tmp_path: Path
) -> None:
    bot = await two_reviewer_bot(fake_discord, make_settings, start_adapter, tmp_path,
                                 arbiter_backend="openai", arbiter_model="scripted-1",
                                 arbiter_api_key="sk-test")
    bot.engine.arbitration.arbitrator = Arbitrator(bot.settings, backend=Scripted())
    try:
        await disagree(bot)
        verdict = await until(lambda: next(
            (m for m in bot.posts() if m["content"].startswith("REVISE")), None))
        content = verdict["content"]
        assert "UPHELD" not in content and "RETIRED" not in content
        # Which demand stands, which no longer applies; the reviewers named, not pinged.
        assert f"F1 요구(<@{P.REVIEWER}>: " in content
        assert f"F3 요구(<@{SECOND}>: " in content and "더 이상 적용되지 않습니다" in content
        [patch] = bot.fake.find("PATCH", rf"^/channels/{P.THREAD}/messages/{verdict['id']}$")
        allowed = patch.json["allowed_mentions"]
        assert allowed.get("users", []) == [] and "users" not in allowed.get("parse", [])
        room = RoomKey("discord", P.CHANNEL, P.THREAD)
        [arbitration] = await bot.storage.room_arbitrations(room.id)
        assert arbitration.trigger == "contradiction" and arbitration.ruling is not None
        assert (arbitration.ruling["upheld"], arbitration.ruling["retired"]) == ("F1", "F3")
        state = await bot.engine.load_state(room)
        assert {f.label: f.status.value for f in state.findings}["F3"] == "retired"

        await bot.fake.dispatch("INTERACTION_CREATE", P.slash("history"))
        # The roles command was answered first; the history reply comes second.
        _, callback = await until(lambda: (found := bot.fake.find(
            "POST", r"/callback$")) and len(found) == 2 and found)
        history = callback.json["data"]["content"]
        assert "REVISE" in history and "⚖️ 판정: F1 요구(" in history
        assert f"F3 요구(<@{SECOND}>: " in history
    finally:
        await bot.shutdown()


async def test_without_a_model_a_click_rules_between_the_two(
    fake_discord: Any, make_settings: Any, start_adapter: Any, tmp_path: Path
) -> None:
    bot = await two_reviewer_bot(fake_discord, make_settings, start_adapter, tmp_path)
    try:
        await disagree(bot)
        verdict = await until(lambda: next((m for m in bot.posts() if m["components"]), None))
        assert "ESCALATE" in verdict["content"]
        ids = custom_ids(verdict)
        assert len(ids) == 3  # keep F1, keep F3, stop the task
        await bot.fake.dispatch("INTERACTION_CREATE", P.button_click(verdict, ids[0]))
        confirmation = await until(lambda: next(
            (m for m in bot.posts() if m["content"].startswith("✅")), None))
        assert confirmation["content"] == "✅ 사용자 결정: 1. F1 유지 (F3: 더 이상 적용되지 않음)"
        await bot.engine.drain()
        room = RoomKey("discord", P.CHANNEL, P.THREAD)
        state = await bot.engine.load_state(room)
        assert {f.label: f.status.value for f in state.findings}["F3"] == "retired"
        decoded = buttons.decode(ids[0])
        assert decoded is not None
        row = await bot.storage.get_escalation(decoded[0])
        assert row is not None and row.answer_ruling is not None
        assert (row.answer_ruling["upheld"], row.answer_ruling["retired"]) == ("F1", "F3")
    finally:
        await bot.shutdown()

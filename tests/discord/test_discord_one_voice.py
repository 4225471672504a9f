"""One voice per thread, through the real Discord adapter against the fake
Discord: a thread whose task is asked in English hears only English from the
bot, a Korean one only Korean, whatever TRIBUNAL_LANGUAGE (or the members'
own Discord language, Korean here) says, in every post, edit, ephemeral
reply and DM; and nobody reads a raw user id or a UTC time."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import discord_payloads as P
import pytest
from discord_helpers import until
from test_discord_scenarios import Bot, custom_ids, disabled

from bot.arbiter.language import is_in_language, word_scripts
from tests.fakes.discord_api import FakeDiscord

SPEECH = {
    "en": {
        "task": "Please fix the login redirect bug",
        "owner": "STEP_DONE: fixed the redirect in `auth/login.py`, and the tests pass.",
        "reviewer": "The session cookie is lost at line 42 of `auth/login.py`; it needs a fix.",
        "confirmation": "✅ User decision: 1.",
    },
    "ko": {
        "task": "로그인 리다이렉트 버그를 고쳐 주세요",
        "owner": "STEP_DONE: `auth/login.py`의 리다이렉트를 고쳤습니다. 테스트도 통과합니다.",
        "reviewer": "`auth/login.py` 42번째 줄에서 세션 쿠키가 사라집니다. 수정이 필요합니다.",
        "confirmation": "✅ 사용자 결정: 1.",
    },
}
_DISCORD_MARKUP = re.compile(r"<[^<>]*>")  # <@user>, <t:…:f>: rendered by Discord


def _texts(body: Any) -> list[str]:
    """What a reader sees of a message body: its content and button labels."""
    if not isinstance(body, dict):
        return []
    found = [body["content"]] if isinstance(body.get("content"), str) else []
    for row in body.get("components") or []:
        found += [c["label"] for c in row.get("components", []) if c.get("label")]
    return found


def bot_output(fake: FakeDiscord) -> list[tuple[str, str]]:
    """(kind, text) of every post, edit, ephemeral reply and DM the bot sent."""
    dms = {cid for cid, c in fake.channels.items() if c.get("type") == 1}
    out: list[tuple[str, str]] = []
    for call in fake.calls:
        parts = call.path.strip("/").split("/")
        if call.method == "POST" and parts[0] == "channels" and parts[-1] == "messages":
            kind = "dm" if int(parts[1]) in dms else "post"
            out += [(kind, text) for text in _texts(call.json)]
        elif call.method == "PATCH" and parts[0] == "channels":
            out += [("edit", text) for text in _texts(call.json)]
        elif parts[0] == "interactions" and isinstance(call.json, dict):
            data = call.json.get("data") or {}
            if int(data.get("flags") or 0) & 64:
                out += [("ephemeral", text) for text in _texts(data)]
        elif parts[0] == "webhooks" and isinstance(call.json, dict):
            if int(call.json.get("flags") or 0) & 64:
                out += [("ephemeral", text) for text in _texts(call.json)]
    return out


def in_language(text: str, lang: str) -> bool:
    prose = _DISCORD_MARKUP.sub(" ", text)
    if not word_scripts(prose):
        return True  # "…", a bare mention: nothing to read
    if lang == "en":
        return "hangul" not in word_scripts(prose)
    return is_in_language(prose, "ko")


@pytest.mark.parametrize(("setting", "humans"), [("ko", "en"), ("en", "ko"), ("ko", "ko")])
async def test_a_thread_hears_only_its_own_language(
    fake_discord: FakeDiscord, make_settings: Any, start_adapter: Any, tmp_path: Path,
    setting: str, humans: str,
) -> None:
    bot = await Bot(fake_discord, make_settings, start_adapter,
                    str(tmp_path / "tribunal.db")).boot(language=setting)
    try:
        said = SPEECH[humans]
        fake_discord.calls.clear()
        await bot.say(said["task"])
        for _ in range(4):
            await bot.say(said["owner"], author=P.OWNER)
            await bot.say(said["reviewer"], author=P.REVIEWER)
        await bot.settle()
        verdict = await until(lambda: next((m for m in bot.posts() if m["components"]), None))
        assert "ESCALATE" in verdict["content"]
        ids = custom_ids(verdict)

        bot.clock.advance(4 * 3600 + 60)  # past reminder_after: the one reminder
        await bot.engine.tick()
        await bot.engine.drain()
        await bot.say("9")  # no such option: told privately (a DM)
        await until(lambda: any(k == "dm" for k, _ in bot_output(fake_discord)))
        await fake_discord.dispatch("INTERACTION_CREATE", P.button_click(
            verdict, ids[0], clicker=P.MALLORY))  # not the requester: an ephemeral refusal
        await until(lambda: any(k == "ephemeral" for k, _ in bot_output(fake_discord)))
        await fake_discord.dispatch("INTERACTION_CREATE", P.button_click(verdict, ids[0]))
        await until(lambda: all(disabled(fake_discord.messages[int(verdict["id"])])))
        dms = len([1 for k, _ in bot_output(fake_discord) if k == "dm"])
        await bot.say("2")  # a late answer: told who decided, and when
        await until(lambda: len([1 for k, _ in bot_output(fake_discord) if k == "dm"]) > dms)
        for sub, options, who in (("status", None, P.ALICE), ("threshold", {"n": 3}, P.MALLORY)):
            before = len(fake_discord.find("POST", r"/callback$"))
            await fake_discord.dispatch("INTERACTION_CREATE", P.slash(sub, options, invoker=who))
            await until(lambda n=before: len(fake_discord.find("POST", r"/callback$")) > n)
        await until(lambda: len([1 for k, _ in bot_output(fake_discord)
                                 if k == "ephemeral"]) >= 3)

        output = bot_output(fake_discord)
        assert {kind for kind, _ in output} == {"post", "edit", "ephemeral", "dm"}
        wrong = [(kind, text) for kind, text in output if not in_language(text, humans)]
        assert wrong == []
        assert any(m["content"].startswith(said["confirmation"]) for m in bot.posts())
        # Who decided and when: a mention and a local time, never an id or UTC.
        decided = fake_discord.messages[int(verdict["id"])]["content"]
        assert f"<@{P.ALICE}>" in decided and "<t:" in decided
        late = [text for kind, text in output if kind == "dm"][-1]
        assert f"<@{P.ALICE}>" in late and "<t:" in late
        for _, text in output:
            visible = _DISCORD_MARKUP.sub(" ", text)
            assert P.ALICE not in visible and "UTC" not in visible, text
    finally:
        await bot.shutdown()

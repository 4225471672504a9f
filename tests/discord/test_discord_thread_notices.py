"""What a Discord member reads away from the room names the room: a DM
starts with the thread it is about (its name and a jump link), and
`/arbiter status` given in the parent channel says which thread it is about.
`/arbiter roles` refuses a plain name with a hint. The real Engine behind the
real adapter, against the fake Discord."""

from __future__ import annotations

from collections.abc import AsyncIterator

import discord_payloads as P
import pytest
from discord_helpers import until
from test_discord_scenarios import Bot, custom_ids

from bot.models import CommandRequest


@pytest.fixture
async def bot(fake_discord, make_settings, start_adapter, tmp_path) -> AsyncIterator[Bot]:
    instance = await Bot(fake_discord, make_settings, start_adapter,
                         str(tmp_path / "tribunal.db")).boot()
    yield instance
    await instance.shutdown()


async def test_a_dm_names_and_links_the_thread_it_is_about(bot: Bot) -> None:
    verdict = await bot.deadlock()
    await bot.say("9")  # no such option: told privately, by DM
    [private] = await until(lambda: [
        c for c in bot.fake.find("POST", r"^/channels/\d+/messages$")
        if not c.path.startswith(f"/channels/{P.THREAD}/")])
    head, _, notice = private.json["content"].partition("\n")
    assert head == f"🧵 <#{P.THREAD}> · <https://discord.com/channels/{P.GUILD}/{P.THREAD}>"
    assert notice.startswith("⚠️ 9번 선택지는 없습니다")  # the notice, in the room's language
    assert private.json["allowed_mentions"]["parse"] == []
    await bot.fake.dispatch("INTERACTION_CREATE",
                            P.button_click(verdict, custom_ids(verdict)[0]))
    await until(lambda: any(m["content"].startswith("✅") for m in bot.posts()))


async def test_an_ephemeral_reply_needs_no_such_head(bot: Bot) -> None:
    verdict = await bot.deadlock()
    await bot.fake.dispatch("INTERACTION_CREATE", P.button_click(
        verdict, custom_ids(verdict)[0], clicker=P.MALLORY))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert callback.json["data"]["flags"] & 64
    assert not callback.json["data"]["content"].startswith("🧵")  # shown in the thread itself


async def test_status_in_the_parent_channel_says_which_thread(bot: Bot) -> None:
    await bot.say("로그인 버그 고쳐줘")
    await bot.settle()
    await bot.fake.dispatch("INTERACTION_CREATE", P.slash("status", channel=P.CHANNEL))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    first = callback.json["data"]["content"].splitlines()[0]
    assert "최근 스레드" in first and f"<#{P.THREAD}>" in first
    assert "/arbiter status" in first  # how to name a thread on Discord: use it inside

    before = len(bot.fake.find("POST", r"/callback$"))
    await bot.fake.dispatch("INTERACTION_CREATE", P.slash("status"))  # inside the thread
    await until(lambda: len(bot.fake.find("POST", r"/callback$")) > before)
    inside = bot.fake.find("POST", r"/callback$")[-1].json["data"]["content"]
    assert "최근 스레드" not in inside


async def test_roles_with_a_plain_name_is_refused_with_a_hint(bot: Bot) -> None:
    # Discord's `roles` options hold users, so the adapter always sends
    # mentions; the core still refuses a name that is not a user there.
    reply = await bot.engine.on_command(CommandRequest(
        platform="discord", channel=P.OTHER_CHANNEL, user_id=P.ADMIN, is_platform_admin=True,
        text=f"roles owner:<@{P.OWNER}> reviewer:reviewer-bot"))
    assert not reply.ok and "사용자가 아닙니다" in reply.text and "`reviewer-bot`" in reply.text
    assert "옵션" in reply.text  # the hint speaks of Discord's options
    assert await bot.storage.get_bindings("discord", P.OTHER_CHANNEL) == {}

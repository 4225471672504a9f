"""End to end: the real Engine + SqliteStorage behind the Discord adapter, over real HTTP.

Gateway events go down a websocket from the fake Discord; everything the bot
does comes back as REST calls the fake records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import discord_payloads as P
import pytest
from discord_helpers import until

from bot import buttons
from bot.clock import ManualClock
from bot.engine import Engine
from storage.sqlite import SqliteStorage

REVIEW = (
    "리뷰 결과: `src/auth/login.py` 42행의 `validate_token` 에서 만료 검사가 빠졌습니다. "
    "테스트 `test_expired_token` 이 실패합니다. 수정해 주세요."
)
OWNER_TURN = "만료 검사는 미들웨어에서 이미 처리합니다. 변경이 필요 없습니다."


class Bot:
    """One running bot: storage, engine, adapter; `restart()` keeps the database."""

    def __init__(self, fake: Any, make_settings: Any, start_adapter: Any, db: str) -> None:
        self.fake, self.make_settings, self.start_adapter, self.db = (
            fake, make_settings, start_adapter, db)
        self.clock = ManualClock()

    async def boot(self, **overrides: Any) -> Bot:
        self.settings = self.make_settings(database=self.db, **overrides)
        self.storage = SqliteStorage(self.db)
        try:
            await self.storage.open()
        except BaseException:
            await self.storage.close()  # else aiosqlite's thread keeps the process alive
            raise
        self.engine = Engine(self.settings, self.storage, clock=self.clock)
        self.said: list[str] = []
        self.seen: list[str] = []
        handle = self.engine.on_message

        async def on_message(message: Any) -> None:  # note what reached the core
            await handle(message)
            self.seen.append(message.message_id)

        self.engine.on_message = on_message  # type: ignore[method-assign]
        self.adapter = await self.start_adapter(self.settings, self.engine)
        self.engine.register_transport(self.adapter.transport)
        await self.engine.start()
        return self

    async def shutdown(self) -> None:
        await self.adapter.stop()
        await self.storage.close()

    async def say(self, text: str, author: str = P.ALICE, channel: str = P.THREAD) -> str:
        payload = P.message(text, author=author, channel=channel)
        self.said.append(payload["id"])
        await self.fake.dispatch("MESSAGE_CREATE", payload)
        return payload["id"]

    async def settle(self) -> None:
        """Wait until every message said reached the core, then let quiet turns close."""
        await until(lambda: set(self.said) <= set(self.seen), within=5)
        self.clock.advance(60)
        await self.engine.tick()
        await self.engine.drain()  # arbitrations of quiet turns run in their own tasks

    def posts(self, channel: str = P.THREAD) -> list[dict[str, Any]]:
        return self.fake.channel_messages(channel)

    async def deadlock(self, channel: str = P.THREAD) -> dict[str, Any]:
        """Human asks, agents go round in circles until the arbiter posts a verdict."""
        await self.say("로그인 버그 고쳐줘", channel=channel)
        for _ in range(4):
            await self.say(OWNER_TURN, author=P.OWNER, channel=channel)
            await self.say(REVIEW, author=P.REVIEWER, channel=channel)
        await self.settle()
        return await until(lambda: next(
            (m for m in self.posts(channel) if m["components"]), None))


@pytest.fixture
async def bot(fake_discord, make_settings, start_adapter, tmp_path) -> AsyncIterator[Bot]:
    instance = await Bot(fake_discord, make_settings, start_adapter,
                         str(tmp_path / "tribunal.db")).boot()
    yield instance
    await instance.storage.close()


def custom_ids(message: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in message["components"] for c in row["components"]]


def disabled(message: dict[str, Any]) -> list[bool]:
    return [bool(c.get("disabled")) for row in message["components"] for c in row["components"]]


async def test_deadlock_verdict_and_button_click(bot: Bot) -> None:
    verdict = await bot.deadlock()
    assert verdict["content"].lstrip().startswith(f"<@{P.ALICE}>")  # requester pinged
    assert "ESCALATE" in verdict["content"]
    ids = custom_ids(verdict)
    assert len(ids) >= 2 and all(buttons.decode(i) for i in ids)
    # the progress message was edited into the verdict (one post, one PATCH)
    patch = bot.fake.find("PATCH", rf"^/channels/{P.THREAD}/messages/{verdict['id']}$")
    assert patch, "progress message not edited into the verdict"
    assert [str(u) for u in patch[0].json["allowed_mentions"]["users"]] == [P.ALICE]
    await bot.fake.dispatch("INTERACTION_CREATE", P.button_click(verdict, ids[1]))
    confirmation = await until(lambda: next(
        (m for m in bot.posts() if m["content"].startswith("✅")), None))
    assert "2." in confirmation["content"]
    await until(lambda: all(disabled(bot.fake.messages[int(verdict["id"])])))
    [callback] = await until(lambda: bot.fake.find("POST", r"^/interactions/.+/callback$"))
    assert callback.json["type"] == 6  # acknowledged silently, well within 3 s


async def test_digit_answer_in_thread(bot: Bot) -> None:
    verdict = await bot.deadlock()
    await bot.say("1번")
    confirmation = await until(lambda: next(
        (m for m in bot.posts() if m["content"].startswith("✅")), None))
    assert "1." in confirmation["content"]
    await until(lambda: all(disabled(bot.fake.messages[int(verdict["id"])])))


async def test_out_of_range_digit_is_refused_privately_and_stays_pending(bot: Bot) -> None:
    verdict = await bot.deadlock()
    await bot.say("9")
    dm = await until(lambda: bot.fake.find("POST", r"^/users/@me/channels$"))
    assert str(dm[0].json["recipient_id"]) == P.ALICE
    [private] = await until(lambda: [
        c for c in bot.fake.find("POST", r"^/channels/\d+/messages$")
        if not c.path.startswith(f"/channels/{P.THREAD}/")])
    assert "9" in private.json["content"]  # the Korean out-of-range error, in a DM
    assert not any(m["content"].startswith("✅") for m in bot.posts())
    await bot.fake.dispatch("INTERACTION_CREATE",
                            P.button_click(verdict, custom_ids(verdict)[0]))
    await until(lambda: any(m["content"].startswith("✅") for m in bot.posts()))


async def test_unwatched_channel_and_duplicates_are_not_stored_twice(bot: Bot) -> None:
    await bot.say("안녕하세요", channel=P.OTHER_CHANNEL)
    first = await bot.say("로그인 버그 고쳐줘")
    duplicate = P.message("로그인 버그 고쳐줘", message_id=first)
    await bot.fake.dispatch("MESSAGE_CREATE", duplicate)  # a gateway replay after RESUME
    await bot.settle()
    await until(lambda: bot.seen.count(first) == 2)
    assert await bot.storage.latest_room("discord", P.OTHER_CHANNEL) is None
    humans, _ = await bot.storage.human_messages(f"discord:{P.CHANNEL}:{P.THREAD}", 0, 50)
    assert [m.message_id for m in humans] == [first]


async def test_unauthorized_click_gets_ephemeral_error(bot: Bot) -> None:
    verdict = await bot.deadlock()
    ids = custom_ids(verdict)
    await bot.fake.dispatch("INTERACTION_CREATE",
                            P.button_click(verdict, ids[0], clicker=P.MALLORY))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert callback.json["type"] == 4 and callback.json["data"]["flags"] & 64
    assert not any(m["content"].startswith("✅") for m in bot.posts())
    assert not any(disabled(bot.fake.messages[int(verdict["id"])]))


async def test_double_click_second_is_told_who_decided(bot: Bot) -> None:
    verdict = await bot.deadlock()
    ids = custom_ids(verdict)
    await bot.fake.dispatch("INTERACTION_CREATE", P.button_click(verdict, ids[0]))
    await until(lambda: len(bot.fake.find("POST", r"/callback$")) == 1)
    await bot.fake.dispatch("INTERACTION_CREATE", P.button_click(
        verdict, ids[1], clicker=P.ADMIN, permissions=P.ADMIN_PERMS))
    await until(lambda: len(bot.fake.find("POST", r"/callback$")) == 2)
    first, second = bot.fake.find("POST", r"/callback$")
    assert first.json["type"] == 6
    assert second.json["type"] == 4 and second.json["data"]["flags"] & 64
    assert P.ALICE in second.json["data"]["content"]  # who decided
    assert len([m for m in bot.posts() if m["content"].startswith("✅")]) == 1


async def test_non_admin_threshold_change_refused(bot: Bot) -> None:
    await bot.fake.dispatch("INTERACTION_CREATE", P.slash("threshold", {"n": 5},
                                                          channel=P.CHANNEL))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert callback.json["data"]["flags"] & 64
    assert "⛔" in callback.json["data"]["content"]
    audit = await bot.storage.list_audit("discord", P.CHANNEL)
    assert audit == []


async def test_admin_change_is_used_by_the_next_room(bot: Bot) -> None:
    await bot.fake.dispatch("INTERACTION_CREATE", P.slash(
        "threshold", {"n": 1}, invoker=P.ADMIN, permissions=P.ADMIN_PERMS, channel=P.CHANNEL))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert "⛔" not in callback.json["data"]["content"]
    # a fresh thread under the channel: one stalled round is now enough
    thread = {**P.guild_create()["threads"][0], "id": "1102", "name": "next task"}
    await bot.fake.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
    await bot.say("새 작업", channel="1102")
    for _ in range(2):
        await bot.say(OWNER_TURN, author=P.OWNER, channel="1102")
        await bot.say(REVIEW, author=P.REVIEWER, channel="1102")
    await bot.settle()
    await until(lambda: any(m["components"] for m in bot.posts("1102")))
    audit = await bot.storage.list_audit("discord", P.CHANNEL)
    assert audit and audit[0].user_id == P.ADMIN


async def test_restart_old_buttons_still_resolve(bot: Bot) -> None:
    verdict = await bot.deadlock()
    ids = custom_ids(verdict)
    await bot.shutdown()
    await bot.boot()  # a new client object, same database
    await bot.fake.dispatch("INTERACTION_CREATE", P.button_click(verdict, ids[0]))
    await until(lambda: any(m["content"].startswith("✅") for m in bot.posts()))
    await until(lambda: all(disabled(bot.fake.messages[int(verdict["id"])])))
    await until(lambda: bot.fake.find("POST", r"/callback$"))


async def test_everyone_in_model_output_does_not_ping(bot: Bot) -> None:
    # the fallback escalation quotes the room; an agent writes @everyone and a role ping
    await bot.say("로그인 버그 고쳐줘")
    for _ in range(4):
        await bot.say("@everyone @here <@&1000> " + OWNER_TURN, author=P.OWNER)
        await bot.say(REVIEW + " <@3003>", author=P.REVIEWER)
    await bot.settle()
    await until(lambda: any(m["components"] for m in bot.posts()))
    sends = bot.fake.find("POST", rf"^/channels/{P.THREAD}/messages$") + bot.fake.find(
        "PATCH", rf"^/channels/{P.THREAD}/messages/")
    assert sends
    for call in sends:
        mentions = call.json["allowed_mentions"]
        assert mentions["parse"] == []  # no @everyone/@here, no roles, no free user pings
        assert {str(u) for u in mentions.get("users", [])} <= {P.ALICE}


async def test_missing_permissions_in_thread_is_logged_not_fatal(bot: Bot, caplog) -> None:
    bot.fake.forbid_next("POST", rf"^/channels/{P.THREAD}/messages$", times=100)
    await bot.say("로그인 버그 고쳐줘")
    for _ in range(4):
        await bot.say(OWNER_TURN, author=P.OWNER)
        await bot.say(REVIEW, author=P.REVIEWER)
    await bot.settle()
    await until(lambda: "50013" in caplog.text)
    assert not bot.adapter.client.is_closed()
    # the bot keeps serving: a command still gets its private answer
    await bot.fake.dispatch("INTERACTION_CREATE", P.slash("status"))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert callback.json["data"]["flags"] & 64


async def test_bad_argument_gets_usage_help(bot: Bot) -> None:
    await bot.fake.dispatch("INTERACTION_CREATE", P.slash(
        "threshold", {"n": 99}, invoker=P.ADMIN, permissions=P.ADMIN_PERMS))
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    content = callback.json["data"]["content"]
    assert callback.json["data"]["flags"] & 64
    assert "1" in content and "20" in content and "/arbiter" in content


async def test_roles_command_makes_a_channel_watched(bot: Bot) -> None:
    payload = P.slash("roles", invoker=P.ADMIN, permissions=P.ADMIN_PERMS,
                      channel=P.OTHER_CHANNEL)
    payload["data"]["options"][0]["options"] = [
        {"name": "owner", "type": 6, "value": P.OWNER},
        {"name": "reviewer", "type": 6, "value": P.REVIEWER},
    ]
    payload["data"]["resolved"] = {"users": {
        P.OWNER: P.user(P.OWNER, bot=True), P.REVIEWER: P.user(P.REVIEWER, bot=True)}}
    await bot.fake.dispatch("INTERACTION_CREATE", payload)
    [callback] = await until(lambda: bot.fake.find("POST", r"/callback$"))
    assert "⛔" not in callback.json["data"]["content"]
    assert await bot.storage.get_bindings("discord", P.OTHER_CHANNEL) == {
        "owner": [P.OWNER], "reviewer": [P.REVIEWER]}
    await bot.say("이제 감시됩니다", channel=P.OTHER_CHANNEL)
    await bot.settle()
    assert await bot.storage.latest_room("discord", P.OTHER_CHANNEL) is not None

"""Catch-up after downtime on Discord: messages posted while the bot was down
(in an existing thread and in a thread created meanwhile) are judged after it
restarts, in snowflake order, once. The real Engine and SQLite behind the
adapter, over real HTTP and websocket to the fake Discord."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from typing import Any

import discord_payloads as P
import pytest
from discord_helpers import until
from test_discord_scenarios import Bot

from tests.fakes.discord_api import FakeDiscord

NEW_THREAD = "1103"  # created while the bot was down


def new_thread(fake: FakeDiscord) -> None:
    fake.add_thread({
        "id": NEW_THREAD, "type": 11, "name": "log collector", "parent_id": P.CHANNEL,
        "owner_id": P.ALICE, "last_message_id": None, "rate_limit_per_user": 0,
        "message_count": 0, "member_count": 3, "flags": 0,
        "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                            "archive_timestamp": "2026-11-30T00:00:00.000000+00:00",
                            "locked": False}})


def missed(fake: FakeDiscord, text: str, author: str, channel: str) -> str:
    """Posted while the bot was down: Discord keeps it, no event reaches the bot."""
    return str(fake.add_message(P.message(text, author=author, channel=channel))["id"])


def verdicts(fake: FakeDiscord, channel: str) -> list[dict[str, Any]]:
    return [m for m in fake.channel_messages(channel) if m["components"]]


def rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
async def bot(fake_discord, make_settings, start_adapter, tmp_path) -> AsyncIterator[Bot]:  # type: ignore[no-untyped-def]
    instance = await Bot(fake_discord, make_settings, start_adapter,
                         str(tmp_path / "tribunal.db")).boot()
    yield instance
    await instance.storage.close()


async def said(bot: Bot, text: str, author: str, channel: str = P.THREAD) -> str:
    payload = await bot.fake.say(P.message(text, author=author, channel=channel))
    bot.said.append(payload["id"])
    await until(lambda: payload["id"] in bot.seen)
    return str(payload["id"])


async def test_messages_missed_while_down_are_judged_after_restart_in_order_once(
    bot: Bot,
) -> None:
    fake = bot.fake
    await said(bot, "결제 모듈 리팩터링 부탁해", P.ALICE)
    blocked = await said(bot, "BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", P.OWNER)
    await bot.shutdown()

    # Down: the reviewer answers in the thread (closing the owner's BLOCKED
    # turn), and a new thread runs into the same wall.
    expected = {P.THREAD: [missed(fake, "키 없이도 샌드박스로 테스트할 수 있습니다.",
                                  P.REVIEWER, P.THREAD)]}
    new_thread(fake)
    expected[NEW_THREAD] = [
        missed(fake, "로그 수집기 설정해줘", P.ALICE, NEW_THREAD),
        missed(fake, "BLOCKED: 수집기 서버 접근 권한이 없습니다.", P.OWNER, NEW_THREAD),
        missed(fake, "권한 없이 로컬에서 먼저 해볼 수 있습니다.", P.REVIEWER, NEW_THREAD),
    ]

    # Discord asks the first read to wait: discord.py waits and retries it.
    fake.rate_limit_next("GET", rf"^/channels/{NEW_THREAD}/messages$")
    for attempt in range(2):  # the second start finds nothing new
        reads = len(fake.find("GET", rf"^/channels/{NEW_THREAD}/messages$"))
        await bot.boot()
        await until(lambda: verdicts(fake, P.THREAD) and verdicts(fake, NEW_THREAD), within=10)
        await until(lambda n=reads: len(fake.find("GET", rf"^/channels/{NEW_THREAD}/messages$")) > n)
        await until(lambda: not rows(bot.db, "SELECT seq FROM messages WHERE processed = 0"))
        await bot.engine.drain()
        await bot.shutdown()
        if attempt == 0:
            # Read with `after=` the channel's latest stored snowflake.
            first = fake.find("GET", rf"^/channels/{NEW_THREAD}/messages$")[0]
            assert first.query["after"] == blocked

    assert len(verdicts(fake, P.THREAD)) == 1 and len(verdicts(fake, NEW_THREAD)) == 1
    for thread, count in ((P.THREAD, 3), (NEW_THREAD, 3)):
        stored = rows(bot.db, "SELECT message_id, role, turn_no FROM messages WHERE room_id ="
                              f" 'discord:{P.CHANNEL}:{thread}' ORDER BY seq")
        assert len(stored) == count, stored  # each once
        assert [m for m, _, _ in stored][-len(expected[thread]):] == expected[thread]
        turns = [turn for _, role, turn in stored if role != "user"]
        assert turns == sorted(turns) and len(set(turns)) == 2  # snowflake order
    assert sorted(rows(bot.db, "SELECT room_id, trigger FROM arbitrations")) == sorted(
        (f"discord:{P.CHANNEL}:{room}", "blocked") for room in (P.THREAD, NEW_THREAD))


async def test_a_rooms_live_messages_during_its_catch_up_come_after_it(bot: Bot) -> None:
    fake = bot.fake
    await said(bot, "결제 모듈 리팩터링 부탁해", P.ALICE)
    await said(bot, "BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", P.OWNER)
    await bot.shutdown()
    early = missed(fake, "키 없이도 샌드박스로 테스트할 수 있습니다.", P.REVIEWER, P.THREAD)

    gate = fake.hold("GET", rf"^/channels/{P.THREAD}/messages$")  # the room's catch-up read
    await bot.boot()  # ready before its catch-up is done
    await until(lambda: fake.held)
    live = P.message("그럼 샌드박스로 진행해 주세요.", author=P.ALICE)
    await fake.say(live)  # arrives while the room is being caught up
    await until(lambda: rows(bot.db, "SELECT seq FROM messages WHERE message_id ="
                                     f" '{live['id']}'"))  # stored at once, not yet applied
    assert not rows(bot.db, f"SELECT seq FROM messages WHERE message_id = '{early}'")
    gate.set()
    await until(lambda: live["id"] in bot.seen, within=10)
    await until(lambda: not rows(bot.db, "SELECT seq FROM messages WHERE processed = 0"))
    epochs = dict(rows(bot.db, "SELECT message_id, epoch FROM messages"))
    # Stored after the live message, applied before it: the reviewer's answer
    # closed the owner's turn in the old epoch; the human's message opened a new one.
    assert epochs[early] < epochs[live["id"]]
    assert rows(bot.db, "SELECT trigger FROM arbitrations") == [("blocked",)]


async def test_a_resumed_gateway_session_is_caught_up(bot: Bot) -> None:
    fake = bot.fake
    await said(bot, "결제 모듈 리팩터링 부탁해", P.ALICE)
    await said(bot, "BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", P.OWNER)
    # Lost in the gap of a reconnect: Discord has it, the bot never heard of it.
    lost = missed(fake, "키 없이도 샌드박스로 테스트할 수 있습니다.", P.REVIEWER, P.THREAD)
    await fake.request_reconnect()
    await until(lambda: fake.resume_payloads)
    await until(lambda: verdicts(fake, P.THREAD), within=10)
    assert rows(bot.db, f"SELECT role FROM messages WHERE message_id = '{lost}'") == [
        ("reviewer",)]
    assert rows(bot.db, "SELECT trigger FROM arbitrations") == [("blocked",)]

"""Room subcommands from inside a Slack thread (slash commands cannot be used
there): a thread link after `/arbiter`, the message shortcut "Arbitrate this
thread" and an in-thread mention (`@tribunal status`), through the real
slack-bolt app, signed HTTP and Socket Mode, against the fake Web API.
Without a thread, a room subcommand says it acted on the channel's latest
thread. The rights are the slash command's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import (
    CHANNEL,
    app_mention,
    fixture,
    make_settings,
    message_shortcut,
    slash_command,
    start_harness,
)
from tests.slack.slack_world import HUMAN, World
from tests.slack.test_slack_app import RecordingCore

WORKSPACE = "https://fake.slack.test/"  # what the fake's auth.test answers as `url`


def link(thread: str, channel: str = CHANNEL) -> str:
    return f"{WORKSPACE}archives/{channel}/p{thread.replace('.', '')}"


# -- the adapter alone: what reaches the core -----------------------------------------


@pytest.fixture
async def harness(slack_api: FakeSlackAPI, tmp_path: Path) -> Any:
    core = RecordingCore()
    h = await start_harness(core, slack_api, make_settings(slack_api, tmp_path))
    h.core = core  # type: ignore[attr-defined]
    yield h
    await h.adapter.stop()


def test_the_new_fixtures_are_what_slack_sends() -> None:
    shortcut = fixture("message_action")
    assert shortcut["type"] == "message_action" and shortcut["callback_id"] == "tribunal_arbitrate"
    mention = fixture("event_app_mention")
    assert mention["type"] == "event_callback" and mention["event"]["type"] == "app_mention"
    assert mention["event"]["text"].startswith("<@UBOT>")


@pytest.mark.parametrize("via", ["http", "socket"])
async def test_a_thread_link_names_the_thread(harness: Any, via: str) -> None:
    thread = "1732870800.000100"
    body = slash_command(f"status <{link(thread)}>", user="UALICE",
                         response_url=harness.api.response_url())
    if via == "http":
        assert (await harness.http(body))[0] == 200
    else:
        await harness.socket(body)
    (request,) = harness.core.commands
    assert (request.channel, request.thread, request.text, request.typed_in) == (
        CHANNEL, thread, "status", None)


@pytest.mark.parametrize("via", ["http", "socket"])
async def test_the_message_shortcut_is_acked_and_summons_on_its_thread(
    harness: Any, via: str
) -> None:
    url = harness.api.response_url()
    body = message_shortcut(user="UADMIN", message_ts="1732870805.000200",
                            thread_ts="1732870800.000100", response_url=url)
    if via == "http":
        status, text = await harness.http(body)
        assert status == 200 and text == ""
    else:
        ack = await harness.socket(body)
        assert ack.payload is None or ack.payload == {}
    (request,) = harness.core.commands
    assert (request.text, request.channel, request.thread, request.user_id) == (
        "summon", CHANNEL, "1732870800.000100", "UADMIN")
    assert request.is_platform_admin  # users.info: the same rights as the slash command
    (reply,) = harness.api.responses  # privately, through the shortcut's response_url
    assert reply["response_type"] == "ephemeral" and "<!channel>" not in reply["text"]


async def test_a_shortcut_of_another_app_is_not_ours(harness: Any) -> None:
    body = message_shortcut(user="UADMIN", message_ts="1732870805.000200", thread_ts=None,
                            response_url=harness.api.response_url(), callback_id="other")
    status, _ = await harness.http(body)
    assert status == 200 and harness.core.commands == []  # acknowledged, nothing done


@pytest.mark.parametrize("via", ["http", "socket"])
async def test_an_in_thread_mention_is_a_command_not_room_talk(harness: Any, via: str) -> None:
    thread = "1732870800.000100"
    mention, message = app_mention("status", user="UALICE", thread_ts=thread)
    for body in (mention, message, mention):  # both deliveries, and a retry
        if via == "http":
            assert (await harness.http(body))[0] == 200
        else:
            await harness.socket(body)
    (request,) = harness.core.commands
    assert (request.channel, request.thread, request.text) == (CHANNEL, thread, "status")
    assert harness.core.messages == []  # not fed to the room as a human message
    (ephemeral,) = harness.api.calls_to("chat.postEphemeral")  # no response_url for events
    assert (ephemeral.args["user"], ephemeral.args["thread_ts"]) == ("UALICE", thread)


async def test_a_mention_that_is_no_command_stays_room_talk(harness: Any) -> None:
    mention, message = app_mention("2", user="UALICE", thread_ts="1732870800.000100")
    await harness.http(mention)
    await harness.http(message)
    assert harness.core.commands == []
    assert [m.text for m in harness.core.messages] == ["<@UBOT> 2"]


# -- with the real engine -----------------------------------------------------------------


@pytest.fixture
async def world(slack_api: FakeSlackAPI, tmp_path: Path) -> AsyncIterator[World]:
    w = await World.create(slack_api, make_settings(slack_api, tmp_path))
    await w.bind_roles()
    yield w
    await w.close()


async def mention(world: World, text: str, thread: str | None, *, user: str = HUMAN,
                  via: str = "http") -> str:
    """`@tribunal <text>` in `thread`; the private answer the user saw there."""
    before = len(world.api.calls_to("chat.postEphemeral"))
    for body in app_mention(text, user=user, thread_ts=thread, ts=world.next_ts()):
        await world.deliver(body, via)
    calls = world.api.calls_to("chat.postEphemeral")
    assert len(calls) == before + 1, "no private answer"
    assert calls[-1].args["user"] == user
    assert calls[-1].args.get("thread_ts") == thread
    return str(calls[-1].args["text"])


async def shortcut(world: World, *, user: str, message_ts: str, thread: str | None,
                   via: str = "http") -> str:
    url = world.api.response_url()
    await world.deliver(message_shortcut(user=user, message_ts=message_ts, thread_ts=thread,
                                         response_url=url), via)
    return str(world.api.responses[-1]["text"])


async def test_status_by_link_is_about_that_thread(world: World) -> None:
    first = await world.human("로그인 버그 고쳐줘")
    await world.argue(first, rounds=1)
    second = await world.human("로그아웃 버그도 고쳐줘")  # now the channel's latest thread

    named = await world.command(f"status <{link(first)}>", user=HUMAN)
    assert "라운드 1" in named and "최근 스레드" not in named

    latest = await world.command("status", user=HUMAN)
    head = latest.splitlines()[0]
    # Without a thread: about the channel's latest thread, linked, and how to name one.
    assert "최근 스레드" in head and f"<{link(second)}>" in head
    assert "/arbiter status" in head and "Arbitrate this thread" in head


async def test_a_link_to_another_channels_thread_is_refused(world: World) -> None:
    thread = await world.human("로그인 버그 고쳐줘")
    reply = await world.command(f"summon <{link(thread, 'C0ELSEWHERE')}>", user="UADMIN")
    assert "다른 채널" in reply
    assert world.thread_posts(thread) == []  # nothing arbitrated anywhere


async def test_a_link_to_a_thread_tribunal_never_saw(world: World) -> None:
    await world.human("로그인 버그 고쳐줘")
    reply = await world.command(f"summon <{link('1600000000.000100')}>", user="UADMIN")
    assert "받은 메시지가 없습니다" in reply
    assert world.api.calls_to("chat.postMessage") == []


@pytest.mark.parametrize("via", ["http", "socket"])
async def test_the_shortcut_arbitrates_the_thread_it_was_used_in(world: World, via: str) -> None:
    thread = await world.human("Please fix the login redirect bug")
    await world.owner("STEP_DONE: fixed the redirect in `auth/login.py`.", thread)
    reviewer_ts = await world.reviewer("The session cookie is lost at line 42.", thread)
    other = await world.human("Unrelated: what about the docs?")  # the channel's latest

    reply = await shortcut(world, user="UADMIN", message_ts=reviewer_ts, thread=thread, via=via)
    assert "Arbitration requested" in reply  # in the thread's language, English
    await world.quiet()
    _, verdict = world.verdict(thread)
    assert verdict["text"].startswith("ESCALATE")
    assert world.thread_posts(other) == []


async def test_the_shortcut_on_a_top_level_message_arbitrates_its_own_thread(
    world: World,
) -> None:
    thread = await world.human("로그인 버그 고쳐줘")  # no reply yet: the message is the thread
    await world.owner("STEP_DONE: 고쳤습니다.", thread)
    reply = await shortcut(world, user="UADMIN", message_ts=thread, thread=None)
    assert "중재를 요청했습니다" in reply
    await world.quiet()
    assert world.verdict(thread)[1]["text"].startswith("ESCALATE")


async def test_the_shortcut_needs_the_slash_commands_rights(world: World) -> None:
    thread = await world.human("로그인 버그 고쳐줘")
    await world.owner("STEP_DONE: 고쳤습니다.", thread)
    reply = await shortcut(world, user="UMALLORY", message_ts=thread, thread=None)
    assert "관리자만" in reply
    await world.quiet()
    assert world.thread_posts(thread) == []
    # Nothing audited but the roles binding the fixture made.
    assert [a.action for a in await world.storage.list_audit("slack", CHANNEL)] == ["roles"]


@pytest.mark.parametrize("via", ["http", "socket"])
async def test_a_mention_in_a_pending_thread_answers_and_decides_nothing(
    world: World, via: str
) -> None:
    thread, verdict_ts, values = await world.escalate()
    text = await mention(world, "status", thread, via=via)
    assert "대기 중인 결정" in text and "최근 스레드" not in text
    # The mention was a command, not the human's free-text answer: still pending.
    assert world.button_values(world.message(verdict_ts)) == values
    rows = await world.storage._all("SELECT status FROM escalations")
    assert [r["status"] for r in rows] == ["pending"]
    # And the buttons still answer.
    await world.click(values[0], user=HUMAN, thread=thread, message_ts=verdict_ts)
    assert world.thread_posts(thread)[-1].args["text"].startswith("✅ 사용자 결정: 1.")


async def test_mention_summon_and_history_act_on_their_thread(world: World) -> None:
    thread = await world.human("로그인 버그 고쳐줘")
    await world.owner("STEP_DONE: 고쳤습니다.", thread)
    await world.human("다른 작업입니다")  # the channel's latest thread is another one
    refused = await mention(world, "summon", thread, user="UMALLORY")
    assert "관리자만" in refused
    assert "중재를 요청했습니다" in await mention(world, "summon", thread, user="UADMIN")
    await world.quiet()
    assert world.verdict(thread)[1]["text"].startswith("ESCALATE")
    history = await mention(world, "history", thread)
    assert "ESCALATE" in history and "중재 요청" in history and "manual" not in history


async def test_a_mention_at_the_top_of_the_channel_says_it_used_the_latest_thread(
    world: World,
) -> None:
    thread = await world.human("로그인 버그 고쳐줘")
    text = await mention(world, "status", None)
    assert "최근 스레드" in text.splitlines()[0] and f"<{link(thread)}>" in text


async def test_a_bare_mention_gets_the_usage(world: World) -> None:
    thread = await world.human("로그인 버그 고쳐줘")
    assert "사용법" in await mention(world, "", thread)
    rows = await world.storage._all("SELECT text FROM messages")
    assert [r["text"] for r in rows] == ["로그인 버그 고쳐줘"]  # the mention is no room talk


async def test_roles_with_a_plain_name_is_refused_with_a_hint(world: World) -> None:
    reply = await world.command("roles owner:owner-agent reviewer:<@UREVIEWER|rev>",
                                user="UADMIN")
    assert "사용자가 아닙니다" in reply and "`owner-agent`" in reply and "`U…`" in reply
    audit = await world.storage.list_audit("slack", CHANNEL)
    assert [a.action for a in audit] == ["roles"]  # only the binding made by the fixture
    bound = json.loads(audit[0].after or "{}")
    assert bound["owner"] == ["BOWNER"]  # unchanged


async def test_a_shortcut_and_a_mention_are_stored_before_their_acknowledgement(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    """Like a slash command: handed to the core's store (with the delivery id
    that drops a redelivery and the route of the reply) before Slack's 200."""
    import asyncio

    gate = asyncio.Event()

    class SlowStore(RecordingCore):
        async def receive_command(self, request: Any, delivery_id: str, **kwargs: Any) -> Any:
            await gate.wait()
            return await super().receive_command(request, delivery_id, **kwargs)

    core = SlowStore()
    h = await start_harness(core, slack_api, make_settings(slack_api, tmp_path))
    try:
        url = slack_api.response_url()
        shortcut = message_shortcut(user="UADMIN", message_ts="1732870805.000200",
                                    thread_ts="1732870800.000100", response_url=url)
        mention, _ = app_mention("status", user="UALICE", thread_ts="1732870800.000100")
        acks = [asyncio.create_task(h.http(body, settle=False)) for body in (shortcut, mention)]
        await asyncio.sleep(0.2)
        assert not any(a.done() for a in acks)  # not acknowledged before it is stored
        gate.set()
        assert [(await a)[0] for a in acks] == [200, 200]
        await h.settle()
        assert sorted(core.stored_commands) == sorted([
            (f"command:{shortcut['trigger_id']}", {"response_url": url}, True),
            (f"mention:{mention['event_id']}", None, True)])
    finally:
        await h.adapter.stop()

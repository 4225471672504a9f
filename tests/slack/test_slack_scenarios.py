"""End-to-end scenarios in a Slack thread: the real Engine and SqliteStorage
behind the SlackAdapter, Slack deliveries by signed HTTP and Socket Mode,
every Web API call over HTTP to the fake."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.slack.render import SECTION_LIMIT
from bot import buttons
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import CHANNEL, make_settings, message_event
from tests.slack.slack_world import HUMAN, ScriptedBackend, World

PING = re.compile(r"<(!channel|!here|!everyone|!subteam\^[A-Z0-9]+)")


@pytest.fixture
async def world(slack_api: FakeSlackAPI, tmp_path: Path) -> AsyncIterator[World]:
    w = await World.create(slack_api, make_settings(slack_api, tmp_path))
    await w.bind_roles()
    yield w
    await w.close()


def decision_of(message: dict) -> str:
    return json.dumps(message["blocks"], ensure_ascii=False)


async def test_deadlock_verdict_and_button_answer_in_a_thread(world: World) -> None:
    thread, verdict_ts, values = await world.escalate()
    progress = world.thread_posts(thread)[0].args
    assert "중재자" in progress["text"]  # the progress message came first, in the thread
    verdict = world.message(verdict_ts)
    assert verdict["text"].startswith("ESCALATE")  # agents read the keyword on line one
    assert verdict["text"].endswith(f"<@{HUMAN}>")  # the requester is pinged, nobody else
    assert [buttons.decode(v)[1] for v in values] == list(range(1, len(values) + 1))

    await world.click(values[1], user=HUMAN, thread=thread, message_ts=verdict_ts)
    confirmation = world.thread_posts(thread)[-1].args["text"]
    assert confirmation.startswith("✅ 사용자 결정: 2.")
    decided = world.message(verdict_ts)
    assert world.button_values(decided) == []  # buttons replaced by the decision
    assert "2." in decision_of(decided) and HUMAN in decision_of(decided)
    assert world.api.calls_to("chat.postEphemeral") == []


async def test_digit_reply_answers_the_escalation(world: World) -> None:
    thread, verdict_ts, _ = await world.escalate()
    await world.human("１번", thread)  # full-width digit with a Korean suffix
    assert world.thread_posts(thread)[-1].args["text"].startswith("✅ 사용자 결정: 1.")
    assert world.button_values(world.message(verdict_ts)) == []


async def test_out_of_range_digit_is_told_privately_and_stays_pending(world: World) -> None:
    thread, verdict_ts, values = await world.escalate()
    await world.human("9", thread)
    (ephemeral,) = world.api.calls_to("chat.postEphemeral")
    assert ephemeral.args["user"] == HUMAN and "9" in ephemeral.args["text"]
    assert world.button_values(world.message(verdict_ts)) == values


async def test_unauthorized_click_gets_an_ephemeral_error_and_changes_nothing(
    world: World,
) -> None:
    thread, verdict_ts, values = await world.escalate()
    posts_before = len(world.api.calls_to("chat.postMessage"))
    await world.click(values[0], user="UMALLORY", thread=thread, message_ts=verdict_ts)
    (ephemeral,) = world.api.calls_to("chat.postEphemeral")
    assert ephemeral.args["user"] == "UMALLORY" and "권한" in ephemeral.args["text"]
    assert ephemeral.args["thread_ts"] == thread
    assert len(world.api.calls_to("chat.postMessage")) == posts_before
    assert world.button_values(world.message(verdict_ts)) == values
    # the rightful answer still works afterwards
    await world.click(values[0], user=HUMAN, thread=thread, message_ts=verdict_ts, via="socket")
    assert world.thread_posts(thread)[-1].args["text"].startswith("✅ 사용자 결정: 1.")


async def test_double_click_second_is_told_who_decided(world: World) -> None:
    thread, verdict_ts, values = await world.escalate()
    await world.click(values[0], user=HUMAN, thread=thread, message_ts=verdict_ts)
    await world.click(values[1], user=HUMAN, thread=thread, message_ts=verdict_ts)
    confirmations = [c for c in world.thread_posts(thread) if "사용자 결정" in c.args["text"]]
    assert len(confirmations) == 1 and "1." in confirmations[0].args["text"]
    (ephemeral,) = world.api.calls_to("chat.postEphemeral")
    assert "이미 결정" in ephemeral.args["text"] and HUMAN in ephemeral.args["text"]


async def test_buttons_work_after_a_restart(world: World, slack_api: FakeSlackAPI,
                                            tmp_path: Path) -> None:
    thread, verdict_ts, values = await world.escalate()
    await world.close()
    again = await World.create(slack_api, make_settings(slack_api, tmp_path))
    try:
        await again.click(values[0], user=HUMAN, thread=thread, message_ts=verdict_ts)
        assert again.thread_posts(thread)[-1].args["text"].startswith("✅ 사용자 결정: 1.")
    finally:
        await again.close()


async def test_non_admin_threshold_change_is_refused(world: World) -> None:
    reply = await world.command("threshold 3", user="UMALLORY")
    assert "관리자" in reply
    assert await world.storage.get_settings("channel", f"slack:{CHANNEL}") == {}
    usage = await world.command("threshold banana", user="UADMIN", via="socket")
    assert "사용법" in usage or "Usage" in usage
    assert "@tribunal status" in usage  # Slack's own way to name a thread


async def test_admin_threshold_applies_to_the_next_room(world: World) -> None:
    # With the default (2 rounds without progress) two rounds do not deadlock...
    first = await world.human("첫 번째 작업")
    await world.argue(first, rounds=2)
    assert len(world.thread_posts(first)) == 0
    # ...after a workspace admin sets 1, the next room deadlocks after two rounds.
    reply = await world.command("threshold 1", user="UADMIN", via="socket")
    assert "1" in reply and "관리자" not in reply
    second = await world.human("두 번째 작업")
    await world.argue(second, rounds=2)
    assert world.thread_posts(second), "no arbitration in the next room"


async def test_configured_admin_ids_are_admins_too(slack_api: FakeSlackAPI,
                                                   tmp_path: Path) -> None:
    w = await World.create(slack_api, make_settings(slack_api, tmp_path,
                                                     admin_ids="UMALLORY"))
    try:
        reply = await w.command("threshold 4", user="UMALLORY")
        assert "관리자" not in reply and "4" in reply
    finally:
        await w.close()


async def test_retried_and_duplicate_deliveries_are_processed_once(world: World) -> None:
    ts = world.next_ts()
    body = message_event("로그인 버그 고쳐줘", user=HUMAN, ts=ts)
    await world.harness.http(body)
    await world.harness.http(body, retry_num=1)
    await world.harness.socket(body, retry_attempt=2)
    # a restarted process (fresh adapter memory) relies on the core's dedup by message id
    world.harness.adapter.inbound._seen.clear()  # type: ignore[union-attr]
    await world.harness.http(body, retry_num=3)
    await world.engine.drain()  # stored before each ack, applied after it
    rows, _ = await world.storage.human_messages(f"slack:{CHANNEL}:{ts}", 0, 10)
    assert [r.message_id for r in rows] == [f"{CHANNEL}:{ts}"]


async def test_rate_limited_post_is_retried_and_delivered(world: World,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from slack_sdk.http_retry import builtin_async_handlers

    monkeypatch.setattr(builtin_async_handlers.random, "random", lambda: 0.0)
    world.api.rate_limit("chat.postMessage", retry_after=0)
    _, verdict_ts, _ = await world.escalate()
    # progress: the 429, then the retry that succeeded; the verdict is a chat.update
    assert len(world.api.calls_to("chat.postMessage")) == 2
    assert "ESCALATE" in world.message(verdict_ts)["text"]


async def test_not_in_channel_is_logged_and_the_verdict_still_arrives(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    world.api.fail("chat.postMessage", "not_in_channel")  # the progress post is refused
    with caplog.at_level("WARNING"):
        thread = await world.human("로그인 버그 고쳐줘")
        await world.argue(thread, rounds=3)
    assert "not_in_channel" in caplog.text and "invite the bot" in caplog.text
    posts = world.thread_posts(thread)
    assert len(posts) == 2 and posts[1].args["text"].startswith("ESCALATE")
    assert world.api.calls_to("chat.update") == []  # nothing to update: posted anew


async def test_unwatched_channel_and_unbound_bots_are_ignored(world: World) -> None:
    await world.harness.http(message_event("hello", user=HUMAN, channel="COTHER"))
    await world.harness.http(message_event("beep", user=None, bot_id="BRANDOM",
                                           subtype="bot_message"))
    assert await world.storage.latest_room("slack", "COTHER") is None
    rows, _ = await world.storage.human_messages(f"slack:{CHANNEL}:", 0, 10)
    assert rows == []


LONG_VERDICT = "REVISE\n" + "\n".join(
    f"{i}. `auth/login.py` {i}번째 줄의 세션 쿠키 처리를 고치세요. <!channel> 확인 필요합니다."
    for i in range(1, 90)
)


@pytest.mark.parametrize("model_output", [LONG_VERDICT])
async def test_long_model_verdict_is_split_and_cannot_ping(slack_api: FakeSlackAPI,
                                                           tmp_path: Path,
                                                           model_output: str) -> None:
    settings = make_settings(slack_api, tmp_path, arbiter_backend="openai",
                             arbiter_model="scripted-1")
    w = await World.create(slack_api, settings, backend=ScriptedBackend(model_output))
    try:
        await w.bind_roles()
        thread = await w.human("로그인 버그 고쳐줘 @here")
        await w.argue(thread, rounds=3)
        _, verdict = w.verdict(thread)
        sections = [b for b in verdict["blocks"] if b["type"] == "section"]
        assert len(sections) >= 2, "a >3000-char verdict spans several sections"
        assert all(len(b["text"]["text"]) <= SECTION_LIMIT for b in sections)
        assert verdict["text"].startswith("REVISE")
        everything = json.dumps([c.args for c in w.api.calls], ensure_ascii=False)
        assert not PING.search(everything)
        assert "&lt;!channel&gt;" in json.dumps(verdict["blocks"], ensure_ascii=False)
    finally:
        await w.close()

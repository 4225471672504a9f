"""Inbound wiring: signed HTTP and Socket Mode deliveries reach the core once,
with the right translation; bad signatures are refused. The core here is a
recorder; the behaviour with the real engine is in test_slack_scenarios.py."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapters.slack import SlackAdapter, SlackStartError
from adapters.slack.transport import SlackTransport
from bot.config import Settings
from bot.models import (
    AnswerResult,
    ButtonClick,
    CommandReply,
    CommandRequest,
    IncomingMessage,
    RoomKey,
)
from bot.ports import PlatformFatal
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import (
    block_action,
    fixture,
    make_settings,
    message_event,
    signed_headers,
    slash_command,
    start_harness,
)


class RecordingCore:
    """Records what the adapter hands over. Commands are taken as the engine
    takes them (stored, then applied in a task: admin rights asked of the
    transport, the reply sent along the stored route); `settle()` waits."""

    def __init__(self) -> None:
        self.messages: list[IncomingMessage] = []
        self.clicks: list[ButtonClick] = []
        self.click_deliveries: list[str] = []
        self.commands: list[CommandRequest] = []
        self.stored_commands: list[tuple[str, dict[str, str] | None, bool]] = []
        self.transport: SlackTransport | None = None
        self._work: set[asyncio.Task[None]] = set()

    async def receive(self, message: IncomingMessage) -> None:
        await self.on_message(message)

    async def on_message(self, message: IncomingMessage) -> None:
        self.messages.append(message)

    async def receive_click(self, click: ButtonClick, delivery_id: str) -> None:
        self.clicks.append(click)
        self.click_deliveries.append(delivery_id)

    async def on_button(self, click: ButtonClick) -> AnswerResult:
        self.clicks.append(click)
        return AnswerResult(accepted=False, private_text="이 결정에 답할 권한이 없습니다 <!here>")

    async def on_command(self, request: CommandRequest) -> CommandReply:
        self.commands.append(request)
        return CommandReply(text="임계값 <!channel> ok", ok=True)

    async def receive_command(self, request: CommandRequest, delivery_id: str, *,
                              route: dict[str, str] | None = None,
                              ask_admin: bool = False) -> asyncio.Task[None]:
        self.stored_commands.append((delivery_id, route, ask_admin))
        task = asyncio.create_task(self._apply(request, route, ask_admin))
        self._work.add(task)
        task.add_done_callback(self._work.discard)
        return task

    async def _apply(self, request: CommandRequest, route: dict[str, str] | None,
                     ask_admin: bool) -> None:
        assert self.transport is not None
        if ask_admin:
            request.is_platform_admin = await self.transport.is_platform_admin(request.user_id)
        reply = await self.on_command(request)
        room = RoomKey("slack", request.channel, request.thread)
        if route:
            await self.transport.post_reply(room, request.user_id, reply.text, route)
        else:
            await self.transport.post_private(room, request.user_id, reply.text)

    async def settle(self) -> None:
        while self._work:
            await asyncio.gather(*list(self._work))

    async def tick(self) -> None:
        return None


@pytest.fixture
async def harness(slack_api: FakeSlackAPI, tmp_path: Path) -> Any:
    core = RecordingCore()
    h = await start_harness(core, slack_api, make_settings(slack_api, tmp_path))
    core.transport = h.adapter.transport
    h.core = core  # type: ignore[attr-defined]
    yield h
    await h.adapter.stop()


async def test_signed_event_reaches_the_core(harness: Any) -> None:
    status, _ = await harness.http(fixture("event_message_bot"))
    assert status == 200
    (msg,) = harness.core.messages
    assert (msg.channel, msg.thread, msg.author_id) == ("C0WATCH", "1732870800.000100", "BOWNER")


@pytest.mark.parametrize("how", ["bad_secret", "stale_timestamp"])
async def test_bad_signature_is_refused_and_nothing_processed(harness: Any, how: str) -> None:
    kwargs = {"secret": "wrong-secret"} if how == "bad_secret" else {
        "timestamp": int(time.time()) - 3600}
    before = len(harness.api.calls)
    status, _ = await harness.http(message_event("hello"), **kwargs)
    status2, _ = await harness.http(slash_command("threshold 3", user="UADMIN",
                                                  response_url=harness.api.response_url()),
                                    **kwargs)
    assert (status, status2) == (401, 401)
    assert harness.core.messages == [] and harness.core.commands == []
    assert len(harness.api.calls) == before  # not even auth.test / users.info


async def test_http_retry_of_the_same_event_is_processed_once(harness: Any) -> None:
    body = message_event("NEEDS_CONTEXT: which branch?", user="UREVIEWER")
    assert (await harness.http(body))[0] == 200
    assert (await harness.http(body, retry_num=1))[0] == 200
    assert (await harness.http(body, retry_num=2))[0] == 200
    assert len(harness.core.messages) == 1


async def test_socket_mode_event_is_acked_and_processed_once(harness: Any) -> None:
    body = message_event("STEP_DONE", user="UOWNER", thread_ts="1732870800.000100")
    ack = await harness.socket(body)
    await harness.socket(body, retry_attempt=1)
    assert ack.payload is None or ack.payload == {}
    assert len(harness.core.messages) == 1
    assert harness.core.messages[0].thread == "1732870800.000100"


async def test_own_messages_and_edits_never_reach_the_core(harness: Any) -> None:
    await harness.http(message_event("our verdict", user="UBOT", bot_id="BBOT"))
    await harness.http(fixture("event_message_changed"))
    await harness.http(fixture("event_message_deleted"))
    assert harness.core.messages == []


async def test_malformed_signed_payloads_do_not_break_the_endpoint(harness: Any) -> None:
    for raw, ctype in [("{not json", "application/json"),
                       ("payload=%7Bbroken", "application/x-www-form-urlencoded"),
                       ('{"type": "event_callback", "event": {"type": "message"}}',
                        "application/json")]:
        headers = signed_headers(raw, ctype)
        async with aiohttp.ClientSession() as session, session.post(
            harness.events_url, data=raw.encode(), headers=headers
        ) as response:
            assert response.status < 500
    await harness.settle()
    assert harness.core.messages == []
    assert (await harness.http(message_event("still alive")))[0] == 200
    assert [m.text for m in harness.core.messages] == ["still alive"]


async def test_url_verification_challenge(harness: Any) -> None:
    body = {"token": "x", "challenge": "c-123", "type": "url_verification"}
    status, text = await harness.http(body)
    assert status == 200 and "c-123" in text


async def test_slash_command_acks_then_replies_ephemerally(harness: Any) -> None:
    url = harness.api.response_url()
    status, text = await harness.http(slash_command("roles owner:<@UOWNER|o> reviewer:<@UREV>",
                                                    user="UADMIN", response_url=url))
    assert status == 200 and text == ""
    (request,) = harness.core.commands
    assert request.is_platform_admin and request.text == "roles owner:UOWNER reviewer:UREV"
    (reply,) = harness.api.responses
    assert reply["response_type"] == "ephemeral"
    assert "<!channel>" not in reply["text"] and "임계값" in reply["text"]
    assert harness.api.calls_to("users.info")[0].args["user"] == "UADMIN"


async def test_ack_does_not_wait_for_the_core(slack_api: FakeSlackAPI, tmp_path: Path) -> None:
    """Slack wants the ack within 3 s; the core's work (maybe an LLM call) runs after."""
    gate = asyncio.Event()

    class SlowCore(RecordingCore):
        async def on_command(self, request: CommandRequest) -> CommandReply:
            await gate.wait()
            return await super().on_command(request)

    core = SlowCore()
    h = await start_harness(core, slack_api, make_settings(slack_api, tmp_path))
    core.transport = h.adapter.transport
    try:
        status, _ = await h.http(slash_command("summon", user="UALICE",
                                               response_url=slack_api.response_url()),
                                 settle=False)
        assert status == 200 and core.commands == [] and slack_api.responses == []
        gate.set()
        await h.settle()
        assert len(core.commands) == 1 and len(slack_api.responses) == 1
    finally:
        await h.adapter.stop()


async def test_slash_command_is_stored_before_the_ack_on_both_paths(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    """A slash command reaches the core's `receive_command` (the store) before
    Slack's 200 or the Socket Mode ack goes out; users.info is left to the core
    (ask_admin), so a slow users.info never holds up the 3 seconds."""
    gate = asyncio.Event()
    started: list[str] = []

    class SlowStore(RecordingCore):
        async def receive_command(self, request: CommandRequest, delivery_id: str, *,
                                  route: dict[str, str] | None = None,
                                  ask_admin: bool = False) -> asyncio.Task[None]:
            started.append(request.text)
            await gate.wait()
            return await super().receive_command(request, delivery_id, route=route,
                                                 ask_admin=ask_admin)

    core = SlowStore()
    h = await start_harness(core, slack_api, make_settings(slack_api, tmp_path))
    core.transport = h.adapter.transport
    try:
        url = slack_api.response_url()
        over_http = slash_command("threshold 4", user="UADMIN", response_url=url)
        over_socket = slash_command("max-rounds 9", user="UADMIN", response_url=url)
        http = asyncio.create_task(h.http(over_http, settle=False))
        socket = asyncio.create_task(h.socket(over_socket, settle=False))
        await slack_api.until(lambda: len(started) == 2)
        await asyncio.sleep(0.05)
        assert not http.done() and not socket.done()  # not acknowledged before it is stored
        assert h.acks.responses == [] and not slack_api.calls_to("users.info")
        gate.set()
        assert (await http)[0] == 200
        await socket
        assert len(h.acks.responses) == 1
        await h.settle()
        assert sorted(core.stored_commands) == sorted([
            (f"command:{over_http['trigger_id']}", {"response_url": url}, True),
            (f"command:{over_socket['trigger_id']}", {"response_url": url}, True)])
        assert all(c.is_platform_admin for c in core.commands)  # asked by the core
        assert len(slack_api.responses) == 2
    finally:
        await h.adapter.stop()


async def test_messages_are_stored_before_the_ack_and_never_held_back(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    """Each message reaches the core's `receive` (the store) before Slack gets
    its acknowledgement, in delivery order; a delivery whose store is slow holds
    up only its own acknowledgement, never the others' (the core orders each
    room from storage: tests/engine)."""
    gate = asyncio.Event()
    started: list[str] = []

    class SlowFirst(RecordingCore):
        async def receive(self, message: IncomingMessage) -> None:
            started.append(message.text)
            if message.text == "first":
                await gate.wait()
            await super().receive(message)

    core = SlowFirst()
    h = await start_harness(core, slack_api, make_settings(slack_api, tmp_path))
    try:
        thread = "1732870800.000100"
        first = asyncio.create_task(h.http(message_event("first", thread_ts=thread),
                                           settle=False))
        await slack_api.until(lambda: started == ["first"])
        await h.socket(message_event("second", thread_ts=thread), settle=False)
        await h.http(message_event("elsewhere"), settle=False)  # another room is not held up
        assert sorted(m.text for m in core.messages) == ["elsewhere", "second"]
        assert started == ["first", "second", "elsewhere"]
        assert not first.done()  # not acknowledged before it is stored
        gate.set()
        status, _ = await first
        assert status == 200
        assert sorted(m.text for m in core.messages) == ["elsewhere", "first", "second"]
    finally:
        await h.adapter.stop()


async def test_slash_command_from_a_member_is_not_admin(harness: Any) -> None:
    await harness.socket(slash_command("threshold 3", user="UMALLORY",
                                       response_url=harness.api.response_url()))
    assert harness.core.commands[0].is_platform_admin is False


async def test_expired_response_url_falls_back_to_post_ephemeral(harness: Any) -> None:
    dead = f"http://127.0.0.1:{harness.api.port}/nowhere"
    await harness.http(slash_command("status", user="UALICE", response_url=dead))
    assert harness.api.calls_to("chat.postEphemeral")[0].args["user"] == "UALICE"


async def test_button_click_is_stored_by_the_core_before_the_ack(harness: Any) -> None:
    # Behaviour changed by design: the click is handed to the core (stored)
    # before Slack's 200, and a refusal reaches the clicker from the core's
    # outbox (tests/slack/test_slack_scenarios.py), no longer from the adapter.
    body = block_action("tribunal:esc:7:2", user="UMALLORY", thread_ts="1732870800.000100",
                        message_ts="1700000000.000009", response_url=harness.api.response_url())
    status, _ = await harness.http(body)
    assert status == 200
    (click,) = harness.core.clicks
    assert (click.escalation_id, click.option, click.user_id) == (7, 2, "UMALLORY")
    assert harness.core.click_deliveries == [f"trigger:{body['trigger_id']}"]
    assert not harness.api.calls_to("chat.postEphemeral")


async def test_live_socket_mode_connection(slack_api: FakeSlackAPI, tmp_path: Path) -> None:
    core = RecordingCore()
    adapter = SlackAdapter(make_settings(slack_api, tmp_path, slack_mode="socket"), core,
                           post_interval=0)
    await adapter.start()
    try:
        assert slack_api.calls_to("apps.connections.open")
        envelope = await slack_api.push("events_api", message_event("hi from socket"))
        await slack_api.until(lambda: core.messages and slack_api.acks)
        assert core.messages[0].text == "hi from socket"
        assert any(a.get("envelope_id") == envelope for a in slack_api.acks)
    finally:
        await adapter.stop()


async def test_refused_token_fails_start_clearly(slack_api: FakeSlackAPI, tmp_path: Path) -> None:
    settings = make_settings(slack_api, tmp_path, slack_bot_token="xoxb-revoked")
    with pytest.raises(SlackStartError) as err:
        await SlackAdapter(settings, RecordingCore()).start()
    assert "invalid_auth" in str(err.value) and "xoxb-revoked" not in str(err.value)


def test_fixtures_are_valid_json() -> None:
    for name in ("event_message_user", "block_actions", "slash_command"):
        assert json.dumps(fixture(name))


async def test_refused_app_token_fails_start_clearly(slack_api: FakeSlackAPI,
                                                     tmp_path: Path) -> None:
    settings = make_settings(slack_api, tmp_path, slack_mode="socket",
                             slack_app_token="xapp-revoked")
    adapter = SlackAdapter(settings, RecordingCore())
    with pytest.raises(SlackStartError) as err:
        await adapter.start()
    await adapter.stop()
    assert "SLACK_APP_TOKEN (invalid_auth)" in str(err.value)
    assert "xapp-revoked" not in str(err.value)


async def test_an_unreachable_api_is_worth_retrying_not_fatal(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/api/"
    settings = Settings(_env_file=None, database=str(tmp_path / "t.db"),  # type: ignore[call-arg]
                        slack_bot_token="xoxb-1", slack_signing_secret="s", slack_mode="http",
                        slack_api_url=url)
    adapter = SlackAdapter(settings, RecordingCore())
    with pytest.raises(Exception) as err:
        await adapter.start()
    await adapter.stop()
    assert not isinstance(err.value, PlatformFatal)

"""Shared fixtures for the Slack adapter tests: the fake Web API, payload
builders from the recorded-style JSON fixtures, and the two ways Slack delivers
requests (signed HTTP, Socket Mode envelopes)."""

from __future__ import annotations

import copy
import itertools
import json
import logging
import sys
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app, send_async_response
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `tests` is not a package; make tests.fakes importable
    sys.path.insert(0, str(ROOT))

from adapters.slack import SlackAdapter  # noqa: E402
from adapters.slack.transport import SlackPacer  # noqa: E402
from bot.config import Settings  # noqa: E402
from tests.fakes.slack_api import SLACK_LIMITS, FakeSlackAPI, VirtualTime  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
SIGNING_SECRET = "test-signing-secret"
CHANNEL = "C0WATCH"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


_counter = iter(range(1, 10**6))


def message_event(text: str, *, user: str | None = "UALICE", bot_id: str | None = None,
                  thread_ts: str | None = None, ts: str | None = None,
                  channel: str = CHANNEL, subtype: str | None = None,
                  event_id: str | None = None) -> dict[str, Any]:
    """An Events API `event_callback` for one message, based on the recorded fixture."""
    n = next(_counter)
    body = fixture("event_message_user")
    event = body["event"]
    event.pop("blocks", None)
    event.pop("client_msg_id", None)
    event.update(text=text, channel=channel, ts=ts or f"1732870{n:03d}.{n:06d}")
    event["event_ts"] = event["ts"]
    if user is None:
        event.pop("user", None)
    else:
        event["user"] = user
    if bot_id:
        event["bot_id"] = bot_id
    if subtype:
        event["subtype"] = subtype
    if thread_ts:
        event["thread_ts"] = thread_ts
    body["event_id"] = event_id or f"Ev{n:010d}"
    return body


_TRIGGERS = itertools.count(1111111111)


def block_action(value: str, *, user: str, thread_ts: str, message_ts: str,
                 response_url: str, channel: str = CHANNEL) -> dict[str, Any]:
    body = fixture("block_actions")
    body["trigger_id"] = f"{next(_TRIGGERS)}.2222222222.abcdef"  # one per interaction
    body["user"].update(id=user, username=user.lower(), name=user.lower())
    body["container"].update(message_ts=message_ts, thread_ts=thread_ts, channel_id=channel)
    body["channel"]["id"] = channel
    body["message"].update(ts=message_ts, thread_ts=thread_ts)
    body["actions"][0].update(action_id=value, value=value)
    body["response_url"] = response_url
    return body


def slash_command(text: str, *, user: str, response_url: str,
                  channel: str = CHANNEL) -> dict[str, Any]:
    body = fixture("slash_command")
    body.update(text=text, user_id=user, user_name=user.lower(), channel_id=channel,
                response_url=response_url,
                trigger_id=f"{next(_TRIGGERS)}.3333333333.abcdef")  # one per invocation
    return body


def message_shortcut(*, user: str, message_ts: str, thread_ts: str | None,
                     response_url: str, channel: str = CHANNEL,
                     callback_id: str = "tribunal_arbitrate") -> dict[str, Any]:
    """The message shortcut "Arbitrate this thread" used on one message
    (`thread_ts` None: a top-level message with no thread yet)."""
    body = fixture("message_action")
    body["trigger_id"] = f"{next(_TRIGGERS)}.2222222222.abcdef"
    body.update(callback_id=callback_id, message_ts=message_ts, response_url=response_url)
    body["user"].update(id=user, username=user.lower(), name=user.lower())
    body["channel"]["id"] = channel
    body["message"]["ts"] = message_ts
    if thread_ts is None:
        body["message"].pop("thread_ts", None)
        body["message"].pop("parent_user_id", None)
    else:
        body["message"]["thread_ts"] = thread_ts
    return body


def app_mention(text: str, *, user: str, thread_ts: str | None, ts: str | None = None,
                channel: str = CHANNEL, bot_user: str = "UBOT"
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """`@tribunal <text>` as Slack delivers it: the `app_mention` event and the
    `message` event of the same message (two deliveries, two event ids)."""
    n = next(_counter)
    ts = ts or f"1732871{n:03d}.{n:06d}"
    mention = fixture("event_app_mention")
    event = mention["event"]
    event.update(user=user, text=f"<@{bot_user}> {text}".rstrip(), ts=ts, event_ts=ts,
                 channel=channel)
    event["blocks"][0]["elements"][0]["elements"] = [
        {"type": "user", "user_id": bot_user}, {"type": "text", "text": f" {text}"}]
    if thread_ts is None:
        event.pop("thread_ts", None)
        event.pop("parent_user_id", None)
    else:
        event["thread_ts"] = thread_ts
    mention["event_id"] = f"EvM{n:09d}"
    message = message_event(event["text"], user=user, thread_ts=thread_ts, ts=ts,
                            channel=channel)
    return mention, message


def encode_body(body: dict[str, Any]) -> tuple[str, str]:
    """(raw body, content type) exactly as Slack sends each kind of request."""
    if body.get("type") in ("event_callback", "url_verification"):
        return json.dumps(body), "application/json"
    if body.get("type") in ("block_actions", "message_action", "shortcut"):
        return urlencode({"payload": json.dumps(body)}), "application/x-www-form-urlencoded"
    return urlencode(body), "application/x-www-form-urlencoded"


def signed_headers(raw: str, content_type: str, *, secret: str = SIGNING_SECRET,
                   timestamp: int | None = None, retry_num: int | None = None) -> dict[str, str]:
    ts = str(timestamp if timestamp is not None else int(time.time()))
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": SignatureVerifier(secret).generate_signature(
            timestamp=ts, body=raw),
    }
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return headers


def socket_request(body: dict[str, Any], *, retry_attempt: int | None = None
                   ) -> SocketModeRequest:
    """The envelope Socket Mode would deliver for the same payload."""
    kind = {"event_callback": "events_api", "block_actions": "interactive",
            "message_action": "interactive"}.get(str(body.get("type")), "slash_commands")
    return SocketModeRequest(type=kind, envelope_id=f"env-{next(_counter)}",
                             payload=copy.deepcopy(body), retry_attempt=retry_attempt,
                             retry_reason="timeout" if retry_attempt else None)


@pytest.fixture
async def slack_api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlackAPI]:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    # Slack's rate limits are enforced on virtual time, which the adapter's
    # pacer (start_harness) sleeps on: pacing is checked without real waits.
    async with FakeSlackAPI(limits=SLACK_LIMITS, virtual_time=VirtualTime()) as api:
        api.add_user("UALICE", name="alice")
        api.add_user("UMALLORY", name="mallory")
        api.add_user("UADMIN", name="boss", admin=True)
        yield api
        # Every test ran at Slack's pace: the fake never had to refuse a call.
        assert not api.rate_limited_by, f"over Slack's limits: {dict(api.rate_limited_by)}"


class AckRecorder:
    """Stands in for the Socket Mode client: records the acks bolt sends back."""

    def __init__(self) -> None:
        self.logger = logging.getLogger("tests.slack.socket")
        self.responses: list[SocketModeResponse] = []

    async def send_socket_mode_response(self, response: SocketModeResponse) -> None:
        self.responses.append(response)


class Harness:
    """A started SlackAdapter plus the two delivery paths Slack uses."""

    def __init__(self, adapter: SlackAdapter, api: FakeSlackAPI) -> None:
        self.adapter = adapter
        self.api = api
        self.acks = AckRecorder()

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.adapter.port}/slack/events"

    async def http(self, body: dict[str, Any], *, retry_num: int | None = None,
                   secret: str = SIGNING_SECRET, timestamp: int | None = None,
                   settle: bool = True) -> tuple[int, str]:
        raw, content_type = encode_body(body)
        return await self.http_raw(raw, content_type, retry_num=retry_num, secret=secret,
                                   timestamp=timestamp, settle=settle)

    async def http_raw(self, raw: str, content_type: str = "application/json", *,
                       retry_num: int | None = None, secret: str = SIGNING_SECRET,
                       timestamp: int | None = None, settle: bool = True) -> tuple[int, str]:
        """POST a body exactly as given (any bytes Slack might send), correctly signed."""
        headers = signed_headers(raw, content_type, secret=secret, timestamp=timestamp,
                                 retry_num=retry_num)
        async with aiohttp.ClientSession() as session, session.post(
            self.events_url, data=raw.encode(), headers=headers
        ) as response:
            result = response.status, await response.text()
        if settle:
            await self.settle()
        return result

    async def socket(self, body: dict[str, Any], *, retry_attempt: int | None = None,
                     settle: bool = True) -> SocketModeResponse:
        """Feed one envelope through bolt exactly as AsyncSocketModeHandler.handle does."""
        assert self.adapter.app is not None
        request = socket_request(body, retry_attempt=retry_attempt)
        response = await run_async_bolt_app(self.adapter.app, request)
        await send_async_response(self.acks, request, response, time.time())  # type: ignore[arg-type]
        if settle:
            await self.settle()
        ack = self.acks.responses[-1]
        assert ack.envelope_id == request.envelope_id
        return ack

    async def settle(self) -> None:
        assert self.adapter.inbound is not None
        await self.adapter.inbound.drain()
        # A stand-in core's own work after the ack (tests/slack/test_slack_app.py);
        # the real engine's is waited for by the scenario world (engine.drain).
        settle = getattr(self.adapter.engine, "settle", None)
        if settle is not None:
            await settle()


def make_settings(api: FakeSlackAPI, tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database": str(tmp_path / "tribunal.db"),
        "slack_bot_token": api.bot_token,
        "slack_app_token": api.app_token,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_mode": "http",
        "slack_api_url": api.url,
        "arbiter_backend": "none",
        "language": "ko",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


_PACERS: weakref.WeakKeyDictionary[FakeSlackAPI, SlackPacer] = weakref.WeakKeyDictionary()


def virtual_pacer(api: FakeSlackAPI) -> SlackPacer:
    """The adapter's real pacing (Slack's documented limits) on the fake's clock.

    One per fake workspace: a bot restarted within a test goes on at the pace
    the old one left (in life the restart itself outlasts Slack's windows).
    """
    if api.time is None:
        return SlackPacer(post_interval=0, limits={})  # a fake that limits nothing
    pacer = _PACERS.get(api)
    if pacer is None:
        pacer = _PACERS[api] = SlackPacer(clock=api.time.now, sleep=api.time.sleep)
    return pacer


async def start_harness(core: Any, api: FakeSlackAPI, settings: Settings) -> Harness:
    # port=0: any free port (TRIBUNAL_HTTP_PORT itself must be 1..65535).
    adapter = SlackAdapter(settings, core, post_interval=0, host="127.0.0.1", port=0)
    adapter.transport.pacer = virtual_pacer(api)
    if hasattr(core, "transport") and core.transport is None:
        core.transport = adapter.transport  # a stand-in core replies through it
    await adapter.start()
    return Harness(adapter, api)

"""Correctly signed but malformed bodies: 400 (or 200) and one log line, never a
500 with a traceback, and nothing reaches the core. Real signed requests to
the HTTP endpoint."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from aiohttp import web

from adapters.slack.app import dispatch_http
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import Harness, make_settings, message_event, signed_headers
from tests.slack.conftest import start_harness as start
from tests.slack.test_slack_app import RecordingCore

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
MESSAGE = {"type": "message", "channel": "C0WATCH", "ts": "1732870800.000100", "user": "UALICE",
           "text": "hi"}


def event(**fields: str) -> str:
    """An event_callback of MESSAGE with these fields set to these raw JSON values."""
    body = {**MESSAGE, **{name: json.loads(raw) for name, raw in fields.items()}}
    return json.dumps({"type": "event_callback", "event_id": "Ev1", "event": body})


def action(payload: str) -> str:
    return "payload=" + quote(payload)


# (raw body, content type, whether bolt already fails while building its request)
CASES: list[tuple[str, str, bool]] = [
    ("[1,2,3]", JSON, True),
    ("null", JSON, True),
    ('"text"', JSON, True),
    ("42", JSON, True),
    ("{not json", JSON, False),
    ("", JSON, False),
    ("{}", JSON, False),
    ('{"type": "event_callback", "event": null}', JSON, False),
    ('{"type": "event_callback", "event": []}', JSON, False),
    ('{"type": "event_callback", "event": "message"}', JSON, False),
    ('{"type": "event_callback"}', JSON, False),
    (event(channel="42"), JSON, True),
    (event(channel="null"), JSON, False),
    (event(ts="1732870800.1"), JSON, False),
    (event(user='["UALICE"]'), JSON, False),
    (event(subtype="[1]"), JSON, False),
    (event(subtype="{}"), JSON, False),
    ('{"type": "event_callback", "event": {"type": "message"}}', JSON, False),
    (action("[1,2]"), FORM, True),
    (action("null"), FORM, True),
    (action('{"type": "block_actions", "actions": null, "user": null}'), FORM, False),
    (action('{"type": "block_actions", "actions": [{"action_id": "tribunal:esc:1:1",'
            ' "value": 5}], "user": "U", "channel": 3}'), FORM, True),
    (action('{"type": "block_actions", "actions": [{"action_id": "tribunal:esc:1:1",'
            ' "value": "tribunal:esc:1:1"}], "user": {"id": "U"}, "channel": "C",'
            ' "container": 7, "message": 5}'), FORM, False),
    ("command=/arbiter", FORM, False),
    ("command=/arbiter&text=status", FORM, False),
]


class Served:
    """The adapter's own endpoint, or the same bolt app behind `dispatch_http`."""

    def __init__(self, harness: Harness, url: str) -> None:
        self.harness = harness
        self.url = url

    async def post(self, raw: str, content_type: str) -> tuple[int, str]:
        headers = signed_headers(raw, content_type)
        async with aiohttp.ClientSession() as session, session.post(
            self.url, data=raw.encode(), headers=headers
        ) as response:
            result = response.status, await response.text()
        await self.harness.settle()
        return result


@pytest.fixture
async def core() -> RecordingCore:
    return RecordingCore()


@pytest.fixture
async def harness(slack_api: FakeSlackAPI, tmp_path: Path,
                  core: RecordingCore) -> AsyncIterator[Harness]:
    h = await start(core, slack_api, make_settings(slack_api, tmp_path))
    yield h
    await h.adapter.stop()


@pytest.fixture(params=["adapter", "dispatch_http"])
async def served(request: pytest.FixtureRequest, harness: Harness) -> AsyncIterator[Served]:
    if request.param == "adapter":
        yield Served(harness, harness.events_url)
        return
    app = harness.adapter.app
    assert app is not None

    async def events(req: web.Request) -> web.StreamResponse:
        return await dispatch_http(app, req)

    web_app = web.Application()
    web_app.router.add_post("/slack/events", events)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield Served(harness, f"http://127.0.0.1:{port}/slack/events")
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(("raw", "content_type", "fails_in_bolt_request"), CASES)
async def test_malformed_signed_body_gets_a_clean_answer(
    request: pytest.FixtureRequest, served: Served, core: RecordingCore,
    caplog: pytest.LogCaptureFixture, raw: str, content_type: str,
    fails_in_bolt_request: bool,
) -> None:
    caplog.set_level(logging.DEBUG)
    status, _ = await served.post(raw, content_type)
    assert status in (200, 400)
    assert [r for r in caplog.records if r.exc_info] == []  # no traceback anywhere
    said = [r for r in caplog.records if r.name.startswith("tribunal.slack")
            and r.levelno >= logging.INFO]
    assert said, "a malformed body is worth a log line"
    assert core.messages == [] and core.clicks == [] and core.commands == []
    # The endpoint still works afterwards.
    good = message_event("still here")
    assert (await served.post(json.dumps(good), JSON))[0] == 200
    assert [m.text for m in core.messages] == ["still here"]


async def test_optional_fields_of_the_wrong_type_are_left_out(
    served: Served, core: RecordingCore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    raw = event(text="5", blocks='"x"', attachments="[1]", thread_ts="7",
                user_profile='"x"', bot_profile="[]", app_id="{}")
    status, _ = await served.post(raw, JSON)
    assert status == 200 and [r for r in caplog.records if r.exc_info] == []
    (message,) = core.messages  # the message itself is usable: it is not lost
    assert (message.text, message.thread, message.author_id) == ("", "1732870800.000100",
                                                                 "UALICE")
    assert message.author_name is None and message.author_alt_ids == []


async def test_a_well_formed_event_we_do_not_listen_for_is_acknowledged(
    served: Served, core: RecordingCore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    # (app_mention was the example until the bot took commands by mention.)
    raw = ('{"type": "event_callback", "event_id": "Ev9", "event": {"type": "reaction_added",'
           ' "user": "UALICE", "reaction": "eyes", "item": {"type": "message",'
           ' "channel": "C0WATCH", "ts": "1.2"}, "event_ts": "1.3"}}')
    status, _ = await served.post(raw, JSON)
    assert status == 200  # a 404 would make Slack retry, and count it as a failure
    assert any("no listener" in r.getMessage() for r in caplog.records)
    assert core.messages == []


async def test_unsigned_garbage_is_still_refused_before_anything(
    served: Served, core: RecordingCore
) -> None:
    raw = '{"type": "event_callback", "event": null}'
    headers = signed_headers(raw, JSON, secret="wrong")
    async with aiohttp.ClientSession() as session, session.post(
        served.url, data=raw.encode(), headers=headers
    ) as response:
        assert response.status == 401
    assert core.messages == []


def test_cases_are_what_they_say() -> None:
    for raw, content_type, _ in CASES:
        if content_type == JSON and raw not in ("{not json", ""):
            json.loads(raw)  # malformed for Slack, but valid JSON: the hard case
    assert json.loads(event(channel="42"))["event"]["channel"] == 42

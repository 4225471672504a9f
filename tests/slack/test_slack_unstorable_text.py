"""Text UTF-8 cannot carry (lone surrogates, NUL), from Slack or from the model,
is stored repaired and judged: nothing acknowledged is lost, no arbitration
stays `running`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.llm_servers import FakeLLMServer
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import make_settings, message_event
from tests.slack.slack_world import OWNER_SAYS, REVIEWER_SAYS, World

REVISE = "REVISE 리뷰어가 맞습니다. `auth/login.py` 42번째 줄의 세션 쿠키 처리를 고치세요."


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer() as server:
        yield server


async def test_http_event_with_a_lone_surrogate_is_stored_repaired_and_judged(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    w = await World.create(slack_api, make_settings(slack_api, tmp_path))
    try:
        await w.bind_roles()
        thread = await w.human("로그인 버그 고쳐줘")
        body = message_event("x", user=None, bot_id="BOWNER", subtype="bot_message",
                             thread_ts=thread, ts=w.next_ts())
        body["event"]["username"] = "owner-agent"
        # What Slack sends: valid JSON whose string escapes decode to text
        # UTF-8 cannot carry.
        raw = json.dumps(body).replace('"text": "x"', '"text": "' + OWNER_SAYS
                                       + ' \\ud800 \\u0000"')
        assert "\\ud800" in raw
        status, _ = await w.harness.http_raw(raw)
        assert status == 200
        await w.reviewer(REVIEWER_SAYS, thread)
        await w.argue(thread, rounds=2)
        rows = await w.storage._all("SELECT text FROM messages WHERE role = 'owner' ORDER BY seq")
        assert rows[0]["text"] == OWNER_SAYS + " \ufffd \ufffd"
        _, verdict = w.verdict(thread)
        assert verdict["text"].startswith("ESCALATE")  # judged (the `none` backend escalates)
        done = await w.storage._all("SELECT status FROM arbitrations")
        assert done and {r["status"] for r in done} == {"done"}
    finally:
        await w.close()


async def test_a_model_answering_with_a_lone_surrogate_still_gets_its_verdict_posted(
    slack_api: FakeSlackAPI, tmp_path: Path, llm: FakeLLMServer
) -> None:
    llm.reply(REVISE + " \ud800")  # the fake's JSON carries it as "\ud800"
    settings = make_settings(slack_api, tmp_path, arbiter_backend="openai",
                             arbiter_base_url=llm.openai_base_url, arbiter_model="fake-model",
                             arbiter_api_key="sk-test", arbiter_retries=0)
    w = await World.create(slack_api, settings)
    try:
        await w.bind_roles()
        thread = await w.human("로그인 버그 고쳐줘")
        await w.argue(thread, rounds=3)
        assert len(llm.requests) == 1
        _, verdict = w.verdict(thread)
        assert verdict["text"].startswith("REVISE") and verdict["text"].endswith("\ufffd")
        rows = await w.storage._all("SELECT status, verdict, raw_output FROM arbitrations")
        assert [(r["status"], r["verdict"]) for r in rows] == [("done", "REVISE")]
        assert rows[0]["raw_output"] == REVISE + " \ufffd"
        # Recovery has nothing to redo: the model is not asked again.
        await w.quiet(60)
        assert len(llm.requests) == 1
    finally:
        await w.close()

"""Exactly once across a SIGKILL: `tribunal run` dies between Slack accepting a
post and the outbox recording it (TRIBUNAL_FAULT, bot/faults.py); the next
start finds the post by the idempotency key in its message metadata and does
not post it again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import message_event, slash_command
from tests.slack.test_slack_crash_run import Run, rows
from tests.slack.test_slack_e2e_run import wait_until

THREAD = "1795946400.000100"
CONFIRMATION = "✅ 사용자 결정: 1."


@pytest.fixture
async def api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlackAPI]:
    # No rate limits here: each restart is a new process whose pacer cannot
    # know when the one before last posted (pacing has its own tests).
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with FakeSlackAPI() as fake:
        fake.add_user("UADMIN", name="boss", admin=True)
        yield fake


async def died(run: Run) -> None:
    """The process killed itself at its fault point."""
    assert run.proc is not None and run.http is not None
    await asyncio.wait_for(run.proc.wait(), 30)
    await run.http.close()


async def say(run: Run, api: FakeSlackAPI, text: str, **fields: Any) -> None:
    """A message posted in Slack (kept by the fake, as Slack keeps it) and its event."""
    body = message_event(text, **fields)
    api.add_message(body["event"]["channel"], body["event"])
    assert await run.send(body) == 200


async def escalate(run: Run, api: FakeSlackAPI) -> None:
    """Bind the agents and bring a room to ESCALATE (buttons posted)."""
    assert await run.send(slash_command(
        "roles owner:BOWNER reviewer:<@UREVIEWER|rev>", user="UADMIN",
        response_url=api.response_url())) == 200

    async def bound() -> bool:
        return bool(api.responses)

    await wait_until(bound, "the /arbiter reply")
    await say(run, api, "로그인 버그 고쳐줘", ts=THREAD)
    await say(run, api, "BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다.", user=None,
              bot_id="BOWNER", subtype="bot_message", thread_ts=THREAD, ts="1795946401.000200")
    await say(run, api, "접속 정보 없이도 목(mock)으로 테스트할 수 있습니다.", user="UREVIEWER",
              bot_id="BREVIEW", thread_ts=THREAD, ts="1795946402.000300")

    async def escalated() -> bool:
        return any(m.get("thread_ts") == THREAD and any(
            b["type"] == "actions" for b in m.get("blocks", []))
            for m in api.messages.values())

    await wait_until(escalated, "the ESCALATE verdict with buttons")


def confirmations(api: FakeSlackAPI) -> list[str]:
    return [m["ts"] for m in api.messages.values()
            if m.get("thread_ts") == THREAD and m.get("text", "").startswith(CONFIRMATION)]


@pytest.mark.parametrize("fault", ["after_post_before_record", "before_post", "after_record"])
async def test_a_crash_while_the_confirmation_is_posted_shows_it_once(
    api: FakeSlackAPI, tmp_path: Path, fault: str
) -> None:
    database = tmp_path / "run.db"
    run = Run(api, database, tmp_path)
    await run.start()
    try:
        await escalate(run, api)
    finally:
        await run.kill()

    # The digit's confirmation is the new process's first post: it dies there.
    run = Run(api, database, tmp_path)
    await run.start(fault=f"{fault}:1")
    await say(run, api, "1", thread_ts=THREAD, ts="1795946410.000100")
    await died(run)
    assert rows(database, "SELECT status FROM escalations") == [("answered",)]

    run = Run(api, database, tmp_path)
    await run.start()
    try:
        async def settled() -> bool:
            return not rows(database, "SELECT id FROM outbox WHERE status = 'pending'")

        await wait_until(settled, "every post sent or found")
    finally:
        await run.kill()
    assert len(confirmations(api)) == 1, confirmations(api)
    # The buttons are gone: the verdict was edited into its decided form.
    assert not any(any(b["type"] == "actions" for b in m.get("blocks", []))
                   for m in api.messages.values() if m.get("thread_ts") == THREAD)
    if fault == "after_post_before_record":
        lookups = api.calls_to("conversations.replies")
        assert lookups and lookups[-1].args.get("include_all_metadata") in ("true", "1", True)

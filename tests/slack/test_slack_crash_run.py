"""Store, then acknowledge: `tribunal run` SIGKILLed right after the 200s loses nothing
(messages, button clicks and slash commands).

The real process runs in HTTP mode against the fake Web API. With
TRIBUNAL_FAULT=after_store (bot/faults.py) it stores and acknowledges events
but never processes them, so killing it after the last 200 leaves every
acknowledged event in storage only; the next start must process them all.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import (
    block_action,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)
from tests.slack.slack_process import slack_http_env
from tests.slack.test_slack_e2e_run import free_port, wait_until

THREAD = "1795946400.000100"
BURST = "1795946500.000100"


KILLED_AT: dict[int, float] = {}  # fake Slack API -> when its last process was killed


class Run:
    """One `tribunal run` process on a database that outlives it."""

    def __init__(self, api: FakeSlackAPI, database: Path, workdir: Path) -> None:
        self.api = api
        self.database = database
        self.workdir = workdir
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None
        self.http: aiohttp.ClientSession | None = None

    async def start(self, fault: str | None = None) -> None:
        # A killed process takes its pacing state with it; a real restart
        # outlasts Slack's one-second channel window, and so does this one
        # (the fake counts every 429 against the test).
        killed_at = KILLED_AT.get(id(self.api))
        if killed_at is not None:
            await asyncio.sleep(max(0.0, killed_at + 1.1 - time.monotonic()))
        env = slack_http_env(self.api, self.port, str(self.database),
                             TRIBUNAL_ARBITER_BACKEND="none")
        if fault:
            env["TRIBUNAL_FAULT"] = fault
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run", cwd=self.workdir, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        self.http = aiohttp.ClientSession()
        await wait_until(self._healthy, "the HTTP endpoint")

    async def _healthy(self) -> bool:
        assert self.proc is not None and self.http is not None
        if self.proc.returncode is not None:
            stderr = await self.proc.stderr.read() if self.proc.stderr else b""
            raise AssertionError(f"tribunal run exited: {stderr!r}")
        try:
            async with self.http.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                return r.status == 200
        except aiohttp.ClientError:
            return False

    async def send(self, body: dict[str, Any]) -> int:
        assert self.http is not None
        raw, ctype = encode_body(body)
        async with self.http.post(f"http://127.0.0.1:{self.port}/slack/events",
                                  data=raw.encode(),
                                  headers=signed_headers(raw, ctype)) as r:
            return r.status

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, nothing is flushed."""
        assert self.proc is not None and self.http is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        KILLED_AT[id(self.api)] = time.monotonic()
        await self.http.close()

    async def died(self) -> None:
        """The process killed itself at its fault point (TRIBUNAL_FAULT)."""
        assert self.proc is not None and self.http is not None
        assert await asyncio.wait_for(self.proc.wait(), 30) == -signal.SIGKILL
        KILLED_AT[id(self.api)] = time.monotonic()
        await self.http.close()


def rows(database: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


async def escalate(slack_api: FakeSlackAPI, database: Path, tmp_path: Path) -> tuple[str, str]:
    """A room waiting for a human decision; (the verdict's ts, its first button's value)."""
    run = Run(slack_api, database, tmp_path)
    await run.start()
    try:
        assert await run.send(slash_command(
            "roles owner:BOWNER reviewer:<@UREVIEWER|rev>", user="UADMIN",
            response_url=slack_api.response_url())) == 200

        async def bound() -> bool:
            return bool(slack_api.responses)

        await wait_until(bound, "the /arbiter reply")
        assert await run.send(message_event("로그인 버그 고쳐줘", ts=THREAD)) == 200
        assert await run.send(message_event(
            "BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다.", user=None, bot_id="BOWNER",
            subtype="bot_message", thread_ts=THREAD, ts="1795946401.000200")) == 200
        assert await run.send(message_event(
            "접속 정보 없이도 목(mock)으로 테스트할 수 있습니다.", user="UREVIEWER",
            bot_id="BREVIEW", thread_ts=THREAD, ts="1795946402.000300")) == 200

        async def escalated() -> bool:
            return any(m.get("thread_ts") == THREAD and any(
                b["type"] == "actions" for b in m.get("blocks", []))
                for m in slack_api.messages.values())

        await wait_until(escalated, "the ESCALATE verdict with buttons")
    finally:
        await run.kill()
    for (_, ts), posted in slack_api.messages.items():
        for block in posted.get("blocks", []):
            if posted.get("thread_ts") == THREAD and block["type"] == "actions":
                return ts, str(block["elements"][0]["value"])
    raise AssertionError("no buttons")


async def test_acknowledged_events_survive_a_sigkill_right_after_the_200(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    database = tmp_path / "run.db"

    # 1. A room waiting for a human decision (ESCALATE with buttons).
    await escalate(slack_api, database, tmp_path)

    # 2. A digit answer and a burst of ten, each acknowledged, then SIGKILL.
    run = Run(slack_api, database, tmp_path)
    await run.start(fault="after_store")
    try:
        assert await run.send(message_event("1", thread_ts=THREAD,
                                            ts="1795946410.000100")) == 200
        for n in range(10):
            text = "이 작업도 부탁합니다" if n == 0 else f"추가 요청 {n}"
            ts = BURST if n == 0 else f"17959465{n:02d}.000200"
            assert await run.send(message_event(
                text, thread_ts=None if n == 0 else BURST, ts=ts)) == 200
    finally:
        await run.kill()
    waiting = rows(database, "SELECT message_id FROM messages WHERE processed = 0 ORDER BY seq")
    assert len(waiting) == 11, waiting  # all stored before their 200, none processed
    assert waiting[0] == ("C0WATCH:1795946410.000100",)  # the digit, first
    assert rows(database, "SELECT status FROM escalations") == [("pending",)]

    # 3. The next start processes every one of them, in order.
    run = Run(slack_api, database, tmp_path)
    await run.start()
    try:
        async def confirmed() -> bool:
            return any(c.args.get("text", "").startswith("✅ 사용자 결정: 1.")
                       for c in slack_api.calls_to("chat.postMessage"))

        await wait_until(confirmed, "the confirmation of the digit answer")

        async def all_processed() -> bool:
            return not rows(database, "SELECT seq FROM messages WHERE processed = 0")

        await wait_until(all_processed, "every stored message processed")
    finally:
        await run.kill()
    assert rows(database, "SELECT status, answer_option, answered_by FROM escalations") == [
        ("answered", 1, "UALICE")]
    burst = rows(database, "SELECT COUNT(*) FROM messages WHERE room_id = "
                           f"'slack:C0WATCH:{BURST}' AND epoch >= 1")
    assert burst == [(10,)]  # applied: each human message started an epoch


async def test_an_acknowledged_click_is_applied_after_a_sigkill(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    database = tmp_path / "click.db"
    verdict_ts, first_button = await escalate(slack_api, database, tmp_path)

    # A click on option 1, acknowledged (stored), never applied; then SIGKILL.
    run = Run(slack_api, database, tmp_path)
    await run.start(fault="after_store")
    try:
        assert await run.send(block_action(
            first_button, user="UALICE", thread_ts=THREAD, message_ts=verdict_ts,
            response_url=slack_api.response_url())) == 200
    finally:
        await run.kill()
    # The `/arbiter roles` of `escalate` (stored and applied), then the click (stored only).
    assert rows(database, "SELECT kind, processed FROM actions ORDER BY id") == [
        ("command", 1), ("click", 0)]
    assert rows(database, "SELECT status FROM escalations") == [("pending",)]

    # The next start applies it: the answer, its confirmation, the buttons retired.
    run = Run(slack_api, database, tmp_path)
    await run.start()
    try:
        async def confirmed() -> bool:
            return any(c.args.get("text", "").startswith("✅ 사용자 결정: 1.")
                       for c in slack_api.calls_to("chat.postMessage"))

        await wait_until(confirmed, "the confirmation of the click")
    finally:
        await run.kill()
    assert rows(database, "SELECT status, answer_option, answer_kind, answered_by FROM"
                          " escalations") == [("answered", 1, "button", "UALICE")]
    assert rows(database, "SELECT kind, processed FROM actions ORDER BY id") == [
        ("command", 1), ("click", 1)]


def replies(api: FakeSlackAPI, line: str) -> list[str]:
    """The ephemeral replies posted to response_urls with a line starting with `line`
    (a room subcommand's reply may start by naming the room it acts on)."""
    return [r["text"] for r in api.responses
            if any(part.startswith(line) for part in str(r.get("text", "")).splitlines())]


async def test_acknowledged_slash_commands_survive_a_sigkill_right_after_the_200(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    """A settings change, a summon and a status, each acknowledged and never
    applied, then SIGKILL: the next start applies each once and replies once."""
    database = tmp_path / "commands.db"
    run = Run(slack_api, database, tmp_path)
    await run.start()
    try:
        assert await run.send(slash_command(
            "roles owner:BOWNER reviewer:<@UREVIEWER|rev>", user="UADMIN",
            response_url=slack_api.response_url())) == 200

        async def bound() -> bool:
            return bool(slack_api.responses)

        await wait_until(bound, "the /arbiter reply")  # the channel is watched now
        assert await run.send(message_event("로그인 버그 고쳐줘", ts=THREAD)) == 200

        async def room() -> bool:
            return bool(rows(database, "SELECT id FROM rooms"))

        await wait_until(room, "the task's room")
    finally:
        await run.kill()

    run = Run(slack_api, database, tmp_path)
    await run.start(fault="after_store")
    try:
        for text, user in (("threshold 5", "UADMIN"), ("summon", "UADMIN"),
                           ("status", "UALICE")):
            assert await run.send(slash_command(
                text, user=user, response_url=slack_api.response_url())) == 200
    finally:
        await run.kill()
    stored = rows(database, "SELECT kind, processed FROM actions ORDER BY id")
    assert stored == [("command", 1), ("command", 0), ("command", 0), ("command", 0)]
    assert not rows(database, "SELECT value FROM settings WHERE key = 'stall_threshold'")
    assert not rows(database, "SELECT id FROM arbitrations")
    assert len(slack_api.responses) == 1  # the roles reply only

    run = Run(slack_api, database, tmp_path)
    await run.start()
    try:
        async def applied() -> bool:
            return len(slack_api.responses) >= 4 and not rows(
                database, "SELECT id FROM actions WHERE processed = 0")

        await wait_until(applied, "the three commands applied and answered")
        await asyncio.sleep(0.3)  # nothing more comes
    finally:
        await run.kill()
    assert rows(database, "SELECT value FROM settings WHERE key = 'stall_threshold'") == [
        ("5",)]
    assert rows(database, "SELECT trigger FROM arbitrations") == [("manual",)]  # the summon
    assert rows(database, "SELECT action FROM audit_log ORDER BY id") == [
        ("roles",), ("threshold",), ("summon",)]
    assert len(replies(slack_api, "✅ 이 채널의 `stall_threshold`")) == 1
    assert len(replies(slack_api, "⚖️ 중재를 요청했습니다.")) == 1
    assert len(slack_api.responses) == 4  # roles, threshold, summon, status: once each


async def test_a_slash_command_killed_right_after_its_200_is_applied_and_answered_once(
    slack_api: FakeSlackAPI, tmp_path: Path
) -> None:
    """The kill point `after_ack`: the process dies the moment its 200 for an
    `/arbiter max-rounds 7` is on the wire (bot/faults.py)."""
    database = tmp_path / "ack.db"
    run = Run(slack_api, database, tmp_path)
    await run.start(fault="after_ack:1")
    assert await run.send(slash_command(
        "max-rounds 7", user="UADMIN", response_url=slack_api.response_url())) == 200
    await run.died()
    assert rows(database, "SELECT kind FROM actions") == [("command",)]

    run = Run(slack_api, database, tmp_path)
    await run.start()
    try:
        async def answered() -> bool:
            return bool(slack_api.responses)

        await wait_until(answered, "the reply")
        await asyncio.sleep(0.3)
    finally:
        await run.kill()
    assert rows(database, "SELECT value FROM settings WHERE key = 'max_rounds'") == [("7",)]
    assert rows(database, "SELECT processed FROM actions") == [(1,)]
    assert len(slack_api.responses) == 1, slack_api.responses
    assert "`max_rounds`" in slack_api.responses[0]["text"]

"""Exactly once across a SIGKILL on Discord: `tribunal run` dies between
Discord accepting a post and the outbox recording it (TRIBUNAL_FAULT,
bot/faults.py); the next start finds the post in the thread's history and
does not post it again. The real process, over real HTTP and websocket to
the fake Discord running in this test."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import aiohttp
import discord_payloads as P
import pytest
from discord_process import channel_config, run_env

from tests.fakes.discord_api import FakeDiscord
from tests.slack.test_slack_e2e_run import free_port, wait_until

CONFIRMATION = "✅"


def rows(database: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


class Run:
    """One `tribunal run` process (Discord only) on a database that outlives it."""

    def __init__(self, fake: FakeDiscord, database: Path, workdir: Path) -> None:
        self.fake = fake
        self.database = database
        self.workdir = workdir
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None
        self.http: aiohttp.ClientSession | None = None

    async def start(self, fault: str | None = None) -> None:
        env = run_env(self.fake, str(self.database), channel_config(self.workdir), self.port,
                      **({"TRIBUNAL_FAULT": fault} if fault else {}))
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run", cwd=self.workdir, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        self.http = aiohttp.ClientSession()
        await wait_until(self._healthy, "the Discord gateway connected")

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

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, nothing is flushed."""
        assert self.proc is not None and self.http is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        await self.http.close()


async def say(fake: FakeDiscord, text: str, author: str = P.ALICE) -> None:
    await fake.say(P.message(text, author=author))


def confirmations(fake: FakeDiscord) -> list[dict[str, Any]]:
    return [m for m in fake.channel_messages(P.THREAD)
            if m["content"].startswith(CONFIRMATION)]


def buttons_live(fake: FakeDiscord) -> bool:
    return any(not c.get("disabled") for m in fake.channel_messages(P.THREAD)
               for row in m["components"] for c in row["components"])


@pytest.mark.parametrize("fault", ["after_post_before_record", "before_post", "after_record"])
async def test_a_crash_while_the_confirmation_is_posted_shows_it_once(
    fake_discord: FakeDiscord, tmp_path: Path, fault: str
) -> None:
    database = tmp_path / "run.db"
    run = Run(fake_discord, database, tmp_path)
    await run.start()
    try:
        await say(fake_discord, "로그인 버그 고쳐줘")
        await say(fake_discord, "BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다.", P.OWNER)
        await say(fake_discord, "접속 정보 없이도 목(mock)으로 테스트할 수 있습니다.", P.REVIEWER)

        async def escalated() -> bool:
            return buttons_live(fake_discord)

        await wait_until(escalated, "the ESCALATE verdict with buttons")

        async def flushed() -> bool:
            return not rows(database, "SELECT id FROM outbox WHERE status = 'pending'")

        # Nothing left to post, so the next process's first post is the confirmation.
        await wait_until(flushed, "every post of the first process sent")
    finally:
        await run.kill()

    # The digit's confirmation is the new process's first post: it dies there.
    run = Run(fake_discord, database, tmp_path)
    await run.start(fault=f"{fault}:1")
    await say(fake_discord, "1")
    assert run.proc is not None
    await asyncio.wait_for(run.proc.wait(), 30)
    await run.kill()
    assert rows(database, "SELECT status FROM escalations") == [("answered",)]

    run = Run(fake_discord, database, tmp_path)
    await run.start()
    try:
        async def settled() -> bool:
            return not rows(database, "SELECT id FROM outbox WHERE status = 'pending'")

        await wait_until(settled, "every post sent or found")
    finally:
        await run.kill()
    assert len(confirmations(fake_discord)) == 1, confirmations(fake_discord)
    assert not buttons_live(fake_discord)  # the verdict was edited into its decided form
    [confirmation] = confirmations(fake_discord)
    sent = [c for c in fake_discord.find("POST", rf"^/channels/{P.THREAD}/messages$")
            if c.json.get("content", "").startswith(CONFIRMATION)]
    assert all(c.json["enforce_nonce"] for c in sent)
    if fault == "after_post_before_record":
        # Found in the history, not posted again (not even for the nonce to catch).
        assert len(sent) == 1
        assert rows(database, "SELECT platform_message_id FROM outbox WHERE kind ="
                              " 'confirmation'") == [(confirmation["id"],)]

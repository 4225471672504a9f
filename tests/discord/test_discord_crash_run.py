"""Store, then answer, on Discord: `tribunal run` SIGKILLed after a slash
command and a button click were stored and deferred, but before either was
applied (TRIBUNAL_FAULT=after_store, bot/faults.py). The next start applies
both once: the setting changes, the escalation is answered and confirmed
once, and the command's reply replaces the interaction's deferred response
through its token (shown once, no DM). The real process, over real HTTP and
websocket to the fake Discord running in this test."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import discord_payloads as P
from test_discord_exactly_once_run import Run, buttons_live, confirmations, rows, say

from tests.fakes.discord_api import FakeDiscord
from tests.slack.test_slack_e2e_run import wait_until

RESTART_AFTER = 1.2  # seconds; as a real restart would take


def live_button(fake: FakeDiscord) -> tuple[dict[str, Any], str]:
    """The verdict with live buttons, and its first button's custom_id."""
    for message in fake.channel_messages(P.THREAD):
        for row in message["components"]:
            for component in row["components"]:
                if not component.get("disabled"):
                    return message, str(component["custom_id"])
    raise AssertionError("no live button")


async def test_a_stored_command_and_click_are_applied_after_a_sigkill(
    fake_discord: FakeDiscord, tmp_path: Path
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
    finally:
        await run.kill()

    # Stored, deferred, never applied; then SIGKILL.
    await asyncio.sleep(RESTART_AFTER)
    run = Run(fake_discord, database, tmp_path)
    await run.start(fault="after_store")
    try:
        command = P.slash("threshold", {"n": 5}, invoker=P.ADMIN, permissions=P.ADMIN_PERMS)
        verdict, custom_id = live_button(fake_discord)
        click = P.button_click(verdict, custom_id, clicker=P.ALICE)
        await fake_discord.dispatch("INTERACTION_CREATE", command)
        await fake_discord.dispatch("INTERACTION_CREATE", click)

        async def deferred() -> bool:
            return command["token"] in fake_discord.replies and click["token"] in (
                fake_discord.replies)

        await wait_until(deferred, "both interactions deferred")
    finally:
        await run.kill()
    assert fake_discord.replies[command["token"]].kind == 5  # "thinking", private
    assert fake_discord.replies[click["token"]].kind == 6  # a silent acknowledgement
    assert rows(database, "SELECT kind, processed FROM actions ORDER BY id") == [
        ("command", 0), ("click", 0)]
    assert rows(database, "SELECT status FROM escalations") == [("pending",)]
    assert not rows(database, "SELECT value FROM settings WHERE key = 'stall_threshold'")

    await asyncio.sleep(RESTART_AFTER)
    run = Run(fake_discord, database, tmp_path)
    await run.start()
    try:
        async def settled() -> bool:
            return not rows(database, "SELECT id FROM actions WHERE processed = 0") and not rows(
                database, "SELECT id FROM outbox WHERE status = 'pending'")

        await wait_until(settled, "both applied and every post sent")
        await asyncio.sleep(0.3)
    finally:
        await run.kill()
    assert rows(database, "SELECT value FROM settings WHERE key = 'stall_threshold'") == [
        ("5",)]
    assert rows(database, "SELECT status, answer_option, answer_kind, answered_by FROM"
                          " escalations") == [("answered", 1, "button", P.ALICE)]
    assert len(confirmations(fake_discord)) == 1
    assert not buttons_live(fake_discord)
    reply = fake_discord.replies[command["token"]]
    assert len(reply.shown) == 1 and "stall_threshold" in reply.shown[0], reply
    assert reply.edits == 1  # by the interaction's token, from the next process
    assert fake_discord.replies[click["token"]].shown == []  # accepted: nothing private
    assert not fake_discord.find("POST", r"^/users/@me/channels$")  # no DM needed

"""discord.py retries 429s itself; each still shows in the metrics, and its
voice warnings are kept out of the log."""

from __future__ import annotations

import logging

import discord_payloads as P
import pytest
from discord_helpers import RecordingCore

from bot import logs, metrics
from bot.models import OutgoingMessage, RoomKey

ROOM = RoomKey("discord", P.CHANNEL, P.THREAD)


def discord_429s() -> float:
    return metrics.REGISTRY.get_sample_value(
        "tribunal_rate_limited_total", {"service": "discord"}) or 0.0


@pytest.fixture
async def adapter(fake_discord, make_settings, start_adapter):  # type: ignore[no-untyped-def]
    logs.watch_discord()
    return await start_adapter(make_settings(), RecordingCore())


async def test_a_429_retried_by_discord_py_is_counted(adapter, fake_discord) -> None:  # type: ignore[no-untyped-def]
    fake_discord.rate_limit_next("POST", rf"^/channels/{P.THREAD}/messages$", retry_after=0.01)
    before = discord_429s()
    assert await adapter.transport.post(ROOM, OutgoingMessage(kind="notice", text="hi"))
    assert discord_429s() - before == 1


def test_voice_warnings_are_dropped_and_other_warnings_kept(caplog: pytest.LogCaptureFixture) -> None:
    logs.watch_discord()
    caplog.set_level(logging.WARNING)
    client_log = logging.getLogger("discord.client")
    client_log.warning("PyNaCl is not installed, voice will NOT be supported")
    client_log.warning("davey is not installed, voice will NOT be supported")
    client_log.warning("something else")
    assert "voice" not in caplog.text and "something else" in caplog.text

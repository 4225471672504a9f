"""Fixtures: a fake Discord (REST + gateway on 127.0.0.1) and adapters wired to it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root, for tests.fakes

import discord_payloads as P
from discord_helpers import TOKEN

from adapters.discord.runner import DiscordAdapter
from bot.config import Settings
from tests.fakes.discord_api import FakeDiscord


@pytest.fixture(autouse=True)
def _restore_endpoints() -> Any:
    """configure_endpoints() sets process-wide class attributes; put them back."""
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    yield
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    fake = await FakeDiscord(bot_id=int(P.BOT), app_id=int(P.APP)).start()
    fake.add_guild(P.guild_create())
    yield fake
    await fake.close()


@pytest.fixture
def make_settings(tmp_path: Path, fake_discord: FakeDiscord) -> Callable[..., Settings]:
    config = tmp_path / "tribunal.toml"
    config.write_text(
        "[[channels]]\n"
        f'platform = "discord"\nchannel = "{P.CHANNEL}"\n'
        f'owner = ["{P.OWNER}"]\nreviewer = ["{P.REVIEWER}"]\n',
        encoding="utf-8",
    )

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "database": str(tmp_path / "tribunal.db"),
            "config": config,
            "discord_bot_token": TOKEN,
            "discord_api_url": fake_discord.url,
            "discord_gateway_url": fake_discord.ws_url,
            "discord_guild_ids": [P.GUILD],
            "arbiter_backend": "none",
            "admin_ids": [],
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    return make


@pytest.fixture
async def start_adapter() -> AsyncIterator[Callable[..., Awaitable[DiscordAdapter]]]:
    """Start DiscordAdapter(s) against the fake; all are stopped at the end."""
    started: list[DiscordAdapter] = []

    async def start(settings: Settings, core: Any) -> DiscordAdapter:
        adapter = DiscordAdapter(settings, core, guild_ready_timeout=0.05)
        if hasattr(core, "transport") and core.transport is None:
            core.transport = adapter.transport  # a stand-in core replies through it
        await adapter.start(ready_within=10)
        started.append(adapter)
        return adapter

    yield start
    for adapter in started:
        await adapter.stop()

"""Settings: names from DESIGN §8, precedence, secrets never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(name)


def test_environment_beats_the_toml_file_which_beats_built_in_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "t.toml"
    conf.write_text("[defaults]\nstall_threshold = 4\nmax_rounds = 9\n", encoding="utf-8")
    monkeypatch.setenv("TRIBUNAL_CONFIG", str(conf))
    monkeypatch.setenv("TRIBUNAL_STALL_THRESHOLD", "7")
    values = Settings(_env_file=None).room_defaults()  # type: ignore[call-arg]
    assert values["stall_threshold"] == 7 and values["max_rounds"] == 9
    assert values["max_arbitrations"] == 3


def test_platform_credentials_use_their_own_names_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUNAL_SLACK_BOT_TOKEN", "xoxb-prefixed")
    assert Settings(_env_file=None).slack_bot_token is None  # type: ignore[call-arg]
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-real")
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "discord-real")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.slack_bot_token is not None
    assert settings.slack_bot_token.get_secret_value() == "xoxb-real"
    assert "xoxb-real" not in repr(settings) and "discord-real" not in repr(settings)


def test_arbiter_key_falls_back_to_the_vendor_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-anthropic")
    assert Settings(_env_file=None, arbiter_backend="openai").api_key() == "sk-openai"  # type: ignore[call-arg]
    assert Settings(_env_file=None, arbiter_backend="anthropic").api_key() == "sk-anthropic"  # type: ignore[call-arg]
    monkeypatch.setenv("TRIBUNAL_ARBITER_API_KEY", "sk-own")
    assert Settings(_env_file=None, arbiter_backend="openai").api_key() == "sk-own"  # type: ignore[call-arg]


def test_id_lists_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUNAL_ADMIN_IDS", "U1, U2,,U3 ")
    monkeypatch.setenv("TRIBUNAL_DISCORD_GUILD_IDS", "123")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.admin_ids == ["U1", "U2", "U3"] and settings.discord_guild_ids == ["123"]

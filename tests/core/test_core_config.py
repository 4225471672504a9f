"""Settings: names, precedence, secrets never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands import CommandError, parse_command
from bot.config import (
    Settings,
    SettingsError,
    check_room_settings,
    load_settings,
    usable_room_settings,
)
from bot.transcript import TranscriptError, parse_line
from prompts import languages


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


def test_arguments_beat_the_environment_which_beats_the_dotenv_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("TRIBUNAL_MAX_ROUNDS=9\nTRIBUNAL_STALL_THRESHOLD=5\nSLACK_BOT_TOKEN=xoxb-file\n"
                      "TRIBUNAL_LANGUAGE\n", encoding="utf-8")  # a name without a value: unset
    monkeypatch.setenv("TRIBUNAL_STALL_THRESHOLD", "4")
    settings = Settings(_env_file=dotenv)
    assert (settings.max_rounds, settings.stall_threshold) == (9, 4)
    assert settings.language == "ko"  # the default
    assert settings.slack_bot_token is not None
    assert settings.slack_bot_token.get_secret_value() == "xoxb-file"
    given = Settings(_env_file=dotenv, stall_threshold=3, slack_bot_token="xoxb-given")
    assert given.stall_threshold == 3 and given.max_rounds == 9
    assert given.slack_bot_token is not None
    assert given.slack_bot_token.get_secret_value() == "xoxb-given"
    assert Settings(_env_file=None).max_rounds == 6  # no file read
    assert Settings(_env_file=tmp_path / "none.env").max_rounds == 6  # no such file
    # what was set anywhere counts as set (the TOML file's defaults do not beat it)
    assert {"max_rounds", "stall_threshold"} <= Settings(_env_file=dotenv).model_fields_set


def test_variable_names_are_not_case_sensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("tribunal_max_rounds", "8")
    monkeypatch.setenv("Slack_Bot_Token", "xoxb-mixed")
    settings = Settings(_env_file=None)
    assert settings.max_rounds == 8
    assert settings.slack_bot_token is not None
    assert settings.slack_bot_token.get_secret_value() == "xoxb-mixed"


def test_a_bad_value_from_the_dotenv_file_names_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("TRIBUNAL_HTTP_PORT=eighty\n", encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings(dotenv)
    assert info.value.problems[0].startswith("TRIBUNAL_HTTP_PORT: ")


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


# -- validation at start ------------------------------------------------------------


def problems_of(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                env_file: Path | None = None) -> list[str]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings(env_file)
    return info.value.problems


def test_values_out_of_range_or_of_the_wrong_kind_name_their_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bad = {
        "TRIBUNAL_STALL_THRESHOLD": "0",
        "TRIBUNAL_MAX_ROUNDS": "51",
        "TRIBUNAL_MAX_ARBITRATIONS": "0",
        "TRIBUNAL_ARBITER_TIMEOUT": "0",
        "TRIBUNAL_TURN_QUIET_SECONDS": "-1",
        "TRIBUNAL_HTTP_PORT": "70000",
        "TRIBUNAL_METRICS_PORT": "0",
        "TRIBUNAL_ARBITER_RETRIES": "many",
        "TRIBUNAL_PROGRESS_JUDGE": "vibes",
        "TRIBUNAL_LOG_FORMAT": "xml",
        "TRIBUNAL_SLACK_MODE": "rtm",
        "TRIBUNAL_ARBITER_BASE_URL": "localhost:11434",
        "TRIBUNAL_HUMAN_MESSAGES": "0",
    }
    problems = problems_of(monkeypatch, bad)
    for name in bad:
        assert any(p.startswith(name + ":") for p in problems), (name, problems)
    assert len(problems) == len(bad)
    assert any("less than or equal to 50 (got '51')" in p for p in problems)


def test_secrets_are_never_echoed_in_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUNAL_ARBITER_API_KEY", "sk-very-secret")
    monkeypatch.setenv("TRIBUNAL_ARBITER_BACKEND", "opneai")
    problems = problems_of(monkeypatch, {})
    assert problems and all("sk-very-secret" not in p for p in problems)


def test_new_settings_have_their_documented_defaults() -> None:
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (s.progress_judge, s.progress_judge_timeout, s.reviewer_wait_seconds) == (
        "rules", 10.0, 300.0)
    assert (s.lease_seconds, s.metrics_port, s.metrics_host, s.log_format) == (
        30.0, None, "127.0.0.1", "text")
    assert (s.discord_shard_count, s.discord_shard_ids, s.human_messages) == (None, [], 20)
    assert "similarity_threshold" not in Settings.model_fields
    assert "similarity_threshold" not in s.room_defaults()


def test_discord_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    assert any("TRIBUNAL_DISCORD_SHARD_COUNT" in p for p in problems_of(
        monkeypatch, {"TRIBUNAL_DISCORD_SHARD_IDS": "0"}))
    assert any("TRIBUNAL_DISCORD_SHARD_IDS" in p for p in problems_of(
        monkeypatch, {"TRIBUNAL_DISCORD_SHARD_COUNT": "2", "TRIBUNAL_DISCORD_SHARD_IDS": "1,2"}))
    monkeypatch.setenv("TRIBUNAL_DISCORD_SHARD_IDS", "0, 1")
    settings, _ = load_settings(None)
    assert settings.discord_shard_ids == [0, 1] and settings.discord_shard_count == 2


def test_language_must_be_one_the_project_ships(monkeypatch: pytest.MonkeyPatch) -> None:
    assert languages() == ("ko", "en")
    problems = problems_of(monkeypatch, {"TRIBUNAL_LANGUAGE": "ja"})
    assert problems[0].startswith("TRIBUNAL_LANGUAGE:") and "ko, en" in problems[0]
    monkeypatch.setenv("TRIBUNAL_LANGUAGE", "EN")
    assert load_settings(None)[0].language == "en"


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[defaults]\nstall_treshold = 2\n",
         "[defaults] stall_treshold: unknown key (did you mean 'stall_threshold'?)"),
        ('[[channel]]\nplatform = "slack"\nchannel = "C1"\n',
         "channel: unknown key (did you mean 'channels'?)"),
        ('[[channels]]\nplatform = "slak"\nchannel = "C1"\n',
         "[[channels]] #1 platform: input should be 'slack', 'discord' or 'console'"),
        ('[[channels]]\nplatform = "slack"\nchannel = "C1"\nreviewers = ["U1"]\n',
         "[[channels]] #1 reviewers: unknown key (did you mean 'reviewer'?)"),
        ("[defaults]\nmax_rounds = 99\n", "[defaults] max_rounds: input should be less than"),
        ('[defaults]\nlanguage = "fr"\n', "[defaults] language: unknown language 'fr'"),
        ("[defaults]\nsimilarity_threshold = 0.5\n",
         "[defaults] similarity_threshold: is no longer a setting"),
        ('[[moa]]\nname = "x"\nmodel = "m"\ntimeout = 0\n', "[[moa]] #1 timeout"),
    ],
)
def test_toml_mistakes_name_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, expected: str
) -> None:
    conf = tmp_path / "t.toml"
    conf.write_text(toml, encoding="utf-8")
    problems = problems_of(monkeypatch, {"TRIBUNAL_CONFIG": str(conf)})
    assert len(problems) == 1 and problems[0].startswith(f"TRIBUNAL_CONFIG ({conf}): ")
    assert expected in problems[0], problems


def test_a_retired_setting_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problems = problems_of(monkeypatch, {"TRIBUNAL_SIMILARITY_THRESHOLD": "0.5"})
    assert problems[0].startswith("TRIBUNAL_SIMILARITY_THRESHOLD is no longer a setting")
    monkeypatch.delenv("TRIBUNAL_SIMILARITY_THRESHOLD")
    dotenv = tmp_path / ".env"
    dotenv.write_text("TRIBUNAL_SIMILARITY_THRESHOLD=0.4\n", encoding="utf-8")
    assert "no longer a setting" in problems_of(monkeypatch, {}, env_file=dotenv)[0]
    with pytest.raises(TranscriptError) as info:
        parse_line('{"type": "room", "room": "r", "settings": {"similarity_threshold": 0.5}}', 4)
    assert str(info.value).startswith("line 4: settings.similarity_threshold: is no longer")


def test_unknown_tribunal_variables_are_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIBUNAL_STALL_TRESHOLD", "3")
    monkeypatch.setenv("TRIBUNAL_SLACK_BOT_TOKEN", "xoxb-x")
    dotenv = tmp_path / ".env"
    dotenv.write_text("TRIBUNAL_MAX_ROUND=4\n", encoding="utf-8")
    settings, warnings = load_settings(dotenv)
    assert settings.stall_threshold == 2
    assert ("TRIBUNAL_STALL_TRESHOLD is not a Tribunal setting and is ignored (did you mean"
            " TRIBUNAL_STALL_THRESHOLD?)") in warnings
    assert any(w.startswith("TRIBUNAL_SLACK_BOT_TOKEN") and "SLACK_BOT_TOKEN?" in w
               for w in warnings)
    assert any("TRIBUNAL_MAX_ROUND " in w and "TRIBUNAL_MAX_ROUNDS" in w for w in warnings)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"TRIBUNAL_ARBITER_BACKEND": "command"}, "TRIBUNAL_ARBITER_COMMAND"),
        ({"TRIBUNAL_ARBITER_BACKEND": "command", "TRIBUNAL_ARBITER_COMMAND": "claude 'oops"},
         "TRIBUNAL_ARBITER_COMMAND"),
        ({"TRIBUNAL_ARBITER_BACKEND": "command", "TRIBUNAL_ARBITER_COMMAND": "cat",
          "TRIBUNAL_ARBITER_WORKDIR": "/nonexistent/dir"}, "TRIBUNAL_ARBITER_WORKDIR"),
        ({"TRIBUNAL_ARBITER_BACKEND": "openai"}, "OPENAI_API_KEY"),
        ({"TRIBUNAL_ARBITER_BACKEND": "openai",
          "TRIBUNAL_ARBITER_BASE_URL": "https://api.openai.com/v1"}, "TRIBUNAL_ARBITER_API_KEY"),
        ({"TRIBUNAL_ARBITER_BACKEND": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"TRIBUNAL_ARBITER_BACKEND": "anthropic",
          "TRIBUNAL_ARBITER_BASE_URL": "http://127.0.0.1:8080"}, "ANTHROPIC_API_KEY"),
    ],
)
def test_the_backend_gets_what_it_needs(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], named: str
) -> None:
    problems = problems_of(monkeypatch, env)
    assert len(problems) == 1 and named in problems[0]


@pytest.mark.parametrize(
    "env",
    [
        {"TRIBUNAL_ARBITER_BACKEND": "command", "TRIBUNAL_ARBITER_COMMAND": "claude -p"},
        {"TRIBUNAL_ARBITER_BACKEND": "openai", "OPENAI_API_KEY": "sk-x"},
        {"TRIBUNAL_ARBITER_BACKEND": "anthropic", "TRIBUNAL_ARBITER_API_KEY": "sk-x"},
        # A self-hosted OpenAI-compatible server (Ollama, vLLM) may need no key.
        {"TRIBUNAL_ARBITER_BACKEND": "openai",
         "TRIBUNAL_ARBITER_BASE_URL": "http://127.0.0.1:11434/v1"},
    ],
)
def test_a_complete_backend_starts(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert load_settings(None)[1] == []


def test_llm_progress_judge_without_a_backend_warns_and_rules_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRIBUNAL_PROGRESS_JUDGE", "llm")
    settings, warnings = load_settings(None)
    assert settings.progress_judge_in_effect == "rules"
    assert len(warnings) == 1 and "TRIBUNAL_PROGRESS_JUDGE=llm" in warnings[0]
    monkeypatch.setenv("TRIBUNAL_ARBITER_BACKEND", "command")
    monkeypatch.setenv("TRIBUNAL_ARBITER_COMMAND", "cat")
    settings, warnings = load_settings(None)
    assert settings.progress_judge_in_effect == "llm" and warnings == []


def test_room_settings_follow_the_same_rules() -> None:
    assert check_room_settings({"stall_threshold": 3, "language": "EN"}) == {
        "stall_threshold": 3, "language": "en"}
    with pytest.raises(SettingsError) as info:
        check_room_settings({"stall_threshold": "3", "max_rounds": 0, "stall_treshold": 1})
    text = str(info.value)
    assert "stall_threshold: input should be a valid integer" in text
    assert "max_rounds: input should be greater than or equal to 1" in text
    assert "stall_treshold: unknown key (did you mean 'stall_threshold'?)" in text
    # /arbiter refuses exactly what storage would refuse.
    for n in (0, 1, 20, 21):
        command_ok = not isinstance(parse_command(f"threshold {n}"), CommandError)
        try:
            check_room_settings({"stall_threshold": n})
            stored_ok = True
        except SettingsError:
            stored_ok = False
        assert command_ok == stored_ok == (1 <= n <= 20)


def test_stored_values_that_no_longer_pass_fall_back_to_the_default() -> None:
    good, notes = usable_room_settings({
        "stall_threshold": 99, "max_rounds": 4, "similarity_threshold": 0.5,
        "language": "xx", "watched": True,
    })
    assert good == {"max_rounds": 4}
    assert len(notes) == 3 and any("similarity_threshold" in n for n in notes)

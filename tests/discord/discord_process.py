"""Running the real `tribunal run` against the fake Discord, for the process
tests (crash runs, several instances): the one channel config and environment
they all start it with. (A unique module name: test dirs share sys.path.)"""

from __future__ import annotations

import os
from pathlib import Path

import discord_payloads as P

from tests.fakes.discord_api import FakeDiscord
from tests.slack.test_slack_e2e_run import ROOT


def channel_config(workdir: Path) -> Path:
    """The TOML binding the fake's channel to its owner and reviewer bots."""
    config = workdir / "tribunal.toml"
    config.write_text(
        "[[channels]]\n"
        f'platform = "discord"\nchannel = "{P.CHANNEL}"\n'
        f'owner = ["{P.OWNER}"]\nreviewer = ["{P.REVIEWER}"]\n', encoding="utf-8")
    return config


def run_env(fake: FakeDiscord, database: str, config: Path, port: int,
            **extra: str) -> dict[str, str]:
    """This environment without any Tribunal, Slack, Discord or proxy setting,
    plus what points `tribunal run` at the fake (arbiter `none`, /healthz on
    `port`) and `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_"))
           and "proxy" not in k.lower()}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env.update({
        "DISCORD_BOT_TOKEN": "test-token",
        "TRIBUNAL_DISCORD_API_URL": fake.url,
        "TRIBUNAL_DISCORD_GATEWAY_URL": fake.ws_url,
        "TRIBUNAL_DISCORD_GUILD_IDS": P.GUILD,
        "TRIBUNAL_CONFIG": str(config),
        "TRIBUNAL_DATABASE": database,
        "TRIBUNAL_ARBITER_BACKEND": "none",
        "TRIBUNAL_METRICS_PORT": str(port),
        "TRIBUNAL_METRICS_HOST": "127.0.0.1",
    })
    env.update(extra)
    return env

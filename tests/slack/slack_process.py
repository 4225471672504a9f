"""What the Slack process tests share: the environment of a `tribunal run` in
Slack HTTP mode against the fake Web API, and its health probe."""

from __future__ import annotations

import os

import aiohttp

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import SIGNING_SECRET
from tests.slack.test_slack_e2e_run import ROOT


def slack_http_env(api: FakeSlackAPI, port: int, database: str,
                   **settings: str) -> dict[str, str]:
    """This process's environment without any Tribunal, Slack, Discord or model
    setting (nor a proxy), plus Slack HTTP mode on `port` and `settings`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))
           and "proxy" not in k.lower()}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env.update({
        "SLACK_BOT_TOKEN": api.bot_token,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "TRIBUNAL_SLACK_MODE": "http",
        "TRIBUNAL_SLACK_API_URL": api.url,
        "TRIBUNAL_HTTP_PORT": str(port),
        "TRIBUNAL_HTTP_HOST": "127.0.0.1",
        "TRIBUNAL_DATABASE": database,
    })
    env.update(settings)
    return env


async def answers_health(http: aiohttp.ClientSession, port: int) -> bool:
    """`/healthz` answers 200 (not yet listening counts as no)."""
    try:
        async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
            return r.status == 200
    except aiohttp.ClientError:
        return False

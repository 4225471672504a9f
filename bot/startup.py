"""What a start says about itself, and the credential mistakes it refuses.

The first INFO line of `tribunal run` is what an operator checks after a
deploy: which platforms, in which mode, judged by which backend and model,
stored where. It never shows a secret: URLs lose their user info, the
`command` backend shows its program only (its arguments may hold a key).
"""

from __future__ import annotations

import shlex
from urllib.parse import urlsplit, urlunsplit

from bot.config import Settings
from storage.backends import is_postgres_url


def platforms(settings: Settings) -> list[str]:
    """The platforms whose credentials are complete."""
    found = []
    if settings.slack_bot_token is not None and (
        (settings.slack_mode == "socket" and settings.slack_app_token is not None)
        or (settings.slack_mode == "http" and settings.slack_signing_secret is not None)
    ):
        found.append("slack")
    if settings.discord_bot_token is not None:
        found.append("discord")
    return found


def credential_problems(settings: Settings) -> list[str]:
    """Half a Slack configuration, named exactly: it is a mistake, not "no Slack"."""
    app = settings.slack_app_token is not None
    secret = settings.slack_signing_secret is not None
    if settings.slack_bot_token is None:
        given = [name for name, set_ in (("SLACK_APP_TOKEN", app),
                                         ("SLACK_SIGNING_SECRET", secret)) if set_]
        if not given:
            return []
        return [f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} set but "
                "SLACK_BOT_TOKEN is not: Slack needs the bot token (xoxb-…) too"]
    if settings.slack_mode == "socket" and not app:
        return ["Slack Socket Mode (TRIBUNAL_SLACK_MODE=socket, the default) needs "
                "SLACK_APP_TOKEN besides SLACK_BOT_TOKEN"
                + ("; SLACK_SIGNING_SECRET is set: for HTTP mode set TRIBUNAL_SLACK_MODE=http"
                   if secret else
                   "; for HTTP mode set TRIBUNAL_SLACK_MODE=http and SLACK_SIGNING_SECRET")]
    if settings.slack_mode == "http" and not secret:
        return ["Slack HTTP mode (TRIBUNAL_SLACK_MODE=http) needs SLACK_SIGNING_SECRET "
                "besides SLACK_BOT_TOKEN"
                + ("; SLACK_APP_TOKEN is set: for Socket Mode unset TRIBUNAL_SLACK_MODE"
                   if app else "")]
    return []


def without_secrets(url: str) -> str:
    """The URL without user info, query or fragment (where passwords and keys travel)."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def describe_arbiter(settings: Settings) -> str:
    backend = settings.arbiter_backend
    if backend == "none":
        return "arbiter: none (deterministic ESCALATE)"
    if backend == "command":
        try:
            program = shlex.split(settings.arbiter_command or "")[0]
        except (ValueError, IndexError):
            program = "?"
        model = f", model {settings.arbiter_model}" if settings.arbiter_model else ""
        return f"arbiter: command ({program}){model}"
    from bot.arbiter.backends import DEFAULT_MODELS

    model = settings.arbiter_model or DEFAULT_MODELS[backend]
    where = (f" at {without_secrets(settings.arbiter_base_url)}"
             if settings.arbiter_base_url else "")
    return f"arbiter: {backend}, model {model}{where}"


def describe_platform(settings: Settings, platform: str) -> str:
    if platform == "slack":
        if settings.slack_mode == "http":
            return (f"slack (HTTP mode, /slack/events on "
                    f"{settings.http_host}:{settings.http_port})")
        return "slack (Socket Mode)"
    if platform == "discord":
        guilds = settings.discord_guild_ids
        sync = f"/arbiter synced to {len(guilds)} guild(s)" if guilds else "/arbiter global"
        # Several instances (PostgreSQL) hold the gateway, or its shards, by
        # lease, unless TRIBUNAL_DISCORD_SHARD_IDS fixes them (adapters/discord/gateway.py).
        leased = is_postgres_url(settings.database) and not settings.discord_shard_ids
        count = settings.discord_shard_count
        shards = ""
        if count and leased:
            shards = f", shards of {count} by lease"
        elif count:
            ids = settings.discord_shard_ids or range(count)
            shards = f", shards {','.join(map(str, ids))} of {count}"
        gateway = "gateway by lease" if leased and not count else "gateway"
        return f"discord ({gateway}, {sync}{shards})"
    if platform == "console":
        return "console (replay)"
    return platform


def summary(settings: Settings, running: list[str], database: str | None = None) -> str:
    """One line: platforms and modes; arbiter backend and model; database; language."""
    where = without_secrets(database if database is not None else settings.database)
    names = ", ".join(describe_platform(settings, p) for p in running) or "no platform"
    return (f"platforms: {names}; {describe_arbiter(settings)}; database: {where}; "
            f"language: {settings.language}")

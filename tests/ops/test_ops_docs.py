"""The operator's documents stay true to the code: the README's configuration
table names every setting, the Slack app manifest asks for what the adapter
listens for, the HTTPS and server-id instructions are there, and the
documents stand on their own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from adapters.slack.translate import SHORTCUT
from bot.config import Settings, env_name

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "docs" / "slack-app-manifest.yaml", ROOT / ".env.example"]


def _configuration_table() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Configuration"):readme.index("### The database")]
    return "\n".join(line for line in section.splitlines() if line.startswith("| `"))


def test_the_configuration_table_names_every_setting() -> None:
    table = _configuration_table()
    missing = [env_name(f) for f in Settings.model_fields if f"`{env_name(f)}`" not in table
               and env_name(f) not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")]
    assert missing == []
    # The vendors' own keys are named where they are used: as fallbacks.
    assert "`OPENAI_API_KEY`" in table and "`ANTHROPIC_API_KEY`" in table
    named = set(re.findall(r"`((?:TRIBUNAL|SLACK|DISCORD)_[A-Z0-9_]+)`", table))
    assert named - {env_name(f) for f in Settings.model_fields} == set(), "not a setting"


def test_the_slack_manifest_asks_for_what_the_adapter_listens_for() -> None:
    manifest = YAML(typ="safe").load(
        (ROOT / "docs" / "slack-app-manifest.yaml").read_text(encoding="utf-8"))
    features, settings = manifest["features"], manifest["settings"]
    [command] = features["slash_commands"]
    assert command["command"] == "/arbiter" and command["should_escape"] is True
    [shortcut] = features["shortcuts"]
    assert (shortcut["type"], shortcut["callback_id"], shortcut["name"]) == (
        "message", SHORTCUT, "Arbitrate this thread")
    assert len(shortcut["name"]) <= 25 and len(shortcut["description"]) <= 150
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "message.channels", "message.groups", "app_mention"}
    assert settings["interactivity"]["is_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "channels:history", "groups:history", "chat:write", "commands", "app_mentions:read",
        "users:read"}
    # The scopes table of docs/slack.md says why each is asked for.
    guide = (ROOT / "docs" / "slack.md").read_text(encoding="utf-8")
    for scope in manifest["oauth_config"]["scopes"]["bot"]:
        assert re.search(rf"^\s*\|.*`{re.escape(scope)}`.*\|", guide, re.M), scope


def test_slack_http_mode_is_shown_behind_an_https_reverse_proxy() -> None:
    guide = (ROOT / "docs" / "slack.md").read_text(encoding="utf-8")
    caddy = re.search(r"```caddyfile\n(.*?)```", guide, re.S)
    nginx = re.search(r"```nginx\n(.*?)```", guide, re.S)
    assert caddy and nginx
    assert "handle /slack/events" in caddy[1] and "reverse_proxy 127.0.0.1:3000" in caddy[1]
    assert "location = /slack/events" in nginx[1] and "listen 443 ssl" in nginx[1]
    assert "proxy_pass http://127.0.0.1:3000;" in nginx[1]
    assert "HTTPS" in guide and "TRIBUNAL_HTTP_HOST=127.0.0.1" in guide


def test_how_to_copy_a_discord_server_id() -> None:
    guide = (ROOT / "docs" / "discord.md").read_text(encoding="utf-8")
    assert "Developer Mode" in guide and "Copy Server ID" in guide
    assert "Copy Server ID" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_the_documents_stand_on_their_own(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for outside in ("DESIGN.md", "../shared"):
        assert outside not in text, (path.name, outside)
    # No path of a build machine (its work and temporary folders).
    assert not re.search(r"/(?:work|tmp)/", text), path.name


def test_the_code_does_not_send_readers_to_a_specification_outside_the_repository() -> None:
    sources = [p for top in ("bot", "adapters", "storage", "prompts", "bench", "tests")
               for p in (ROOT / top).rglob("*.py")]
    offenders = [str(p.relative_to(ROOT)) for p in sources
                 if p.name != "test_ops_docs.py"
                 and re.search(r"DESIGN(?:\.md| §)|\(§\d", p.read_text(encoding="utf-8"))]
    assert offenders == []

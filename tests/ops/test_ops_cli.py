"""The command line an operator types: flags, start-up lines, replay notes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

TRANSCRIPTS = Path(__file__).parent.parent / "transcripts"
CLEARED = ("SLACK_", "DISCORD_", "TRIBUNAL_", "OPENAI_", "ANTHROPIC_")


def tribunal(*args: str, env: dict[str, str] | None = None, stdin: str | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    root = str(Path(__file__).resolve().parents[2])
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [root, clean.get("PYTHONPATH")]))
    clean.update(env or {})
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True,
                          env=clean, input=stdin, cwd=cwd, timeout=120, check=False)


def test_version() -> None:
    result = tribunal("--version")
    assert result.returncode == 0 and result.stdout.startswith("tribunal ")


def test_global_flags_are_accepted_after_the_subcommand_and_checked() -> None:
    after = tribunal("demo", "--json", "--log-level", "info")
    before = tribunal("--log-level", "INFO", "demo", "--json")
    assert after.returncode == before.returncode == 0, after.stderr
    assert "INFO tribunal.events: deadlock in room console:demo-login:" in after.stderr
    assert "INFO tribunal.events: deadlock in room" in before.stderr
    bad = tribunal("demo", "--log-level", "LOUD")
    assert bad.returncode == 2 and "invalid choice: 'LOUD'" in bad.stderr


def test_demo_uses_a_fresh_database_each_run_whatever_tribunal_database_says(
    tmp_path: Path,
) -> None:
    env = {"TRIBUNAL_DATABASE": str(tmp_path / "shared.db")}
    runs = [tribunal("demo", "--json", env=env, cwd=tmp_path) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert [json.loads(line)["event"] for line in run.stdout.splitlines()][:2] == [
            "deadlock", "verdict"]
    assert not (tmp_path / "shared.db").exists() and not (tmp_path / "tribunal.db").exists()


def test_debug_shows_tribunal_lines_not_one_aiosqlite_line_per_statement() -> None:
    result = tribunal("demo", "--log-level", "DEBUG")
    assert result.returncode == 0, result.stderr
    assert "aiosqlite" not in result.stderr
    assert "DEBUG" in result.stderr or "INFO" in result.stderr


def test_replaying_twice_says_nothing_was_judged_the_second_time(tmp_path: Path) -> None:
    db = str(tmp_path / "twice.db")
    first = tribunal("replay", str(TRANSCRIPTS / "circular_en.jsonl"), "--database", db)
    assert first.returncode == 0 and "already stored" not in first.stderr
    second = tribunal("replay", str(TRANSCRIPTS / "circular_en.jsonl"), "--json",
                      "--database", db)
    assert second.returncode == 0 and second.stdout == ""  # no event: JSON output stays pure
    assert "messages were already stored in this database" in second.stderr
    assert "nothing was judged" in second.stderr


def test_a_transcript_without_roles_says_so(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps({"type": "message", "id": f"m{n}", "author": who,
                                  "text": "BLOCKED: no access" if who == "bot-a" else "hm"})
                      for n, who in enumerate(["alice", "bot-a", "bot-b", "bot-a"]))
    result = tribunal("replay", "-", "--database", str(tmp_path / "r.db"), stdin=lines)
    assert result.returncode == 0, result.stderr
    assert "no roles in room default" in result.stderr and "every author is a human" in result.stderr
    bound = json.dumps({"type": "room", "room": "r", "roles": {"owner": ["bot-a"],
                                                                 "reviewer": ["bot-b"]}})
    with_roles = tribunal("replay", "-", "--database", str(tmp_path / "b.db"),
                          stdin=bound + "\n" + lines)
    assert with_roles.returncode == 0 and "no roles" not in with_roles.stderr


def test_half_a_slack_configuration_is_named_exactly(tmp_path: Path) -> None:
    cases = {
        ("SLACK_APP_TOKEN",): "SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not",
        ("SLACK_SIGNING_SECRET",): "SLACK_SIGNING_SECRET is set but SLACK_BOT_TOKEN is not",
        ("SLACK_BOT_TOKEN",): "needs SLACK_APP_TOKEN besides SLACK_BOT_TOKEN",
        ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"): "SLACK_SIGNING_SECRET is set: for HTTP mode",
    }
    for names, message in cases.items():
        env = {name: f"{name.lower()}-value-secret" for name in names}
        env["DISCORD_BOT_TOKEN"] = "discord-token-secret"  # Slack half set is still an error
        result = tribunal("run", env=env, cwd=tmp_path)
        assert result.returncode == 2 and message in result.stderr, (names, result.stderr)
        assert "secret" not in result.stderr.replace("SLACK_SIGNING_SECRET", "")
    http = tribunal("run", env={"SLACK_BOT_TOKEN": "xoxb-x", "TRIBUNAL_SLACK_MODE": "http"},
                    cwd=tmp_path)
    assert http.returncode == 2 and "needs SLACK_SIGNING_SECRET besides SLACK_BOT_TOKEN" \
        in http.stderr


def test_the_metrics_port_is_opened_in_replays_too(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = tribunal("demo", env={"TRIBUNAL_METRICS_PORT": str(port)})
    assert result.returncode == 2
    assert f"TRIBUNAL_METRICS_PORT: cannot listen on 127.0.0.1:{port}" in result.stderr

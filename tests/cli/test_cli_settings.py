"""Settings checked at start, as the operator sees them: exit 2, the variable or
key named, no traceback; room settings from transcripts and old databases."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "transcripts"
SECRET_VARS = ("SLACK_", "DISCORD_", "TRIBUNAL_", "OPENAI_", "ANTHROPIC_")


def tribunal(*args: str, db: Path, stdin: str | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_VARS)}
    # The checkout under test first, whatever the working directory (an
    # editable install elsewhere must not answer `-m bot`).
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), clean.get("PYTHONPATH")]))
    clean.update({"TRIBUNAL_DATABASE": str(db), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=clean,
        input=stdin, timeout=120, check=False, cwd=db.parent,
    )


def events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("command", [["run"], ["replay", "-"], ["demo"]])
def test_every_invalid_setting_stops_the_start_naming_it(tmp_path: Path,
                                                         command: list[str]) -> None:
    conf = tmp_path / "t.toml"
    conf.write_text('[defaults]\nstall_treshold = 2\n\n[[channels]]\nplatform = "slak"\n'
                    'channel = "C1"\n', encoding="utf-8")
    result = tribunal(*command, db=tmp_path / "x.db", stdin="", env={
        "TRIBUNAL_CONFIG": str(conf),
        "TRIBUNAL_MAX_ROUNDS": "0",
        "TRIBUNAL_SIMILARITY_THRESHOLD": "0.5",
        "TRIBUNAL_ARBITER_BACKEND": "command",
        "TRIBUNAL_STALL_TRESHOLD": "3",
        "SLACK_BOT_TOKEN": "xoxb-never-shown", "SLACK_APP_TOKEN": "xapp-never-shown",
    })
    assert result.returncode == 2, result.stderr
    err = result.stderr
    assert "Traceback" not in err and "never-shown" not in err
    for named in ("TRIBUNAL_MAX_ROUNDS:", "TRIBUNAL_SIMILARITY_THRESHOLD is no longer a setting",
                  "[defaults] stall_treshold: unknown key (did you mean 'stall_threshold'?)",
                  "[[channels]] #1 platform:", "TRIBUNAL_ARBITER_COMMAND",
                  "TRIBUNAL_STALL_TRESHOLD is not a Tribunal setting"):
        assert named in err, err
    assert not (tmp_path / "x.db").exists()  # stopped before touching anything


def test_run_with_half_a_slack_configuration_names_what_is_missing(tmp_path: Path) -> None:
    result = tribunal("run", db=tmp_path / "r.db", env={"SLACK_BOT_TOKEN": "xoxb-1",
                                                       "DISCORD_BOT_TOKEN": "d"})
    assert result.returncode == 2 and "SLACK_APP_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_room_setting_in_a_transcript_stops_at_its_line_storing_nothing_bad(
    tmp_path: Path,
) -> None:
    lines = [
        {"type": "room", "room": "r1", "roles": {"owner": ["o"], "reviewer": ["r"]},
         "settings": {"max_rounds": 4}},
        {"type": "message", "id": "m1", "author": "kim", "text": "go"},
        {"type": "room", "room": "r1", "settings": {"max_rounds": 4, "stall_threshold": 0}},
        {"type": "message", "id": "m2", "author": "kim", "text": "never read"},
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    db = tmp_path / "t.db"
    result = tribunal("replay", str(transcript), "--json", db=db)
    assert result.returncode == 2
    assert "line 3: settings.stall_threshold: input should be greater than or equal to 1" in (
        result.stderr)
    assert "Traceback" not in result.stderr
    with sqlite3.connect(db) as conn:
        stored = dict(conn.execute("SELECT key, value FROM settings WHERE scope = 'channel'"))
        messages = [r[0] for r in conn.execute("SELECT message_id FROM messages")]
    assert "stall_threshold" not in stored and stored["max_rounds"] == "4"
    assert messages == ["m1"]


def test_bad_values_stored_by_an_older_release_fall_back_to_defaults(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    path = TRANSCRIPTS / "circular_en.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    first.write_text("".join(lines[:2]), encoding="utf-8")
    second.write_text("".join(lines[2:]), encoding="utf-8")
    assert tribunal("replay", str(first), "--json", db=db).returncode == 0
    with sqlite3.connect(db) as conn:  # what an older release could have left behind
        conn.execute("UPDATE settings SET value = '\"2\"' WHERE key = 'stall_threshold'")
        conn.executemany(
            "INSERT OR REPLACE INTO settings (scope, scope_id, key, value) VALUES (?, ?, ?, ?)",
            [("channel", "console:r1", "similarity_threshold", "0.7"),
             ("room", "console:r1:", "max_rounds", "500")])
    result = tribunal("replay", str(second), "--json", db=db)
    assert result.returncode == 0, result.stderr
    assert "stall_threshold" in result.stderr and "the default is used" in result.stderr
    assert "max_rounds" in result.stderr and "similarity_threshold" in result.stderr
    # The defaults (stall threshold 2, max rounds 6) give the run its usual deadlock.
    assert events(result.stdout)[0]["trigger"] == "no_progress"


@pytest.mark.parametrize(("ids", "said"), [
    ("1,4", "TRIBUNAL_DISCORD_SHARD_IDS=1,4: shard 4 is not below "
            "TRIBUNAL_DISCORD_SHARD_COUNT=4 (its shards are 0 to 3)"),
    ("2,2,0", "TRIBUNAL_DISCORD_SHARD_IDS=2,2,0: shard 2 is named twice"),
    ("5,9,1,1", "TRIBUNAL_DISCORD_SHARD_IDS=5,9,1,1: shards 5, 9 are not below "
                "TRIBUNAL_DISCORD_SHARD_COUNT=4 (its shards are 0 to 3); shard 1 is named "
                "twice"),
])
def test_shard_ids_impossible_on_their_own_stop_the_start_saying_which(
    tmp_path: Path, ids: str, said: str
) -> None:
    result = tribunal("run", db=tmp_path / "s.db", env={
        "DISCORD_BOT_TOKEN": "d", "TRIBUNAL_DISCORD_SHARD_COUNT": "4",
        "TRIBUNAL_DISCORD_SHARD_IDS": ids})
    assert result.returncode == 2, result.stderr
    assert said in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "s.db").exists()  # stopped before touching anything

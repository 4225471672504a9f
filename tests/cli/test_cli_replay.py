"""`tribunal replay | demo | run` as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TRANSCRIPTS = Path(__file__).parent.parent / "transcripts"
SECRET_VARS = ("SLACK_", "DISCORD_", "TRIBUNAL_", "OPENAI_", "ANTHROPIC_")


def tribunal(*args: str, db: Path | None = None, stdin: str | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_VARS)}
    if db is not None:
        clean["TRIBUNAL_DATABASE"] = str(db)
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=clean,
        input=stdin, timeout=120, check=False,
    )


def events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_replay_json_emits_exactly_the_documented_events(tmp_path: Path) -> None:
    result = tribunal("replay", str(TRANSCRIPTS / "circular_en.jsonl"), "--json", db=tmp_path / "a.db")
    assert result.returncode == 0, result.stderr
    got = events(result.stdout)
    assert [e["event"] for e in got] == [
        "deadlock", "verdict", "answer_rejected", "answer_rejected", "escalation_answered",
        "approved",
    ]
    assert got[0] == {"event": "deadlock", "room": "r1", "after_message": "m8",
                      "trigger": "no_progress", "stalled_rounds": 2, "rounds": 3}
    assert set(got[1]) == {"event", "room", "verdict", "source", "text", "options"}
    assert got[1]["verdict"] == "ESCALATE" and got[1]["source"] == "none"
    assert all(set(o) == {"n", "label"} for o in got[1]["options"])  # type: ignore[union-attr]
    assert got[2] == {"event": "answer_rejected", "room": "r1", "by": "mallory",
                      "reason": "not_allowed"}
    assert got[3]["reason"] == "out_of_range"
    assert got[4] == {"event": "escalation_answered", "room": "r1", "option": 2, "by": "alice",
                      "kind": "digit"}
    assert got[5] == {"event": "approved", "room": "r1", "after_message": "m14"}


def test_replay_human_output_shows_the_posted_verdict(tmp_path: Path) -> None:
    result = tribunal("replay", str(TRANSCRIPTS / "two_rooms.jsonl"), db=tmp_path / "h.db")
    assert result.returncode == 0, result.stderr
    assert "⚖️ 중재자가 검토 중입니다" in result.stdout
    assert "ESCALATE 사용자 결정이 필요합니다" in result.stdout
    # max_rounds while findings are still moving: going on is the first option (by design).
    assert "1. 계속 진행" in result.stdout and "2. 오너 의견대로 진행" in result.stdout
    assert "deadlock: max_rounds" in result.stdout and "deadlock: needs_context" in result.stdout


def test_malformed_line_exits_2_after_keeping_what_came_before(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    result = tribunal("replay", str(TRANSCRIPTS / "malformed.jsonl"), "--json", db=db)
    assert result.returncode == 2
    assert "line 5" in result.stderr
    assert [e["event"] for e in events(result.stdout)] == ["deadlock", "verdict"]
    import sqlite3

    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT message_id FROM messages ORDER BY seq")]
    assert ids == ["m1", "m2", "m3"]


def _split_runs(path: Path, cut: int, tmp: Path, name: str) -> tuple[list[object], list[object]]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    whole = tribunal("replay", str(path), "--json", db=tmp / f"{name}-whole.db")
    first, second = tmp / f"{name}-1.jsonl", tmp / f"{name}-2.jsonl"
    first.write_text("".join(lines[:cut]), encoding="utf-8")
    second.write_text("".join(lines[cut:]), encoding="utf-8")
    db = tmp / f"{name}-halves.db"
    one = tribunal("replay", str(first), "--json", db=db)
    two = tribunal("replay", str(second), "--json", db=db)
    assert whole.returncode == one.returncode == two.returncode == 0, (one.stderr, two.stderr)
    return events(whole.stdout), events(one.stdout) + events(two.stdout)


def test_two_processes_in_halves_match_one_run(tmp_path: Path) -> None:
    path = TRANSCRIPTS / "circular_en.jsonl"
    # Cuts at turn boundaries: before the deadlock, right after it, while the
    # escalation is pending, between rejected answers, before the approval.
    for cut in (2, 5, 8, 10, 12, 14):
        whole, halves = _split_runs(path, cut, tmp_path, f"c{cut}")
        assert halves == whole, f"split after line {cut}"


def test_two_processes_split_inside_a_turn(tmp_path: Path) -> None:
    # Lines 5 (m4) and 6 (m4b) are one owner turn: the first process closes it
    # at its end of input, the second reopens it, as a single run would see it.
    whole, halves = _split_runs(TRANSCRIPTS / "circular_en.jsonl", 5, tmp_path, "mid")
    assert halves == whole
    assert whole[0]["event"] == "deadlock"


def test_two_processes_multi_room(tmp_path: Path) -> None:
    whole, halves = _split_runs(TRANSCRIPTS / "two_rooms.jsonl", 4, tmp_path, "two")
    assert halves == whole
    assert [e["event"] for e in whole] == ["deadlock", "verdict", "deadlock", "verdict"]


def test_replaying_the_same_file_again_is_deduplicated(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    tribunal("replay", str(TRANSCRIPTS / "circular_en.jsonl"), "--json", db=db)
    again = tribunal("replay", str(TRANSCRIPTS / "circular_en.jsonl"), "--json", db=db)
    assert again.returncode == 0 and events(again.stdout) == []


def test_replay_from_stdin_and_missing_file(tmp_path: Path) -> None:
    text = (TRANSCRIPTS / "malformed.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    result = tribunal("replay", "-", "--json", db=tmp_path / "s.db", stdin="\n".join(text))
    assert result.returncode == 0 and len(events(result.stdout)) == 2
    missing = tribunal("replay", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_demo_deadlocks_escalates_and_is_answered_with_a_digit(tmp_path: Path) -> None:
    result = tribunal("demo", "--json", db=tmp_path / "unused.db")
    assert result.returncode == 0, result.stderr
    got = events(result.stdout)
    assert [e["event"] for e in got] == ["deadlock", "verdict", "escalation_answered", "approved"]
    assert got[1]["verdict"] == "ESCALATE"
    assert got[2]["kind"] == "digit"
    human = tribunal("demo")
    assert human.returncode == 0 and "✅ 사용자 결정: 2." in human.stdout
    assert not (tmp_path / "unused.db").exists()  # the demo uses its own temporary database


def test_run_without_credentials_says_what_to_set(tmp_path: Path) -> None:
    result = tribunal("run", db=tmp_path / "r.db")
    assert result.returncode == 2
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_BOT_TOKEN"):
        assert name in result.stderr


def test_help_documents_every_command() -> None:
    result = tribunal("--help")
    assert result.returncode == 0
    for command in ("run", "replay", "demo"):
        assert command in result.stdout


def test_broken_config_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[defaults\nstall_threshold = 2", encoding="utf-8")
    result = tribunal("demo", env={"TRIBUNAL_CONFIG": str(bad)})
    assert result.returncode == 2 and "not valid TOML" in result.stderr
    assert "Traceback" not in result.stderr
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[[channels]]\nplatform = "slack"\n', encoding="utf-8")
    result = tribunal("demo", env={"TRIBUNAL_CONFIG": str(wrong)})
    assert result.returncode == 2 and "channel" in result.stderr
    missing = tribunal("demo", env={"TRIBUNAL_CONFIG": str(tmp_path / "none.toml")})
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_config_file_binds_channels_and_sets_defaults(tmp_path: Path) -> None:
    conf = tmp_path / "tribunal.toml"
    conf.write_text(
        '[defaults]\nstall_threshold = 1\n\n[[channels]]\nplatform = "console"\n'
        'channel = "cfg"\nowner = ["o"]\nreviewer = ["r"]\n', encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "message", "id": "x1", "author": "kim", "text": "go"},
        {"type": "message", "id": "x2", "author": "o", "text": "STEP_DONE did `f()` in a.py"},
        {"type": "message", "id": "x3", "author": "r", "text": "a.py:3 `f()` is wrong"},
        {"type": "message", "id": "x4", "author": "o", "text": "`f()` in a.py is right"},
        {"type": "message", "id": "x5", "author": "r", "text": "`f()` is still wrong at a.py:3"},
    ]
    room = {"type": "room", "room": "cfg"}  # no roles: the TOML file binds them
    transcript.write_text("\n".join(json.dumps(x) for x in [room, *lines]), encoding="utf-8")
    result = tribunal("replay", str(transcript), "--json", db=tmp_path / "c.db",
                      env={"TRIBUNAL_CONFIG": str(conf)})
    assert result.returncode == 0, result.stderr
    first = events(result.stdout)[0]
    assert first["trigger"] == "no_progress" and first["stalled_rounds"] == 1


def test_message_ids_are_unique_per_room_not_per_database(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    first = tribunal("replay", str(TRANSCRIPTS / "circular_en.jsonl"), "--json", db=db)
    demo = tribunal("demo", "--json", "--database", str(db))  # also uses ids m1, m2, ...
    assert first.returncode == demo.returncode == 0
    assert [e["event"] for e in events(demo.stdout)] == [
        "deadlock", "verdict", "escalation_answered", "approved"]


def test_a_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_VARS)}
    result = subprocess.run(
        f'"{sys.executable}" -m bot demo --json | head -1', shell=True, capture_output=True,
        text=True, env=clean, timeout=120, check=False,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["event"] == "deadlock"
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr


def test_replay_json_names_the_stuck_finding(tmp_path: Path) -> None:
    # A partial concession: F1 is fixed, F2 is refused and repeated
    # twice; the round-level counter is below the threshold, F2's is not.
    corpus = TRANSCRIPTS.parent / "detection" / "corpus"
    result = tribunal("replay", str(corpus / "ko_07.jsonl"), "--json", db=tmp_path / "f.db")
    assert result.returncode == 0, result.stderr
    [deadlock] = [e for e in events(result.stdout) if e["event"] == "deadlock"]
    assert deadlock["after_message"] == "m7" and deadlock["trigger"] == "no_progress"
    assert deadlock["finding"] == "F2" and deadlock["finding_rounds"] == 2
    assert deadlock["stalled_rounds"] == 1


def test_choosing_one_side_of_a_contradiction_is_a_ruling(tmp_path: Path) -> None:
    # No model: the contradiction escalates with keep-F1 / keep-F3 / stop; the
    # human's "1" upholds F1 and retires F3, as an arbiter's ruling would.
    corpus = TRANSCRIPTS.parent / "detection" / "corpus"
    transcript = (corpus / "multi_03.jsonl").read_text(encoding="utf-8")
    answer = json.dumps({"type": "message", "id": "m99", "author": "minji", "text": "1"})
    result = tribunal("replay", "-", "--json", db=tmp_path / "rule.db",
                      stdin=transcript + answer + "\n")
    assert result.returncode == 0, result.stderr
    got = events(result.stdout)
    verdict = next(e for e in got if e["event"] == "verdict")
    assert [o["label"] for o in verdict["options"]][:2] == ["F1 유지 (F3: 더 이상 적용되지 않음)", "F3 유지 (F1: 더 이상 적용되지 않음)"]
    answered = next(e for e in got if e["event"] == "escalation_answered")
    assert answered["option"] == 1 and answered["ruling"] == {"upheld": "F1", "retired": "F3"}


def test_stopping_a_contradiction_ends_the_task(tmp_path: Path) -> None:
    # Option 3 ends the task: its ledger goes, and the next human message opens
    # a new task whose first finding is F1 again.
    import sqlite3

    corpus = TRANSCRIPTS.parent / "detection" / "corpus"
    transcript = (corpus / "multi_03.jsonl").read_text(encoding="utf-8")
    more = [
        {"type": "message", "id": "m99", "author": "minji", "text": "3번"},
        {"type": "message", "id": "m100", "author": "minji", "text": "감사 로그를 추가해 주세요."},
        {"type": "message", "id": "m101", "author": "sec-bot",
         "text": "`authz/audit.py`에서 거부된 권한 확인이 기록되지 않습니다. 기록을 추가해 주십시오."},
    ]
    db = tmp_path / "stop.db"
    result = tribunal("replay", "-", "--json", db=db,
                      stdin=transcript + "".join(json.dumps(m) + "\n" for m in more))
    assert result.returncode == 0, result.stderr
    got = events(result.stdout)
    assert [e["event"] for e in got] == ["deadlock", "verdict", "escalation_answered"]
    verdict = got[1]
    assert verdict["options"][2] == {"n": 3, "label": "작업 중단"}  # type: ignore[index]
    assert got[2] == {"event": "escalation_answered", "room": "multi_03", "option": 3,
                      "by": "minji", "kind": "digit", "task_ended": True}
    with sqlite3.connect(db) as conn:
        [(raw,)] = conn.execute("SELECT state FROM rooms").fetchall()
        [(confirmation,)] = conn.execute(
            "SELECT payload FROM outbox WHERE kind = 'confirmation'").fetchall()
    state = json.loads(raw)
    assert state["task_active"] is True  # the new task, opened by m100
    assert [(f["label"], f["author"]) for f in state["findings"]] == [("F1", "sec-bot")]
    assert "작업을 종료했습니다" in json.loads(confirmation)["text"]

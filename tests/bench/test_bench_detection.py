"""The detection benchmark's scoring on a tiny corpus written here (no timing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import bench_detection
from bench.bench_detection import agent_turns, run
from bench.harness import Options

ROOM = {"type": "room", "language": "en",
        "roles": {"owner": ["owner-bot"], "reviewer": ["reviewer-bot"]}}


def _case(folder: Path, name: str, texts: list[tuple[str, str]], label: dict[str, object]
          ) -> None:
    lines = [json.dumps({**ROOM, "room": name})] + [
        json.dumps({"type": "message", "id": f"m{i}", "author": who, "text": text})
        for i, (who, text) in enumerate(texts, start=1)]
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = {"case": name, "language": "en", "reviewers": 1, "rule": None, "reason": "test"}
    (folder / f"{name}.label.json").write_text(json.dumps({**base, **label}), encoding="utf-8")


async def test_scores_a_stuck_and_a_productive_room(tmp_path: Path) -> None:
    _case(tmp_path, "blocked", [
        ("alice", "Please fix the login bug."),
        ("owner-bot", "BLOCKED: I need access to the staging database."),
        ("reviewer-bot", "Agreed, nothing can move without access."),
    ], {"category": "stuck_blocked", "deadlock": True, "trigger": "blocked",
        "after_message": "m2"})
    _case(tmp_path, "approved", [
        ("alice", "Please fix the login bug."),
        ("owner-bot", "STEP_DONE fixed `login()` in src/auth.py:42."),
        ("reviewer-bot", "APPROVED, thanks."),
    ], {"category": "productive_raise_then_approve", "deadlock": False, "trigger": None,
        "after_message": None})
    (tmp_path / "half.label.json").write_text("{", encoding="utf-8")  # a case being written
    rows = {r.name: r for r in await run(Options(corpus=tmp_path))}
    assert rows["detection_recall"].value == 1.0 and rows["detection_recall"].met
    assert rows["detection_exact_message"].value == 1.0
    assert rows["detection_false_alarms"].value == 0 and rows["detection_false_alarms"].met
    assert rows["detection_latency_rounds"].value == 0.0
    assert rows["contradiction_recall"].value is None  # no room with two reviewers
    assert "1 unreadable" in (rows["detection_recall"].note or "")


async def test_empty_corpus_gives_rows_without_numbers(tmp_path: Path) -> None:
    rows = await run(Options(corpus=tmp_path))
    assert rows and all(r.value is None and r.met is None and r.note for r in rows)


def test_turns_count_agent_runs_and_several_reviewers_as_one() -> None:
    lines = [json.dumps({"type": "room", "room": "r",
                         "roles": {"owner": ["o"], "reviewer": ["r1", "r2"]}})] + [
        json.dumps({"type": "message", "id": f"m{i}", "author": a, "text": "x"})
        for i, a in enumerate(["alice", "o", "o", "r1", "r2", "o", "alice"], start=1)]
    assert agent_turns(lines) == {"m1": 0, "m2": 1, "m3": 1, "m4": 2, "m5": 2, "m6": 3, "m7": 3}


async def test_the_held_out_rows_come_from_the_held_out_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _case(tmp_path, "approved", [
        ("alice", "Please fix the login bug."),
        ("owner-bot", "STEP_DONE fixed `login()` in src/auth.py:42."),
        ("reviewer-bot", "APPROVED, thanks."),
    ], {"category": "productive", "deadlock": False, "trigger": None, "after_message": None})
    monkeypatch.setattr(bench_detection, "HELDOUT", tmp_path)
    rows = {r.name: r for r in await bench_detection.run_heldout(Options(corpus=Path("unused")))}
    assert rows["detection_false_alarms_heldout"].value == 0
    assert rows["detection_recall_heldout"].value is None  # no stuck room in this set
    # Several held-out folders are read together, into one set of figures.
    second = tmp_path / "second"
    second.mkdir()
    _case(second, "blocked", [
        ("alice", "Please fix the login bug."),
        ("owner-bot", "BLOCKED: I need access to the staging database."),
    ], {"category": "stuck_blocked", "deadlock": True, "trigger": "blocked",
        "after_message": "m2"})
    monkeypatch.setattr(bench_detection, "HELDOUT", (tmp_path, second))
    rows = {r.name: r for r in await bench_detection.run_heldout(Options(corpus=Path("unused")))}
    assert rows["detection_recall_heldout"].value == 1.0
    assert rows["detection_false_alarms_heldout"].value == 0
    assert "2 cases in " in (rows["detection_recall_heldout"].note or "")
    assert not any(name in rows for name in ("detection_recall", "detection_false_alarms"))

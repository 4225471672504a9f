"""A verdict that cannot be recorded still ends the arbitration with a posted ESCALATE."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_world import World, deadlock, make_world

from bot.arbiter.service import Arbitrator
from bot.config import Settings
from bot.models import MessageKind
from storage.sqlite_writes import SqliteTransaction

REVISE = "REVISE 리뷰어가 맞습니다. `src/auth.py` 42번째 줄에 null 세션 검사를 추가하세요."


class Scripted:
    name = "scripted"
    model = "scripted-1"

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    async def complete(self, system: str, prompt: str) -> str:
        self.calls += 1
        return self.text


def settings() -> Settings:
    return Settings(_env_file=None, admin_ids=["boss"])  # type: ignore[call-arg]


async def world_with(tmp_path: Path, backend: Scripted) -> World:
    s = settings()
    return await make_world(tmp_path / "v.db", s, quiet_close=False,
                            arbitrator=Arbitrator(s, backend=backend))


def refuse_verdicts(monkeypatch: pytest.MonkeyPatch, refused: set[str]) -> list[str]:
    """Recording a verdict of these kinds fails inside its transaction."""
    seen: list[str] = []
    original = SqliteTransaction.update_arbitration

    async def update(self: SqliteTransaction, arbitration_id: int, **fields: Any) -> bool:
        if fields.get("verdict") is not None:
            seen.append(str(fields["verdict"]))
            if fields["verdict"] in refused:
                raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return await original(self, arbitration_id, **fields)

    monkeypatch.setattr(SqliteTransaction, "update_arbitration", update)
    return seen


async def test_a_verdict_that_cannot_be_recorded_becomes_a_posted_escalate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = Scripted(REVISE)
    w = await world_with(tmp_path, backend)
    seen = refuse_verdicts(monkeypatch, {"REVISE"})
    try:
        await deadlock(w)
        assert seen == ["REVISE", "ESCALATE"]
        rows = await w.storage._all("SELECT status, verdict, source, overrides FROM arbitrations")
        assert len(rows) == 1 and rows[0]["status"] == "done"
        assert (rows[0]["verdict"], rows[0]["source"]) == ("ESCALATE", "fallback")
        assert "recording the verdict failed: UnicodeEncodeError" in rows[0]["overrides"]
        [(_, _, verdict)] = w.transport.edits  # the progress message became the ESCALATE
        assert verdict.kind is MessageKind.VERDICT and verdict.text.startswith("ESCALATE")
        assert verdict.escalation_id is not None and len(verdict.options) >= 2
        state = await w.engine.load_state(w.engine_room())
        assert state.awaiting_escalation == verdict.escalation_id
        assert state.arbitrations_since_human == 1  # counted once, not for the failed try
        assert await w.storage.unfinished_arbitrations() == []
        # Recovery finds nothing to redo: the model is not called again.
        calls = backend.calls
        w.clock.advance(60)
        await w.engine.tick()
        await w.engine.drain()
        assert backend.calls == calls
    finally:
        await w.storage.close()


async def test_when_not_even_the_escalate_can_be_recorded_nothing_stays_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = Scripted(REVISE)
    w = await world_with(tmp_path, backend)
    refuse_verdicts(monkeypatch, {"REVISE", "ESCALATE"})
    try:
        room = w.engine_room()
        await deadlock(w)
        rows = await w.storage._all("SELECT status, overrides FROM arbitrations")
        assert [r["status"] for r in rows] == ["cancelled"]
        assert rows[0]["overrides"] == ["no verdict could be recorded: UnicodeEncodeError"]
        assert await w.storage.unfinished_arbitrations() == []
        [(_, _, notice)] = w.transport.edits  # the progress message does not stay forever
        assert notice.kind is MessageKind.NOTICE and "사용자 결정" in notice.text
        state = await w.engine.load_state(room)
        assert state.awaiting_escalation is None and state.arbitrations_since_human == 0
        calls = backend.calls
        w.clock.advance(60)
        await w.engine.tick()
        await w.engine.drain()
        assert backend.calls == calls  # no retry loop against the model
    finally:
        await w.storage.close()


async def test_a_lone_surrogate_from_the_model_is_stored_repaired(tmp_path: Path) -> None:
    w = await world_with(tmp_path, Scripted(REVISE + " \ud800 끝\x00"))
    try:
        await deadlock(w)
        rows = await w.storage._all(
            "SELECT status, verdict, raw_output, verdict_text FROM arbitrations")
        assert [(r["status"], r["verdict"]) for r in rows] == [("done", "REVISE")]
        assert rows[0]["raw_output"].endswith(" \ufffd 끝\ufffd")
        assert "\ufffd" in rows[0]["verdict_text"]
        [(_, _, verdict)] = w.transport.edits
        assert verdict.text.startswith("REVISE") and "\ud800" not in verdict.text
    finally:
        await w.storage.close()

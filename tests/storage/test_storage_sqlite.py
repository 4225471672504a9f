"""The SQLite backend on real files."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from storage.base import EscalationRow, MessageRow
from storage.sqlite import SqliteStorage, migrations

NOW = datetime(2026, 11, 29, tzinfo=UTC)


async def opened(path: Path) -> SqliteStorage:
    storage = SqliteStorage(str(path))
    await storage.open()
    return storage


async def test_migrations_apply_once_and_use_wal(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    s1 = await opened(db)
    await s1.close()
    s2 = await opened(db)  # re-opening applies nothing twice
    versions = await s2._all("SELECT version FROM schema_version")
    assert [v["version"] for v in versions] == [n for n, _ in migrations()]
    mode = await s2._all("PRAGMA journal_mode")
    assert mode[0]["journal_mode"] == "wal"
    await s2.close()


async def test_messages_are_deduplicated_by_platform_id(tmp_path: Path) -> None:
    s = await opened(tmp_path / "s.db")
    row = MessageRow(platform="slack", message_id="C1:1.0", room_id="slack:C1:1.0",
                     author="U1", role="user", text="hi", ts=NOW)
    async with s.transaction() as tx:
        first = await tx.insert_message(row)
        again = await tx.insert_message(row)
    async with s.transaction() as tx:
        other_platform = await tx.insert_message(row.model_copy(update={"platform": "discord"}))
    assert first is not None and again is None and other_platform is not None
    await s.close()


async def test_a_failed_unit_of_work_leaves_nothing(tmp_path: Path) -> None:
    s = await opened(tmp_path / "s.db")
    with pytest.raises(RuntimeError):
        async with s.transaction() as tx:
            await tx.set_setting("channel", "x", "paused", True)
            raise RuntimeError("boom")
    assert await s.get_settings("channel", "x") == {}
    await s.close()


async def test_escalation_answer_is_compare_and_set_across_connections(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    stores = [await opened(db) for _ in range(4)]
    async with stores[0].transaction() as tx:
        await tx.create_escalation(EscalationRow(
            id=1, room_id="r", options=[{"n": 1, "label": "a"}, {"n": 2, "label": "b"}],
            allowed=["u"], status="pending", created_at=NOW))

    async def answer(store: SqliteStorage, who: str) -> bool:
        async with store.transaction() as tx:
            return await tx.answer_escalation(1, option=1, label="a", text=None, kind="button",
                                              by=who, at=NOW)

    results = await asyncio.gather(*(answer(s, f"user{i}") for i, s in enumerate(stores)))
    assert sorted(results) == [False, False, False, True]
    row = await stores[0].get_escalation(1)
    assert row is not None and row.status == "answered"
    assert row.answered_by == f"user{results.index(True)}"
    for s in stores:
        await s.close()


async def test_context_queries_are_bounded(tmp_path: Path) -> None:
    s = await opened(tmp_path / "s.db")
    async with s.transaction() as tx:
        for i in range(30):
            role = "owner" if i % 2 == 0 else "reviewer"
            await tx.insert_message(MessageRow(
                platform="p", message_id=f"a{i}", room_id="r", author=role, role=role,
                text=f"turn {i}", ts=NOW, turn_no=i + 1))
        for i in range(5):
            await tx.insert_message(MessageRow(
                platform="p", message_id=f"h{i}", room_id="r", author="alice", role="user",
                text=f"human {i}", ts=NOW))
    rows, omitted = await s.agent_turn_messages("r", 8)
    assert [r.turn_no for r in rows] == list(range(23, 31)) and omitted == 22
    humans, left_out = await s.human_messages("r", 0, 3)  # the first and the latest 3
    assert [h.text for h in humans] == ["human 0", "human 2", "human 3", "human 4"]
    assert left_out == 1
    humans, left_out = await s.human_messages("r", 0, 4)
    assert [h.text for h in humans] == [f"human {i}" for i in range(5)] and left_out == 0
    rows, omitted = await s.agent_turn_messages("r", 8, since_seq=21)  # a later task's
    assert [r.turn_no for r in rows] == list(range(23, 31)) and omitted == 2  # turns 21, 22
    rows, omitted = await s.agent_turn_messages("r", 8, since_seq=26)
    assert [r.turn_no for r in rows] == list(range(26, 31)) and omitted == 0
    plan = await s._all(
        "EXPLAIN QUERY PLAN SELECT DISTINCT turn_no FROM messages WHERE room_id = ?"
        " AND turn_no IS NOT NULL ORDER BY turn_no DESC LIMIT 8", ("r",))
    assert any("messages_by_room_turn" in str(p["detail"]) for p in plan)
    plan = await s._all(
        "EXPLAIN QUERY PLAN SELECT COUNT(*) AS n FROM messages WHERE room_id = ?"
        " AND role = 'user' AND seq > ? AND seq < ?", ("r", 1, 9))
    assert any("COVERING INDEX messages_by_room_role" in str(p["detail"]) for p in plan)
    await s.close()


async def test_migration_keeps_messages_and_moves_uniqueness_to_rooms(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:  # a database as version 2 left it
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for version, sql in migrations()[:2]:
            for statement in sql.split(";"):
                code = "\n".join(x for x in statement.splitlines() if not x.lstrip().startswith("--"))
                if code.strip():
                    conn.execute(code)
            conn.execute("INSERT INTO schema_version VALUES (?)", (version,))
        conn.execute("INSERT INTO messages (platform, message_id, room_id, author, role, text, ts,"
                     " epoch) VALUES ('console', 'm1', 'console:a:', 'u', 'user', 'kept', 'x', 0)")
    s = await opened(db)
    rows = await s._all("SELECT seq, text FROM messages")
    assert rows == [{"seq": 1, "text": "kept"}]
    row = MessageRow(platform="console", message_id="m1", room_id="console:b:", author="u",
                     role="user", text="other room", ts=NOW)
    async with s.transaction() as tx:
        assert await tx.insert_message(row) == 2  # same id, another room
        assert await tx.insert_message(row) is None  # same id, same room
    await s.close()

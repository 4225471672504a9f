"""The SQLite backend on real files: what only SQLite does (the storage contract
both backends keep is test_storage_contract.py)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from storage.base import MessageRow
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


async def test_instances_opening_a_new_file_together_wait_for_the_wal_switch(
        tmp_path: Path) -> None:
    # SQLite refuses the switch to WAL at once (no busy handler) while another
    # connection reads or switches the same fresh file; it happened in a few
    # percent of four-way starts, so many fresh files are tried here.
    for attempt in range(60):
        stores = [SqliteStorage(str(tmp_path / f"{attempt}.db")) for _ in range(4)]
        results = await asyncio.gather(*(s.open() for s in stores), return_exceptions=True)
        for s in stores:
            await s.close()
        assert [r for r in results if r is not None] == [], f"attempt {attempt}"
    reopened = await opened(tmp_path / "0.db")
    mode = await reopened._all("PRAGMA journal_mode")
    await reopened.close()
    assert mode[0]["journal_mode"] == "wal"


async def test_context_queries_use_the_turn_index(tmp_path: Path) -> None:
    # What the queries return is the storage contract (test_storage_contract);
    # that they stay bounded on a large room is SQLite's query plan.
    s = await opened(tmp_path / "s.db")
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

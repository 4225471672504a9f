"""SQLite through aiosqlite: the embedded default backend.

One connection in WAL mode; an asyncio lock serialises units of work so two
rooms' transactions never interleave on the shared connection.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from importlib import resources
from typing import Any

import aiosqlite

from storage.base import (
    ArbitrationRow,
    AuditRow,
    EscalationRow,
    MessageRow,
    OutboxRow,
    Storage,
    Transaction,
)
from storage.sqlite_writes import SqliteTransaction

_JSON_FIELDS = {"evidence", "options", "overrides", "allowed", "payload"}


def _row(row: aiosqlite.Row) -> dict[str, Any]:
    out = dict(row)
    for key in _JSON_FIELDS & out.keys():
        if out[key] is not None:
            out[key] = json.loads(out[key])
    return out


def migrations() -> list[tuple[int, str]]:
    folder = resources.files("storage").joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            found.append((int(entry.name.split("_", 1)[0]), entry.read_text(encoding="utf-8")))
    return sorted(found)


class SqliteStorage(Storage):
    def __init__(self, path: str) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("storage is not open")
        return self._db

    async def open(self) -> None:
        # IMMEDIATE: the sqlite3 module opens the write transaction itself right
        # before the first write of a unit of work, in the same call (no extra
        # round trip to aiosqlite's thread); `commit()` ends it.
        self._db = await aiosqlite.connect(self.path, isolation_level="IMMEDIATE")
        self._db.row_factory = aiosqlite.Row
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.execute("PRAGMA synchronous=NORMAL")
        await self._db.execute("PRAGMA busy_timeout=5000")
        await self._db.execute("PRAGMA foreign_keys=ON")
        try:
            await self._migrate()
        except BaseException:
            await self.close()  # aiosqlite's thread would keep the process alive
            raise

    async def _migrate(self) -> None:
        async with self._lock:
            if self.db.in_transaction:
                await self.db.commit()
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                await self.db.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
                )
                async with self.db.execute("SELECT MAX(version) FROM schema_version") as cur:
                    current = (await cur.fetchone())[0] or 0  # type: ignore[index]
                for version, sql in migrations():
                    if version > current:
                        code = "\n".join(
                            line for line in sql.splitlines() if not line.lstrip().startswith("--")
                        )
                        for statement in code.split(";"):
                            if statement.strip():
                                await self.db.execute(statement)
                        await self.db.execute(
                            "INSERT INTO schema_version (version) VALUES (?)", (version,)
                        )
                await self.db.commit()
            except BaseException:
                await self.db.rollback()
                raise

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        async with self._lock:
            self._owner = asyncio.current_task()
            try:
                try:
                    yield SqliteTransaction(self.db)
                except BaseException:
                    if self.db.in_transaction:
                        await self.db.rollback()
                    raise
                if self.db.in_transaction:
                    await self.db.commit()
            finally:
                self._owner = None

    async def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        if self._owner is not None and self._owner is asyncio.current_task():
            # A read inside our own transaction: it must see its writes, not wait.
            async with self.db.execute(sql, params) as cursor:
                return [_row(r) for r in await cursor.fetchall()]
        async with self._lock, self.db.execute(sql, params) as cursor:
            return [_row(r) for r in await cursor.fetchall()]

    async def _one(self, sql: str, params: tuple[Any, ...] = ()) -> dict[str, Any] | None:
        rows = await self._all(sql, params)
        return rows[0] if rows else None

    async def load_room_state(self, room_id: str) -> str | None:
        row = await self._one("SELECT state FROM rooms WHERE id = ?", (room_id,))
        return None if row is None else str(row["state"])

    async def unprocessed_messages(self, room_id: str | None = None) -> list[MessageRow]:
        if room_id is None:
            rows = await self._all("SELECT * FROM messages WHERE processed = 0 ORDER BY seq")
        else:
            rows = await self._all(
                "SELECT * FROM messages WHERE processed = 0 AND room_id = ? ORDER BY seq",
                (room_id,),
            )
        return [MessageRow.model_validate(r) for r in rows]

    async def rooms_with_open_turns(self) -> list[str]:
        rows = await self._all(
            "SELECT id FROM rooms WHERE json_extract(state, '$.open_turn') IS NOT NULL"
        )
        return [str(r["id"]) for r in rows]

    async def latest_room(self, platform: str, channel: str) -> str | None:
        row = await self._one(
            "SELECT id FROM rooms WHERE platform = ? AND channel = ?"
            " ORDER BY last_activity_at DESC LIMIT 1",
            (platform, channel),
        )
        return None if row is None else str(row["id"])

    async def get_bindings(self, platform: str, channel: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for row in await self._all(
            "SELECT role, user_id FROM bindings WHERE platform = ? AND channel = ?",
            (platform, channel),
        ):
            out.setdefault(row["role"], []).append(row["user_id"])
        return out

    async def get_settings(self, scope: str, scope_id: str) -> dict[str, Any]:
        rows = await self._all(
            "SELECT key, value FROM settings WHERE scope = ? AND scope_id = ?", (scope, scope_id)
        )
        return {row["key"]: json.loads(row["value"]) for row in rows}

    async def get_arbitration(self, arbitration_id: int) -> ArbitrationRow | None:
        row = await self._one("SELECT * FROM arbitrations WHERE id = ?", (arbitration_id,))
        return None if row is None else ArbitrationRow.model_validate(_clean(row))

    async def unfinished_arbitrations(self) -> list[ArbitrationRow]:
        rows = await self._all(
            "SELECT * FROM arbitrations WHERE status IN ('pending', 'running') ORDER BY id"
        )
        return [ArbitrationRow.model_validate(_clean(r)) for r in rows]

    async def room_arbitrations(
        self, room_id: str, *, since: datetime | None = None, limit: int = 10
    ) -> list[ArbitrationRow]:
        rows = await self._all(
            "SELECT * FROM arbitrations WHERE room_id = ? AND status = 'done'"
            " AND created_at >= ? ORDER BY id DESC LIMIT ?",
            (room_id, since.isoformat() if since else "", limit),
        )
        return [ArbitrationRow.model_validate(_clean(r)) for r in reversed(rows)]

    async def get_escalation(self, escalation_id: int) -> EscalationRow | None:
        row = await self._one("SELECT * FROM escalations WHERE id = ?", (escalation_id,))
        return None if row is None else EscalationRow.model_validate(row)

    async def due_reminders(self, created_before: datetime) -> list[EscalationRow]:
        rows = await self._all(
            "SELECT * FROM escalations WHERE status = 'pending' AND reminded_at IS NULL"
            " AND created_at <= ? ORDER BY id",
            (created_before.isoformat(),),
        )
        return [EscalationRow.model_validate(r) for r in rows]

    async def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        row = await self._one("SELECT * FROM outbox WHERE id = ?", (outbox_id,))
        return None if row is None else OutboxRow.model_validate(row)

    async def pending_rooms(self, platforms: list[str], limit: int = 1000) -> list[str]:
        if not platforms:
            return []
        marks = ", ".join("?" for _ in platforms)
        rows = await self._all(
            "SELECT DISTINCT room_id FROM outbox WHERE status = 'pending'"
            f" AND substr(room_id, 1, instr(room_id, ':') - 1) IN ({marks}) LIMIT ?",
            (*platforms, limit),
        )
        return [str(r["room_id"]) for r in rows]

    async def pending_outbox(self, room_id: str, limit: int = 50) -> list[OutboxRow]:
        rows = await self._all(
            "SELECT * FROM outbox WHERE room_id = ? AND status = 'pending' ORDER BY id LIMIT ?",
            (room_id, limit),
        )
        return [OutboxRow.model_validate(r) for r in rows]

    async def human_messages(
        self, room_id: str, since_seq: int, limit: int
    ) -> tuple[list[MessageRow], int]:
        # Newest first through messages_by_room_role: `limit + 2` rows say whether
        # anything lies between the first message and the last `limit`.
        rows = await self._all(
            "SELECT * FROM messages WHERE room_id = ? AND role = 'user' AND seq >= ?"
            " AND processed = 1 ORDER BY seq DESC LIMIT ?",
            (room_id, since_seq, limit + 2),
        )
        if len(rows) <= limit + 1:
            return [MessageRow.model_validate(r) for r in reversed(rows)], 0
        first = await self._one(
            "SELECT * FROM messages WHERE room_id = ? AND role = 'user' AND seq >= ?"
            " AND processed = 1 ORDER BY seq LIMIT 1",
            (room_id, since_seq),
        )
        latest = rows[:limit]
        between = await self._one(
            # Counted on the index alone (no table reads): one entry per message.
            "SELECT COUNT(*) AS n FROM messages WHERE room_id = ? AND role = 'user'"
            " AND seq > ? AND seq < ?",
            (room_id, first["seq"] if first else since_seq, latest[-1]["seq"]),
        )
        kept = ([first] if first else []) + list(reversed(latest))
        return [MessageRow.model_validate(r) for r in kept], int(between["n"]) if between else 0

    async def agent_turn_messages(
        self, room_id: str, turns: int, since_seq: int = 0
    ) -> tuple[list[MessageRow], int]:
        # Walk messages_by_room_turn down from the newest turn; its entries carry
        # seq (the rowid), so turns before `since_seq` are skipped without reads.
        keep = [
            r["turn_no"]
            for r in await self._all(
                "SELECT DISTINCT turn_no FROM messages WHERE room_id = ? AND turn_no IS NOT NULL"
                " AND seq >= ? ORDER BY turn_no DESC LIMIT ?",
                (room_id, since_seq, turns),
            )
        ]
        if not keep:
            return [], 0
        first = min(keep)
        rows = await self._all(
            "SELECT * FROM messages WHERE room_id = ? AND turn_no >= ? AND seq >= ? AND role IN"
            " ('owner', 'reviewer') ORDER BY seq",
            (room_id, first, since_seq),
        )
        if len(keep) < turns:
            return [MessageRow.model_validate(r) for r in rows], 0  # the whole task is here
        # Agent turns are numbered densely per room: the task's earlier turns are
        # those from its first agent message's turn up to `first` (two index seeks).
        start = await self._one(
            "SELECT MIN(t) AS t FROM ("
            " SELECT * FROM (SELECT turn_no AS t FROM messages WHERE room_id = ?"
            "  AND role = 'owner' AND seq >= ? AND turn_no IS NOT NULL ORDER BY seq LIMIT 1)"
            " UNION ALL"
            " SELECT * FROM (SELECT turn_no AS t FROM messages WHERE room_id = ?"
            "  AND role = 'reviewer' AND seq >= ? AND turn_no IS NOT NULL ORDER BY seq LIMIT 1))",
            (room_id, since_seq, room_id, since_seq),
        )
        task_first = min(first, int(start["t"])) if start and start["t"] is not None else first
        return [MessageRow.model_validate(r) for r in rows], first - task_first

    async def list_audit(self, platform: str, channel: str, limit: int = 20) -> list[AuditRow]:
        rows = await self._all(
            "SELECT * FROM audit_log WHERE platform = ? AND channel = ? ORDER BY id DESC LIMIT ?",
            (platform, channel, limit),
        )
        return [AuditRow.model_validate(r) for r in rows]


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("options", "overrides"):
        if row.get(key) is None:
            row[key] = []
    if row.get("evidence") is None:
        row["evidence"] = {}
    return row

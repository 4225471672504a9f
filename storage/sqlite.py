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

_JSON_FIELDS = {"evidence", "options", "overrides", "allowed", "payload"}
_ARBITRATION_FIELDS = set(ArbitrationRow.model_fields) - {"id"}


def _dump(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


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


class SqliteTransaction(Transaction):
    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db

    async def insert_message(self, row: MessageRow) -> int | None:
        cursor = await self.db.execute(
            "INSERT OR IGNORE INTO messages (platform, message_id, room_id, author, role, text,"
            " ts, epoch, turn_no, processed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.platform,
                row.message_id,
                row.room_id,
                row.author,
                row.role,
                row.text,
                row.ts.isoformat(),
                row.epoch,
                row.turn_no,
                int(row.processed),
            ),
        )
        return cursor.lastrowid if cursor.rowcount == 1 else None

    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> None:
        await self.db.execute(
            "UPDATE messages SET processed = 1, epoch = ?, turn_no = ? WHERE seq = ?",
            (epoch, turn_no, seq),
        )

    async def save_room_state(
        self,
        room_id: str,
        platform: str,
        channel: str,
        thread: str | None,
        state: str,
        at: datetime,
    ) -> None:
        await self.db.execute(
            "INSERT INTO rooms (id, platform, channel, thread, state, created_at, last_activity_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state,"
            " last_activity_at = excluded.last_activity_at",
            (room_id, platform, channel, thread, state, at.isoformat(), at.isoformat()),
        )

    async def create_arbitration(
        self, room_id: str, epoch: int, trigger: str, evidence: dict[str, Any], at: datetime
    ) -> int:
        cursor = await self.db.execute(
            "INSERT INTO arbitrations (room_id, epoch, trigger, evidence, status, created_at)"
            " VALUES (?, ?, ?, ?, 'pending', ?)",
            (room_id, epoch, trigger, _dump(evidence), at.isoformat()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def update_arbitration(self, arbitration_id: int, **fields: Any) -> None:
        unknown = set(fields) - _ARBITRATION_FIELDS
        if unknown:
            raise ValueError(f"unknown arbitration fields: {sorted(unknown)}")
        assignments = ", ".join(f"{name} = ?" for name in fields)
        await self.db.execute(
            f"UPDATE arbitrations SET {assignments} WHERE id = ?",
            (*(_dump(v) for v in fields.values()), arbitration_id),
        )

    async def create_escalation(self, row: EscalationRow) -> None:
        await self.db.execute(
            "INSERT INTO escalations (id, room_id, options, allowed, requester, status,"
            " verdict_outbox_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.room_id,
                _dump(row.options),
                _dump(row.allowed),
                row.requester,
                row.status,
                row.verdict_outbox_id,
                row.created_at.isoformat(),
            ),
        )

    async def answer_escalation(
        self,
        escalation_id: int,
        *,
        option: int | None,
        label: str | None,
        text: str | None,
        kind: str,
        by: str,
        at: datetime,
    ) -> bool:
        cursor = await self.db.execute(
            "UPDATE escalations SET status = 'answered', answer_option = ?, answer_label = ?,"
            " answer_text = ?, answer_kind = ?, answered_by = ?, answered_at = ?"
            " WHERE id = ? AND status = 'pending'",
            (option, label, text, kind, by, at.isoformat(), escalation_id),
        )
        return cursor.rowcount == 1

    async def cancel_other_escalations(self, room_id: str, keep: int) -> None:
        await self.db.execute(
            "UPDATE escalations SET status = 'cancelled' WHERE room_id = ? AND status = 'pending'"
            " AND id != ?",
            (room_id, keep),
        )

    async def mark_reminded(self, escalation_id: int, at: datetime) -> None:
        await self.db.execute(
            "UPDATE escalations SET reminded_at = ? WHERE id = ?", (at.isoformat(), escalation_id)
        )

    async def set_escalation_outbox(self, escalation_id: int, outbox_id: int) -> None:
        await self.db.execute(
            "UPDATE escalations SET verdict_outbox_id = ? WHERE id = ?", (outbox_id, escalation_id)
        )

    async def enqueue(
        self,
        room_id: str,
        kind: str,
        payload: dict[str, Any],
        at: datetime,
        edit_of: int | None = None,
    ) -> int:
        cursor = await self.db.execute(
            "INSERT INTO outbox (room_id, kind, payload, edit_of, status, created_at)"
            " VALUES (?, ?, ?, ?, 'pending', ?)",
            (room_id, kind, _dump(payload), edit_of, at.isoformat()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def mark_outbox(
        self,
        outbox_id: int,
        status: str,
        *,
        platform_message_id: str | None = None,
        error: str | None = None,
        at: datetime | None = None,
        next_attempt_at: datetime | None = None,
    ) -> None:
        await self.db.execute(
            "UPDATE outbox SET status = ?, platform_message_id = COALESCE(?, platform_message_id),"
            " last_error = ?, attempts = attempts + 1, sent_at = COALESCE(?, sent_at),"
            " next_attempt_at = ? WHERE id = ?",
            (
                status,
                platform_message_id,
                error,
                at.isoformat() if at else None,
                next_attempt_at.isoformat() if next_attempt_at else None,
                outbox_id,
            ),
        )

    async def set_setting(self, scope: str, scope_id: str, key: str, value: Any) -> None:
        if value is None:
            await self.db.execute(
                "DELETE FROM settings WHERE scope = ? AND scope_id = ? AND key = ?",
                (scope, scope_id, key),
            )
            return
        await self.db.execute(
            "INSERT INTO settings (scope, scope_id, key, value) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(scope, scope_id, key) DO UPDATE SET value = excluded.value",
            (scope, scope_id, key, json.dumps(value)),
        )

    async def set_bindings(self, platform: str, channel: str, role: str, ids: list[str]) -> None:
        await self.db.execute(
            "DELETE FROM bindings WHERE platform = ? AND channel = ? AND role = ?",
            (platform, channel, role),
        )
        await self.db.executemany(
            "INSERT OR IGNORE INTO bindings (platform, channel, role, user_id) VALUES (?, ?, ?, ?)",
            [(platform, channel, role, user_id) for user_id in ids],
        )

    async def add_audit(
        self,
        *,
        at: datetime,
        platform: str,
        channel: str,
        user_id: str,
        action: str,
        scope: str,
        before: str | None,
        after: str | None,
    ) -> None:
        await self.db.execute(
            "INSERT INTO audit_log (at, platform, channel, user_id, action, scope, before, after)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (at.isoformat(), platform, channel, user_id, action, scope, before, after),
        )


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

    async def unprocessed_messages(self) -> list[MessageRow]:
        rows = await self._all("SELECT * FROM messages WHERE processed = 0 ORDER BY seq")
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

    async def pending_rooms(self, limit: int = 1000) -> list[str]:
        rows = await self._all(
            "SELECT DISTINCT room_id FROM outbox WHERE status = 'pending' LIMIT ?", (limit,)
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
        rows = await self._all(
            "SELECT * FROM messages WHERE room_id = ? AND role = 'user' AND seq >= ?"
            " AND processed = 1 ORDER BY seq DESC LIMIT ?",
            (room_id, since_seq, limit + 1),
        )
        omitted = 0
        if len(rows) > limit:
            count = await self._one(
                "SELECT COUNT(*) AS n FROM messages WHERE room_id = ? AND role = 'user'"
                " AND seq >= ?",
                (room_id, since_seq),
            )
            omitted = int(count["n"]) - limit if count else 0
            rows = rows[:limit]
        return [MessageRow.model_validate(r) for r in reversed(rows)], omitted

    async def agent_turn_messages(self, room_id: str, turns: int) -> tuple[list[MessageRow], int]:
        keep = [
            r["turn_no"]
            for r in await self._all(
                "SELECT DISTINCT turn_no FROM messages WHERE room_id = ? AND turn_no IS NOT NULL"
                " ORDER BY turn_no DESC LIMIT ?",
                (room_id, turns),
            )
        ]
        if not keep:
            return [], 0
        first = min(keep)
        rows = await self._all(
            "SELECT * FROM messages WHERE room_id = ? AND turn_no >= ? AND role IN"
            " ('owner', 'reviewer') ORDER BY seq",
            (room_id, first),
        )
        # Only agent turns are numbered, densely per room: `first - 1` came before.
        return [MessageRow.model_validate(r) for r in rows], max(first - 1, 0)

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

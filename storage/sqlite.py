"""SQLite through aiosqlite: the embedded default backend.

One connection in WAL mode; an asyncio lock serialises units of work so two
rooms' transactions never interleave on the shared connection. A room's lock
(`room()`) is an asyncio.Lock per room, taken before the connection's: one
process owns a SQLite file, so a lock in memory is the whole story.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import aiosqlite

from storage.base import (
    ActionRow,
    ArbitrationRow,
    AuditRow,
    CatchUpMark,
    DatabaseUnusable,
    EscalationRow,
    InstanceRow,
    LeaseRow,
    MessageRow,
    OutboxRow,
    PendingCounts,
    RoomTransaction,
    Storage,
    Transaction,
    as_claimed,
    claimable,
)
from storage.locks import RoomLocks
from storage.schema import latest_version, migrations, statements
from storage.sqlite_writes import (
    ROOM_AND_UNPROCESSED,
    Session,
    SqliteRoomTransaction,
    SqliteTransaction,
    from_ms,
    load_row,
    ms,
)

__all__ = ["SqliteStorage", "migrations"]

_row = load_row

BUSY_TIMEOUT_MS = 5000


def _can_create_files_in(folder: str) -> bool:
    """Really try (permission bits say nothing to root, nor about read-only mounts)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".tribunal-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


class SqliteStorage(Storage):
    def __init__(self, path: str) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()  # the connection: one unit of work at a time
        self._owner: asyncio.Task[Any] | None = None
        self._room_locks = RoomLocks()

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("storage is not open")
        return self._db

    async def open(self) -> None:
        """Open, migrate, and prove the database writable, or raise DatabaseUnusable.

        Everything that would make the bot fail later (answer, then drop what
        it cannot store) fails here instead, within the busy timeout.
        """
        self._check_path()
        try:
            # IMMEDIATE: the sqlite3 module opens the write transaction itself right
            # before the first write of a unit of work, in the same call (no extra
            # round trip to aiosqlite's thread); `commit()` ends it.
            self._db = await aiosqlite.connect(self.path, isolation_level="IMMEDIATE")
            self._db.row_factory = aiosqlite.Row
            await self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            # Before anything writes (even the switch to WAL): a newer release's
            # database is left exactly as it was.
            self._check_version(await self._schema_version())
            await self._enter_wal()
            await self._db.execute("PRAGMA synchronous=NORMAL")
            await self._db.execute("PRAGMA foreign_keys=ON")
            await self._migrate()
            await self._probe_write()
        except BaseException as exc:
            await self.close()  # aiosqlite's thread would keep the process alive
            if isinstance(exc, sqlite3.Error):
                raise DatabaseUnusable(self._explain(exc)) from None
            raise

    async def _enter_wal(self) -> None:
        """Switch the file to WAL, retrying while another connection holds it.

        SQLite answers this one statement with SQLITE_BUSY at once, without
        the busy handler, when another connection is reading or switching the
        same fresh file (instances started together): the busy timeout is
        applied here by hand so they wait for each other like any other write.
        """
        deadline = asyncio.get_running_loop().time() + BUSY_TIMEOUT_MS / 1000
        pause = 0.005
        while True:
            try:
                await self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY")
                if not busy or asyncio.get_running_loop().time() + pause > deadline:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.2)

    async def _schema_version(self) -> int:
        async with self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ) as cur:
            if await cur.fetchone() is None:
                return 0
        async with self.db.execute("SELECT MAX(version) FROM schema_version") as cur:
            row = await cur.fetchone()
        return int(row[0] or 0) if row is not None else 0

    def _check_version(self, current: int) -> None:
        known = latest_version()
        if current > known:
            # Old code could misread or damage what a newer release wrote.
            raise DatabaseUnusable(
                f"{self.path} has schema version {current}, newer than this Tribunal "
                f"knows ({known}): it was written by a newer release. Upgrade "
                "Tribunal, or point TRIBUNAL_DATABASE at another file")

    def _check_path(self) -> None:
        if self.path == ":memory:" or self.path.startswith("file:"):
            return
        folder = os.path.dirname(os.path.abspath(self.path))
        if os.path.isdir(self.path):
            raise DatabaseUnusable(f"{self.path} is a directory, not a database file")
        if not os.path.isdir(folder):
            raise DatabaseUnusable(f"the directory {folder} does not exist")

    async def _probe_write(self) -> None:
        """One write, rolled back. A database that is up to date needs no write
        to open, so a read-only file would otherwise pass and fail on the
        first message."""
        async with self._lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                await self.db.execute("INSERT INTO schema_version (version) VALUES (-1)")
            finally:
                await self.db.rollback()

    def _explain(self, exc: sqlite3.Error) -> str:
        """What went wrong with the file, in words an operator can act on."""
        name = getattr(exc, "sqlite_errorname", "")
        folder = os.path.dirname(os.path.abspath(self.path)) or "."
        if name == "SQLITE_NOTADB" or "not a database" in str(exc):
            return (f"{self.path} is not a SQLite database (or is encrypted); point "
                    "TRIBUNAL_DATABASE at a Tribunal database or a new file")
        if name == "SQLITE_CORRUPT" or "malformed" in str(exc):
            return f"{self.path} is damaged ({exc}); restore it from a backup"
        if name.startswith("SQLITE_BUSY") or "locked" in str(exc):
            return (f"{self.path} is locked by another process (waited "
                    f"{BUSY_TIMEOUT_MS // 1000} s); is another Tribunal using it?")
        if not _can_create_files_in(folder):
            return (f"cannot create files in {folder} (read-only directory?): SQLite's WAL "
                    f"mode needs {os.path.basename(self.path)}-wal and -shm beside the database")
        if name.startswith("SQLITE_READONLY") or "readonly" in str(exc):
            return f"{self.path} is read-only; the bot must be able to write to it"
        if name.startswith("SQLITE_CANTOPEN"):
            return f"cannot open {self.path} ({exc})"
        return f"{self.path}: {exc}"

    async def _migrate(self) -> None:
        async with self._lock:
            if self.db.in_transaction:
                await self.db.commit()
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                await self.db.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
                )
                current = await self._schema_version()
                self._check_version(current)  # again, under the write lock
                # Every version not applied yet, not only those above the
                # highest: a migration merged with a lower number than one
                # already applied (parallel branches) still runs.
                applied = {int(r[0]) for r in await self.db.execute_fetchall(
                    "SELECT version FROM schema_version")}
                for version, sql in migrations():
                    if version not in applied:
                        for statement in statements(sql):
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
        async with self._unit() as session:
            yield SqliteTransaction(session)

    @asynccontextmanager
    async def room(self, room_id: str) -> AsyncIterator[RoomTransaction]:
        # Room first, then the connection: a unit waiting for its room holds
        # nothing the others need (asyncio locks are FIFO: rooms keep order).
        async with self._room_locks.hold(room_id), self._unit() as session:
            # One trip to the connection's thread for the state and the room's
            # unapplied messages (execute, fetch and close in one call): on a
            # busy ingest path the trips cost more than the statements.
            rows = await self.db.execute_fetchall(ROOM_AND_UNPROCESSED, (room_id,))
            first = next(iter(rows), None)
            state = None if first is None else first["room_state"]
            yield SqliteRoomTransaction(
                session, room_id, None if state is None else str(state),
                unprocessed=[r for r in rows if r["seq"] is not None])

    @asynccontextmanager
    async def _unit(self) -> AsyncIterator[Session]:
        """The connection for one unit of work: commit at the end (with the
        writes it kept for then), roll back on error."""
        async with self._lock:
            self._owner = asyncio.current_task()
            session = Session(self.db, self._room_locks)
            try:
                try:
                    yield session
                    await session.commit()
                except BaseException:
                    await session.rollback()
                    raise
            finally:
                self._owner = None
                session.end()

    async def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        if self._owner is not None and self._owner is asyncio.current_task():
            # It would wait for the connection its own caller holds, for ever.
            raise RuntimeError("a read through Storage inside a unit of work: read "
                               "through the unit (Transaction.get_*) instead")
        async with self._lock:
            return [_row(r) for r in await self.db.execute_fetchall(sql, params)]

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

    async def get_action(self, action_id: int) -> ActionRow | None:
        row = await self._one("SELECT * FROM actions WHERE id = ?", (action_id,))
        return None if row is None else ActionRow.model_validate(row)

    async def unprocessed_actions(self) -> list[ActionRow]:
        rows = await self._all("SELECT * FROM actions WHERE processed = 0 ORDER BY id")
        return [ActionRow.model_validate(r) for r in rows]

    async def rooms_with_open_turns(self) -> list[str]:
        rows = await self._all(
            "SELECT id FROM rooms WHERE json_extract(state, '$.open_turn') IS NOT NULL"
        )
        return [str(r["id"]) for r in rows]

    async def catch_up_marks(self, platform: str) -> list[CatchUpMark]:
        # SQLite returns the other columns of the row holding MAX(ts).
        rows = await self._all(
            "SELECT m.room_id, m.message_id AS last_message_id, MAX(m.ts) AS last_ts,"
            " COALESCE(json_extract(r.state, '$.task_active'), 0) = 1"
            "   AND COALESCE(json_extract(r.state, '$.approved'), 0) = 0 AS open_task,"
            " r.last_activity_at"
            " FROM messages m LEFT JOIN rooms r ON r.id = m.room_id"
            " WHERE m.platform = ? GROUP BY m.room_id"
            " ORDER BY COALESCE(r.last_activity_at, MAX(m.ts)) DESC",
            (platform,),
        )
        return [CatchUpMark.model_validate(r) for r in rows]

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
            "SELECT role, user_id FROM bindings WHERE platform = ? AND channel = ?"
            " ORDER BY role, user_id",
            (platform, channel),
        ):
            out.setdefault(row["role"], []).append(row["user_id"])
        return out

    async def get_settings(self, scope: str, scope_id: str) -> dict[str, Any]:
        rows = await self._all(
            "SELECT key, value FROM settings WHERE scope = ? AND scope_id = ? ORDER BY key",
            (scope, scope_id),
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

    async def claim_outbox(
        self, room_id: str, instance_id: str, now: datetime, lease_until: datetime,
        limit: int = 50,
    ) -> list[OutboxRow]:
        # One write transaction from the read on: another process sharing the
        # file waits (busy timeout) until this claim is committed.
        async with self._unit():
            await self.db.execute("BEGIN IMMEDIATE")
            async with self.db.execute(
                "SELECT * FROM outbox WHERE room_id = ? AND status = 'pending'"
                " ORDER BY id LIMIT ?",
                (room_id, limit),
            ) as cur:
                rows = [OutboxRow.model_validate(_row(r)) for r in await cur.fetchall()]
            async with self.db.execute("SELECT id FROM instances") as cur:
                registered = {str(r[0]) for r in await cur.fetchall()}
            taken = claimable(rows, instance_id, now, registered)
            await self.db.executemany(
                "UPDATE outbox SET claimed_by = ?, lease_until = ? WHERE id = ?",
                [(instance_id, lease_until.isoformat(), row.id) for row in taken],
            )
        return [as_claimed(row, instance_id, lease_until) for row in taken]

    async def reserve_slot(self, key: str, now: datetime, spacing: timedelta) -> datetime:
        at, step = ms(now), round(spacing.total_seconds() * 1000)
        async with self._unit(), self.db.execute(
            "INSERT INTO pacing (key, next_ms) VALUES (?, ?) ON CONFLICT (key)"
            " DO UPDATE SET next_ms = MAX(next_ms, ?) + ? RETURNING next_ms",
            (key, at + step, at, step),
        ) as cur:
            row = await cur.fetchone()
        assert row is not None  # an upsert with RETURNING yields its row
        return from_ms(int(row[0]) - step)

    async def push_slot(self, key: str, not_before: datetime) -> None:
        async with self._unit():
            await self.db.execute(
                "UPDATE pacing SET next_ms = MAX(next_ms, ?) WHERE key = ?",
                (ms(not_before), key),
            )

    async def instances(self) -> list[InstanceRow]:
        rows = await self._all("SELECT * FROM instances ORDER BY started_at, id")
        return [InstanceRow.model_validate(r) for r in rows]

    async def leases(self, prefix: str = "") -> list[LeaseRow]:
        rows = await self._all(
            "SELECT * FROM leases WHERE substr(name, 1, length(?)) = ? ORDER BY name",
            (prefix, prefix),
        )
        return [LeaseRow.model_validate(r) for r in rows]

    async def room_states(self) -> list[tuple[str, str]]:
        return [(str(r["id"]), str(r["state"]))
                for r in await self._all("SELECT id, state FROM rooms ORDER BY id")]

    async def pending_escalations(self) -> list[EscalationRow]:
        rows = await self._all("SELECT * FROM escalations WHERE status = 'pending' ORDER BY id")
        return [EscalationRow.model_validate(r) for r in rows]

    async def recent_arbitrations(self, limit: int = 10) -> list[ArbitrationRow]:
        rows = await self._all("SELECT * FROM arbitrations ORDER BY id DESC LIMIT ?", (limit,))
        return [ArbitrationRow.model_validate(_clean(r)) for r in rows]

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

    async def pending_counts(self) -> PendingCounts:
        # Both counts read an index (outbox_by_status, escalations_by_status).
        row = await self._one(
            "SELECT (SELECT count(*) FROM outbox WHERE status = 'pending') AS outbox,"
            " (SELECT count(*) FROM escalations WHERE status = 'pending') AS escalations"
        )
        assert row is not None  # a SELECT without FROM always yields its one row
        return PendingCounts(outbox=int(row["outbox"]), escalations=int(row["escalations"]))


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("options", "overrides"):
        if row.get(key) is None:
            row[key] = []
    if row.get("evidence") is None:
        row["evidence"] = {}
    return row

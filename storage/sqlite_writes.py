"""The writes of the SQLite backend: one `SqliteTransaction` per unit of work.

aiosqlite runs every call on the connection's own thread, and on a busy
ingest path the trips there cost more than the statements. So a unit keeps
the writes whose outcome nobody reads (a room's state, marking applied the
message it stored itself) for its commit, and sends them with the COMMIT in
one trip (`Session.commit`); any other statement of the unit sends them first,
so the database sees the unit's statements in the order it made them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import aiosqlite

from storage.base import (
    ARBITRATION_FIELDS,
    ActionRow,
    ArbitrationRow,
    EscalationRow,
    InstanceRow,
    LeaseRow,
    MessageRow,
    OutboxRow,
    RoomTransaction,
    StoredMessage,
    Transaction,
)
from storage.locks import RoomLocks

T = TypeVar("T")

# aiosqlite queues plain functions for its thread (`Connection._execute`, on
# the connection `Connection._conn`); not a documented interface, so its
# absence is tolerated: the statements then go one call each.
ONE_TRIP = callable(getattr(aiosqlite.Connection, "_execute", None)) and isinstance(
    getattr(aiosqlite.Connection, "_conn", None), property
)

INSERT_MESSAGE = (
    "INSERT OR IGNORE INTO messages (platform, message_id, room_id, author, role, text,"
    " ts, epoch, turn_no, processed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
MARK_PROCESSED = (
    "UPDATE messages SET processed = 1, epoch = ?, turn_no = ? WHERE seq = ? AND processed = 0"
)
# The room's state and unapplied messages in one read: one row per message,
# each carrying the state (`room_state`); one row of NULLs but the state
# when none waits. The join reads the partial index of unapplied messages.
ROOM_AND_UNPROCESSED = (
    "SELECT r.state AS room_state, m.* FROM (SELECT ? AS id) AS k"
    " LEFT JOIN rooms AS r ON r.id = k.id"
    " LEFT JOIN messages AS m ON m.room_id = k.id AND m.processed = 0"
    " ORDER BY m.seq"
)


async def in_thread(db: aiosqlite.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """`work` on the connection's thread, given the sqlite3 connection: one trip."""
    raw = cast(Any, db)
    return cast(T, await raw._execute(lambda: work(raw._conn)))


def message_params(row: MessageRow) -> tuple[Any, ...]:
    return (
        row.platform, row.message_id, row.room_id, row.author, row.role, row.text,
        row.ts.isoformat(), row.epoch, row.turn_no, int(row.processed),
    )


class Session:
    """The connection as one unit of work uses it (the storage holds the
    connection's lock for it): its statements, the writes it keeps for the
    commit (`later`), and what runs when it ends (`on_end`: a room lock taken
    by `insert_message_taking_room` is let go after the commit)."""

    def __init__(self, db: aiosqlite.Connection, locks: RoomLocks) -> None:
        self.conn = db
        self.locks = locks
        self.later: list[tuple[str, tuple[Any, ...]]] = []
        self.on_end: list[Callable[[], None]] = []

    async def flush(self) -> None:
        later, self.later = self.later, []
        for sql, params in later:
            await self.conn.execute(sql, params)

    async def execute(self, sql: str, params: Iterable[Any] = ()) -> aiosqlite.Cursor:
        await self.flush()
        return await self.conn.execute(sql, params)

    async def execute_fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        await self.flush()
        return list(await self.conn.execute_fetchall(sql, params))

    async def executemany(self, sql: str, params: Iterable[Iterable[Any]]) -> aiosqlite.Cursor:
        await self.flush()
        return await self.conn.executemany(sql, params)

    async def commit(self) -> None:
        """The kept writes and the COMMIT, in one trip when aiosqlite allows."""
        later, self.later = self.later, []
        if later and ONE_TRIP:
            await in_thread(self.conn, lambda conn: _write_and_commit(conn, later))
            return
        for sql, params in later:
            await self.conn.execute(sql, params)
        if self.conn.in_transaction:
            await self.conn.commit()

    async def rollback(self) -> None:
        self.later.clear()
        if self.conn.in_transaction:
            await self.conn.rollback()

    def end(self) -> None:
        on_end, self.on_end = self.on_end, []
        for release in on_end:
            release()


def _write_and_commit(conn: sqlite3.Connection, later: list[tuple[str, tuple[Any, ...]]]) -> None:
    try:
        for sql, params in later:
            conn.execute(sql, params)
        if conn.in_transaction:
            conn.commit()
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise

_JSON_FIELDS = {
    "evidence", "options", "overrides", "allowed", "payload", "ruling", "answer_ruling",
}


def load_row(row: aiosqlite.Row) -> dict[str, Any]:
    """A row as a dict, its JSON columns decoded."""
    out = dict(row)
    for key in _JSON_FIELDS & out.keys():
        if out[key] is not None:
            out[key] = json.loads(out[key])
    return out


def arbitration(row: dict[str, Any]) -> ArbitrationRow:
    """An arbitrations row as the model, with its empty lists and evidence."""
    for key in ("options", "overrides"):
        if row.get(key) is None:
            row[key] = []
    if row.get("evidence") is None:
        row["evidence"] = {}
    return ArbitrationRow.model_validate(row)


# A claim is taken when nobody else holds a live lease (`held_by_another`).
# Times are ISO-8601 text in UTC, which sorts as time.
CLAIMABLE = (
    "status IN ('pending', 'running') AND (claimed_by IS NULL OR claimed_by = {me}"
    " OR lease_until IS NULL OR lease_until <= {now}"
    " OR claimed_by NOT IN (SELECT id FROM instances))"
)
# The same rule for a named lease (`leases.holder`), in its upsert's DO UPDATE.
LEASE_CLAIMABLE = (
    "leases.holder IS NULL OR leases.holder = {me} OR leases.lease_until IS NULL"
    " OR leases.lease_until <= {now} OR leases.holder NOT IN (SELECT id FROM instances)"
)


def ms(at: datetime) -> int:
    """Milliseconds since the epoch (the pacing table's unit)."""
    return round(at.timestamp() * 1000)


def from_ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, UTC)


def dump(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


class SqliteTransaction(Transaction):
    def __init__(self, db: Session) -> None:
        self.db = db

    async def _one(self, sql: str, params: tuple[Any, ...]) -> dict[str, Any] | None:
        row = next(iter(await self.db.execute_fetchall(sql, params)), None)
        return None if row is None else load_row(row)

    async def get_escalation(self, escalation_id: int) -> EscalationRow | None:
        row = await self._one("SELECT * FROM escalations WHERE id = ?", (escalation_id,))
        return None if row is None else EscalationRow.model_validate(row)

    async def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        row = await self._one("SELECT * FROM outbox WHERE id = ?", (outbox_id,))
        return None if row is None else OutboxRow.model_validate(row)

    async def insert_message(self, row: MessageRow) -> int | None:
        cursor = await self.db.execute(INSERT_MESSAGE, message_params(row))
        return cursor.lastrowid if cursor.rowcount == 1 else None

    async def insert_message_taking_room(self, row: MessageRow) -> StoredMessage:
        release = await self.db.locks.try_hold(row.room_id)
        if release is None:  # a unit of the room holds or awaits its lock
            return StoredMessage(await self.insert_message(row))
        try:
            # One trip: the insert opens the write transaction, then the
            # room's state and whether an older message waits are read in it.
            found = await self.db.execute_fetchall(
                INSERT_MESSAGE + " RETURNING seq, (SELECT state FROM rooms WHERE id = ?),"
                " EXISTS (SELECT 1 FROM messages AS m WHERE m.processed = 0"
                " AND m.room_id = ? AND m.seq < messages.seq)",
                (*message_params(row), row.room_id, row.room_id),
            )
        except BaseException:
            release()
            raise
        if not found or found[0][2]:  # a redelivery, or older messages go first
            release()
            return StoredMessage(int(found[0][0]) if found else None)
        seq, state = int(found[0][0]), found[0][1]
        self.db.on_end.append(release)
        unit = SqliteRoomTransaction(self.db, row.room_id, None if state is None else str(state),
                                     stored_seq=seq)
        return StoredMessage(seq, unit)

    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> bool:
        cursor = await self.db.execute(MARK_PROCESSED, (epoch, turn_no, seq))
        return cursor.rowcount == 1

    async def insert_action(self, row: ActionRow) -> int | None:
        cursor = await self.db.execute(
            "INSERT OR IGNORE INTO actions (platform, delivery_id, kind, room_id, payload,"
            " received_at, processed) VALUES (?, ?, ?, ?, ?, ?, 0)",
            (row.platform, row.delivery_id, row.kind, row.room_id, dump(row.payload),
             row.received_at.isoformat()),
        )
        return cursor.lastrowid if cursor.rowcount == 1 else None

    async def mark_action_processed(self, action_id: int) -> bool:
        cursor = await self.db.execute(
            "UPDATE actions SET processed = 1 WHERE id = ? AND processed = 0", (action_id,)
        )
        return cursor.rowcount == 1

    async def save_room_state(
        self,
        room_id: str,
        platform: str,
        channel: str,
        thread: str | None,
        state: str,
        at: datetime,
    ) -> None:
        # Nobody reads its outcome: it goes with the commit (`Session`).
        self.db.later.append((
            "INSERT INTO rooms (id, platform, channel, thread, state, created_at, last_activity_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state,"
            " last_activity_at = excluded.last_activity_at",
            (room_id, platform, channel, thread, state, at.isoformat(), at.isoformat()),
        ))

    async def create_arbitration(
        self, room_id: str, epoch: int, trigger: str, evidence: dict[str, Any], at: datetime
    ) -> int:
        cursor = await self.db.execute(
            "INSERT INTO arbitrations (room_id, epoch, trigger, evidence, status, created_at)"
            " VALUES (?, ?, ?, ?, 'pending', ?)",
            (room_id, epoch, trigger, dump(evidence), at.isoformat()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def update_arbitration(
        self, arbitration_id: int, *, fence: int | None = None, **fields: Any
    ) -> bool:
        unknown = set(fields) - ARBITRATION_FIELDS
        if unknown:
            raise ValueError(f"unknown arbitration fields: {sorted(unknown)}")
        # Nothing to set still proves (and, being a write, locks) the lease.
        assignments = ", ".join(f"{name} = ?" for name in fields) or "fence = fence"
        where, params = "id = ?", [arbitration_id]
        if fence is not None:
            where += " AND fence = ? AND status IN ('pending', 'running')"
            params.append(fence)
        cursor = await self.db.execute(
            f"UPDATE arbitrations SET {assignments} WHERE {where}",
            (*(dump(v) for v in fields.values()), *params),
        )
        return cursor.rowcount == 1

    async def claim_arbitration(
        self, arbitration_id: int, instance_id: str, now: datetime, lease_until: datetime
    ) -> ArbitrationRow | None:
        rows = await self.db.execute_fetchall(
            "UPDATE arbitrations SET claimed_by = ?, lease_until = ?, fence = fence + 1"
            " WHERE id = ? AND " + CLAIMABLE.format(me="?", now="?") + " RETURNING *",
            (instance_id, lease_until.isoformat(), arbitration_id, instance_id, now.isoformat()),
        )
        return arbitration(load_row(rows[0])) if rows else None

    async def renew_arbitration(
        self, arbitration_id: int, instance_id: str, fence: int, lease_until: datetime
    ) -> bool:
        cursor = await self.db.execute(
            "UPDATE arbitrations SET lease_until = ? WHERE id = ? AND claimed_by = ?"
            " AND fence = ? AND status IN ('pending', 'running')",
            (lease_until.isoformat(), arbitration_id, instance_id, fence),
        )
        return cursor.rowcount == 1

    async def claim_lease(
        self, name: str, instance_id: str, now: datetime, lease_until: datetime
    ) -> LeaseRow | None:
        rows = await self.db.execute_fetchall(
            "INSERT INTO leases (name, holder, lease_until, fence) VALUES (?, ?, ?, 1)"
            " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
            " lease_until = excluded.lease_until, fence = leases.fence + 1"
            " WHERE " + LEASE_CLAIMABLE.format(me="?", now="?") + " RETURNING *",
            (name, instance_id, lease_until.isoformat(), instance_id, now.isoformat()),
        )
        return LeaseRow.model_validate(dict(rows[0])) if rows else None

    async def renew_lease(
        self, name: str, instance_id: str, fence: int, lease_until: datetime
    ) -> bool:
        cursor = await self.db.execute(
            "UPDATE leases SET lease_until = ? WHERE name = ? AND holder = ? AND fence = ?",
            (lease_until.isoformat(), name, instance_id, fence),
        )
        return cursor.rowcount == 1

    async def release_lease(
        self, name: str, instance_id: str, fence: int, *, finished: bool = False
    ) -> bool:
        cursor = await self.db.execute(
            "UPDATE leases SET holder = NULL, lease_until = NULL,"
            " finished = CASE WHEN ? THEN fence ELSE finished END,"
            " work = CASE WHEN ? THEN NULL ELSE work END"
            " WHERE name = ? AND holder = ? AND fence = ?",
            (1 if finished else 0, 1 if finished else 0, name, instance_id, fence),
        )
        return cursor.rowcount == 1

    async def set_lease_work(self, name: str, instance_id: str, fence: int, work: str) -> bool:
        cursor = await self.db.execute(
            "UPDATE leases SET work = ? WHERE name = ? AND holder = ? AND fence = ?",
            (work, name, instance_id, fence),
        )
        return cursor.rowcount == 1

    async def create_escalation(self, row: EscalationRow) -> None:
        await self.db.execute(
            "INSERT INTO escalations (id, room_id, options, allowed, requester, status,"
            " verdict_outbox_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.room_id,
                dump(row.options),
                dump(row.allowed),
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
        ruling: dict[str, Any] | None = None,
    ) -> bool:
        cursor = await self.db.execute(
            "UPDATE escalations SET status = 'answered', answer_option = ?, answer_label = ?,"
            " answer_text = ?, answer_kind = ?, answered_by = ?, answered_at = ?,"
            " answer_ruling = ? WHERE id = ? AND status = 'pending'",
            (option, label, text, kind, by, at.isoformat(), dump(ruling), escalation_id),
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
            (room_id, kind, dump(payload), edit_of, at.isoformat()),
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
            " next_attempt_at = ?, claimed_by = NULL, lease_until = NULL WHERE id = ?",
            (
                status,
                platform_message_id,
                error,
                at.isoformat() if at else None,
                next_attempt_at.isoformat() if next_attempt_at else None,
                outbox_id,
            ),
        )

    async def renew_outbox(self, room_id: str, instance_id: str, lease_until: datetime) -> int:
        cursor = await self.db.execute(
            "UPDATE outbox SET lease_until = ? WHERE room_id = ? AND claimed_by = ?"
            " AND status = 'pending'",
            (lease_until.isoformat(), room_id, instance_id),
        )
        return cursor.rowcount

    async def save_instance(self, row: InstanceRow) -> None:
        await self.db.execute(
            "INSERT INTO instances (id, host, pid, started_at, last_seen, discord)"
            " VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen,"
            " discord = excluded.discord",
            (row.id, row.host, row.pid, row.started_at.isoformat(), row.last_seen.isoformat(),
             instance_discord(row)),
        )

    async def remove_instance(self, instance_id: str) -> None:
        await self.db.execute(
            "UPDATE outbox SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ?"
            " AND status = 'pending'",
            (instance_id,),
        )
        # The fence stays: whoever claims next gets a newer token.
        await self.db.execute(
            "UPDATE arbitrations SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ?"
            " AND status IN ('pending', 'running')",
            (instance_id,),
        )
        await self.db.execute(
            "UPDATE leases SET holder = NULL, lease_until = NULL WHERE holder = ?", (instance_id,)
        )
        await self.db.execute("DELETE FROM instances WHERE id = ?", (instance_id,))

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


class SqliteRoomTransaction(SqliteTransaction, RoomTransaction):
    """A room's unit: the storage holds the room's lock and the connection for it.

    `unprocessed`: the room's unapplied messages, read with its state (the
    first `unprocessed_messages()` returns them). `stored_seq`: the message
    this very transaction stored (`insert_message_taking_room`), which no one
    else can have applied: marking it goes with the commit."""

    def __init__(self, db: Session, room_id: str, state: str | None, *,
                 unprocessed: list[Any] | None = None,
                 stored_seq: int | None = None) -> None:
        super().__init__(db)
        self.room_id = room_id
        self.state = state
        self._unprocessed = unprocessed
        self._stored_seq = stored_seq

    async def unprocessed_messages(self) -> list[MessageRow]:
        if self._unprocessed is not None:  # read with the state, nothing written since
            rows, self._unprocessed = self._unprocessed, None
            return [MessageRow.model_validate(load_row(r)) for r in rows]
        found = await self.db.execute_fetchall(
            "SELECT * FROM messages WHERE processed = 0 AND room_id = ? ORDER BY seq",
            (self.room_id,),
        )
        return [MessageRow.model_validate(load_row(r)) for r in found]

    async def insert_message(self, row: MessageRow) -> int | None:
        self._unprocessed = None
        return await super().insert_message(row)

    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> bool:
        if seq == self._stored_seq:
            self._stored_seq = None
            self._unprocessed = None  # it would list the row as unapplied
            self.db.later.append((MARK_PROCESSED, (epoch, turn_no, seq)))
            return True
        self._unprocessed = None
        return await super().mark_processed(seq, epoch=epoch, turn_no=turn_no)


def instance_discord(row: InstanceRow) -> str | None:
    """The `instances.discord` column: the shard settings as JSON text, or NULL."""
    return None if row.discord is None else row.discord.model_dump_json()

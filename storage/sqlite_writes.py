"""The writes of the SQLite backend: one `SqliteTransaction` per unit of work."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

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
    Transaction,
)

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
    def __init__(self, db: aiosqlite.Connection) -> None:
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

    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> bool:
        cursor = await self.db.execute(
            "UPDATE messages SET processed = 1, epoch = ?, turn_no = ?"
            " WHERE seq = ? AND processed = 0",
            (epoch, turn_no, seq),
        )
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
        async with self.db.execute(
            "UPDATE arbitrations SET claimed_by = ?, lease_until = ?, fence = fence + 1"
            " WHERE id = ? AND " + CLAIMABLE.format(me="?", now="?") + " RETURNING *",
            (instance_id, lease_until.isoformat(), arbitration_id, instance_id, now.isoformat()),
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None else arbitration(load_row(row))

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
        async with self.db.execute(
            "INSERT INTO leases (name, holder, lease_until, fence) VALUES (?, ?, ?, 1)"
            " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
            " lease_until = excluded.lease_until, fence = leases.fence + 1"
            " WHERE " + LEASE_CLAIMABLE.format(me="?", now="?") + " RETURNING *",
            (name, instance_id, lease_until.isoformat(), instance_id, now.isoformat()),
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None else LeaseRow.model_validate(dict(row))

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
    """A room's unit: the storage holds the room's lock and the connection for it."""

    def __init__(self, db: aiosqlite.Connection, room_id: str, state: str | None) -> None:
        super().__init__(db)
        self.room_id = room_id
        self.state = state

    async def unprocessed_messages(self) -> list[MessageRow]:
        rows = await self.db.execute_fetchall(
            "SELECT * FROM messages WHERE processed = 0 AND room_id = ? ORDER BY seq",
            (self.room_id,),
        )
        return [MessageRow.model_validate(load_row(r)) for r in rows]


def instance_discord(row: InstanceRow) -> str | None:
    """The `instances.discord` column: the shard settings as JSON text, or NULL."""
    return None if row.discord is None else row.discord.model_dump_json()

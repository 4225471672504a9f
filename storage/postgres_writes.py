"""The writes of the PostgreSQL backend: one `PostgresTransaction` per unit of work.

Each method is the statement of `storage/sqlite_writes.py` in PostgreSQL's
dialect, with the same effect: `ON CONFLICT DO NOTHING` for SQLite's
`INSERT OR IGNORE`, `RETURNING` for `lastrowid`, the status tag's row count
for `rowcount`. Values are stored exactly as SQLite stores them (ISO-8601
text for times, JSON text for structures), so both backends read back alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import asyncpg

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
from storage.sqlite_writes import (
    CLAIMABLE,
    LEASE_CLAIMABLE,
    arbitration,
    dump,
    instance_discord,
)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _rows_changed(status: str) -> int:
    """Rows an INSERT/UPDATE/DELETE touched, from its status tag ("UPDATE 1")."""
    return int(status.rsplit(" ", 1)[-1])


_JSON_FIELDS = {
    "evidence", "options", "overrides", "allowed", "payload", "ruling", "answer_ruling",
}


def load_row(record: asyncpg.Record) -> dict[str, Any]:
    """A row as the row models expect it: JSON columns decoded."""
    out = dict(record)
    for key in _JSON_FIELDS & out.keys():
        if out[key] is not None:
            out[key] = json.loads(out[key])
    return out


INSERT_MESSAGE = (
    "INSERT INTO messages (platform, message_id, room_id, author, role, text,"
    " ts, epoch, turn_no, processed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    " ON CONFLICT DO NOTHING"
)
MARK_PROCESSED = (
    "UPDATE messages SET processed = 1, epoch = $1, turn_no = $2 WHERE seq = $3 AND processed = 0"
)
SAVE_STATE = (
    "INSERT INTO rooms (id, platform, channel, thread, state, created_at, last_activity_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO UPDATE SET"
    " state = excluded.state, last_activity_at = excluded.last_activity_at"
)
# The room's state and unapplied messages in one read (see the SQLite backend).
ROOM_AND_UNPROCESSED = (
    "SELECT r.state AS room_state, m.* FROM (SELECT $1::text AS id) AS k"
    " LEFT JOIN rooms AS r ON r.id = k.id"
    " LEFT JOIN messages AS m ON m.room_id = k.id AND m.processed = 0"
    " ORDER BY m.seq"
)


def message_params(row: MessageRow) -> tuple[Any, ...]:
    return (
        row.platform, row.message_id, row.room_id, row.author, row.role, row.text,
        row.ts.isoformat(), row.epoch, row.turn_no, int(row.processed),
    )


class Session:
    """The connection as one unit of work uses it: its statements, a mark of
    the message it stored itself kept to go with the room's state in one
    statement (`mark`: epoch, turn, seq), and what runs when it ends
    (`on_end`: a room lock taken by `insert_message_taking_room` is let go
    after the commit). Any other statement sends the kept mark first."""

    def __init__(self, conn: asyncpg.Connection, locks: RoomLocks) -> None:
        self.conn = conn
        self.locks = locks
        self.mark: tuple[int, int | None, int] | None = None
        self.on_end: list[Callable[[], None]] = []

    async def flush(self) -> None:
        if self.mark is not None:
            mark, self.mark = self.mark, None
            await self.conn.execute(MARK_PROCESSED, *mark)

    async def execute(self, sql: str, *args: Any) -> str:
        await self.flush()
        return str(await self.conn.execute(sql, *args))

    async def executemany(self, sql: str, args: Any) -> None:
        await self.flush()
        await self.conn.executemany(sql, args)

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        await self.flush()
        return list(await self.conn.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> asyncpg.Record | None:
        await self.flush()
        return await self.conn.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        await self.flush()
        return await self.conn.fetchval(sql, *args)

    def end(self) -> None:
        on_end, self.on_end = self.on_end, []
        for release in on_end:
            release()


class PostgresTransaction(Transaction):
    def __init__(self, conn: Session) -> None:
        self.conn = conn

    async def get_escalation(self, escalation_id: int) -> EscalationRow | None:
        row = await self.conn.fetchrow("SELECT * FROM escalations WHERE id = $1", escalation_id)
        return None if row is None else EscalationRow.model_validate(load_row(row))

    async def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        row = await self.conn.fetchrow("SELECT * FROM outbox WHERE id = $1", outbox_id)
        return None if row is None else OutboxRow.model_validate(load_row(row))

    async def insert_action(self, row: ActionRow) -> int | None:
        action_id = await self.conn.fetchval(
            "INSERT INTO actions (platform, delivery_id, kind, room_id, payload, received_at,"
            " processed) VALUES ($1, $2, $3, $4, $5, $6, 0) ON CONFLICT DO NOTHING RETURNING id",
            row.platform, row.delivery_id, row.kind, row.room_id, dump(row.payload),
            row.received_at.isoformat(),
        )
        return None if action_id is None else int(action_id)

    async def mark_action_processed(self, action_id: int) -> bool:
        status = await self.conn.execute(
            "UPDATE actions SET processed = 1 WHERE id = $1 AND processed = 0", action_id
        )
        return _rows_changed(str(status)) == 1

    async def insert_message(self, row: MessageRow) -> int | None:
        seq = await self.conn.fetchval(INSERT_MESSAGE + " RETURNING seq", *message_params(row))
        return None if seq is None else int(seq)

    async def insert_message_taking_room(self, row: MessageRow) -> StoredMessage:
        release = await self.conn.locks.try_hold(row.room_id)
        if release is None:  # a unit of the room holds or awaits its lock here
            return StoredMessage(await self.insert_message(row))
        try:
            # The insert, and the room's advisory lock if no instance holds it
            # (never waiting); a redelivery returns no row and takes nothing.
            stored = await self.conn.fetchrow(
                "WITH stored AS (" + INSERT_MESSAGE + " RETURNING seq) SELECT seq,"
                " pg_try_advisory_xact_lock(hashtextextended($3, 0)) AS locked FROM stored",
                *message_params(row),
            )
            if stored is None or not stored["locked"]:
                release()
                return StoredMessage(None if stored is None else int(stored["seq"]))
            seq = int(stored["seq"])
            # Its own statement: its snapshot is taken under the lock, so it
            # sees what the lock's last holder committed.
            room = await self.conn.fetchrow(
                "SELECT (SELECT state FROM rooms WHERE id = $1) AS state, EXISTS (SELECT 1"
                " FROM messages WHERE processed = 0 AND room_id = $1 AND seq < $2) AS older",
                row.room_id, seq,
            )
        except BaseException:
            release()
            raise
        assert room is not None  # a SELECT without FROM yields its one row
        if room["older"]:
            release()  # the advisory lock stays until the commit, a moment
            return StoredMessage(seq)
        self.conn.on_end.append(release)
        state = room["state"]
        unit = PostgresRoomTransaction(self.conn, row.room_id,
                                       None if state is None else str(state), stored_seq=seq)
        return StoredMessage(seq, unit)

    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> bool:
        status = await self.conn.execute(MARK_PROCESSED, epoch, turn_no, seq)
        return _rows_changed(str(status)) == 1

    async def save_room_state(
        self,
        room_id: str,
        platform: str,
        channel: str,
        thread: str | None,
        state: str,
        at: datetime,
    ) -> None:
        params = (room_id, platform, channel, thread, state, at.isoformat())
        if self.conn.mark is not None:
            # The kept mark goes in the same statement (a data-modifying WITH
            # runs whether or not the statement reads it).
            mark, self.conn.mark = self.conn.mark, None
            await self.conn.conn.execute(
                "WITH marked AS (UPDATE messages SET processed = 1, epoch = $7, turn_no = $8"
                " WHERE seq = $9 AND processed = 0) " + SAVE_STATE, *params, *mark,
            )
            return
        await self.conn.execute(SAVE_STATE, *params)

    async def create_arbitration(
        self, room_id: str, epoch: int, trigger: str, evidence: dict[str, Any], at: datetime
    ) -> int:
        new_id = await self.conn.fetchval(
            "INSERT INTO arbitrations (room_id, epoch, trigger, evidence, status, created_at)"
            " VALUES ($1, $2, $3, $4, 'pending', $5) RETURNING id",
            room_id,
            epoch,
            trigger,
            dump(evidence),
            at.isoformat(),
        )
        return int(new_id)

    async def update_arbitration(
        self, arbitration_id: int, *, fence: int | None = None, **fields: Any
    ) -> bool:
        unknown = set(fields) - ARBITRATION_FIELDS
        if unknown:
            raise ValueError(f"unknown arbitration fields: {sorted(unknown)}")
        # Names come from the model's fields (checked above), never from input.
        # Nothing to set still proves the lease and locks the row.
        assignments = ", ".join(
            f"{name} = ${n}" for n, name in enumerate(fields, start=1)
        ) or "fence = fence"
        params: list[Any] = [*(dump(v) for v in fields.values()), arbitration_id]
        where = f"id = ${len(params)}"
        if fence is not None:
            params.append(fence)
            where += f" AND fence = ${len(params)} AND status IN ('pending', 'running')"
        status = await self.conn.execute(
            f"UPDATE arbitrations SET {assignments} WHERE {where}", *params
        )
        return _rows_changed(str(status)) == 1

    async def claim_arbitration(
        self, arbitration_id: int, instance_id: str, now: datetime, lease_until: datetime
    ) -> ArbitrationRow | None:
        # A claim racing this one waits for its row lock, then finds the lease
        # taken (READ COMMITTED checks the WHERE again on the new row).
        row = await self.conn.fetchrow(
            "UPDATE arbitrations SET claimed_by = $1, lease_until = $2, fence = fence + 1"
            " WHERE id = $3 AND " + CLAIMABLE.format(me="$1", now="$4") + " RETURNING *",
            instance_id, lease_until.isoformat(), arbitration_id, now.isoformat(),
        )
        return None if row is None else arbitration(load_row(row))

    async def renew_arbitration(
        self, arbitration_id: int, instance_id: str, fence: int, lease_until: datetime
    ) -> bool:
        status = await self.conn.execute(
            "UPDATE arbitrations SET lease_until = $1 WHERE id = $2 AND claimed_by = $3"
            " AND fence = $4 AND status IN ('pending', 'running')",
            lease_until.isoformat(), arbitration_id, instance_id, fence,
        )
        return _rows_changed(str(status)) == 1

    async def claim_lease(
        self, name: str, instance_id: str, now: datetime, lease_until: datetime
    ) -> LeaseRow | None:
        # A racing claim (or the insert of a new name) waits for this row's
        # lock; its DO UPDATE then checks the rule on the row as committed.
        row = await self.conn.fetchrow(
            "INSERT INTO leases (name, holder, lease_until, fence) VALUES ($1, $2, $3, 1)"
            " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
            " lease_until = excluded.lease_until, fence = leases.fence + 1"
            " WHERE " + LEASE_CLAIMABLE.format(me="$2", now="$4") + " RETURNING *",
            name, instance_id, lease_until.isoformat(), now.isoformat(),
        )
        return None if row is None else LeaseRow.model_validate(dict(row))

    async def renew_lease(
        self, name: str, instance_id: str, fence: int, lease_until: datetime
    ) -> bool:
        status = await self.conn.execute(
            "UPDATE leases SET lease_until = $1 WHERE name = $2 AND holder = $3 AND fence = $4",
            lease_until.isoformat(), name, instance_id, fence,
        )
        return _rows_changed(str(status)) == 1

    async def release_lease(
        self, name: str, instance_id: str, fence: int, *, finished: bool = False
    ) -> bool:
        status = await self.conn.execute(
            "UPDATE leases SET holder = NULL, lease_until = NULL,"
            " finished = CASE WHEN $4 THEN fence ELSE finished END,"
            " work = CASE WHEN $4 THEN NULL ELSE work END"
            " WHERE name = $1 AND holder = $2 AND fence = $3",
            name, instance_id, fence, finished,
        )
        return _rows_changed(str(status)) == 1

    async def set_lease_work(self, name: str, instance_id: str, fence: int, work: str) -> bool:
        status = await self.conn.execute(
            "UPDATE leases SET work = $1 WHERE name = $2 AND holder = $3 AND fence = $4",
            work, name, instance_id, fence,
        )
        return _rows_changed(str(status)) == 1

    async def create_escalation(self, row: EscalationRow) -> None:
        await self.conn.execute(
            "INSERT INTO escalations (id, room_id, options, allowed, requester, status,"
            " verdict_outbox_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            row.id,
            row.room_id,
            dump(row.options),
            dump(row.allowed),
            row.requester,
            row.status,
            row.verdict_outbox_id,
            row.created_at.isoformat(),
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
        # Under READ COMMITTED a second answer waits for the first one's commit
        # and then re-checks `status = 'pending'`: exactly one wins.
        status = await self.conn.execute(
            "UPDATE escalations SET status = 'answered', answer_option = $1, answer_label = $2,"
            " answer_text = $3, answer_kind = $4, answered_by = $5, answered_at = $6,"
            " answer_ruling = $7 WHERE id = $8 AND status = 'pending'",
            option,
            label,
            text,
            kind,
            by,
            at.isoformat(),
            dump(ruling),
            escalation_id,
        )
        return _rows_changed(status) == 1

    async def cancel_other_escalations(self, room_id: str, keep: int) -> None:
        await self.conn.execute(
            "UPDATE escalations SET status = 'cancelled' WHERE room_id = $1"
            " AND status = 'pending' AND id != $2",
            room_id,
            keep,
        )

    async def mark_reminded(self, escalation_id: int, at: datetime) -> None:
        await self.conn.execute(
            "UPDATE escalations SET reminded_at = $1 WHERE id = $2", at.isoformat(), escalation_id
        )

    async def set_escalation_outbox(self, escalation_id: int, outbox_id: int) -> None:
        await self.conn.execute(
            "UPDATE escalations SET verdict_outbox_id = $1 WHERE id = $2", outbox_id, escalation_id
        )

    async def enqueue(
        self,
        room_id: str,
        kind: str,
        payload: dict[str, Any],
        at: datetime,
        edit_of: int | None = None,
    ) -> int:
        new_id = await self.conn.fetchval(
            "INSERT INTO outbox (room_id, kind, payload, edit_of, status, created_at)"
            " VALUES ($1, $2, $3, $4, 'pending', $5) RETURNING id",
            room_id,
            kind,
            dump(payload),
            edit_of,
            at.isoformat(),
        )
        return int(new_id)

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
        await self.conn.execute(
            "UPDATE outbox SET status = $1,"
            " platform_message_id = COALESCE($2, platform_message_id),"
            " last_error = $3, attempts = attempts + 1, sent_at = COALESCE($4, sent_at),"
            " next_attempt_at = $5, claimed_by = NULL, lease_until = NULL WHERE id = $6",
            status,
            platform_message_id,
            error,
            _iso(at),
            _iso(next_attempt_at),
            outbox_id,
        )

    async def renew_outbox(self, room_id: str, instance_id: str, lease_until: datetime) -> int:
        status = await self.conn.execute(
            "UPDATE outbox SET lease_until = $1 WHERE room_id = $2 AND claimed_by = $3"
            " AND status = 'pending'",
            lease_until.isoformat(), room_id, instance_id,
        )
        return _rows_changed(str(status))

    async def save_instance(self, row: InstanceRow) -> None:
        await self.conn.execute(
            "INSERT INTO instances (id, host, pid, started_at, last_seen, discord)"
            " VALUES ($1, $2, $3, $4, $5, $6)"
            " ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen,"
            " discord = excluded.discord",
            row.id, row.host, row.pid, row.started_at.isoformat(), row.last_seen.isoformat(),
            instance_discord(row),
        )

    async def remove_instance(self, instance_id: str) -> None:
        await self.conn.execute(
            "UPDATE outbox SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = $1"
            " AND status = 'pending'",
            instance_id,
        )
        # The fence stays: whoever claims next gets a newer token.
        await self.conn.execute(
            "UPDATE arbitrations SET claimed_by = NULL, lease_until = NULL"
            " WHERE claimed_by = $1 AND status IN ('pending', 'running')",
            instance_id,
        )
        await self.conn.execute(
            "UPDATE leases SET holder = NULL, lease_until = NULL WHERE holder = $1", instance_id
        )
        await self.conn.execute("DELETE FROM instances WHERE id = $1", instance_id)

    async def set_setting(self, scope: str, scope_id: str, key: str, value: Any) -> None:
        if value is None:
            await self.conn.execute(
                "DELETE FROM settings WHERE scope = $1 AND scope_id = $2 AND key = $3",
                scope,
                scope_id,
                key,
            )
            return
        await self.conn.execute(
            "INSERT INTO settings (scope, scope_id, key, value) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (scope, scope_id, key) DO UPDATE SET value = excluded.value",
            scope,
            scope_id,
            key,
            json.dumps(value),
        )

    async def set_bindings(self, platform: str, channel: str, role: str, ids: list[str]) -> None:
        await self.conn.execute(
            "DELETE FROM bindings WHERE platform = $1 AND channel = $2 AND role = $3",
            platform,
            channel,
            role,
        )
        await self.conn.executemany(
            "INSERT INTO bindings (platform, channel, role, user_id) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT DO NOTHING",
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
        await self.conn.execute(
            "INSERT INTO audit_log (at, platform, channel, user_id, action, scope, before, after)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            at.isoformat(),
            platform,
            channel,
            user_id,
            action,
            scope,
            before,
            after,
        )


class PostgresRoomTransaction(PostgresTransaction, RoomTransaction):
    """A room's unit: the room's advisory lock is held for the whole transaction.

    `unprocessed` and `stored_seq` as on SQLite (`SqliteRoomTransaction`)."""

    def __init__(self, conn: Session, room_id: str, state: str | None, *,
                 unprocessed: list[Any] | None = None,
                 stored_seq: int | None = None) -> None:
        super().__init__(conn)
        self.room_id = room_id
        self.state = state
        self._unprocessed = unprocessed
        self._stored_seq = stored_seq

    async def unprocessed_messages(self) -> list[MessageRow]:
        if self._unprocessed is not None:  # read with the state, nothing written since
            rows, self._unprocessed = self._unprocessed, None
            return [MessageRow.model_validate(load_row(r)) for r in rows]
        found = await self.conn.fetch(
            "SELECT * FROM messages WHERE processed = 0 AND room_id = $1 ORDER BY seq",
            self.room_id,
        )
        return [MessageRow.model_validate(load_row(r)) for r in found]

    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> bool:
        self._unprocessed = None
        if seq == self._stored_seq:
            # Stored by this transaction: no one else can have applied it.
            self._stored_seq = None
            await self.conn.flush()
            self.conn.mark = (epoch, turn_no, seq)
            return True
        return await super().mark_processed(seq, epoch=epoch, turn_no=turn_no)

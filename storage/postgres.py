"""PostgreSQL through asyncpg: the backend for several Tribunal processes.

`TRIBUNAL_DATABASE=postgresql://user:password@host:5432/dbname` selects it.
A pool of connections serves the process; each unit of work holds one
connection for its transaction (READ COMMITTED), so rooms write in parallel
where SQLite's single connection takes them one at a time. Reads made inside
a unit of work go through its connection and see its writes, as on SQLite.

The schema is the SQLite migrations translated by `storage.schema`. Instances
that start together migrate one at a time under an advisory lock, and a
schema newer than this code is refused before anything is written.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import asyncpg

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
from storage.postgres_writes import (
    ROOM_AND_UNPROCESSED,
    PostgresRoomTransaction,
    PostgresTransaction,
    Session,
    load_row,
)
from storage.schema import latest_version, postgres_migrations
from storage.sqlite_writes import from_ms, ms

# Key of the session-wide advisory lock taken around migrating ("tribunal" in
# ASCII): every Tribunal on the same database agrees on it.
MIGRATION_LOCK = 0x74726962756E616C
CONNECT_TIMEOUT = 10.0  # seconds for one connection attempt at start
POOL_MAX_SIZE = 10  # connections per process; a unit of work holds one
CLOSE_GRACE = 1.0  # seconds for connections in use to be given back at close
# What the server, the network or the URL can raise at start; anything else is a bug.
_UNUSABLE = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError, ValueError)


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = "&".join(
        "password=***" if item.split("=", 1)[0] == "password" else item
        for item in parts.query.split("&")
    ) if parts.query else ""
    # Spelt out: urlunsplit would drop the `//` of a URL without a host.
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_row = load_row  # JSON columns decoded (storage/postgres_writes.py)


def _with_defaults(row: dict[str, Any]) -> dict[str, Any]:
    for key in ("options", "overrides"):
        if row.get(key) is None:
            row[key] = []
    if row.get("evidence") is None:
        row["evidence"] = {}
    return row


async def _keep_session(conn: asyncpg.Connection) -> None:
    """What the pool does to a connection given back, after asyncpg has rolled
    back a transaction left open: nothing more. Its default reset query
    (release session advisory locks, close cursors, UNLISTEN, RESET ALL)
    would cost a round trip per unit of work, and there is nothing for it to
    undo: the storage takes only transaction-level locks and never uses
    cursors, LISTEN or session settings."""


class PostgresStorage(Storage):
    shared = True  # the backend for several instances

    def __init__(self, url: str, *, max_size: int = POOL_MAX_SIZE) -> None:
        self.url = url
        self.max_size = max_size
        self._pool: asyncpg.Pool | None = None
        # The connection of the unit of work a task is in: its own reads use it.
        self._owners: dict[asyncio.Task[Any], asyncpg.Connection] = {}
        # Units of one room in this process queue in order (asyncio locks are
        # FIFO); the advisory lock then orders them against other instances.
        self._room_locks = RoomLocks()

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("storage is not open")
        return self._pool

    async def open(self) -> None:
        """Connect, migrate, and prove the database writable, or raise DatabaseUnusable."""
        try:
            self._pool = await asyncpg.create_pool(
                self.url, min_size=1, max_size=self.max_size, timeout=CONNECT_TIMEOUT,
                reset=_keep_session,
            )
            async with self.pool.acquire() as conn:
                # Before anything writes: a newer release's schema is left as it was.
                self._check_version(await self._schema_version(conn))
                await self._migrate(conn)
                await self._probe_write(conn)
        except BaseException as exc:
            await self.close()
            if isinstance(exc, _UNUSABLE):
                raise DatabaseUnusable(self._explain(exc)) from None
            raise

    @staticmethod
    async def _schema_version(conn: asyncpg.Connection) -> int:
        if await conn.fetchval("SELECT to_regclass('schema_version')") is None:
            return 0
        return int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_version"))

    def _check_version(self, current: int) -> None:
        known = latest_version()
        if current > known:
            # Old code could misread or damage what a newer release wrote.
            raise DatabaseUnusable(
                f"{redact(self.url)} has schema version {current}, newer than this Tribunal "
                f"knows ({known}): it was written by a newer release. Upgrade Tribunal, or "
                "point TRIBUNAL_DATABASE at another database")

    async def _migrate(self, conn: asyncpg.Connection) -> None:
        """Apply pending migrations in one transaction, one instance at a time.

        The transaction-scoped advisory lock is taken before even the
        `CREATE TABLE IF NOT EXISTS`, which is not safe against itself
        running concurrently; a second instance waits, then finds the work
        done. DDL is transactional here, so a failed version leaves nothing.
        """
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"
            )
            current = await self._schema_version(conn)
            self._check_version(current)  # again, under the lock
            # Every version not applied yet (see the SQLite backend).
            applied = {int(v) for v in await conn.fetch("SELECT version FROM schema_version")
                       for v in v.values()}
            for version, statements in postgres_migrations():
                if version in applied:
                    continue
                for statement in statements:
                    await conn.execute(statement)
                await self._sync_identities(conn)
                await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", version)

    @staticmethod
    async def _sync_identities(conn: asyncpg.Connection) -> None:
        """Move every identity past the highest id its table holds.

        A migration that rebuilds a table copies its rows with their ids; on
        SQLite AUTOINCREMENT continues after them by itself, here the identity
        would hand out the copied ids again.
        """
        columns = await conn.fetch(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'"
        )
        for column in columns:
            table, name = _ident(column["table_name"]), _ident(column["column_name"])
            await conn.execute(
                f"SELECT setval(pg_get_serial_sequence($1, $2),"
                f" COALESCE((SELECT MAX({name}) FROM {table}), 0) + 1, false)",
                table,
                column["column_name"],
            )

    @staticmethod
    async def _probe_write(conn: asyncpg.Connection) -> None:
        """One write, rolled back: an up-to-date schema opens without writing, so a
        read-only database (a standby, a read-only role) would otherwise pass and
        fail on the first message."""
        tx = conn.transaction()
        await tx.start()
        try:
            await conn.execute("INSERT INTO schema_version (version) VALUES (-1)")
        finally:
            await tx.rollback()

    def _explain(self, exc: BaseException) -> str:
        """What went wrong with the server, in words an operator can act on."""
        where = redact(self.url)
        refused = (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError)
        if isinstance(exc, refused):
            return f"{where}: the server refused the credentials ({exc})"
        if isinstance(exc, asyncpg.InvalidCatalogNameError):
            return f"{where}: the database does not exist ({exc}); create it first"
        if isinstance(exc, asyncpg.ReadOnlySQLTransactionError):
            return f"{where} is read-only ({exc}); the bot must be able to write to it"
        if isinstance(exc, asyncpg.InsufficientPrivilegeError):
            return f"{where}: the user may not create or write the tables ({exc})"
        if isinstance(exc, TimeoutError):
            return f"{where}: no answer from the server within {CONNECT_TIMEOUT:.0f} s"
        if isinstance(exc, OSError):
            return f"{where}: cannot connect ({exc.strerror or exc}); is PostgreSQL running there?"
        if isinstance(exc, ValueError | asyncpg.InterfaceError):
            return f"{where} is not a usable PostgreSQL URL ({exc})"
        return f"{where}: {exc}"

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                # A unit of work cut short at shutdown may still hold its
                # connection; `tribunal run` must stop within its deadline.
                await asyncio.wait_for(pool.close(), CLOSE_GRACE)
            except TimeoutError:
                pool.terminate()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        task = asyncio.current_task()
        session: Session | None = None
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                session = Session(conn, self._room_locks)
                if task is not None:
                    self._owners[task] = conn
                try:
                    yield PostgresTransaction(session)
                    await session.flush()
                finally:
                    if task is not None:
                        self._owners.pop(task, None)
        finally:
            if session is not None:
                session.end()  # after the commit: a room taken here is free

    @asynccontextmanager
    async def room(self, room_id: str) -> AsyncIterator[RoomTransaction]:
        """The room's unit of work, serialized cluster-wide: a transaction-level
        advisory lock on the room id, released at commit or rollback, so every
        instance sees the state the last one committed."""
        task = asyncio.current_task()
        async with (self._room_locks.hold(room_id), self.pool.acquire() as conn,
                    conn.transaction()):
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", room_id)
            # After the lock, in a statement of its own (its snapshot sees what
            # the lock's last holder committed): the state and the room's
            # unapplied messages in one read.
            rows = await conn.fetch(ROOM_AND_UNPROCESSED, room_id)
            state = rows[0]["room_state"] if rows else None
            if task is not None:
                self._owners[task] = conn
            session = Session(conn, self._room_locks)
            try:
                yield PostgresRoomTransaction(
                    session, room_id, None if state is None else str(state),
                    unprocessed=[r for r in rows if r["seq"] is not None])
                await session.flush()
            finally:
                if task is not None:
                    self._owners.pop(task, None)

    async def _all(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        task = asyncio.current_task()
        if task is not None and task in self._owners:
            # As on SQLite: the core reads through its unit (Transaction.get_*),
            # never through Storage in the middle of one.
            raise RuntimeError("a read through Storage inside a unit of work: read "
                               "through the unit (Transaction.get_*) instead")
        return [_row(r) for r in await self.pool.fetch(sql, *params)]

    async def _one(self, sql: str, *params: Any) -> dict[str, Any] | None:
        rows = await self._all(sql, *params)
        return rows[0] if rows else None

    async def load_room_state(self, room_id: str) -> str | None:
        row = await self._one("SELECT state FROM rooms WHERE id = $1", room_id)
        return None if row is None else str(row["state"])

    async def unprocessed_messages(self, room_id: str | None = None) -> list[MessageRow]:
        if room_id is None:
            rows = await self._all("SELECT * FROM messages WHERE processed = 0 ORDER BY seq")
        else:
            rows = await self._all(
                "SELECT * FROM messages WHERE processed = 0 AND room_id = $1 ORDER BY seq",
                room_id,
            )
        return [MessageRow.model_validate(r) for r in rows]

    async def rooms_with_open_turns(self) -> list[str]:
        # `->>` is NULL for a missing key and for JSON null, like json_extract.
        rows = await self._all(
            "SELECT id FROM rooms WHERE (state::json ->> 'open_turn') IS NOT NULL ORDER BY id"
        )
        return [str(r["id"]) for r in rows]

    async def get_action(self, action_id: int) -> ActionRow | None:
        row = await self._one("SELECT * FROM actions WHERE id = $1", action_id)
        return None if row is None else ActionRow.model_validate(row)

    async def unprocessed_actions(self) -> list[ActionRow]:
        rows = await self._all("SELECT * FROM actions WHERE processed = 0 ORDER BY id")
        return [ActionRow.model_validate(r) for r in rows]

    async def catch_up_marks(self, platform: str) -> list[CatchUpMark]:
        # DISTINCT ON keeps each room's latest stored message (ts is ISO text
        # under the C collation, so it sorts as time).
        rows = await self._all(
            "SELECT m.room_id, m.message_id AS last_message_id, m.ts AS last_ts,"
            " COALESCE((r.state::jsonb ->> 'task_active')::boolean, false)"
            "   AND NOT COALESCE((r.state::jsonb ->> 'approved')::boolean, false) AS open_task,"
            " r.last_activity_at"
            " FROM (SELECT DISTINCT ON (room_id) room_id, message_id, ts FROM messages"
            "       WHERE platform = $1 ORDER BY room_id, ts DESC) m"
            " LEFT JOIN rooms r ON r.id = m.room_id"
            " ORDER BY COALESCE(r.last_activity_at, m.ts) DESC",
            platform,
        )
        return [CatchUpMark.model_validate(r) for r in rows]

    async def latest_room(self, platform: str, channel: str) -> str | None:
        row = await self._one(
            "SELECT id FROM rooms WHERE platform = $1 AND channel = $2"
            " ORDER BY last_activity_at DESC LIMIT 1",
            platform,
            channel,
        )
        return None if row is None else str(row["id"])

    async def get_bindings(self, platform: str, channel: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for row in await self._all(
            "SELECT role, user_id FROM bindings WHERE platform = $1 AND channel = $2"
            " ORDER BY role, user_id",
            platform,
            channel,
        ):
            out.setdefault(row["role"], []).append(row["user_id"])
        return out

    async def get_settings(self, scope: str, scope_id: str) -> dict[str, Any]:
        rows = await self._all(
            "SELECT key, value FROM settings WHERE scope = $1 AND scope_id = $2 ORDER BY key",
            scope,
            scope_id,
        )
        return {row["key"]: json.loads(row["value"]) for row in rows}

    async def get_arbitration(self, arbitration_id: int) -> ArbitrationRow | None:
        row = await self._one("SELECT * FROM arbitrations WHERE id = $1", arbitration_id)
        return None if row is None else ArbitrationRow.model_validate(_with_defaults(row))

    async def unfinished_arbitrations(self) -> list[ArbitrationRow]:
        rows = await self._all(
            "SELECT * FROM arbitrations WHERE status IN ('pending', 'running') ORDER BY id"
        )
        return [ArbitrationRow.model_validate(_with_defaults(r)) for r in rows]

    async def room_arbitrations(
        self, room_id: str, *, since: datetime | None = None, limit: int = 10
    ) -> list[ArbitrationRow]:
        rows = await self._all(
            "SELECT * FROM arbitrations WHERE room_id = $1 AND status = 'done'"
            " AND created_at >= $2 ORDER BY id DESC LIMIT $3",
            room_id,
            since.isoformat() if since else "",
            limit,
        )
        return [ArbitrationRow.model_validate(_with_defaults(r)) for r in reversed(rows)]

    async def get_escalation(self, escalation_id: int) -> EscalationRow | None:
        row = await self._one("SELECT * FROM escalations WHERE id = $1", escalation_id)
        return None if row is None else EscalationRow.model_validate(row)

    async def due_reminders(self, created_before: datetime) -> list[EscalationRow]:
        rows = await self._all(
            "SELECT * FROM escalations WHERE status = 'pending' AND reminded_at IS NULL"
            " AND created_at <= $1 ORDER BY id",
            created_before.isoformat(),
        )
        return [EscalationRow.model_validate(r) for r in rows]

    async def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        row = await self._one("SELECT * FROM outbox WHERE id = $1", outbox_id)
        return None if row is None else OutboxRow.model_validate(row)

    async def pending_rooms(self, platforms: list[str], limit: int = 1000) -> list[str]:
        if not platforms:
            return []
        # A room id is "platform:channel:thread"; one without ':' has no platform.
        rows = await self._all(
            "SELECT DISTINCT room_id FROM outbox WHERE status = 'pending'"
            " AND strpos(room_id, ':') > 0 AND split_part(room_id, ':', 1) = ANY($1::text[])"
            " LIMIT $2",
            platforms,
            limit,
        )
        return [str(r["room_id"]) for r in rows]

    async def pending_outbox(self, room_id: str, limit: int = 50) -> list[OutboxRow]:
        rows = await self._all(
            "SELECT * FROM outbox WHERE room_id = $1 AND status = 'pending' ORDER BY id LIMIT $2",
            room_id,
            limit,
        )
        return [OutboxRow.model_validate(r) for r in rows]

    async def claim_outbox(
        self, room_id: str, instance_id: str, now: datetime, lease_until: datetime,
        limit: int = 50,
    ) -> list[OutboxRow]:
        async with self.pool.acquire() as conn, conn.transaction():
            pending = await conn.fetch(
                "SELECT id FROM outbox WHERE room_id = $1 AND status = 'pending'"
                " ORDER BY id LIMIT $2",
                room_id, limit,
            )
            # Rows another instance is claiming right now are skipped, not
            # waited for; the claim then keeps only the run of locked rows that
            # starts at the room's first pending post, so order holds.
            locked = await conn.fetch(
                "SELECT * FROM outbox WHERE room_id = $1 AND status = 'pending'"
                " ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED",
                room_id, limit,
            )
            run: list[OutboxRow] = []
            for want, got in zip(pending, locked, strict=False):
                if want["id"] != got["id"]:
                    break
                run.append(OutboxRow.model_validate(_row(got)))
            registered = {str(r["id"]) for r in await conn.fetch("SELECT id FROM instances")}
            taken = claimable(run, instance_id, now, registered)
            if taken:
                await conn.execute(
                    "UPDATE outbox SET claimed_by = $1, lease_until = $2"
                    " WHERE id = ANY($3::bigint[])",
                    instance_id, lease_until.isoformat(), [row.id for row in taken],
                )
        return [as_claimed(row, instance_id, lease_until) for row in taken]

    async def reserve_slot(self, key: str, now: datetime, spacing: timedelta) -> datetime:
        at, step = ms(now), round(spacing.total_seconds() * 1000)
        # One statement: a racing reservation of the same key waits for this
        # row's lock and then builds on what this one wrote.
        next_ms = await self.pool.fetchval(
            "INSERT INTO pacing (key, next_ms) VALUES ($1, $2::bigint + $3::bigint)"
            " ON CONFLICT (key) DO UPDATE"
            " SET next_ms = GREATEST(pacing.next_ms, $2::bigint) + $3::bigint RETURNING next_ms",
            key, at, step,
        )
        return from_ms(int(next_ms) - step)

    async def push_slot(self, key: str, not_before: datetime) -> None:
        await self.pool.execute(
            "UPDATE pacing SET next_ms = GREATEST(next_ms, $1::bigint) WHERE key = $2",
            ms(not_before), key,
        )

    async def instances(self) -> list[InstanceRow]:
        rows = await self._all("SELECT * FROM instances ORDER BY started_at, id")
        return [InstanceRow.model_validate(r) for r in rows]

    async def leases(self, prefix: str = "") -> list[LeaseRow]:
        rows = await self._all(
            "SELECT * FROM leases WHERE substr(name, 1, length($1::text)) = $1::text ORDER BY name",
            prefix,
        )
        return [LeaseRow.model_validate(r) for r in rows]

    async def room_states(self) -> list[tuple[str, str]]:
        return [(str(r["id"]), str(r["state"]))
                for r in await self._all("SELECT id, state FROM rooms ORDER BY id")]

    async def pending_escalations(self) -> list[EscalationRow]:
        rows = await self._all("SELECT * FROM escalations WHERE status = 'pending' ORDER BY id")
        return [EscalationRow.model_validate(r) for r in rows]

    async def recent_arbitrations(self, limit: int = 10) -> list[ArbitrationRow]:
        rows = await self._all("SELECT * FROM arbitrations ORDER BY id DESC LIMIT $1", limit)
        return [ArbitrationRow.model_validate(_with_defaults(r)) for r in rows]

    async def human_messages(
        self, room_id: str, since_seq: int, limit: int
    ) -> tuple[list[MessageRow], int]:
        # As on SQLite: the task's first human message, the latest `limit`, and
        # how many lie between them (`limit + 2` rows say whether any do).
        rows = await self._all(
            "SELECT * FROM messages WHERE room_id = $1 AND role = 'user' AND seq >= $2"
            " AND processed = 1 ORDER BY seq DESC LIMIT $3",
            room_id, since_seq, limit + 2,
        )
        if len(rows) <= limit + 1:
            return [MessageRow.model_validate(r) for r in reversed(rows)], 0
        first = await self._one(
            "SELECT * FROM messages WHERE room_id = $1 AND role = 'user' AND seq >= $2"
            " AND processed = 1 ORDER BY seq LIMIT 1",
            room_id, since_seq,
        )
        latest = rows[:limit]
        between = await self._one(
            "SELECT COUNT(*) AS n FROM messages WHERE room_id = $1 AND role = 'user'"
            " AND seq > $2 AND seq < $3",
            room_id, first["seq"] if first else since_seq, latest[-1]["seq"],
        )
        kept = ([first] if first else []) + list(reversed(latest))
        return [MessageRow.model_validate(r) for r in kept], int(between["n"]) if between else 0

    async def agent_turn_messages(
        self, room_id: str, turns: int, since_seq: int = 0
    ) -> tuple[list[MessageRow], int]:
        keep = [
            r["turn_no"]
            for r in await self._all(
                "SELECT DISTINCT turn_no FROM messages WHERE room_id = $1"
                " AND turn_no IS NOT NULL AND seq >= $2 ORDER BY turn_no DESC LIMIT $3",
                room_id, since_seq, turns,
            )
        ]
        if not keep:
            return [], 0
        first = min(keep)
        rows = await self._all(
            "SELECT * FROM messages WHERE room_id = $1 AND turn_no >= $2 AND seq >= $3"
            " AND role IN ('owner', 'reviewer') ORDER BY seq",
            room_id, first, since_seq,
        )
        if len(keep) < turns:
            return [MessageRow.model_validate(r) for r in rows], 0  # the whole task is here
        # Agent turns are numbered densely per room: the task's earlier turns are
        # those from its first agent message's turn up to `first`.
        start = await self._one(
            "SELECT MIN(turn_no) AS t FROM messages WHERE room_id = $1"
            " AND role IN ('owner', 'reviewer') AND seq >= $2 AND turn_no IS NOT NULL",
            room_id, since_seq,
        )
        task_first = min(first, int(start["t"])) if start and start["t"] is not None else first
        return [MessageRow.model_validate(r) for r in rows], first - task_first

    async def pending_counts(self) -> PendingCounts:
        row = await self._one(
            "SELECT (SELECT count(*) FROM outbox WHERE status = 'pending') AS outbox,"
            " (SELECT count(*) FROM escalations WHERE status = 'pending') AS escalations"
        )
        assert row is not None  # a SELECT without FROM always yields its one row
        return PendingCounts(outbox=int(row["outbox"]), escalations=int(row["escalations"]))

    async def list_audit(self, platform: str, channel: str, limit: int = 20) -> list[AuditRow]:
        rows = await self._all(
            "SELECT * FROM audit_log WHERE platform = $1 AND channel = $2"
            " ORDER BY id DESC LIMIT $3",
            platform,
            channel,
            limit,
        )
        return [AuditRow.model_validate(r) for r in rows]

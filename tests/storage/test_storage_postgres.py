"""What only the PostgreSQL backend does, on a real server: the upgrade of an
older schema, byte-order text, and a database it cannot use refused at open
with a reason (the storage contract both backends keep is
test_storage_contract.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from storage.base import DatabaseUnusable, MessageRow
from storage.postgres import PostgresStorage, redact
from storage.schema import latest_version, postgres_migrations

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 29, tzinfo=UTC)


async def execute(url: str, *statements: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def test_an_older_schema_is_upgraded_and_ids_continue(postgres_database: str) -> None:
    # A database as version 2 left it, with a message: version 3 rebuilds the
    # messages table, copying the rows with their seq.
    older = [s for version, stmts in postgres_migrations()[:2] for s in stmts]
    await execute(
        postgres_database,
        "CREATE TABLE schema_version (version BIGINT NOT NULL)",
        *older,
        "INSERT INTO schema_version VALUES (1), (2)",
        "INSERT INTO messages (platform, message_id, room_id, author, role, text, ts, epoch)"
        " VALUES ('console', 'm1', 'console:a:', 'u', 'user', 'kept', 'x', 0)",
    )
    store = PostgresStorage(postgres_database)
    await store.open()
    try:
        assert await store._all("SELECT seq, text FROM messages") == [{"seq": 1, "text": "kept"}]
        row = MessageRow(platform="console", message_id="m1", room_id="console:b:", author="u",
                         role="user", text="other room", ts=NOW)
        async with store.transaction() as tx:
            assert await tx.insert_message(row) == 2  # after the copied seq, in another room
            assert await tx.insert_message(row) is None  # same id, same room
        versions = await store._all("SELECT version FROM schema_version ORDER BY version")
        assert [v["version"] for v in versions] == list(range(1, latest_version() + 1))
    finally:
        await store.close()


async def test_text_compares_byte_by_byte_whatever_the_server_locale(
    postgres_database: str,
) -> None:
    store = PostgresStorage(postgres_database)
    await store.open()
    try:
        rows = await store._all(
            "SELECT DISTINCT collation_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND data_type = 'text'")
        assert rows == [{"collation_name": "C"}]
        # ISO times with and without fractions order as SQLite orders them.
        ordered = await store._all(
            "SELECT v FROM (VALUES ('2026-11-29T10:00:00.500000+00:00'),"
            " ('2026-11-29T10:00:00+00:00'), ('a'), ('B')) AS t (v)"
            ' ORDER BY v COLLATE "C"')
        assert [r["v"] for r in ordered] == [
            "2026-11-29T10:00:00+00:00", "2026-11-29T10:00:00.500000+00:00", "B", "a"]
    finally:
        await store.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when this returns


async def refused(url: str) -> str:
    store = PostgresStorage(url)
    with pytest.raises(DatabaseUnusable) as info:
        await store.open()
    assert store._pool is None  # closed: nothing left connected
    return str(info.value)


async def test_no_server_is_refused_without_showing_the_password() -> None:
    url = f"postgresql://tribunal:s3cret@127.0.0.1:{_closed_port()}/tribunal"
    message = await refused(url)
    assert "cannot connect" in message and "s3cret" not in message
    assert "postgresql://tribunal:***@127.0.0.1" in message


def test_redact_hides_passwords_in_either_place() -> None:
    assert redact("postgresql://u:p%40ss@h:5/db?sslmode=require") == (
        "postgresql://u:***@h:5/db?sslmode=require")
    assert redact("postgres://h/db?password=x&user=u") == "postgres://h/db?password=***&user=u"
    assert redact("postgresql:///db?host=/run/pg") == "postgresql:///db?host=/run/pg"


async def test_a_missing_database_is_refused(postgres_database: str) -> None:
    message = await refused(postgres_database.rsplit("/", 1)[0] + "/no_such_database")
    assert "the database does not exist" in message


async def test_a_read_only_database_is_refused(postgres_database: str) -> None:
    store = PostgresStorage(postgres_database)
    await store.open()  # up to date: opening it again needs no write at all
    await store.close()
    name = postgres_database.rsplit("/", 1)[1]
    await execute(postgres_database,
                  f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    assert "is read-only" in await refused(postgres_database)


def test_tribunal_run_refuses_a_database_it_cannot_reach(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))}
    env.update({
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        "TRIBUNAL_DATABASE": f"postgresql://tribunal:s3cret@127.0.0.1:{_closed_port()}/t",
        # A Slack that must never be reached: the database is checked first.
        "SLACK_BOT_TOKEN": "xoxb-unused", "SLACK_SIGNING_SECRET": "unused",
        "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": "http://127.0.0.1:9/api/",
        "TRIBUNAL_HTTP_HOST": "127.0.0.1",
    })
    result = subprocess.run([sys.executable, "-m", "bot", "run"], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert "cannot connect" in result.stderr and "Traceback" not in result.stderr
    assert "s3cret" not in result.stderr and "tribunal running" not in result.stderr


async def test_close_does_not_wait_for_a_unit_of_work_left_open(postgres_database: str) -> None:
    # At shutdown a cancelled task may not have given its connection back yet;
    # closing must still finish (the bot has a stop deadline to keep).
    store = PostgresStorage(postgres_database)
    await store.open()
    entered, never = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with store.transaction():
            entered.set()
            await never.wait()

    task = asyncio.create_task(hold())
    await entered.wait()
    await asyncio.wait_for(store.close(), 30)  # a guard against hanging, not a timing claim
    assert store._pool is None
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, asyncpg.InterfaceError):
        await task

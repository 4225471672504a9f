"""A database the bot cannot use is refused when it opens, with a clear reason,
on real files: never a hang, never a bot that answers and then drops what it
cannot store."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from storage.base import DatabaseUnusable
from storage.sqlite import SqliteStorage, migrations

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make a file or a directory really read-only, even for root.

    As an ordinary user the permission bits do it. Root ignores them, so as
    root the immutable attribute is set (`chattr +i`): the kernel then refuses
    to write the file, or to create files in the directory, to root too,
    which is exactly what SQLite meets on a read-only file or directory.
    Simulating it instead (`PRAGMA query_only`, a `mode=ro` URI) would only
    exercise SQLite's own switch, not what the check meets in production. Where
    neither works (no chattr, a file system without the attribute, no
    CAP_LINUX_IMMUTABLE) the test is skipped rather than passing vacuously.
    """
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)],
                                        capture_output=True, check=False).returncode != 0:
        pytest.skip("running as root and `chattr +i` is not available here")
    try:
        probe = path / "probe" if path.is_dir() else path
        try:
            with open(probe, "ab"):
                pass
        except PermissionError:
            pass
        else:
            pytest.skip(f"{path} is still writable after chattr +i")
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


async def make_database(path: Path) -> None:
    storage = SqliteStorage(str(path))
    await storage.open()
    await storage.close()


async def refused(path: Path) -> str:
    storage = SqliteStorage(str(path))
    with pytest.raises(DatabaseUnusable) as info:
        await storage.open()
    assert storage._db is None  # closed: its thread must not keep the process alive
    return str(info.value)


async def test_random_bytes_are_not_a_database(tmp_path: Path) -> None:
    db = tmp_path / "junk.db"
    db.write_bytes(os.urandom(8192))
    assert "is not a SQLite database" in await refused(db)


async def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "ro.db"
    await make_database(db)  # up to date: opening it needs no write at all
    with read_only(db):
        assert "is read-only" in await refused(db)


async def test_a_read_only_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ro-dir"
    folder.mkdir()
    db = folder / "t.db"
    await make_database(db)  # its -wal and -shm are removed when it closes
    with read_only(folder):
        message = await refused(db)
        assert f"cannot create files in {folder}" in message and "t.db-wal" in message
        assert "cannot create files" in await refused(folder / "new.db")


async def test_a_schema_from_a_newer_release_is_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    await make_database(db)
    known = max(v for v, _ in migrations())
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (known + 5,))
    message = await refused(db)
    assert f"schema version {known + 5}, newer than this Tribunal knows ({known})" in message
    with sqlite3.connect(db) as conn:
        assert max(r[0] for r in conn.execute("SELECT version FROM schema_version")) == known + 5


async def test_a_missing_directory_or_a_directory_path_is_refused(tmp_path: Path) -> None:
    assert "does not exist" in await refused(tmp_path / "nowhere" / "t.db")
    assert "is a directory" in await refused(tmp_path)


async def test_a_healthy_database_still_opens_and_the_probe_leaves_no_trace(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ok.db"
    await make_database(db)
    await make_database(db)
    with sqlite3.connect(db) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version")]
    assert versions == [v for v, _ in migrations()]


def _junk(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


def _future(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version (version) VALUES (999)")


@pytest.mark.parametrize(
    ("setup", "lock", "expected"),
    [
        (_junk, None, "is not a SQLite database"),
        (_future, None, "schema version 999"),
        (None, "file", "is read-only"),
        (None, "dir", "cannot create files in"),
    ],
)
async def test_tribunal_run_refuses_an_unusable_database_at_once(
    tmp_path: Path, setup: Callable[[Path], None] | None, lock: str | None, expected: str,
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "tribunal.db"
    if setup is not None:
        setup(db)
    else:
        await make_database(db)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))}
    env.update({
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        "TRIBUNAL_DATABASE": str(db),
        # Credentials for a Slack that must never be reached: the database is
        # checked first, and a bot that started anyway would retry it for ever
        # (the timeout below would then fail the test).
        "SLACK_BOT_TOKEN": "xoxb-unused", "SLACK_SIGNING_SECRET": "unused",
        "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": "http://127.0.0.1:9/api/",
        "TRIBUNAL_HTTP_HOST": "127.0.0.1",
    })

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot", "run"], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60, check=False)

    if lock is None:
        result = run()
    else:
        with read_only(db if lock == "file" else folder):
            result = run()
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert "tribunal running" not in result.stderr


def test_replay_refuses_an_unusable_database_too(tmp_path: Path) -> None:
    db = tmp_path / "junk.db"
    _junk(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIBUNAL_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-m", "bot", "replay", "-", "--database", str(db)],
                            input="", capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=60, check=False)
    assert result.returncode == 2 and "is not a SQLite database" in result.stderr
    assert "Traceback" not in result.stderr

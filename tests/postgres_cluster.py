"""Starting a throw-away PostgreSQL cluster for the tests (see tests/conftest.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

SERVER_USER = "postgres"  # the operating system user that owns the cluster when we are root
SUPERUSER = "tribunal"  # the cluster's own superuser, reached with trust auth on 127.0.0.1


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> None:
    """Skip, or under CI fail: a CI run must not pass without PostgreSQL."""
    if in_ci():
        pytest.fail(f"PostgreSQL is required under CI=true: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from a synchronous fixture, whatever loop
    the calling test has (a thread of its own has none)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _version(initdb: str) -> tuple[int, ...]:
    found = re.search(r"/postgresql/([\d.]+)/", initdb)
    return tuple(int(p) for p in found.group(1).split(".")) if found else (0,)


@dataclass
class Cluster:
    """A throw-away cluster in a temporary directory."""

    bindir: Path
    folder: Path
    port: int
    as_user: list[str]

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.as_user, *args], capture_output=True, text=True,
                              cwd=self.folder, timeout=120, check=False)

    def init(self) -> str | None:
        done = self._run(str(self.bindir / "initdb"), "-D", str(self.folder / "data"),
                         "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--no-locale")
        return None if done.returncode == 0 else f"initdb failed: {done.stderr.strip()[-500:]}"

    def start(self) -> str | None:
        # A throw-away cluster needs no durability: no fsync, no full pages.
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
                   " -c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        done = self._run(str(self.bindir / "pg_ctl"), "-D", str(self.folder / "data"),
                         "-l", str(self.folder / "server.log"), "-o", options, "-w", "-t", "60",
                         "start")
        if done.returncode == 0:
            return None
        log = self.folder / "server.log"
        tail = log.read_text(errors="replace")[-800:] if log.exists() else done.stderr
        return f"pg_ctl start failed: {tail.strip()}"

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast",
                  "-w", "stop")


def start_cluster() -> tuple[Cluster | None, str]:
    """A running cluster, or None and the reason there is none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if not found:
        return None, ("no /usr/lib/postgresql/*/bin/initdb (install Debian's `postgresql`) "
                      "and TRIBUNAL_TEST_POSTGRES_URL is not set")
    bindir = Path(found[-1]).parent
    as_user: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="tribunal-pg-"))
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            owner = None
        if runuser is None or owner is None:
            shutil.rmtree(folder, ignore_errors=True)
            return None, (f"running as root, and PostgreSQL will not: needs `runuser` and a "
                          f"`{SERVER_USER}` user to run it as")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_user = [runuser, "-u", SERVER_USER, "--"]
    cluster = Cluster(bindir, folder, 0, as_user)
    problem = cluster.init()
    for _ in range(3):  # another process may take the free port first
        if problem is not None:
            break
        cluster.port = _free_port()
        problem = cluster.start()
        if problem is None:
            return cluster, ""
    shutil.rmtree(folder, ignore_errors=True)
    return None, problem or "the server did not start"


@dataclass
class PostgresServer:
    url: str  # of a database its user may create databases from

    def database_url(self, name: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))

    async def _admin(self, sql: str) -> None:
        import asyncpg

        conn = await asyncpg.connect(self.url, timeout=30)
        try:
            if sql.startswith("CREATE DATABASE") and conn.get_server_version().major >= 15:
                # Copying the template's files beats writing them all to the WAL
                # (the default since 15) for a database of a few tables.
                sql += " STRATEGY file_copy"
            await conn.execute(sql)
        finally:
            await conn.close()

    def create_database(self) -> str:
        name = f"tribunal_test_{uuid.uuid4().hex[:12]}"
        run_sync(self._admin(f'CREATE DATABASE "{name}"'))
        return name

    def drop_database(self, name: str) -> None:
        run_sync(self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))



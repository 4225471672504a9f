"""A real PostgreSQL server for the tests that need one.

`postgres_server` (one per test session) is, in this order:
- the server at `TRIBUNAL_TEST_POSTGRES_URL` when that is set (its user must
  be allowed to create databases);
- else a throw-away cluster started here with the server binaries of the
  operating system (`/usr/lib/postgresql/<version>/bin`): `initdb` into a
  temporary directory, `pg_ctl start` on a free port of 127.0.0.1 with its
  socket in that directory, `pg_ctl stop` and the directory removed at the
  end. PostgreSQL refuses to run as root, so as root the cluster belongs to
  the `postgres` user and is run through `runuser -u postgres --`.

`postgres_database` gives each test a database of its own on that server.

Where no server can be had the PostgreSQL tests are skipped with the reason;
under `CI=true` they fail instead, so CI never passes without having run
them (a test of the `postgres` marker that ends skipped in CI is a failure).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the repo root, for `tests.*` whatever the rootdir setup
    sys.path.insert(0, str(ROOT))

from tests.postgres_cluster import (  # noqa: E402
    PostgresServer,
    in_ci,
    start_cluster,
    unavailable,
)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    given = os.environ.get("TRIBUNAL_TEST_POSTGRES_URL")
    if given:
        yield PostgresServer(given)
        return
    cluster, reason = start_cluster()
    if cluster is None:
        unavailable(reason)
        return
    try:
        yield PostgresServer(cluster.url)
    finally:
        cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)


@pytest.fixture
def postgres_database(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    name = postgres_server.create_database()
    try:
        yield postgres_server.database_url(name)
    finally:
        postgres_server.drop_database(name)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: needs a PostgreSQL server (fails under CI=true "
                                       "when none can be had)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "postgres_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.skipped and in_ci() and item.get_closest_marker("postgres") is not None:
        # Whatever skipped it (the fixture, or the test itself): CI must run it.
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"a PostgreSQL test was skipped under CI=true: {reason}"
    return report

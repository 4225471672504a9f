"""`backend`: every storage backend, for the contract tests.

Each test gets a fresh database of its backend (a SQLite file in its
temporary directory, a PostgreSQL database of its own) and may open several
`Storage` instances on it, as several processes would.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from storage.backends import storage_for
from storage.base import Storage
from tests.postgres_cluster import run_sync

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@dataclass
class Backend:
    name: str
    database: str  # a SQLite path or a PostgreSQL URL
    opened: list[Storage] = field(default_factory=list)

    def storage(self) -> Storage:
        """A new, unopened instance on this test's database."""
        return storage_for(self.database)

    async def open(self) -> Storage:
        storage = self.storage()
        await storage.open()
        self.opened.append(storage)
        return storage

    async def close_all(self) -> None:
        for storage in self.opened:
            await storage.close()

    async def sql(self, statement: str) -> list[tuple[Any, ...]]:
        """Run one statement beside the backend, as an operator's tool would."""
        if self.name == "sqlite":
            with sqlite3.connect(self.database) as conn:
                return [tuple(r) for r in conn.execute(statement).fetchall()]
        import asyncpg

        conn = await asyncpg.connect(self.database)
        try:
            return [tuple(r) for r in await conn.fetch(statement)]
        finally:
            await conn.close()

    def sql_sync(self, statement: str) -> list[tuple[Any, ...]]:
        return run_sync(self.sql(statement))  # type: ignore[no-any-return]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "contract.db"))
    return Backend("postgres", request.getfixturevalue("postgres_database"))


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Storage]:
    """The backend's storage, opened; every instance the test opened is closed after."""
    storage = await backend.open()
    yield storage
    await backend.close_all()

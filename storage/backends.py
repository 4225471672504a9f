"""Which backend a `TRIBUNAL_DATABASE` value selects.

A `postgresql://` (or `postgres://`) URL selects PostgreSQL; anything else is
a SQLite file, the default. The PostgreSQL driver is imported only when a URL
asks for it, so the SQLite path never loads it.
"""

from __future__ import annotations

from storage.base import Storage

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(database: str) -> bool:
    return database.startswith(POSTGRES_SCHEMES)


def storage_for(database: str) -> Storage:
    """An unopened storage for `database` (a SQLite path or a PostgreSQL URL)."""
    if is_postgres_url(database):
        from storage.postgres import PostgresStorage

        return PostgresStorage(database)
    from storage.sqlite import SqliteStorage

    return SqliteStorage(database)

"""/healthz reflects the database, and warns of Discord shard settings that the
instances get wrong together: scraped over real HTTP from an in-process server."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import aiohttp

from bot.clock import SystemClock
from bot.ops_server import OpsServer
from storage.base import DiscordShards, InstanceRow
from storage.sqlite import SqliteStorage


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def serving(storage: SqliteStorage) -> AsyncIterator[int]:
    """An ops server on `storage` (opened here), for one test; yields its port."""
    await storage.open()
    server = OpsServer(storage, lease_seconds=30.0)
    port = free_port()
    await server.start("127.0.0.1", port)
    try:
        yield port
    finally:
        await server.close()
        await storage.close()


async def test_health_turns_503_when_the_database_stops_answering(tmp_path: Path) -> None:
    storage = SqliteStorage(str(tmp_path / "h.db"))
    await storage.open()
    server = OpsServer(storage)
    port = free_port()
    await server.start("127.0.0.1", port)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 200
                assert await response.json() == {"status": "ok", "database": {"ok": True},
                                                  "platforms": {}, "instances": []}
            await storage.close()  # what a lost database looks like from here
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 503
                report = await response.json()
            assert report["status"] == "unhealthy" and report["database"]["ok"] is False
            assert report["database"]["error"]
            async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
                assert response.status == 200
                assert "tribunal_database_up 0.0" in await response.text()
            async with http.get(f"http://127.0.0.1:{port}/other") as response:
                assert response.status == 404
    finally:
        await server.close()


async def test_health_lists_discord_shard_settings_that_disagree_as_warnings(
    tmp_path: Path,
) -> None:
    storage = SqliteStorage(str(tmp_path / "w.db"))
    async with serving(storage) as port:
        now = SystemClock().now()
        async with storage.transaction() as tx:
            for name, ids in (("a", [0]), ("b", [0])):
                await tx.save_instance(InstanceRow(
                    id=name, host="h", pid=1, started_at=now, last_seen=now,
                    discord=DiscordShards(shard_count=2, shard_ids=ids)))
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                # The instance itself is fine: warnings, not a 503.
                assert response.status == 200
                report = await response.json()
        assert report["status"] == "ok"
        assert [w.split(":")[0] for w in report["warnings"]] == [
            "shard 0 of 2 is in TRIBUNAL_DISCORD_SHARD_IDS of 2 instances (a (h pid 1), b (h pid 1))",
            "shard 1 of 2 run on no instance (each fixes its shards with "
            "TRIBUNAL_DISCORD_SHARD_IDS and none names it)"]


async def test_health_lists_the_instances_alive_on_the_database(tmp_path: Path) -> None:
    storage = SqliteStorage(str(tmp_path / "i.db"))
    async with serving(storage) as port:
        now = SystemClock().now()
        async with storage.transaction() as tx:
            for name, seen in (("alive", now), ("dead", now - timedelta(seconds=31))):
                await tx.save_instance(InstanceRow(id=name, host="h", pid=7, started_at=seen,
                                                   last_seen=seen))
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 200
                report = await response.json()
        assert [(i["id"], i["host"], i["pid"]) for i in report["instances"]] == [("alive", "h", 7)]
        assert report["instances"][0]["last_seen"] == now.isoformat()

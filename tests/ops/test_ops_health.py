"""/healthz reflects the database: scraped over real HTTP from an in-process server."""

from __future__ import annotations

import socket
from pathlib import Path

import aiohttp

from bot.ops_server import OpsServer
from storage.sqlite import SqliteStorage


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
                                                  "platforms": {}}
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

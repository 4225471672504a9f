"""The operator's endpoint: `/metrics` (Prometheus) and `/healthz` on their own port.

Off unless TRIBUNAL_METRICS_PORT is set; bound to TRIBUNAL_METRICS_HOST
(127.0.0.1 by default, so nothing is exposed by accident). Its own port
rather than Slack's HTTP listener: it runs in every mode (Socket Mode,
Discord only, replays), and a scraper needs no route through the public
ingress that Slack's events come in by.

`/healthz` answers 200 when the database answers a read within
`DB_CHECK_TIMEOUT` and every platform of this process is connected, 503
otherwise; the JSON body says which part is failing and lists the instances
alive on the database (each `tribunal run` sharing it). Problems of the
instances sharing the database taken together (Discord shard settings that
disagree: `bot.shards`) are listed under `warnings` when there are some; they
do not make this instance unhealthy (restarting it would not help).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot import metrics, shards
from bot.clock import SystemClock
from bot.config import Settings
from bot.instances import is_alive
from storage.base import Storage

if TYPE_CHECKING:
    from aiohttp import web

    from bot.platforms import PlatformRunner

log = logging.getLogger("tribunal.ops")

DB_CHECK_TIMEOUT = 3.0  # seconds; a database slower than this is not healthy
STOP_GRACE = 0.5  # seconds for a scrape in flight at shutdown (the stop fits in 5 s)


class OpsServerError(RuntimeError):
    """The endpoint could not listen; the message names the setting."""


class OpsServer:
    def __init__(self, storage: Storage, runners: Sequence[PlatformRunner] = (), *,
                 lease_seconds: float = 30.0) -> None:
        self.storage = storage
        self.runners = list(runners)
        self.lease_seconds = lease_seconds  # TRIBUNAL_LEASE_SECONDS: who is alive
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def check(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, report); refreshes the gauges that describe stored state."""
        database: dict[str, Any] = {"ok": True}
        try:
            counts = await asyncio.wait_for(self.storage.pending_counts(), DB_CHECK_TIMEOUT)
            if counts is None:  # a backend that does not count: any read proves it answers
                await asyncio.wait_for(self.storage.latest_room("", ""), DB_CHECK_TIMEOUT)
            else:
                metrics.OUTBOX_DEPTH.set(counts.outbox)
                metrics.ESCALATIONS_PENDING.set(counts.escalations)
        except TimeoutError:
            database = {"ok": False, "error": f"no answer within {DB_CHECK_TIMEOUT:g} s"}
        except Exception as exc:
            database = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        metrics.DATABASE_UP.set(1 if database["ok"] else 0)
        platforms: dict[str, Any] = {}
        for runner in self.runners:
            up = runner.transport.up
            metrics.PLATFORM_UP.labels(runner.platform).set(1 if up else 0)
            entry: dict[str, Any] = {"connected": up}
            if runner.failure:
                entry["stopped"] = runner.failure
            platforms[runner.platform] = entry
        healthy = bool(database["ok"]) and all(p["connected"] for p in platforms.values())
        report: dict[str, Any] = {
            "status": "ok" if healthy else "unhealthy",
            "database": database,
            "platforms": platforms,
        }
        if database["ok"]:
            try:
                rows = await asyncio.wait_for(self.storage.instances(), DB_CHECK_TIMEOUT)
                now = SystemClock().now()
                report["instances"] = [
                    {"id": row.id, "host": row.host, "pid": row.pid,
                     "last_seen": row.last_seen.isoformat()}
                    for row in rows if is_alive(row, now, self.lease_seconds)
                ]
                warnings = shards.problems(rows, now, self.lease_seconds)
            except Exception as exc:  # the database answered just before: say, go on
                warnings = [f"instances not read: {type(exc).__name__}: {exc}"[:300]]
            if warnings:
                report["warnings"] = warnings
        return healthy, report

    async def _healthz(self, request: web.Request) -> web.Response:
        from aiohttp import web

        healthy, report = await self.check()
        return web.Response(
            status=200 if healthy else 503, text=json.dumps(report),
            content_type="application/json",
        )

    async def _metrics(self, request: web.Request) -> web.Response:
        from aiohttp import web

        await self.check()
        return web.Response(body=metrics.exposition(),
                            headers={"Content-Type": metrics.CONTENT_TYPE})

    async def start(self, host: str, port: int) -> None:
        # aiohttp only when the endpoint is on: `tribunal demo` does not pay for it.
        from aiohttp import web

        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        # No access log: a scrape every few seconds would drown everything else.
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=STOP_GRACE)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            await runner.cleanup()
            raise OpsServerError(
                f"TRIBUNAL_METRICS_PORT: cannot listen on {host}:{port} "
                f"(TRIBUNAL_METRICS_HOST={host}): {exc.strerror or exc}"
            ) from None
        self._runner = runner
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}"
        log.info("metrics on %s/metrics, health on %s/healthz", self.url, self.url)

    async def close(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


async def start_ops_server(
    settings: Settings, storage: Storage, runners: Sequence[PlatformRunner] = ()
) -> OpsServer | None:
    """The endpoint when TRIBUNAL_METRICS_PORT is set, listening; None when it is not.

    Raises OpsServerError when the port cannot be had: the operator asked for
    the endpoint, and running unwatched without saying so would be worse.
    """
    if settings.metrics_port is None:
        return None
    server = OpsServer(storage, runners, lease_seconds=settings.lease_seconds)
    await server.start(settings.metrics_host, settings.metrics_port)
    return server

"""The composition root: storage, engine, adapters and servers built from `Settings`.

Every command of `bot.cli` that does something runs here: `tribunal run`
(the platforms whose credentials are set, the ops server, the engine, until a
signal), `tribunal replay` and `demo` (the console adapter driving a manual
clock) and `tribunal status`. This is the one module of `bot/` that imports
adapters, and it imports each only when a command needs it, so a start pays
for the SDKs it uses and no others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any

from bot import startup
from bot.config import Settings
from bot.ops_server import OpsServerError, start_ops_server
from bot.platforms import PlatformRunner, cancel_all
from bot.ports import EventListener
from prompts.strings import t
from storage.base import DatabaseUnusable, Storage

log = logging.getLogger("tribunal")

EXIT_FAILED = 1
EXIT_USAGE = 2
TICK_SECONDS = 1.0
SHUTDOWN_DEADLINE = 4.5  # seconds from SIGTERM/SIGINT to a forced exit
ADAPTER_STOP_GRACE = 1.5  # seconds for requests in flight when a platform stops


async def open_storage(database: str) -> Storage | None:
    """The database (a SQLite file or a PostgreSQL URL), checked when it opens,
    or None after saying why."""
    from storage.backends import storage_for

    storage = storage_for(database)
    try:
        await storage.open()
    except DatabaseUnusable as exc:
        print(f"tribunal: database: {exc}", file=sys.stderr)
        return None
    return storage


async def replay(
    settings: Settings,
    database: str,
    lines: list[str],
    as_json: bool,
    name: str,
    *,
    listener: EventListener | None = None,
) -> int:
    """`tribunal replay`; with `listener`, the events go there instead of stdout
    (the detection benchmark scores them in-process)."""
    from adapters.console import (
        ROOM_OVERRIDES,
        ConsoleTransport,
        Replayer,
        human_printer,
        json_printer,
    )
    from bot.clock import ManualClock
    from bot.engine import Engine
    from bot.transcript import TranscriptError

    storage = await open_storage(database)
    if storage is None:
        return EXIT_USAGE
    log.info("tribunal replay: %s", startup.summary(settings, ["console"], database))
    try:
        ops = await start_ops_server(settings, storage)
    except OpsServerError as exc:
        print(f"tribunal: {exc}", file=sys.stderr)
        await storage.close()
        return EXIT_USAGE
    clock = ManualClock()
    engine = Engine(settings, storage, clock, room_overrides=ROOM_OVERRIDES)
    engine.register_transport(ConsoleTransport(out=None if as_json else sys.stdout))
    engine.add_listener(listener or (json_printer() if as_json else human_printer()))
    try:
        await engine.start()
        await engine.drain()  # finish what an interrupted replay left, before going on
        replayer = Replayer(engine, clock, echo=None if as_json else sys.stdout)
        await replayer.run(lines)
        for note in await replayer.notes():
            print(f"tribunal replay: {name}: {note}", file=sys.stderr)
    except TranscriptError as exc:
        print(f"tribunal replay: {name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        await engine.drain()
        if ops is not None:
            await ops.close()
        await storage.close()
    return 0


async def status(settings: Settings, database: str, as_json: bool) -> int:
    from bot import report
    from bot.clock import SystemClock

    storage = await open_storage(database)
    if storage is None:
        return EXIT_USAGE
    try:
        status = await report.collect(storage, SystemClock().now(), settings.lease_seconds)
    finally:
        await storage.close()
    print(report.as_json(status) if as_json else report.as_text(status))
    return 0


class _Signals:
    """SIGINT/SIGTERM: the first stops gracefully; a deadline, or a second signal,
    ends the process even if something hangs (a peer that never answers, a
    thread stuck in a system call), so a stop always takes at most a few seconds."""

    def __init__(self, stop: asyncio.Event) -> None:
        self.stop = stop
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, self._received, sig)

    def _received(self, sig: signal.Signals) -> None:
        if self.stop.is_set():
            _force_exit(f"second {sig.name}: exiting now")
        log.info("%s received: stopping", sig.name)
        self.stop.set()
        timer = threading.Timer(
            SHUTDOWN_DEADLINE, _force_exit,
            (f"shutdown took longer than {SHUTDOWN_DEADLINE:g} s: exiting anyway",),
        )
        timer.daemon = True
        timer.start()


def _force_exit(why: str) -> None:
    log.error("%s", why)
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    os._exit(EXIT_FAILED)


async def run(settings: Settings) -> int:
    half = startup.credential_problems(settings)
    if half:
        print("\n".join(f"tribunal run: {problem}" for problem in half), file=sys.stderr)
        return EXIT_USAGE
    platforms = startup.platforms(settings)
    if not platforms:
        print(t("cli_missing_credentials", settings.language), file=sys.stderr)
        return EXIT_USAGE
    from bot.engine import Engine

    stop = asyncio.Event()
    _Signals(stop)
    storage = await open_storage(settings.database)
    if storage is None:
        return EXIT_USAGE
    engine = Engine(settings, storage)
    runners = [PlatformRunner(p, _make_adapter(p, settings, engine)) for p in platforms]
    for runner in runners:
        engine.register_transport(runner.transport)
    tasks: list[asyncio.Task[None]] = []
    ops = None
    try:
        ops = await start_ops_server(settings, storage, runners)
        if stop.is_set():
            return 0
        await engine.instance.register()
        try:
            await engine.check_shards()  # the others' Discord shard settings beside ours
        except Exception as exc:  # a read that failed; the heartbeat checks again
            log.warning("discord shard settings not checked (%s)", exc)
        await _until_stopped(engine.start(), stop)
        if stop.is_set():
            return 0
        tasks = [asyncio.create_task(r.run(), name=f"tribunal-{r.platform}") for r in runners]
        log.info("tribunal running: %s", startup.summary(settings, platforms))
        return await _serve(engine, runners, tasks, stop)
    except OpsServerError as exc:
        print(f"tribunal run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        log.error("tribunal stopped: %s", exc)
        return EXIT_FAILED
    finally:
        # Platforms and background work stop together: an arbitration in flight
        # is cut short and recovered at the next start (its row is stored).
        await asyncio.gather(cancel_all(tasks), engine.shutdown(), return_exceptions=True)
        if ops is not None:
            await ops.close()
        try:
            await engine.instance.remove()  # its claims go back to the others now
        except Exception as exc:
            log.warning("instance %s not removed (%s); it expires with its lease",
                        engine.instance.id, exc)
        await storage.close()
        log.info("tribunal: shutdown complete")


async def _until_stopped(work: Coroutine[Any, Any, None], stop: asyncio.Event) -> None:
    """Run `work`, cancelling it if a stop is asked for meanwhile."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return
    task.result()


async def _serve(
    engine: Any, runners: list[PlatformRunner], tasks: list[asyncio.Task[None]],
    stop: asyncio.Event,
) -> int:
    """Tick about once a second until stopped, or until every platform has stopped."""
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while not stop.is_set():
            running = [t for t in tasks if not t.done()]
            if not running:
                reasons = "; ".join(
                    f"{r.platform}: {r.failure or 'ended unexpectedly'}" for r in runners
                )
                log.error("tribunal stopped: no platform left running (%s)", reasons)
                return EXIT_FAILED
            await asyncio.wait([*running, stopping], timeout=TICK_SECONDS,
                               return_when=asyncio.FIRST_COMPLETED)
            if not stop.is_set():
                await _until_stopped(engine.tick(), stop)
    finally:
        stopping.cancel()
    return 0


def _make_adapter(platform: str, settings: Settings, engine: Any) -> Any:
    if platform == "slack":
        from adapters.slack.runner import SlackAdapter

        return SlackAdapter(settings, engine, stop_grace=ADAPTER_STOP_GRACE)
    from adapters.discord.runner import DiscordAdapter

    return DiscordAdapter(settings, engine)

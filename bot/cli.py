"""`tribunal run | replay FILE [--json] | demo`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Coroutine
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import Settings, SettingsError, load_settings
from bot.platforms import PlatformRunner, cancel_all
from bot.transcript import TranscriptError
from prompts.strings import t
from storage.base import DatabaseUnusable

if TYPE_CHECKING:
    from storage.sqlite import SqliteStorage

log = logging.getLogger("tribunal")

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
TICK_SECONDS = 1.0
SHUTDOWN_DEADLINE = 4.5  # seconds from SIGTERM/SIGINT to a forced exit
ADAPTER_STOP_GRACE = 1.5  # seconds for requests in flight when a platform stops
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tribunal",
        description="Deadlock arbiter for paired AI-agent rooms on Slack and Discord.",
        epilog="Configuration comes from TRIBUNAL_* environment variables (see README).",
    )
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING (default)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="start every adapter whose credentials are set")
    replay = sub.add_parser("replay", help="run a JSONL transcript through the real pipeline")
    replay.add_argument("file", help="transcript file (JSON Lines), or - for stdin")
    replay.add_argument("--json", action="store_true", help="print events as JSON lines")
    replay.add_argument("--database", help="SQLite file (default: TRIBUNAL_DATABASE)")
    demo = sub.add_parser("demo", help="replay the bundled example (no credentials needed)")
    demo.add_argument("--json", action="store_true", help="print events as JSON lines")
    demo.add_argument("--database", help="SQLite file (default: a temporary file)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    level = args.log_level or ("INFO" if args.command == "run" else "WARNING")
    logging.basicConfig(
        level=getattr(logging, str(level).upper(), logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        settings, warnings = load_settings()
    except SettingsError as exc:
        for warning in exc.warnings:
            log.warning("%s", warning)
        problems = "\n".join(f"  {problem}" for problem in exc.problems)
        print(f"tribunal: invalid configuration:\n{problems}", file=sys.stderr)
        return EXIT_USAGE
    for warning in warnings:
        log.warning("%s", warning)
    try:
        return _command(args, settings)
    except KeyboardInterrupt:  # Ctrl-C in replay or demo: no traceback
        return EXIT_INTERRUPTED


def _command(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "run":
        return asyncio.run(_run(settings))
    if args.command == "demo":
        text = resources.files("bot").joinpath("demo/demo.jsonl").read_text(encoding="utf-8")
        if not args.json:
            print(t("cli_demo_intro", settings.language) + "\n")
        if args.database:
            return asyncio.run(
                _replay(settings, args.database, text.splitlines(), args.json, "demo")
            )
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "demo.db")
            return asyncio.run(_replay(settings, db, text.splitlines(), args.json, "demo"))
    database = args.database or settings.database
    try:
        if args.file == "-":
            lines: list[str] = sys.stdin.read().splitlines()
        else:
            lines = Path(args.file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        print(f"tribunal replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_replay(settings, database, lines, args.json, args.file))


async def _open_storage(path: str) -> SqliteStorage | None:
    """The database, checked (see SqliteStorage.open), or None after saying why."""
    from storage.sqlite import SqliteStorage

    storage = SqliteStorage(path)
    try:
        await storage.open()
    except DatabaseUnusable as exc:
        print(f"tribunal: database: {exc}", file=sys.stderr)
        return None
    return storage


async def _replay(
    settings: Settings, database: str, lines: list[str], as_json: bool, name: str
) -> int:
    from adapters.console import ConsoleTransport, Replayer, human_printer, json_printer
    from bot.clock import ManualClock
    from bot.engine import Engine

    storage = await _open_storage(database)
    if storage is None:
        return EXIT_USAGE
    clock = ManualClock()
    engine = Engine(settings, storage, clock, quiet_close=False)
    engine.register_transport(ConsoleTransport(out=None if as_json else sys.stdout))
    engine.add_listener(json_printer() if as_json else human_printer())
    try:
        await engine.start()
        await engine.drain()  # finish what an interrupted replay left, before going on
        await Replayer(engine, clock, echo=None if as_json else sys.stdout).run(lines)
    except TranscriptError as exc:
        print(f"tribunal replay: {name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        await engine.drain()
        await storage.close()
    return 0


def _configured_adapters(settings: Settings) -> list[str]:
    found = []
    if settings.slack_bot_token is not None and (
        (settings.slack_mode == "socket" and settings.slack_app_token is not None)
        or (settings.slack_mode == "http" and settings.slack_signing_secret is not None)
    ):
        found.append("slack")
    if settings.discord_bot_token is not None:
        found.append("discord")
    return found


def _half_configured(settings: Settings) -> str | None:
    """A Slack bot token without what its mode needs is a mistake, not "no Slack"."""
    if settings.slack_bot_token is None:
        return None
    if settings.slack_mode == "socket" and settings.slack_app_token is None:
        return ("tribunal run: Slack Socket Mode (TRIBUNAL_SLACK_MODE=socket, the default) "
                "needs SLACK_APP_TOKEN besides SLACK_BOT_TOKEN; for HTTP mode set "
                "TRIBUNAL_SLACK_MODE=http and SLACK_SIGNING_SECRET")
    if settings.slack_mode == "http" and settings.slack_signing_secret is None:
        return ("tribunal run: Slack HTTP mode (TRIBUNAL_SLACK_MODE=http) needs "
                "SLACK_SIGNING_SECRET besides SLACK_BOT_TOKEN")
    return None


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


async def _run(settings: Settings) -> int:
    half = _half_configured(settings)
    if half is not None:
        print(half, file=sys.stderr)
        return EXIT_USAGE
    platforms = _configured_adapters(settings)
    if not platforms:
        print(t("cli_missing_credentials", settings.language), file=sys.stderr)
        return EXIT_USAGE
    from bot.engine import Engine

    stop = asyncio.Event()
    _Signals(stop)
    storage = await _open_storage(settings.database)
    if storage is None:
        return EXIT_USAGE
    engine = Engine(settings, storage)
    runners = [PlatformRunner(p, _make_adapter(p, settings, engine)) for p in platforms]
    for runner in runners:
        engine.register_transport(runner.transport)
    tasks: list[asyncio.Task[None]] = []
    try:
        if stop.is_set():
            return 0
        await _until_stopped(engine.start(), stop)
        if stop.is_set():
            return 0
        tasks = [asyncio.create_task(r.run(), name=f"tribunal-{r.platform}") for r in runners]
        log.info("tribunal running: %s", ", ".join(platforms))
        return await _serve(engine, runners, tasks, stop)
    except Exception as exc:
        log.error("tribunal stopped: %s", exc)
        return EXIT_FAILED
    finally:
        # Platforms and background work stop together: an arbitration in flight
        # is cut short and recovered at the next start (its row is stored).
        await asyncio.gather(cancel_all(tasks), engine.shutdown(), return_exceptions=True)
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

"""`tribunal run | replay FILE [--json] | demo`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import tempfile
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.config import Settings
from bot.ports import EventListener
from bot.transcript import TranscriptError

log = logging.getLogger("tribunal")

EXIT_USAGE = 2
MISSING_CREDENTIALS = """\
tribunal run: 설정된 플랫폼 자격 증명이 없습니다. (No platform credentials are set.)
Set at least one of:
  Slack, Socket Mode:  SLACK_BOT_TOKEN and SLACK_APP_TOKEN      (TRIBUNAL_SLACK_MODE=socket)
  Slack, HTTP mode:    SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (TRIBUNAL_SLACK_MODE=http)
  Discord:             DISCORD_BOT_TOKEN
To try Tribunal without any credentials: tribunal demo"""


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
        settings = Settings()
        settings.file_config()  # a broken TRIBUNAL_CONFIG is reported here, not mid-run
    except ValidationError as exc:
        print(f"tribunal: invalid configuration:\n{exc}", file=sys.stderr)
        return EXIT_USAGE
    except tomllib.TOMLDecodeError as exc:
        print(f"tribunal: TRIBUNAL_CONFIG is not valid TOML: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"tribunal: cannot read TRIBUNAL_CONFIG: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "run":
        return asyncio.run(_run(settings))
    if args.command == "demo":
        text = resources.files("bot").joinpath("demo/demo.jsonl").read_text(encoding="utf-8")
        if not args.json:
            print(
                "Tribunal demo: 두 에이전트가 같은 논쟁을 반복하다 교착에 빠지고, 중재자가"
                " 사용자에게 결정을 요청한 뒤 사용자가 숫자로 답합니다.\n"
            )
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


async def _replay(
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
    from adapters.console import ConsoleTransport, Replayer, human_printer, json_printer
    from bot.clock import ManualClock
    from bot.engine import Engine
    from storage.sqlite import SqliteStorage

    storage = SqliteStorage(database)
    await storage.open()
    clock = ManualClock()
    engine = Engine(settings, storage, clock, quiet_close=False)
    engine.register_transport(ConsoleTransport(out=None if as_json else sys.stdout))
    engine.add_listener(listener or (json_printer() if as_json else human_printer()))
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


async def _run(settings: Settings) -> int:
    platforms = _configured_adapters(settings)
    if not platforms:
        print(MISSING_CREDENTIALS, file=sys.stderr)
        return EXIT_USAGE
    from bot.engine import Engine
    from storage.sqlite import SqliteStorage

    storage = SqliteStorage(settings.database)
    await storage.open()
    engine = Engine(settings, storage)
    adapters: list[Any] = []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        for platform in platforms:
            adapter = _make_adapter(platform, settings, engine)
            engine.register_transport(adapter.transport)
            adapters.append(adapter)
        await engine.start()
        for adapter in adapters:
            await adapter.start()
        log.info("tribunal running: %s", ", ".join(platforms))
        while not stop.is_set():
            await engine.tick()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=1.0)
    except Exception as exc:
        log.error("tribunal stopped: %s", exc)
        return 1
    finally:
        for adapter in adapters:
            with contextlib.suppress(Exception):
                await adapter.stop()
        await engine.drain()
        await storage.close()
    return 0


def _make_adapter(platform: str, settings: Settings, engine: Any) -> Any:
    if platform == "slack":
        from adapters.slack.runner import SlackAdapter

        return SlackAdapter(settings, engine)
    from adapters.discord.runner import DiscordAdapter

    return DiscordAdapter(settings, engine)

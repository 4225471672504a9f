"""`tribunal run | replay FILE [--json] | demo | status [--json]`: the command line.

Parses the arguments, loads and checks the settings, sets up logging, then
hands the command to the composition root (`bot.app`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
from importlib import resources
from pathlib import Path

from bot import app, logs
from bot.app import EXIT_USAGE
from bot.cli_options import VersionAction, global_options, secret_values
from bot.config import Settings, SettingsError, load_settings
from prompts.strings import t

log = logging.getLogger("tribunal")

EXIT_INTERRUPTED = 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tribunal",
        description="Deadlock arbiter for paired AI-agent rooms on Slack and Discord.",
        epilog="Configuration comes from TRIBUNAL_* environment variables (see README).",
        parents=[global_options()],
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    # The global options are accepted after the subcommand too (`tribunal demo
    # --log-level DEBUG`): each subparser has them as well.
    sub.add_parser("run", help="start every adapter whose credentials are set",
                   parents=[global_options()])
    replay = sub.add_parser("replay", help="run a JSONL transcript through the real pipeline",
                            parents=[global_options()])
    replay.add_argument("file", help="transcript file (JSON Lines), or - for stdin")
    replay.add_argument("--json", action="store_true", help="print events as JSON lines")
    replay.add_argument(
        "--database", help="SQLite file or postgresql:// URL (default: TRIBUNAL_DATABASE)"
    )
    demo = sub.add_parser("demo", help="replay the bundled example (no credentials needed)",
                          parents=[global_options()])
    demo.add_argument("--json", action="store_true", help="print events as JSON lines")
    demo.add_argument(
        "--database", help="SQLite file or postgresql:// URL (default: a temporary SQLite file)"
    )
    status = sub.add_parser("status", help="instances, rooms, findings, escalations and the "
                            "last arbitrations, read from the database",
                            parents=[global_options()])
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.add_argument(
        "--database", help="SQLite file or postgresql:// URL (default: TRIBUNAL_DATABASE)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    level = getattr(args, "log_level", None) or ("INFO" if args.command == "run" else "WARNING")
    logs.configure(level)  # text until the settings say which format
    try:
        settings, warnings = load_settings()
    except SettingsError as exc:
        for warning in exc.warnings:
            log.warning("%s", warning)
        problems = "\n".join(f"  {problem}" for problem in exc.problems)
        print(f"tribunal: invalid configuration:\n{problems}", file=sys.stderr)
        return EXIT_USAGE
    logs.configure(level, settings.log_format, secret_values(settings))
    for warning in warnings:
        log.warning("%s", warning)
    try:
        return _command(args, settings)
    except KeyboardInterrupt:  # Ctrl-C in replay or demo: no traceback
        return EXIT_INTERRUPTED


def _command(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "run":
        return asyncio.run(app.run(settings))
    if args.command == "status":
        return asyncio.run(app.status(settings, args.database or settings.database, args.json))
    if args.command == "demo":
        text = resources.files("bot").joinpath("demo/demo.jsonl").read_text(encoding="utf-8")
        if not args.json:
            print(t("cli_demo_intro", settings.language) + "\n")
        if args.database:
            return asyncio.run(
                app.replay(settings, args.database, text.splitlines(), args.json, "demo")
            )
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "demo.db")
            return asyncio.run(app.replay(settings, db, text.splitlines(), args.json, "demo"))
    database = args.database or settings.database
    try:
        if args.file == "-":
            lines: list[str] = sys.stdin.read().splitlines()
        else:
            lines = Path(args.file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        print(f"tribunal replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(app.replay(settings, database, lines, args.json, args.file))

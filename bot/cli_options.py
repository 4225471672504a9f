"""Pieces of the command line shared by every subcommand (bot/cli.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from pydantic import SecretStr

from bot.config import Settings
from bot.logs import LEVELS


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tribunal")
    except metadata.PackageNotFoundError:  # a checkout run without installing it
        return "unknown (not installed)"


class VersionAction(argparse.Action):
    """`--version`, looked up only when asked: finding the installed version
    reads the metadata of every installed package, which a start need not pay."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"tribunal {version()}", file=sys.stdout)
        parser.exit()


def global_options() -> argparse.ArgumentParser:
    """Options valid before and after the subcommand.

    SUPPRESS as the default: a subcommand's parser must not overwrite, with
    its own default, a value given before the subcommand.
    """
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--log-level", type=str.upper, choices=LEVELS, default=argparse.SUPPRESS,
        help="DEBUG, INFO, WARNING or ERROR (default: INFO for run, WARNING otherwise)",
    )
    return options


def secret_values(settings: Settings) -> list[str]:
    """Every secret the settings hold, for the log's last-line masking."""
    found = [
        value.get_secret_value()
        for name in type(settings).model_fields
        if isinstance(value := getattr(settings, name), SecretStr)
    ]
    return [s for s in found if s]

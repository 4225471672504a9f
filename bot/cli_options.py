"""Pieces of the command line shared by every subcommand (bot/cli.py)."""

from __future__ import annotations

import argparse
from importlib import metadata

from pydantic import SecretStr

from bot.config import Settings
from bot.logs import LEVELS


def version() -> str:
    try:
        return metadata.version("tribunal")
    except metadata.PackageNotFoundError:  # a checkout run without installing it
        return "unknown (not installed)"


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

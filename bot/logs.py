"""How Tribunal logs: text or JSON lines (TRIBUNAL_LOG_FORMAT), secrets masked,
and the libraries' noise kept out.

Operators grep the text format and ship the JSON one (one object a line) to a
log store; both carry the same fields. Structured fields ride on a record as
`extra={"fields": {...}}` (see bot/telemetry.py): the text format shows only
the message, which already names them, the JSON format adds them as keys.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

from bot import metrics

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
MASK = "[secret]"
_MIN_SECRET = 6  # shorter "secrets" (a test's "x") would mask ordinary words

# Libraries that log one line per event at DEBUG: aiosqlite logs every
# statement and its result, which buries Tribunal's own DEBUG lines.
_CHATTY = {"aiosqlite": logging.INFO}

# discord.py warns at every start that voice is unsupported without PyNaCl and
# davey; Tribunal never joins a voice channel, so the warning only misleads.
_DISCORD_VOICE = "voice will NOT be supported"
# Every 429 discord.py retries by itself is logged with this opening, and that
# log line is the library's only trace of it (it has no hook for 429s).
_DISCORD_429 = "We are being rate limited."


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ts, level, logger, message, the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update({k: v for k, v in fields.items() if k not in entry})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class _Masking(logging.Formatter):
    """Wraps a formatter and masks the configured secrets in its output.

    Settings keep secrets in SecretStr, but a library may still echo a token
    (in a URL, in an exception text): the last line of defence is here.
    """

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner
        self.secrets = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record)
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text


class _DiscordFilter(logging.Filter):
    """Drops discord.py's voice warnings; counts its 429s for the metrics."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if record.name == "discord.client" and _DISCORD_VOICE in message:
            return False
        if record.name == "discord.http" and message.startswith(_DISCORD_429):
            metrics.RATE_LIMITED.labels("discord").inc()
        return True


_DISCORD_FILTER = _DiscordFilter()
_OURS = "_tribunal_handler"


def configure(
    level: str = "WARNING",
    log_format: Literal["text", "json"] = "text",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> None:
    """(Re)configure the root logger; called once with defaults, again once settings load."""
    handler = logging.StreamHandler(stream or sys.stderr)
    inner = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(_Masking(inner, secrets))
    handler.setLevel(level)
    root = logging.getLogger()
    # Only our own handler is replaced: one a test harness installed stays.
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)
    setattr(handler, _OURS, True)
    root.addHandler(handler)
    root.setLevel(level)
    for name, floor in _CHATTY.items():
        logging.getLogger(name).setLevel(max(floor, root.level))
    watch_discord()
    # The 429 warnings must reach the filter even when the operator shows only
    # errors; the handler's level still keeps them off the screen then.
    logging.getLogger("discord.http").setLevel(min(logging.WARNING, root.level))


def watch_discord() -> None:
    """Install the discord.py filter (voice warnings out, 429s counted); idempotent."""
    for name in ("discord.client", "discord.http"):
        discord_log = logging.getLogger(name)
        if _DISCORD_FILTER not in discord_log.filters:
            discord_log.addFilter(_DISCORD_FILTER)

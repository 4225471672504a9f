"""The log itself: JSON lines, masked secrets, no library noise."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from bot import logs, telemetry
from bot.models import RoomKey


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    out = io.StringIO()
    levels = {n: logging.getLogger(n).level for n in ("", "aiosqlite", "discord.http")}
    yield out
    # Leave logging as the other tests expect it: our handler out, levels back.
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "_tribunal_handler", False)]:
        root.removeHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def test_json_format_is_one_object_a_line_with_the_event_fields(stream: io.StringIO) -> None:
    logs.configure("INFO", "json", stream=stream)
    room = RoomKey("slack", "C1", "1795946400.000100")
    telemetry.verdict(room, 7, kind="REVISE", source="llm", backend="openai",
                      model="gpt-4o-mini", latency_ms=1234)
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        logging.getLogger("tribunal").exception("multi\nline")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    verdict, error = (json.loads(line) for line in lines)
    assert verdict["level"] == "INFO" and verdict["logger"] == "tribunal.events"
    assert verdict["room"] == "slack:C1:1795946400.000100"
    assert (verdict["event"], verdict["verdict"], verdict["source"], verdict["backend"],
            verdict["model"], verdict["latency_ms"]) == (
        "verdict", "REVISE", "llm", "openai", "gpt-4o-mini", 1234)
    assert error["level"] == "ERROR" and "ValueError: boom" in error["exception"]


def test_secrets_are_masked_in_both_formats(stream: io.StringIO) -> None:
    for log_format in ("text", "json"):
        logs.configure("INFO", log_format, secrets=["xoxb-very-secret-token"], stream=stream)
        logging.getLogger("slack_sdk").warning("calling with xoxb-very-secret-token failed")
    assert "xoxb-very-secret-token" not in stream.getvalue()
    assert stream.getvalue().count(logs.MASK) == 2


def test_debug_is_not_flooded_by_aiosqlite(stream: io.StringIO) -> None:
    logs.configure("DEBUG", stream=stream)
    logging.getLogger("aiosqlite").debug("executing SELECT 1")
    logging.getLogger("tribunal").debug("ours")
    assert "SELECT 1" not in stream.getvalue() and "ours" in stream.getvalue()


def test_discord_voice_warnings_are_silenced_but_429s_still_counted(stream: io.StringIO) -> None:
    from bot import metrics

    logs.configure("ERROR", stream=stream)
    logging.getLogger("discord.client").warning(
        "PyNaCl is not installed, voice will NOT be supported")
    before = metrics.REGISTRY.get_sample_value(
        "tribunal_rate_limited_total", {"service": "discord"}) or 0
    logging.getLogger("discord.http").warning(
        "We are being rate limited. %s %s responded with 429. Retrying in %.2f seconds.",
        "POST", "/channels/1/messages", 0.5)
    after = metrics.REGISTRY.get_sample_value(
        "tribunal_rate_limited_total", {"service": "discord"})
    assert after == before + 1
    assert stream.getvalue() == ""  # ERROR level: the 429 warning counted, not shown

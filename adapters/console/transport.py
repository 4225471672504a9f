"""The console "platform": posts printed as they would appear in a thread.

Human mode prints the bot's posts (and, through `human_printer`, deadlocks
and approvals); `--json` keeps the posts quiet and prints the engine's events
as JSON lines (`json_printer`).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from bot.markup import plain
from bot.models import OutgoingMessage, Platform, RoomKey


def say(text: str, out: TextIO | None) -> None:
    """Print for a reader who may go away (`| head`): the replay itself goes on."""
    if out is None or out.closed:
        return
    try:
        print(text, file=out, flush=True)
    except BrokenPipeError:
        # Later writes go nowhere; stop Python's own flush at exit from failing too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)


class ConsoleTransport:
    platform = Platform.CONSOLE.value

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out
        self.posts: list[tuple[str, OutgoingMessage]] = []
        self.edits: list[tuple[str, str, OutgoingMessage]] = []
        self.private: list[tuple[str, str, str]] = []
        self._next = 0

    def _print(self, text: str) -> None:
        say(text, self.out)

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        self._next += 1
        message_id = f"bot-{self._next}"
        self.posts.append((room.id, message))
        self._print(f"[{room.label}] ⚖️ tribunal:\n{_indent(plain(message.text))}\n")
        return message_id

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        self.edits.append((room.id, message_id, message))
        decided = message.decided
        if decided is not None:
            # n == 0: a free-text answer, whose label is the whole decision line.
            line = decided.label if decided.n == 0 else f"{decided.n}. {decided.label}"
            note = plain(message.decided_note or "")
            self._print(f"[{room.label}] (buttons closed: {line}; {note})\n")
        else:
            self._print(
                f"[{room.label}] ⚖️ tribunal (updated):\n{_indent(plain(message.text))}\n"
            )

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        self.private.append((room.id, user_id, text))
        self._print(f"[{room.label}] (only {user_id} sees) {plain(text)}\n")


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def json_printer(out: TextIO = sys.stdout) -> Any:
    def emit(event: dict[str, Any]) -> None:
        say(json.dumps(event, ensure_ascii=False), out)

    return emit


def human_printer(out: TextIO = sys.stdout) -> Any:
    def emit(event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "deadlock":
            say(f"[{event['room']}] ⛔ deadlock: {event['trigger']} (rounds {event['rounds']},"
                f" stalled {event['stalled_rounds']}) after {event['after_message']}\n", out)
        elif kind == "approved":
            say(f"[{event['room']}] ✅ approved after {event['after_message']}\n", out)

    return emit


__all__ = ["ConsoleTransport", "human_printer", "json_printer", "say"]

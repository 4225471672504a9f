"""The console adapter: replays a transcript through the real engine.

Posts are printed as they would appear in a thread (human mode) or kept
quiet while the engine's events are printed as JSON lines (`--json`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from bot import metrics
from bot.clock import ManualClock
from bot.engine import Engine
from bot.markup import plain
from bot.models import IncomingMessage, OutgoingMessage, Platform, RoomKey
from bot.transcript import MessageLine, RoomLine, TranscriptError, parse_line

DEFAULT_ROOM = "default"


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


class Replayer:
    """Feeds transcript lines to the engine in order, one room line at a time."""

    def __init__(self, engine: Engine, clock: ManualClock, echo: TextIO | None = None) -> None:
        self.engine = engine
        self.clock = clock
        self.echo = echo  # human mode: show the conversation as it is replayed
        self.room = DEFAULT_ROOM
        self.touched: set[str] = set()
        self._configured: set[str] = set()
        self.handed = 0  # message lines handed to the engine
        self.skipped = 0  # of those, already stored (a transcript replayed before)
        self._role_hints = False

    async def _room_line(self, line: RoomLine) -> None:
        self.room = line.room
        await self.engine.admin.remember_replay_room(line.room)
        settings = line.settings.model_dump(exclude_none=True)
        if line.language:
            settings["language"] = line.language
        await self.engine.admin.configure_channel(
            Platform.CONSOLE.value, line.room, owner=line.roles.get("owner", []),
            reviewer=line.roles.get("reviewer", []), settings=settings,
        )
        self._configured.add(line.room)

    async def _message(self, line: MessageLine, number: int) -> None:
        if self.room not in self._configured:  # messages before any room line
            await self.engine.admin.configure_channel(
                Platform.CONSOLE.value, self.room, owner=[], reviewer=[], settings={}
            )
            self._configured.add(self.room)
        if line.ts is not None:
            self.clock.set(line.ts)
        else:
            self.clock.advance(1)
        message = IncomingMessage(
            platform=Platform.CONSOLE.value,
            channel=self.room,
            message_id=line.id or f"{self.room}:line{number}",
            author_id=line.author,
            text=line.text,
            ts=line.ts or self.clock.now(),
            role_hint=line.role,
        )
        self.touched.add(message.room.id)
        self.handed += 1
        self._role_hints = self._role_hints or line.role is not None
        if self.echo is not None:
            who = f"{line.author} ({line.role.value})" if line.role else line.author
            text = " ".join(line.text.split())
            text = text if len(text) <= 160 else text[:159] + "…"
            say(f"[{self.room}] {message.message_id} {who}: {text}", self.echo)
        await self.engine.on_message(message)

    async def run(self, lines: Iterable[str]) -> None:
        """Replay every line; a malformed one raises after the ones before it are done."""
        # A transcript replayed in parts continues in the room the last part used.
        skipped_before = _redelivered()
        remembered = await self.engine.admin.replay_room()
        if remembered:
            self.room = remembered
            self._configured.add(remembered)
        for number, raw in enumerate(lines, start=1):
            item = parse_line(raw, number)
            if isinstance(item, RoomLine):
                await self._room_line(item)
            elif isinstance(item, MessageLine):
                await self._message(item, number)
        # End of input closes the open turns (DESIGN §2).
        await self.engine.close_turns(sorted(self.touched), force=True, at_eof=True)
        await self.engine.drain()
        self.skipped = int(_redelivered() - skipped_before)

    async def notes(self) -> list[str]:
        """What the reader of a replay that judged nothing needs to know, and why."""
        notes = []
        if self.handed and self.skipped == self.handed:
            notes.append(
                f"all {self.handed} messages were already stored in this database (replayed "
                "before?), so nothing was judged; use another --database (or "
                "TRIBUNAL_DATABASE) to replay it again"
            )
        elif self.skipped:
            notes.append(f"{self.skipped} of {self.handed} messages were already stored in "
                         "this database and were skipped")
        if self.handed and not self._role_hints:
            unbound = []
            for room_id in sorted(self.touched):
                room = RoomKey.parse(room_id)
                channel = await self.engine.channels.get(room.platform, room.channel)
                if not channel.owner and not channel.reviewer:
                    unbound.append(room.label)
            if unbound:
                notes.append(
                    f"no roles in room {', '.join(unbound)}: every author is a human, so no "
                    "turn was judged; bind the agents with a room line "
                    '({"type": "room", "roles": {"owner": [...], "reviewer": [...]}}) or give '
                    'messages a "role"'
                )
        return notes


def _redelivered() -> float:
    return metrics.REGISTRY.get_sample_value("tribunal_messages_redelivered_total") or 0.0


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


__all__ = ["ConsoleTransport", "Replayer", "TranscriptError", "human_printer", "json_printer"]

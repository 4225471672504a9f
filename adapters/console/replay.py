"""Replaying a transcript (`tribunal replay`, `tribunal demo`) through the real engine.

The `Replayer` reads JSON Lines (`bot.transcript`), configures each room from
its room line, hands each message to the engine as an adapter would, and at
the end of the input closes the turns left open (DESIGN §2: a replay closes
turns at a role change or at end of input).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from adapters.console.transport import say
from bot import metrics
from bot.clock import ManualClock
from bot.engine import Engine
from bot.models import IncomingMessage, Platform, RoomKey
from bot.transcript import MessageLine, RoomLine, parse_line

DEFAULT_ROOM = "default"


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


__all__ = ["DEFAULT_ROOM", "Replayer"]

"""Replaying a transcript (`tribunal replay`, `tribunal demo`) through the real engine.

The `Replayer` reads JSON Lines (`bot.transcript`), configures each room from
its room line and hands each message to the engine as an adapter would. A
transcript's turns close when another role speaks or at the end of the input,
never on silence: its timestamps are a record, not a clock
(`ROOM_OVERRIDES`). At the end it closes the turns left open, one room after
the other, each room's arbitration finished before the next room closes, so
the output is the same on every run.

A transcript may be replayed in parts, each by its own process, on one
database: the next part goes on in the room the last one used, and a turn that
the end of a part closed without deciding anything goes on if the next part
continues it with the same role, as a single run would have seen it. Both are
kept in the database's `replay` settings scope, the replay's own memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

from adapters.console.transport import say
from bot import metrics
from bot.clock import ManualClock
from bot.engine import Engine
from bot.models import IncomingMessage, Platform, Role, RoomKey
from bot.state import RoomState
from bot.transcript import MessageLine, RoomLine, parse_line

DEFAULT_ROOM = "default"
# What the engine is told for every room it replays: no turn closes on silence.
ROOM_OVERRIDES: dict[str, Any] = {"turn_quiet_seconds": None}
MEMORY = "replay"  # settings scope: where the replay remembers across processes
LAST_ROOM = ("console", "room")  # (scope id, key): the room the last part was in
UNDECIDED_TURN = "undecided_turn"  # key per room: its state before the end closed a turn


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
        self._resumed: set[str] = set()  # rooms whose memory of a last part was read

    async def _room_line(self, line: RoomLine) -> None:
        self.room = line.room
        await self._remember(LAST_ROOM[0], LAST_ROOM[1], line.room)
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
        role = await self.engine.store(message)
        if role is None:
            return  # a line replayed before, or an author the room ignores
        await self._go_on_with_turn(message.room, role)
        await self.engine.apply_stored(message.room)

    async def run(self, lines: Iterable[str]) -> None:
        """Replay every line; a malformed one raises after the ones before it are done."""
        # A transcript replayed in parts continues in the room the last part used.
        skipped_before = _redelivered()
        remembered = await self._recall(*LAST_ROOM)
        if remembered:
            self.room = str(remembered)
            self._configured.add(self.room)
        for number, raw in enumerate(lines, start=1):
            item = parse_line(raw, number)
            if isinstance(item, RoomLine):
                await self._room_line(item)
            elif isinstance(item, MessageLine):
                await self._message(item, number)
        for room_id in sorted(self.touched):
            await self._end_of_input(RoomKey.parse(room_id))
        await self.engine.drain()
        self.skipped = int(_redelivered() - skipped_before)

    async def _end_of_input(self, room: RoomKey) -> None:
        """The end of the input closes the room's open turn (a transcript's turns
        end there too), and what that fires is finished before the next room closes."""
        before = await self.engine.load_state(room)
        events = await self.engine.close_turn(room)
        await self.engine.drain()
        if events is not None and not any(e["event"] in ("deadlock", "approved") for e in events):
            # Nothing was decided: a next part may go on with this very turn.
            await self._remember(room.id, UNDECIDED_TURN, before.model_dump_json())

    async def _go_on_with_turn(self, room: RoomKey, role: Role) -> None:
        """The first new message of a room whose last part ended with an undecided
        turn: the same role speaking again continues that turn, so the room goes
        back to its state before the end closed it."""
        if room.id in self._resumed:
            return
        self._resumed.add(room.id)
        saved = await self._recall(room.id, UNDECIDED_TURN)
        if saved is None:
            return
        await self._remember(room.id, UNDECIDED_TURN, None)
        state = RoomState.model_validate_json(str(saved))
        if state.open_turn is not None and state.open_turn.role == role:
            await self.engine.restore_state(room, state)

    async def _recall(self, scope_id: str, key: str) -> Any:
        return (await self.engine.storage.get_settings(MEMORY, scope_id)).get(key)

    async def _remember(self, scope_id: str, key: str, value: Any) -> None:
        async with self.engine.storage.transaction() as tx:
            await tx.set_setting(MEMORY, scope_id, key, value)

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


__all__ = ["DEFAULT_ROOM", "ROOM_OVERRIDES", "Replayer"]

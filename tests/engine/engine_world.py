"""An engine on a real SQLite file, the console transport and a manual clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from adapters.console import ConsoleTransport
from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, RoomKey
from storage.sqlite import SqliteStorage

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


@dataclass
class World:
    engine: Engine
    storage: SqliteStorage
    transport: ConsoleTransport
    clock: ManualClock
    events: list[dict[str, Any]] = field(default_factory=list)
    n: int = 0

    async def say(
        self, author: str, text: str, *, channel: str = "C1", thread: str | None = "T1",
        is_bot: bool = False, message_id: str | None = None, gap: float = 1.0,
    ) -> str:
        self.n += 1
        self.clock.advance(gap)
        mid = message_id or f"m{self.n}"
        await self.engine.on_message(IncomingMessage(
            platform="console", channel=channel, thread=thread, message_id=mid,
            author_id=author, text=text, ts=self.clock.now(), is_bot=is_bot,
        ))
        return mid

    def engine_room(self, channel: str = "C1", thread: str | None = "T1") -> RoomKey:
        return RoomKey("console", channel, thread)

    def kinds(self) -> list[str]:
        return [e["event"] for e in self.events]


async def make_world(db: Path, settings: Settings | None = None, *, quiet_close: bool = True,
                     **engine_kw: Any) -> World:
    """`quiet_close=False`: turns close when another role speaks or when told
    to, never on silence (as in a transcript replay)."""
    settings = settings or Settings(_env_file=None, admin_ids=["boss"])  # type: ignore[call-arg]
    if not quiet_close:
        engine_kw["room_overrides"] = {"turn_quiet_seconds": None}
    storage = SqliteStorage(str(db))
    await storage.open()
    clock = ManualClock(T0)
    engine = Engine(settings, storage, clock, **engine_kw)
    transport = ConsoleTransport()
    engine.register_transport(transport)
    world = World(engine, storage, transport, clock)
    engine.add_listener(world.events.append)
    await engine.start()
    await engine.drain()  # what start() resumed runs in background tasks
    await engine.admin.configure_channel(
        "console", "C1", owner=["owner-bot"], reviewer=["reviewer-bot"], settings={}
    )
    return world


OBJECTIONS = [
    "src/auth.py:42 `login()` does not check for a null session. Please add the check.",
    "The null session check in `login()` at src/auth.py:42 is still missing. Add it.",
    "Still missing: `login()` in src/auth.py:42 has no null session check, please add it.",
]
PUSHBACKS = [
    "I believe the current implementation is correct; the middleware already rejects null sessions.",
    "As I said, the middleware already rejects null sessions, so the current implementation is correct.",
]


async def deadlock(world: World, requester: str = "alice") -> None:
    """Drive room C1/T1 into a no_progress deadlock and its ESCALATE (none backend)."""
    await world.say(requester, "로그인 버그 고쳐줘")
    await world.say("owner-bot", "STEP_DONE implemented the fix in src/auth.py", is_bot=True)
    await world.say("reviewer-bot", OBJECTIONS[0], is_bot=True)
    await world.say("owner-bot", PUSHBACKS[0], is_bot=True)
    await world.say("reviewer-bot", OBJECTIONS[1], is_bot=True)
    await world.say("owner-bot", PUSHBACKS[1], is_bot=True)
    await world.say("reviewer-bot", OBJECTIONS[2], is_bot=True)
    await world.engine.close_turns(force=True)
    await world.engine.drain()


def later(world: World, hours: float) -> None:
    world.clock.set(world.clock.now() + timedelta(hours=hours))

"""The store path, property-tested: any text a platform can hand over (lone
surrogates and NUL included, up to the message cap) goes through the engine
into the real SQLite storage and reads back as its repaired self."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from adapters.console import ConsoleTransport
from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.ingest import MAX_TEXT
from bot.models import IncomingMessage, RoomKey
from bot.repair import repair_text
from storage.sqlite import SqliteStorage

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
ANY_CHAR = st.characters(exclude_categories=())
SHORT = st.text(alphabet=ANY_CHAR, max_size=200)
# Long texts by repetition: generating 40 000 random code points one by one
# would spend the test's time in Hypothesis rather than in the store.
LONG = st.builds(lambda unit, n: (unit * (n // len(unit) + 1))[:n],
                 st.text(alphabet=ANY_CHAR, min_size=1, max_size=40),
                 st.integers(1, MAX_TEXT))
TEXT = st.one_of(SHORT, LONG, st.sampled_from(["", "\x00", "\ud800", "\udfff\ud800",
                                               "a\ud83d\ude00b", "\x00" * MAX_TEXT]))
NAME = st.text(alphabet=ANY_CHAR, min_size=1, max_size=60)


def storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


class Store:
    """An engine on a real SQLite file, driven from a synchronous Hypothesis test."""

    def __init__(self, runner: asyncio.Runner, db: Path) -> None:
        self.runner = runner
        self.storage = SqliteStorage(str(db))
        self.clock = ManualClock(T0)
        self.rooms = itertools.count()
        runner.run(self._open())

    async def _open(self) -> None:
        await self.storage.open()
        settings = Settings(_env_file=None, arbiter_backend="none")  # type: ignore[call-arg]
        self.engine = Engine(settings, self.storage, self.clock, room_overrides={"turn_quiet_seconds": None})
        self.engine.register_transport(ConsoleTransport())
        await self.engine.start()
        await self.engine.admin.configure_channel(
            "console", "C1", owner=["owner-bot"], reviewer=["reviewer-bot"], settings={})

    def say(self, room: RoomKey, message_id: str, author: str, text: str, *,
            is_bot: bool = False) -> None:
        self.clock.advance(1)
        self.runner.run(self.engine.on_message(IncomingMessage(
            platform=room.platform, channel=room.channel, thread=room.thread,
            message_id=message_id, author_id=author, text=text, ts=self.clock.now(),
            is_bot=is_bot)))
        self.runner.run(self.engine.drain())


def test_any_text_is_stored_and_read_back_repaired(tmp_path: Path) -> None:
    with asyncio.Runner() as runner:
        store = Store(runner, tmp_path / "p.db")

        @settings(max_examples=60, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(human=TEXT, owner=TEXT, author=NAME, message_id=NAME)
        def check(human: str, owner: str, author: str, message_id: str) -> None:
            assume(repair_text(author) not in ("owner-bot", "reviewer-bot"))
            room = RoomKey("console", "C1", f"T{next(store.rooms)}")
            store.say(room, message_id, author, human)
            store.say(room, message_id + "-o", "owner-bot", owner, is_bot=True)

            humans, _ = runner.run(store.storage.human_messages(room.id, 0, 5))
            agents, _ = runner.run(store.storage.agent_turn_messages(room.id, 5))
            assert [(m.text, m.author, m.message_id) for m in humans] == [
                (repair_text(human), repair_text(author), repair_text(message_id))]
            assert [(m.text, m.author) for m in agents] == [(repair_text(owner), "owner-bot")]
            for row in (*humans, *agents):
                assert storable(row.text) and storable(row.author)
                assert len(row.text) <= MAX_TEXT

        try:
            check()
        finally:
            runner.run(store.storage.close())


def test_the_cap_cuts_with_a_marker_after_the_repair(tmp_path: Path) -> None:
    with asyncio.Runner() as runner:
        store = Store(runner, tmp_path / "cap.db")
        try:
            room = RoomKey("console", "C1", "Tcap")
            # Pairs of surrogate code points: each is one character once repaired.
            text = "\ud83d\ude00" * MAX_TEXT
            store.say(room, "m1", "alice", text)
            [row], _ = runner.run(store.storage.human_messages(room.id, 0, 5))
            assert row.text == "\U0001f600" * MAX_TEXT  # repaired, then fits the cap
            store.clock.advance(timedelta(seconds=1).total_seconds())
            store.say(room, "m2", "alice", "\x00" * (MAX_TEXT + 5))
            rows, _ = runner.run(store.storage.human_messages(room.id, 0, 5))
            assert rows[-1].text.startswith("\ufffd" * MAX_TEXT)
            assert rows[-1].text.endswith("[…truncated]")
        finally:
            runner.run(store.storage.close())

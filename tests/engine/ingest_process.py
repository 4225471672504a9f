"""A process that feeds one scripted conversation to `Engine.on_message` (as
the Discord adapter does) on a SQLite file, for the crash tests of
test_engine_ingest.py: run with `TRIBUNAL_FAULT=after_apply:<n>` it kills
itself (SIGKILL) right after the n-th message was applied and committed;
run again on the same file, the platform delivers the whole conversation
again and the process goes on from storage.

    python tests/engine/ingest_process.py <database> <posts file>

Every post and edit the bot makes is appended to the posts file, one JSON
line each, as the platform would show it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime, timedelta

from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import IncomingMessage, OutgoingMessage, RoomKey
from storage.sqlite import SqliteStorage

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
OWNER, REVIEWER = "owner-bot", "reviewer-bot"
# (author, text): two rooms, a deadlock and its ESCALATE answered by digit,
# then ordinary turns.
SCRIPT: list[tuple[str, str, str]] = [
    ("T1", "alice", "로그인 버그 고쳐줘"),
    ("T2", "bob", "Add a cache to the permission checks, please."),
    ("T1", OWNER, "BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다."),
    ("T2", OWNER, "STEP_DONE Added a cache in `authz/cache.py`."),
    ("T1", REVIEWER, "접속 정보 없이도 목(mock)으로 테스트할 수 있습니다."),
    ("T2", REVIEWER, "The cache in `authz/cache.py` never expires entries. Add a TTL."),
    ("T1", "alice", "1"),
    ("T2", OWNER, "Fixed: entries expire after 60 s (`a1b2c3d`)."),
    ("T1", OWNER, "STEP_DONE mock로 테스트를 추가했습니다."),
    ("T2", REVIEWER, "LGTM"),
    ("T1", REVIEWER, "Approved"),
]


class Recording:
    platform = "console"

    def __init__(self, path: str) -> None:
        self.path = path
        self.n = 0

    def _write(self, entry: dict[str, str]) -> None:
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        self.n += 1
        key = message.idempotency_key or ""
        self._write({"op": "post", "room": room.id, "kind": message.kind.value, "key": key})
        return f"{room.thread}-{key}-{self.n}"

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        self._write({"op": "edit", "room": room.id, "kind": message.kind.value,
                     "key": message.idempotency_key or ""})

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        self._write({"op": "private", "room": room.id, "user": user_id})


async def main(database: str, posts: str) -> None:
    storage = SqliteStorage(database)
    await storage.open()
    try:
        clock = ManualClock(T0)
        settings = Settings(_env_file=None, arbiter_backend="none")  # type: ignore[call-arg]
        engine = Engine(settings, storage, clock, room_overrides={"turn_quiet_seconds": None})
        engine.register_transport(Recording(posts))
        await engine.start()
        await engine.drain()
        await engine.admin.configure_channel(
            "console", "C1", owner=[OWNER], reviewer=[REVIEWER], settings={})
        for n, (thread, author, text) in enumerate(SCRIPT, start=1):
            clock.set(T0 + timedelta(seconds=n))
            await engine.on_message(IncomingMessage(
                platform="console", channel="C1", thread=thread, message_id=f"m{n}",
                author_id=author, text=text, ts=clock.now(), is_bot=author in (OWNER, REVIEWER),
            ))
        await engine.drain()
    finally:
        await storage.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))

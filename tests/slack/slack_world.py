"""A Slack workspace in a box for scenario tests: the real Engine and
SqliteStorage behind the real SlackAdapter, talking to the fake Web API.

Helpers speak as the people and agents of a channel (signed HTTP or Socket
Mode), move the injected clock, and read back what the bot posted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.slack.transport import SlackTransport
from bot import buttons
from bot.arbiter.service import Arbitrator
from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from storage.sqlite import SqliteStorage
from tests.fakes.slack_api import Call, FakeSlackAPI
from tests.slack.conftest import (
    CHANNEL,
    Harness,
    block_action,
    message_event,
    slash_command,
    start_harness,
)

OWNER_BOT = "BOWNER"  # the owner agent posts as a legacy bot message (bot_id only)
REVIEWER_USER = "UREVIEWER"  # the reviewer agent posts as its app's bot user
REVIEWER_BOT = "BREVIEW"
HUMAN = "UALICE"
OWNER_SAYS = "STEP_DONE: `auth/login.py`의 리다이렉트를 고쳤습니다. 테스트도 통과합니다."
REVIEWER_SAYS = "`auth/login.py` 42번째 줄에서 세션 쿠키가 사라집니다. 수정이 필요합니다."


class ScriptedBackend:
    """Stands in for an LLM: returns the next scripted output."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, *outputs: str) -> None:
        self.outputs = list(outputs)

    async def complete(self, system: str, prompt: str) -> str:
        return self.outputs.pop(0) if len(self.outputs) > 1 else self.outputs[0]


class World:
    def __init__(self, harness: Harness, engine: Engine, storage: SqliteStorage,
                 clock: ManualClock, api: FakeSlackAPI) -> None:
        self.harness = harness
        self.engine = engine
        self.storage = storage
        self.clock = clock
        self.api = api

    @classmethod
    async def create(cls, api: FakeSlackAPI, settings: Settings, *,
                     backend: ScriptedBackend | None = None) -> World:
        storage = SqliteStorage(settings.database)
        await storage.open()
        clock = ManualClock(datetime(2026, 11, 29, 10, 0, tzinfo=UTC))
        arbitrator = Arbitrator(settings, backend=backend) if backend else None
        engine = Engine(settings, storage, clock=clock, arbitrator=arbitrator)
        harness = await start_harness(engine, api, settings)
        engine.register_transport(harness.adapter.transport)
        await engine.start()
        return cls(harness, engine, storage, clock, api)

    async def close(self) -> None:
        """Idempotent: stopping twice is harmless (tests restart the bot)."""
        await self.harness.adapter.stop()
        await self.engine.shutdown()  # as `tribunal run` does: nothing runs on a closed db
        await self.storage.close()

    @property
    def transport(self) -> SlackTransport:
        return self.harness.adapter.transport

    # -- speaking ------------------------------------------------------------
    def next_ts(self) -> str:
        self.clock.advance(1)
        return f"{self.clock.now().timestamp():.6f}"

    async def deliver(self, body: dict[str, Any], via: str = "http") -> None:
        if via == "socket":
            await self.harness.socket(body)
        else:
            status, _ = await self.harness.http(body)
            assert status == 200
        # A message is stored before the ack and processed after it, in the
        # engine's own task: wait for that too.
        await self.engine.drain()
        await self.harness.settle()

    async def human(self, text: str, thread: str | None = None, *, user: str = HUMAN,
                    via: str = "http") -> str:
        ts = self.next_ts()
        await self.deliver(message_event(text, user=user, thread_ts=thread, ts=ts), via)
        return ts

    async def owner(self, text: str, thread: str, via: str = "http") -> str:
        ts = self.next_ts()
        body = message_event(text, user=None, bot_id=OWNER_BOT, subtype="bot_message",
                             thread_ts=thread, ts=ts)
        body["event"]["username"] = "owner-agent"
        await self.deliver(body, via)
        return ts

    async def reviewer(self, text: str, thread: str, via: str = "http") -> str:
        ts = self.next_ts()
        body = message_event(text, user=REVIEWER_USER, bot_id=REVIEWER_BOT, thread_ts=thread,
                             ts=ts)
        body["event"]["bot_profile"] = {"id": REVIEWER_BOT, "name": "reviewer-agent"}
        await self.deliver(body, via)
        return ts

    async def argue(self, thread: str, rounds: int, *, owner: str = OWNER_SAYS,
                    reviewer: str = REVIEWER_SAYS) -> None:
        """Owner and reviewer repeat themselves; then the room goes quiet."""
        for i in range(rounds):
            await self.owner(owner, thread, via="socket" if i % 2 else "http")
            await self.reviewer(reviewer, thread, via="http" if i % 2 else "socket")
        await self.quiet()

    async def quiet(self, seconds: float = 30) -> None:
        self.clock.advance(seconds)
        await self.engine.tick()
        await self.engine.drain()  # arbitrations of quiet turns run in their own tasks
        await self.harness.settle()

    async def command(self, text: str, *, user: str, via: str = "http") -> str:
        url = self.api.response_url()
        await self.deliver(slash_command(text, user=user, response_url=url), via)
        replies = self.api.responses
        assert replies, "no ephemeral reply"
        return str(replies[-1]["text"])

    async def click(self, value: str, *, user: str, thread: str, message_ts: str,
                    via: str = "http") -> None:
        body = block_action(value, user=user, thread_ts=thread, message_ts=message_ts,
                            response_url=self.api.response_url())
        await self.deliver(body, via)

    async def bind_roles(self) -> None:
        reply = await self.command(
            f"roles owner:{OWNER_BOT} reviewer:<@{REVIEWER_USER}|reviewer-agent>", user="UADMIN")
        assert "✅" in reply, reply

    # -- reading back ----------------------------------------------------------
    def thread_posts(self, thread: str) -> list[Call]:
        return [c for c in self.api.calls_to("chat.postMessage")
                if c.args.get("thread_ts") == thread]

    def message(self, ts: str) -> dict[str, Any]:
        return self.api.messages[(CHANNEL, ts)]

    def verdict(self, thread: str) -> tuple[str, dict[str, Any]]:
        """(ts, current state) of our first post in the thread: the progress
        message, which the verdict replaces in place."""
        ts = next(ts for (_, ts), m in self.api.messages.items() if m.get("thread_ts") == thread)
        return ts, self.message(ts)

    @staticmethod
    def button_values(message: dict[str, Any]) -> list[str]:
        return [e["value"] for b in message.get("blocks", []) if b["type"] == "actions"
                for e in b["elements"]]

    async def escalate(self, thread: str | None = None) -> tuple[str, str, list[str]]:
        """Drive a room into an ESCALATE verdict; (thread, verdict ts, button values)."""
        thread = thread or await self.human("로그인 버그 고쳐줘")
        await self.argue(thread, rounds=3)
        ts, verdict = self.verdict(thread)
        values = self.button_values(verdict)
        assert values and all(buttons.decode(v) for v in values), verdict
        return thread, ts, values


async def make_world(api: FakeSlackAPI, tmp_path: Path, settings: Settings,
                     **kwargs: Any) -> World:
    return await World.create(api, settings, **kwargs)

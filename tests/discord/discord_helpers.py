"""Test helpers shared by the Discord tests (a unique module name: test dirs share sys.path)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from bot.catchup import CatchUpPlan, Fetch
from bot.models import (
    AnswerResult,
    ButtonClick,
    CommandReply,
    CommandRequest,
    IncomingMessage,
    RoomKey,
)

TOKEN = "test-token-must-never-be-logged"


async def until(predicate: Callable[[], Any], within: float = 5.0) -> Any:
    """Poll (tiny steps) until predicate() is truthy; the fake server runs in this loop."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


class RecordingCore:
    """A stand-in Core for adapter-only tests (translation, rendering, errors)."""

    def __init__(self) -> None:
        self.messages: list[IncomingMessage] = []
        self.clicks: list[ButtonClick] = []
        self.commands: list[CommandRequest] = []
        self.answer = AnswerResult(accepted=True)
        self.reply = CommandReply(text="ok")
        self.delay = 0.0

    async def on_message(self, message: IncomingMessage) -> None:
        self.messages.append(message)

    async def on_button(self, click: ButtonClick) -> AnswerResult:
        self.clicks.append(click)
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.answer

    async def on_command(self, request: CommandRequest) -> CommandReply:
        self.commands.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.reply

    async def tick(self) -> None:
        return None

    async def catch_up_plan(self, platform: str) -> CatchUpPlan:
        return CatchUpPlan()  # nothing stored: nothing to catch up

    async def catch_up(self, room: RoomKey, fetch: Fetch) -> int:
        found = await fetch()
        self.messages.extend(found)
        return len(found)

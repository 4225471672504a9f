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
    """A stand-in Core for adapter-only tests (translation, rendering, errors).

    Clicks and commands are taken as the engine takes them: stored (recorded
    with their delivery id and route), then applied in a task after `delay`,
    the private text sent back along the route through the adapter's
    transport (`transport`, set by the `start_adapter` fixture).
    """

    def __init__(self) -> None:
        self.messages: list[IncomingMessage] = []
        self.clicks: list[ButtonClick] = []
        self.commands: list[CommandRequest] = []
        self.deliveries: list[tuple[str, dict[str, str] | None]] = []
        self.answer = AnswerResult(accepted=True)
        self.reply = CommandReply(text="ok")
        self.delay = 0.0
        self.transport: Any = None

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

    async def receive_click(self, click: ButtonClick, delivery_id: str, *,
                            route: dict[str, str] | None = None) -> asyncio.Task[None]:
        self.deliveries.append((delivery_id, route))

        async def apply() -> None:
            result = await self.on_button(click)
            if result.private_text:
                room = RoomKey("discord", click.channel, click.thread)
                await self._tell(room, click.user_id, result.private_text, route)

        return asyncio.create_task(apply())

    async def receive_command(self, request: CommandRequest, delivery_id: str, *,
                              route: dict[str, str] | None = None,
                              ask_admin: bool = False) -> asyncio.Task[None]:
        self.deliveries.append((delivery_id, route))

        async def apply() -> None:
            reply = await self.on_command(request)
            room = RoomKey("discord", request.channel, request.thread)
            await self._tell(room, request.user_id, reply.text, route)

        return asyncio.create_task(apply())

    async def _tell(self, room: RoomKey, user_id: str, text: str,
                    route: dict[str, str] | None) -> None:
        assert self.transport is not None, "start the adapter with the start_adapter fixture"
        if route:
            await self.transport.post_reply(room, user_id, text, route)
        else:
            await self.transport.post_private(room, user_id, text)

    async def tick(self) -> None:
        return None

    async def catch_up_plan(self, platform: str) -> CatchUpPlan:
        return CatchUpPlan()  # nothing stored: nothing to catch up

    async def catch_up(self, room: RoomKey, fetch: Fetch) -> int:
        found = await fetch()
        self.messages.extend(found)
        return len(found)

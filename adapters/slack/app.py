"""The slack-bolt AsyncApp: events, button clicks and `/arbiter`, fed to the core.

Every listener acknowledges at once and hands the real work (storage,
detection, users.info, replies) to a tracked task, so Slack gets its answer
well within 3 seconds in both Socket Mode and HTTP mode, and `drain()` lets
shutdown (and tests) wait for work in flight. Duplicate deliveries (Slack
retries, a reconnecting socket) are dropped by event id here and by message id
in the core.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import translate
from adapters.slack.render import neutralise
from adapters.slack.transport import SlackTransport, error_code
from bot.models import RoomKey
from bot.ports import Core

log = logging.getLogger("tribunal.slack")

COMMAND = "/arbiter"
ACTION_PATTERN = re.compile(r"^tribunal:esc:")
ADMIN_CACHE_SECONDS = 300.0
SEEN_EVENTS = 2048


class Inbound:
    """Translates Slack requests for the core and replies to the user."""

    def __init__(self, engine: Core, transport: SlackTransport, client: AsyncWebClient,
                 identity: translate.Identity, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.engine = engine
        self.transport = transport
        self.client = client
        self.identity = identity
        self._clock = clock
        self._tasks: set[asyncio.Task[Any]] = set()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._admins: dict[str, tuple[float, bool]] = {}

    # -- work tracking ---------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(self._guard(coro, what))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, coro: Awaitable[Any], what: str) -> None:
        try:
            await coro
        except Exception:  # one bad payload never takes the bot down
            log.exception("slack: handling %s failed", what)

    async def drain(self, within: float = 10.0) -> None:
        """Wait until every piece of work started so far (and its follow-ups) is done."""
        deadline = self._clock() + within
        while self._tasks and self._clock() < deadline:
            await asyncio.wait(set(self._tasks), timeout=max(0.0, deadline - self._clock()))

    async def shutdown(self, grace: float = 5.0) -> None:
        """Let work in flight finish for `grace` seconds, then cancel what is left
        (the core's outbox and dedup make a cancelled message safe to redeliver)."""
        await self.drain(grace)
        leftovers = [t for t in self._tasks if not t.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            log.warning("slack: cancelled %d handler(s) still running at shutdown", len(leftovers))
            await asyncio.wait(leftovers, timeout=1.0)

    def first_delivery(self, key: str | None) -> bool:
        """False for an event id we already handled (Slack retry, redelivery)."""
        if not key:
            return True
        if key in self._seen:
            return False
        self._seen[key] = None
        while len(self._seen) > SEEN_EVENTS:
            self._seen.popitem(last=False)
        return True

    # -- admin check -------------------------------------------------------------
    async def is_platform_admin(self, user_id: str) -> bool:
        """Workspace admin/owner per users.info, cached for a few minutes."""
        cached = self._admins.get(user_id)
        if cached and cached[0] > self._clock():
            return cached[1]
        try:
            response = await self.client.users_info(user=user_id)
            admin = translate.is_admin_user(response.get("user") or {})
        except SlackApiError as exc:
            log.warning("slack users.info for %s failed: %s (treated as non-admin)", user_id,
                        error_code(exc))
            return False
        self._admins[user_id] = (self._clock() + ADMIN_CACHE_SECONDS, admin)
        return admin

    # -- listeners -------------------------------------------------------------
    async def on_message_event(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        message = translate.incoming_message(event, self.identity)
        if message is None:
            log.debug("slack: ignored message event subtype=%s", event.get("subtype"))
            return
        if not self.first_delivery(body.get("event_id") or message.message_id):
            log.info("slack: duplicate delivery of %s dropped", message.message_id)
            return
        # Handed over in delivery order; the core keeps each room's order from
        # here, and stores a message at once when its room is busy.
        self.spawn(self.engine.on_message(message), f"message {message.message_id}")

    async def on_action(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any],
                        action: dict[str, Any]) -> None:
        await ack()
        self.spawn(self._click(body, action), "button click")

    async def _click(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        user = (body.get("user") or {}).get("id") or ""
        click = translate.button_click(body, action,
                                       is_platform_admin=await self.is_platform_admin(user))
        if click is None:
            log.warning("slack: click with an unknown action value ignored")
            return
        result = await self.engine.on_button(click)
        if result.private_text:
            room = RoomKey(translate.PLATFORM, click.channel, click.thread)
            await self.transport.post_private(room, click.user_id, result.private_text)

    async def on_command(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any],
                         respond: Callable[..., Awaitable[Any]]) -> None:
        await ack()
        self.spawn(self._command(body, respond), "slash command")

    async def _command(self, body: dict[str, Any],
                       respond: Callable[..., Awaitable[Any]]) -> None:
        user = str(body.get("user_id") or "")
        request = translate.command_request(body,
                                            is_platform_admin=await self.is_platform_admin(user))
        reply = await self.engine.on_command(request)
        text = neutralise(reply.text)
        if body.get("response_url"):
            try:
                sent = await respond(text=text, response_type="ephemeral",
                                     replace_original=False)
                status = getattr(sent, "status_code", 200)
                if status < 400:
                    return
                log.warning("slack: response_url answered %s; using chat.postEphemeral", status)
            except Exception as exc:  # expired or unreachable response_url
                log.warning("slack: respond() failed (%s); using chat.postEphemeral",
                            type(exc).__name__)
        room = RoomKey(translate.PLATFORM, request.channel, request.thread)
        await self.transport.post_private(room, user, reply.text)


class _DropTokenNotice(logging.Filter):
    """bolt reads SLACK_BOT_TOKEN itself and warns that our client's token wins;
    that is intended here, so the warning is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


_BOLT_LOG = logging.getLogger("tribunal.slack.bolt")
_BOLT_LOG.addFilter(_DropTokenNotice())


def build_app(inbound: Inbound, *, client: AsyncWebClient, signing_secret: str | None,
              socket_mode: bool) -> AsyncApp:
    """Bolt app with our listeners; request signatures are checked in HTTP mode."""
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret or "",
        # Listeners only ack and spawn, so running them before the response is
        # cheap, and the work is tracked before Slack gets its 200.
        process_before_response=True,
        request_verification_enabled=not socket_mode,
        logger=_BOLT_LOG,
    )

    @app.middleware
    async def log_retries(request: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        retry = request.headers.get("x-slack-retry-num")
        if retry:
            reason = request.headers.get("x-slack-retry-reason", ["?"])
            log.info("slack: delivery retry %s (%s)", retry[0], reason[0])
        return await next()

    app.event("message")(inbound.on_message_event)
    app.action(ACTION_PATTERN)(inbound.on_action)
    app.command(COMMAND)(inbound.on_command)
    return app

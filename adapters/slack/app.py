"""The slack-bolt AsyncApp: events, button clicks, `/arbiter` (also as a message
shortcut and an in-thread mention), fed to the core.

A message, a button click or a slash command is stored before Slack gets its
acknowledgement (one insert, well within Slack's 3 seconds); the core
processes it afterwards, from storage, and answers a command through its
`response_url` from the outbox. `drain()` lets shutdown (and tests) wait for
work started here. Duplicate deliveries (Slack retries, a reconnecting
socket) are dropped by event id here and by message id, trigger id or
delivery id in the core.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.listener.async_listener_error_handler import AsyncListenerErrorHandler
from slack_bolt.middleware.async_middleware_error_handler import AsyncMiddlewareErrorHandler
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import translate
from adapters.slack.transport import SlackTransport
from bot import faults
from bot.models import CommandRequest
from bot.ports import Core

log = logging.getLogger("tribunal.slack")

COMMAND = "/arbiter"
ACTION_PATTERN = re.compile(r"^tribunal:esc:")
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
        """Workspace admin/owner per users.info, cached for a few minutes (the
        transport's cache, which the core also asks for stored commands)."""
        return await self.transport.is_platform_admin(user_id)

    # -- listeners -------------------------------------------------------------
    async def on_message_event(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        message = translate.incoming_message(event, self.identity)
        if message is None:
            unusable = translate.unusable_fields(event)
            if unusable:
                log.warning("slack: message event without a usable %s ignored",
                            ", ".join(unusable))
            else:
                log.debug("slack: ignored message event subtype=%.40s", event.get("subtype"))
            return
        if not self.first_delivery(translate.delivery_key(body) or message.message_id):
            log.info("slack: duplicate delivery of %s dropped", message.message_id)
            return
        # Stored before Slack gets its acknowledgement (bolt answers once this
        # listener returns: process_before_response), so an acknowledged
        # message survives a crash; the core processes it afterwards, from
        # storage. Storing is one insert and never waits for the room.
        await self.engine.receive(message)

    async def on_action(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any],
                        action: dict[str, Any]) -> None:
        user = translate.user_id(body)
        # Asked before storing: the stored click must say whether its author
        # may answer as an admin (users.info is cached for a few minutes).
        admin = bool(user) and await self.is_platform_admin(user)
        click = translate.button_click(body, action, is_platform_admin=admin)
        if click is None:
            log.warning("slack: click with an unknown action value ignored")
        else:
            # Stored before Slack gets its acknowledgement, as messages are (a
            # failure to store is no 200): an acknowledged click survives a
            # crash; the core applies it from storage and tells the clicker
            # (ephemeral) if it was refused.
            await self.engine.receive_click(click, translate.action_delivery_key(body, action))
        await ack()

    async def on_command(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any]) -> None:
        request = translate.command_request(body, is_platform_admin=False)
        if not request.user_id or not request.channel:
            log.warning("slack: %s without a user or a channel ignored", COMMAND)
        else:
            await self.store_command(request, translate.command_delivery_key(body),
                                     translate.response_url(body))
        await ack()

    async def on_shortcut(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any]) -> None:
        """The message shortcut "Arbitrate this thread": `/arbiter summon` on the
        message's thread, with the same rights as the slash command (and, like
        it, stored before Slack's acknowledgement)."""
        request = translate.shortcut_request(body)
        if request is None:
            log.warning("slack: message shortcut without a user, channel or message ignored")
        else:
            await self.store_command(request, translate.command_delivery_key(body),
                                     translate.response_url(body))
        await ack()

    async def on_mention(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """`@tribunal status` in a thread: `/arbiter status` about that thread,
        answered privately there (no response_url: chat.postEphemeral in the
        thread). A mention that is no command is room talk (its `message` event
        goes to the core) and needs no answer here. Stored before the event's
        acknowledgement, as every event is."""
        request = translate.mention_request(event, self.identity)
        if request is None:
            log.debug("slack: mention that is no command left to the room")
            return
        key = translate.delivery_key(body)
        if not self.first_delivery(key):
            log.info("slack: duplicate delivery of a mention dropped")
            return
        await self.store_command(request, f"mention:{key}" if key else None, None)

    async def store_command(self, request: CommandRequest, delivery_id: str | None,
                            response_url: str | None) -> None:
        """Hand a command to the core, which stores it, before Slack's acknowledgement.

        Stored before the 200 (or the Socket Mode ack), as messages are: an
        acknowledged settings change or summon survives a crash, and a failure
        to store is no 200. users.info (may the user change things?) is asked
        by the core when it applies the command, not here: a slow answer must
        not hold up Slack's 3 seconds. The reply goes through `response_url`
        (else chat.postEphemeral where the command was given), from the outbox.
        """
        route = {"response_url": response_url} if response_url else None
        await self.engine.receive_command(
            request, delivery_id or f"command:{uuid.uuid4().hex}", route=route, ask_admin=True)


class _DropTokenNotice(logging.Filter):
    """bolt reads SLACK_BOT_TOKEN itself and warns that our client's token wins;
    that is intended here, so the warning is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


_BOLT_LOG = logging.getLogger("tribunal.slack.bolt")
_BOLT_LOG.addFilter(_DropTokenNotice())


def _shape(body: Any) -> str:
    """What a request looked like, for a log line: JSON types and kinds, never its text."""
    if not isinstance(body, dict):
        return f"body is a {type(body).__name__}"
    event = body.get("event")
    parts = [f"type={str(body.get('type'))[:40]!r}"]
    if "event" in body:
        parts.append(f"event is a {type(event).__name__}" if not isinstance(event, dict)
                     else f"event.type={str(event.get('type'))[:40]!r}")
    if "command" in body:
        parts.append(f"command={str(body.get('command'))[:40]!r}")
    return ", ".join(parts)


def _well_formed(body: Any) -> bool:
    """A request of a shape Slack really sends, even if we have no listener for it."""
    if not isinstance(body, dict):
        return False
    if isinstance(body.get("command"), str):
        return True
    kind = body.get("type")
    if kind == "event_callback":
        event = body.get("event")
        return isinstance(event, dict) and isinstance(event.get("type"), str)
    return isinstance(kind, str) and kind != ""


class _Refusal(AsyncMiddlewareErrorHandler, AsyncListenerErrorHandler):
    """bolt's error handler: a signed request we cannot use gets 400 and one log line.

    Slack's signature says who sent the body, not that it is well formed (an
    `event` that is null, `actions` that are not a list): bolt's middleware
    then raises on it, and its default answer is a 500 and a traceback. A
    well-formed request nobody listens for (an event type we did not ask for)
    gets 200, so Slack neither retries it nor counts it as a failure.

    A class, not `app.error(func)`: bolt builds a function handler's arguments
    from the body first, which raises again on exactly these bodies.
    """

    async def handle(self, error: Exception, request: AsyncBoltRequest,
                     response: BoltResponse | None) -> None:
        body = request.body
        status = 400
        if isinstance(error, BoltUnhandledRequestError):
            if _well_formed(body):
                status = 200
                log.info("slack: request with no listener acknowledged (%s)", _shape(body))
            else:
                log.warning("slack: signed request of an unknown shape refused (%s)",
                            _shape(body))
        else:
            log.warning("slack: malformed signed request refused: %s (%s)",
                        type(error).__name__, _shape(body))
        if response is not None:
            response.status = status
            response.body = ""


async def dispatch_http(app: AsyncApp, request: web.Request) -> web.Response:
    """One HTTP-mode request, from aiohttp to bolt and back; never a 500.

    bolt reads the body's shape while it builds its request, before any
    middleware (signature check included) runs: a JSON array or `null` raises
    there, outside `_Refusal`'s reach.
    """
    try:
        bolt_request = await to_bolt_request(request)
    except Exception as exc:
        log.warning("slack: unreadable request body refused: %s", type(exc).__name__)
        return web.json_response({"ok": False, "error": "bad_request"}, status=400)
    response = await to_aiohttp_response(await app.async_dispatch(bolt_request))
    if response.status == 200 and faults.armed("after_ack"):
        # Crash tests: the acknowledgement goes out to the socket first, then
        # the process dies (bot/faults.py).
        await response.prepare(request)
        await response.write_eof()
        faults.hit("after_ack")
    return response


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
        # Unhandled requests go to `_Refusal`, which tells odd from malformed.
        raise_error_for_unhandled_request=True,
        logger=_BOLT_LOG,
    )
    refusal = _Refusal()
    # What `app.error()` sets, with a handler that does not read the body first.
    app._async_middleware_error_handler = refusal
    app._async_listener_runner.listener_error_handler = refusal

    @app.middleware
    async def log_retries(request: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        retry = request.headers.get("x-slack-retry-num")
        if retry:
            reason = request.headers.get("x-slack-retry-reason", ["?"])
            log.info("slack: delivery retry %s (%s)", retry[0], reason[0])
        return await next()

    app.event("message")(inbound.on_message_event)
    app.event("app_mention")(inbound.on_mention)
    app.action(ACTION_PATTERN)(inbound.on_action)
    app.command(COMMAND)(inbound.on_command)
    app.shortcut(translate.SHORTCUT)(inbound.on_shortcut)
    return app

"""`bot.ports.Transport` over slack_sdk's AsyncWebClient.

Rate limits: every rate-limited method we call is paced by Slack's documented
limit for it (`SLACK_LIMITS`: chat.postMessage about one per second per
channel, chat.update Tier 3 and chat.postEphemeral Tier 4 per workspace), so
a burst of verdicts (200 rooms deadlocking at once) queues instead of causing
a 429 storm; slack_sdk's retry handlers stay behind that (429 honours
Retry-After; connection resets and 5xx retried once). Slack counts the calls
of every instance of the app, so under a core that shares pacing
(`bot.ports.SharesPacing`, several instances on one database) each paced call
also reserves its moment in the database (`SlackPacer.share`). Errors are logged by
Slack error code (never with the token) and surface as `TransportError`;
`permanent=True` when retrying cannot help, so the engine's outbox stops.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.slack.render import Rendered, neutralise, render, render_plain
from adapters.slack.translate import PLATFORM, is_admin_user, message_id, split_message_id
from bot import telemetry
from bot.models import OutgoingMessage, RoomKey
from bot.ports import Pacing, TransportError

log = logging.getLogger("tribunal.slack")

# Retrying cannot fix these: the channel, the message or our rights in it are
# gone. Auth errors are not here: a revoked or expired token is fixed by an
# operator, and the outbox keeps the posts (with backoff) until then.
PERMANENT_ERRORS = frozenset({
    "not_in_channel", "channel_not_found", "is_archived", "msg_too_long", "no_text",
    "invalid_blocks", "invalid_blocks_format", "too_many_attachments", "invalid_arguments",
    "no_permission", "not_allowed_token_type", "restricted_action",
    "ekm_access_denied", "team_access_not_granted", "cant_update_message",
    "message_not_found", "edit_window_closed", "user_not_in_channel", "user_not_found",
})
AUTH_ERRORS = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked",
                         "token_expired", "missing_scope", "no_permission"})
ADMIN_CACHE_SECONDS = 300.0  # how long a users.info answer on admin rights is trusted
# Worth one more try with text only: Slack refused the rendering, not the post.
RENDERING_ERRORS = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_too_long"})
_HINTS = {
    "not_in_channel": "invite the bot to the channel (/invite @tribunal)",
    "channel_not_found": "the channel is gone or the bot cannot see it",
    "msg_too_long": "the message exceeded Slack's size limits",
    "invalid_auth": "SLACK_BOT_TOKEN is invalid or revoked",
    "missing_scope": "reinstall the app with the scopes in docs/slack-app-manifest.yaml",
}


class RateLimitCounter(AsyncRetryHandler):
    """Counts every 429 for the metrics and never retries (the handlers after it do).

    First in the list because slack_sdk asks the handlers in order and stops
    at the first that retries; slack_sdk gives no other hook for a 429.
    """

    async def can_retry_async(
        self, *, state: Any, request: Any, response: Any = None, error: Any = None,
    ) -> bool:
        if response is not None and response.status_code == 429:
            telemetry.rate_limited("slack")
        return False


def retry_handlers(rate_limit_retries: int = 3) -> list[AsyncRetryHandler]:
    """slack_sdk's own handlers: connection errors, 429 (Retry-After), 500/503."""
    return [
        RateLimitCounter(),
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
        AsyncRateLimitErrorRetryHandler(max_retry_count=rate_limit_retries),
        AsyncServerErrorRetryHandler(max_retry_count=1),
    ]


def make_client(token: str, base_url: str | None = None) -> AsyncWebClient:
    kwargs: dict[str, Any] = {"token": token, "retry_handlers": retry_handlers()}
    if base_url:
        kwargs["base_url"] = base_url if base_url.endswith("/") else base_url + "/"
    return AsyncWebClient(**kwargs)


def error_code(exc: SlackApiError) -> str:
    response = getattr(exc, "response", None)
    try:
        return str(response["error"]) if response is not None else "unknown"
    except (KeyError, TypeError):
        return "unknown"


# Shared pacing spaces the *starts* of calls from several instances; where a
# limit allows one call per window (chat.postMessage into a channel), one
# instance's call may reach Slack later than the next instance's starts, so
# those starts are this much further apart.
SHARED_ALLOWANCE = 0.5  # seconds


class ChannelPacer:
    """At most one post per `interval` seconds per channel, in order.

    With `shared` (several instances on one database), each call first
    reserves its moment under `<key>:<channel>`, `interval + allowance` after
    the one before, whichever instance made it; the in-process order and
    spacing hold as well.
    """

    def __init__(self, interval: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._locks: dict[str, asyncio.Lock] = {}
        self._next: dict[str, float] = {}
        self._queued: dict[str, int] = {}  # calls waiting or under way, per channel
        self.shared: Pacing | None = None
        self.key = ""
        self.allowance = 0.0

    def expected_wait(self, channel: str) -> float:
        """Seconds a call started now would wait for its turn: the spacing left
        after the last call, and one interval for each call queued before it.
        This process's calls only (another instance's reservations are not seen)."""
        gap = max(0.0, self._next.get(channel, 0.0) - self._clock())
        return gap + self._queued.get(channel, 0) * self.interval

    async def run(self, channel: str, call: Callable[[], Awaitable[Any]]) -> Any:
        lock = self._locks.setdefault(channel, asyncio.Lock())
        shared, key = self.shared, f"{self.key}:{channel}"
        # Counted before the first await: a caller that asks `expected_wait`
        # and then calls sees the calls started just before its own.
        self._queued[channel] = self._queued.get(channel, 0) + 1
        try:
            async with lock:
                moment = None
                if shared is not None:
                    moment = await shared.reserve(key, self.interval + self.allowance)
                # Both waits are computed against the clocks just before sleeping.
                wait = self._next.get(channel, 0.0) - self._clock()
                if shared is not None and moment is not None:
                    wait = max(wait, shared.until(moment))
                if wait > 0:
                    await self._sleep(wait)
                try:
                    return await call()
                finally:
                    self._next[channel] = self._clock() + self.interval
                    if shared is not None:
                        await shared.done(key, self.interval)
        finally:
            self._queued[channel] -= 1


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most `calls` calls every `per` seconds, per channel or per workspace."""

    calls: int
    per: float
    per_channel: bool = False

    @property
    def interval(self) -> float:
        return self.per / self.calls


# Slack's documented limits for the methods we call (api.slack.com/apis/rate-limits
# and each method's page); limits are per app per workspace.
# chat.postMessage is "special": about 1 per second per channel (its workspace
# limit is not published; a channel's pace keeps us far below it).
SLACK_LIMITS: dict[str, RateLimit] = {
    "chat.postMessage": RateLimit(1, 1.0, per_channel=True),
    "chat.update": RateLimit(50, 60.0),  # Tier 3
    "chat.postEphemeral": RateLimit(100, 60.0),  # Tier 4
    "users.info": RateLimit(100, 60.0),  # Tier 4 (a read, but ours count the same)
    # Reads of catch-up and of the outbox's lookup (Tier 3). Apps that are not
    # Marketplace-approved and were created after May 2025 get far less for
    # these two (1 a minute, 15 messages a call); set `limits` for such an app.
    "conversations.history": RateLimit(50, 60.0),
    "conversations.replies": RateLimit(50, 60.0),
}
# The per-minute tiers are paced at 90 % of their budget: Slack does not publish
# how it counts its minute, and one 429 costs more than the margin.
TIER_HEADROOM = 0.9


class SlackPacer:
    """Every rate-limited method at its own pace: per channel or workspace-wide, in order.

    `post_interval` is chat.postMessage's spacing per channel (0 turns it off).
    """

    def __init__(self, limits: dict[str, RateLimit] | None = None, *,
                 post_interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.limits = dict(SLACK_LIMITS if limits is None else limits)
        self._pacers: dict[str, ChannelPacer] = {}
        for method, limit in self.limits.items():
            if method == "chat.postMessage":
                interval = post_interval
            else:
                interval = limit.interval / (1.0 if limit.per_channel else TIER_HEADROOM)
            self._pacers[method] = ChannelPacer(interval, clock=clock, sleep=sleep)

    def share(self, pacing: Pacing) -> None:
        """Pace every method together with the other instances (`bot.pacing`)."""
        for method, pacer in self._pacers.items():
            pacer.shared = pacing
            pacer.key = f"slack:{method}"
            pacer.allowance = SHARED_ALLOWANCE if self.limits[method].calls == 1 else 0.0

    def expected_wait(self, method: str, channel: str) -> float:
        """Seconds a call of `method` into `channel` started now would wait (0 when
        the method is not paced)."""
        pacer = self._pacers.get(method)
        if pacer is None or pacer.interval <= 0:
            return 0.0
        return pacer.expected_wait(channel if self.limits[method].per_channel else "")

    async def run(self, method: str, channel: str, call: Callable[[], Awaitable[Any]]) -> Any:
        pacer = self._pacers.get(method)
        if pacer is None or pacer.interval <= 0:
            return await call()
        return await pacer.run(channel if self.limits[method].per_channel else "", call)


class SlackTransport:
    """What the engine posts through; message ids are `"<channel>:<ts>"`."""

    platform = PLATFORM

    def __init__(self, client: AsyncWebClient, *, post_interval: float = 1.0,
                 limits: dict[str, RateLimit] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.client = client
        self.pacer = SlackPacer(limits, post_interval=post_interval, clock=clock, sleep=sleep)
        self._clock = clock
        self._admins: dict[str, tuple[float, bool]] = {}  # user -> (valid until, admin)
        self.workspace_url: str | None = None  # from auth.test: links to threads

    def expected_wait(self, call: Literal["post", "edit"], room: RoomKey) -> float:
        """How long a post (chat.postMessage, paced per channel) or an edit
        (chat.update, one bucket for the workspace) started now would wait."""
        method = "chat.update" if call == "edit" else "chat.postMessage"
        return self.pacer.expected_wait(method, room.channel)

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        async def send(r: Rendered) -> Any:
            kwargs: dict[str, Any] = {"channel": room.channel, "text": r.text,
                                      "unfurl_links": False, "unfurl_media": False}
            if r.blocks:
                kwargs["blocks"] = r.blocks
            if room.thread:
                kwargs["thread_ts"] = room.thread
            if message.idempotency_key:
                kwargs["metadata"] = post_metadata(message.idempotency_key)
            return await self.client.chat_postMessage(**kwargs)

        response = await self._with_fallback("chat.postMessage", room, message, send)
        return message_id(str(response.get("channel") or room.channel), str(response["ts"]))

    async def find_post(self, room: RoomKey, message: OutgoingMessage,
                        since: datetime) -> str | None:
        """Our post carrying `message.idempotency_key` in its metadata, if any.

        Reads the thread's replies from `since` on (with their metadata),
        a few pages at most: the post looked for is recent.
        """
        key = message.idempotency_key
        if not key:
            return None
        cursor: str | None = None
        for _ in range(LOOKUP_PAGES):
            kwargs: dict[str, Any] = {"channel": room.channel, "oldest": f"{since.timestamp():.6f}",
                                      "limit": 200, "include_all_metadata": True}
            if cursor:
                kwargs["cursor"] = cursor
            if room.thread:
                method = "conversations.replies"
                kwargs["ts"] = room.thread
            else:
                method = "conversations.history"
            try:
                response = await self.read(method, room, kwargs)
            except TransportError as exc:
                if exc.permanent or str(exc).startswith("thread_not_found"):
                    return None  # nothing to find there; the post itself will say why
                raise
            for item in response.get("messages") or []:
                if metadata_key(item) == key:
                    return message_id(room.channel, str(item["ts"]))
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return None
        return None

    async def read(self, method: str, room: RoomKey, kwargs: dict[str, Any]) -> Any:
        """One paced history read (`conversations.history` or `.replies`)."""
        if method == "conversations.replies":
            return await self._call(method, room,
                                    lambda: self.client.conversations_replies(**kwargs))
        return await self._call(method, room, lambda: self.client.conversations_history(**kwargs))

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        channel, ts = split_message_id(message_id, room.channel)

        async def send(r: Rendered) -> Any:
            # Empty blocks on update would keep the old buttons; send a section instead.
            return await self.client.chat_update(channel=channel, ts=ts, text=r.text,
                                                 blocks=r.blocks or _text_blocks(r.text))

        await self._with_fallback("chat.update", room, message, send)

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        kwargs: dict[str, Any] = {"channel": room.channel, "user": user_id,
                                  "text": neutralise(text, self.workspace_url)}
        if room.thread:
            kwargs["thread_ts"] = room.thread
        await self._call("chat.postEphemeral", room, lambda: self.client.chat_postEphemeral(
            **kwargs))

    async def post_reply(self, room: RoomKey, user_id: str, text: str,
                         route: dict[str, str]) -> None:
        """The reply to a slash command, through its `response_url` (ephemeral).

        The URL lasts 30 minutes and five uses; past that (a long outage), or
        when it fails, chat.postEphemeral says the same in the channel. Slack
        keeps no trace of ephemeral messages that a restart could look up, so
        a crash between this call and the outbox recording it shows the reply
        twice; `replace_original` cannot help either (a slash command has no
        original message).
        """
        url = route.get("response_url")
        if url:
            try:
                sent = await AsyncWebhookClient(url).send(
                    text=neutralise(text, self.workspace_url), response_type="ephemeral",
                    replace_original=False)
                if sent.status_code < 400:
                    return
                log.warning("slack: response_url answered %s; using chat.postEphemeral",
                            sent.status_code)
            except Exception as exc:  # expired, unreachable, refused: the fallback says it
                log.warning("slack: response_url failed (%s); using chat.postEphemeral",
                            type(exc).__name__)
        await self.post_private(room, user_id, text)

    async def is_platform_admin(self, user_id: str) -> bool:
        """Workspace admin/owner per users.info, cached for a few minutes."""
        cached = self._admins.get(user_id)
        if cached and cached[0] > self._clock():
            return cached[1]
        try:
            response = await self.pacer.run(
                "users.info", "", lambda: self.client.users_info(user=user_id))
            admin = is_admin_user(response.get("user") or {})
        except SlackApiError as exc:
            log.warning("slack users.info for %s failed: %s (treated as non-admin)", user_id,
                        error_code(exc))
            return False
        self._admins[user_id] = (self._clock() + ADMIN_CACHE_SECONDS, admin)
        return admin

    async def _with_fallback(self, method: str, room: RoomKey, message: OutgoingMessage,
                             send: Callable[[Rendered], Awaitable[Any]]) -> Any:
        """Send the Block Kit rendering; if Slack refuses it, once more as plain text."""
        try:
            return await self._call(method, room, lambda: send(render(message)))
        except TransportError as exc:
            if str(exc).split(":", 1)[0] not in RENDERING_ERRORS:
                raise
            log.warning("slack %s: retrying %s as plain text", method, message.kind.value)
            return await self._call(method, room, lambda: send(render_plain(message)))

    async def _call(self, method: str, room: RoomKey,
                    call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await self.pacer.run(method, room.channel, call)
        except SlackApiError as exc:
            code = error_code(exc)
            status = getattr(exc.response, "status_code", 0)
            permanent = code in PERMANENT_ERRORS
            hint = _HINTS.get(code, "")
            level = logging.ERROR if permanent or code in AUTH_ERRORS else logging.WARNING
            log.log(level, "slack %s failed in %s (thread %s): %s%s (http %s)", method,
                    room.channel, room.thread, code, f" - {hint}" if hint else "", status)
            raise TransportError(f"{code}: slack {method} failed", permanent=permanent) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("slack %s to %s: network error %s", method, room.channel,
                        type(exc).__name__)
            raise TransportError(f"network: slack {method} failed") from exc


LOOKUP_PAGES = 5  # pages of 200 replies searched for a post after a crash
METADATA_EVENT = "tribunal_post"


def post_metadata(key: str) -> dict[str, Any]:
    """Slack message metadata carrying our idempotency key (invisible to users)."""
    return {"event_type": METADATA_EVENT, "event_payload": {"key": key}}


def metadata_key(item: dict[str, Any]) -> str | None:
    """The idempotency key of one of our posts, from its metadata."""
    metadata = item.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != METADATA_EVENT:
        return None
    payload = metadata.get("event_payload")
    key = payload.get("key") if isinstance(payload, dict) else None
    return key if isinstance(key, str) else None


def _text_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000],
                                         "verbatim": True}}]

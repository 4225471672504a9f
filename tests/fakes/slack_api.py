"""A local fake of the Slack Web API (and Socket Mode link) on 127.0.0.1.

Same idea as slack-bolt's own test suite: a real HTTP server that the real
`AsyncWebClient` talks to through `base_url`, so requests, retries and error
handling run exactly as in production. Each test scripts it (queue a 429 or an
error for a method) and inspects what was called.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
import uuid
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"


@dataclass(frozen=True)
class Limit:
    """Slack answers 429 past `calls` calls in any `per` seconds (per channel or workspace)."""

    calls: int
    per: float
    per_channel: bool = False


# What Slack documents for the methods the bot calls (written here from the
# docs, not imported from the adapter, so the fake checks the adapter).
SLACK_LIMITS: dict[str, Limit] = {
    "chat.postMessage": Limit(1, 1.0, per_channel=True),
    "chat.update": Limit(50, 60.0),  # Tier 3
    "chat.postEphemeral": Limit(100, 60.0),  # Tier 4
    "users.info": Limit(100, 60.0),  # Tier 4
    "conversations.history": Limit(50, 60.0),  # Tier 3
    "conversations.replies": Limit(50, 60.0),  # Tier 3
}
_EPSILON = 1e-6  # float noise of a pacer spacing calls exactly at the limit


class VirtualTime:
    """Real monotonic time plus every wait skipped by `sleep`.

    Shared by the fake (to judge rates) and the adapter's pacer (to wait), so
    minutes of pacing take no real time; a bot in another process, pacing on
    the real clock, is judged correctly too. A sleeper wakes at its deadline:
    the pacer computes each wait against the clock just before sleeping, so
    two channels waiting for the same second move the clock once, not twice.
    """

    def __init__(self) -> None:
        self._skipped = 0.0

    def now(self) -> float:
        return time.monotonic() + self._skipped

    async def sleep(self, seconds: float) -> None:
        self._skipped += max(0.0, seconds)
        await asyncio.sleep(0)


@dataclass
class Call:
    """One request the fake received."""

    method: str
    args: dict[str, Any]
    headers: dict[str, str]


@dataclass
class Scripted:
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeSlackAPI:
    """Scriptable Slack Web API: records calls, answers like Slack does."""

    def __init__(
        self,
        *,
        bot_token: str = BOT_TOKEN,
        app_token: str = APP_TOKEN,
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team_id: str = "T0001",
        post_rate: float | None = None,
        limits: dict[str, Limit] | None = None,
        virtual_time: VirtualTime | None = None,
    ) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.team_id = team_id
        self.calls: list[Call] = []
        self.responses: list[dict[str, Any]] = []  # bodies POSTed to response_urls
        # the same bodies by response_url (its last path segment): one per command
        self.responses_to: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
        self.users: dict[str, dict[str, Any]] = {}
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}
        self.acks: list[dict[str, Any]] = []  # Socket Mode envelope acks
        self._script: dict[str, deque[Scripted]] = defaultdict(deque)
        self._holds: list[tuple[str, asyncio.Event]] = []
        self.held: list[Call] = []  # calls waiting behind a hold
        self._ts = itertools.count(1)
        self._last_us = 0
        self._ws: web.WebSocketResponse | None = None
        self._ws_ready = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        # Like Slack's "about 1 chat.postMessage per second per channel": faster
        # posts to one channel get 429 with Retry-After when this is set.
        self.post_rate = post_rate
        self._last_post: dict[str, float] = {}
        self.rate_limited = 0
        # Slack's per-method limits (SLACK_LIMITS) when set, judged on the
        # virtual clock when there is one (the adapter's pacer then sleeps on it).
        self.limits = limits
        self.time = virtual_time
        self.clock: Callable[[], float] = virtual_time.now if virtual_time else time.monotonic
        self._windows: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self.rate_limited_by: Counter[str] = Counter()

    # -- lifecycle -----------------------------------------------------------
    async def start(self) -> FakeSlackAPI:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{token}", self._response_url)
        app.router.add_get("/link", self._link)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeSlackAPI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        """What goes into `TRIBUNAL_SLACK_API_URL` / `AsyncWebClient(base_url=...)`."""
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/response/{uuid.uuid4().hex}"

    # -- scripting -----------------------------------------------------------
    def add_user(self, user_id: str, *, admin: bool = False, owner: bool = False,
                 name: str | None = None, is_bot: bool = False) -> None:
        self.users[user_id] = {
            "id": user_id, "team_id": self.team_id, "name": name or user_id.lower(),
            "real_name": name or user_id, "is_admin": admin, "is_owner": owner,
            "is_primary_owner": False, "is_bot": is_bot, "deleted": False,
            "profile": {"display_name": name or user_id, "real_name": name or user_id},
        }

    def queue(self, method: str, *, status: int = 200, body: dict[str, Any] | None = None,
              headers: dict[str, str] | None = None) -> None:
        """The next call of `method` gets this answer instead of the normal one."""
        self._script[method].append(Scripted(status, body, headers or {}))

    def fail(self, method: str, error: str, times: int = 1) -> None:
        for _ in range(times):
            self.queue(method, body={"ok": False, "error": error})

    def hold(self, method: str) -> asyncio.Event:
        """The next call of `method` waits (listed in `held`) until the returned
        event is set, then is answered as usual; a caller that dies meanwhile
        never gets its answer."""
        gate = asyncio.Event()
        self._holds.append((method, gate))
        return gate

    def rate_limit(self, method: str, retry_after: int = 0, times: int = 1) -> None:
        for _ in range(times):
            self.queue(method, status=429, body={"ok": False, "error": "ratelimited"},
                       headers={"Retry-After": str(retry_after)})

    # -- inspection ----------------------------------------------------------
    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def until(self, predicate: Callable[[], object], within: float = 5.0) -> None:
        """Poll (tiny sleeps) until `predicate()` is truthy."""
        deadline = time.monotonic() + within
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met within {within}s")
            await asyncio.sleep(0.01)

    async def wait_for(self, method: str, count: int = 1, within: float = 5.0) -> list[Call]:
        """Poll (tiny sleeps) until `method` was called `count` times."""
        deadline = time.monotonic() + within
        while len(self.calls_to(method)) < count:
            if time.monotonic() > deadline:
                seen = [c.method for c in self.calls]
                raise AssertionError(f"{method} x{count} not called within {within}s: {seen}")
            await asyncio.sleep(0.01)
        return self.calls_to(method)

    # -- Socket Mode ---------------------------------------------------------
    async def push(self, envelope_type: str, payload: dict[str, Any], *,
                   retry_attempt: int | None = None) -> str:
        """Send one Socket Mode envelope to the connected client; returns its id."""
        await asyncio.wait_for(self._ws_ready.wait(), 5)
        assert self._ws is not None
        envelope_id = uuid.uuid4().hex
        envelope: dict[str, Any] = {"envelope_id": envelope_id, "type": envelope_type,
                                    "payload": payload, "accepts_response_payload": False}
        if retry_attempt is not None:
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = "timeout"
        await self._ws.send_str(json.dumps(envelope))
        return envelope_id

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._ws = ws
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1}))
        self._ws_ready.set()
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                self.acks.append(json.loads(msg.data))
        return ws

    # -- handlers --------------------------------------------------------------
    async def _response_url(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.responses.append(body)
        self.responses_to[request.match_info["token"]].append(body)
        return web.Response(text="ok")

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _parse_args(request)
        call = Call(method, args, dict(request.headers))
        self.calls.append(call)
        for hold in self._holds:
            if hold[0] == method:
                self._holds.remove(hold)
                self.held.append(call)
                await hold[1].wait()
                break
        script = self._script.get(method)
        if script:
            item = script.popleft()
            return web.json_response(item.body or {"ok": True}, status=item.status,
                                     headers=item.headers)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != expected:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        limited = self._over_limit(method, args)
        if limited is not None:
            self.rate_limited += 1
            self.rate_limited_by[method] += 1
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                     headers={"Retry-After": str(limited)})
        if method == "chat.postMessage" and self.post_rate is not None:
            channel, now = str(args.get("channel", "")), time.monotonic()
            if now - self._last_post.get(channel, -1e9) < self.post_rate:
                self.rate_limited += 1
                return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                         headers={"Retry-After": "1"})
            self._last_post[channel] = now
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        body = handler(args) if handler is not None else {"ok": True}
        return web.json_response(body, headers={"x-oauth-scopes": "chat:write,commands"})

    def _over_limit(self, method: str, args: dict[str, Any]) -> int | None:
        """Retry-After seconds if this call is over its method's limit, else None (counted)."""
        limit = (self.limits or {}).get(method)
        if limit is None or (method == "chat.postMessage" and self.post_rate is not None):
            return None  # `post_rate`, when a test sets it, is chat.postMessage's limit
        key = (method, str(args.get("channel", "")) if limit.per_channel else "")
        window, now = self._windows[key], self.clock()
        while window and window[0] <= now - limit.per + _EPSILON:
            window.popleft()
        if len(window) >= limit.calls:
            return max(1, math.ceil(window[0] + limit.per - now))
        window.append(now)
        return None

    def _next_ts(self) -> str:
        """Like Slack: the wall clock in microseconds, unique and increasing (the
        outbox's lookup after a crash searches from a time, as it does on Slack)."""
        next(self._ts)
        self._last_us = max(int(time.time() * 1_000_000), self._last_us + 1)
        return f"{self._last_us // 1_000_000}.{self._last_us % 1_000_000:06d}"

    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://fake.slack.test/", "team": "Fake",
                "user": "tribunal", "team_id": self.team_id, "user_id": self.bot_user_id,
                "bot_id": self.bot_id, "is_enterprise_install": False}

    def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        ts, channel = self._next_ts(), args.get("channel", "")
        message = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id,
                   "text": args.get("text", ""), "blocks": args.get("blocks") or [], "ts": ts}
        if args.get("thread_ts"):
            message["thread_ts"] = args["thread_ts"]
        metadata = args.get("metadata")
        if isinstance(metadata, dict) and metadata.get("event_type"):
            message["metadata"] = metadata
        self.messages[(channel, ts)] = message
        self._thread_reply(channel, message)
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def add_message(self, channel: str, event: dict[str, Any]) -> None:
        """A message someone else posted (while the bot was down, or not): `event`
        as the Events API would deliver it (`ts`, `user`/`bot_id`, `text`, ...)."""
        message = {"type": "message", **event}
        message.pop("channel", None)
        message.pop("channel_type", None)
        self.messages[(channel, str(message["ts"]))] = message
        self._thread_reply(channel, message)

    def _thread_reply(self, channel: str, message: dict[str, Any]) -> None:
        """Keep a parent's `reply_count` / `latest_reply` as Slack does."""
        thread = message.get("thread_ts")
        if not thread or thread == message["ts"]:
            return
        parent = self.messages.get((channel, str(thread)))
        if parent is not None:
            parent["thread_ts"] = thread
            parent["reply_count"] = int(parent.get("reply_count", 0)) + 1
            parent["latest_reply"] = max(str(parent.get("latest_reply", "0")), message["ts"])

    def _page(self, found: list[dict[str, Any]], args: dict[str, Any]) -> dict[str, Any]:
        """One page in Slack's cursor pagination (`limit`, `cursor`, `has_more`)."""
        start = int(args.get("cursor") or 0)
        limit = max(1, min(int(args.get("limit") or 100), 999))
        page = found[start:start + limit]
        more = start + limit < len(found)
        include = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        page = [m if include else {k: v for k, v in m.items() if k != "metadata"} for m in page]
        return {"ok": True, "messages": page, "has_more": more,
                "response_metadata": {"next_cursor": str(start + limit) if more else ""}}

    @staticmethod
    def _in_range(ts: str, args: dict[str, Any]) -> bool:
        oldest, latest = args.get("oldest"), args.get("latest")
        inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")
        if oldest and (float(ts) < float(oldest) or (not inclusive and ts == oldest)):
            return False
        return not (latest and (float(ts) > float(latest) or (not inclusive and ts == latest)))

    def _m_conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        """Top-level messages of a channel, newest first (replies are not in it)."""
        channel = str(args.get("channel", ""))
        found = [m for (c, _), m in self.messages.items() if c == channel
                 and m.get("thread_ts", m["ts"]) == m["ts"] and self._in_range(m["ts"], args)]
        found.sort(key=lambda m: float(m["ts"]), reverse=True)
        return self._page(found, args)

    def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        """A thread, parent first, then its replies oldest first (the parent is
        always included, even outside oldest/latest, as Slack does)."""
        channel, thread = str(args.get("channel", "")), str(args.get("ts", ""))
        parent = self.messages.get((channel, thread))
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        replies = [m for (c, _), m in self.messages.items() if c == channel
                   and m.get("thread_ts") == thread and m["ts"] != thread
                   and self._in_range(m["ts"], args)]
        replies.sort(key=lambda m: float(m["ts"]))
        return self._page([parent, *replies], args)

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        key = (args.get("channel", ""), args.get("ts", ""))
        if key not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        self.messages[key].update(text=args.get("text", ""), blocks=args.get("blocks") or [])
        return {"ok": True, "channel": key[0], "ts": key[1], "text": args.get("text", "")}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._next_ts()}

    def _m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(args.get("user", ""))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": user}


async def _parse_args(request: web.Request) -> dict[str, Any]:
    """Slack accepts query string, form and JSON bodies; so does the fake."""
    args: dict[str, Any] = dict(request.query)
    raw = await request.text()
    if raw:
        if request.content_type == "application/json":
            args.update(json.loads(raw))
        else:
            args.update(dict(parse_qsl(raw, keep_blank_values=True)))
    for key in ("blocks", "attachments"):
        if isinstance(args.get(key), str):
            try:
                args[key] = json.loads(args[key])
            except ValueError:
                pass
    return args

"""A local fake of Discord's REST API and gateway, for adapter tests over real HTTP.

It binds 127.0.0.1 on a free port, records every REST call (method, path,
query, JSON body), keeps the messages it was asked to create, and can be
scripted per test to answer the next matching call with an error (429 with
`retry_after`, 403 code 50013, 404 unknown channel, ...). The gateway speaks
just enough of the protocol (HELLO, IDENTIFY -> READY + GUILD_CREATE,
heartbeats) for `discord.Client.connect()`, and lets a test push dispatch
events (MESSAGE_CREATE, INTERACTION_CREATE) down the socket. A connection
that identifies as shard [k, n] gets READY with the guilds of that shard
only (`(guild_id >> 22) % n == k`, as Discord routes them) and only their
events; `sessions()` says who is connected with which shard.

Interaction responses are kept per interaction token (`replies`), as a
user's client shows them: the first response (`/interactions/{id}/{token}/
callback`: 4 a message, 5 "thinking", 6 a silent update), the first follow-up
after a "thinking" deferral taking its place, later follow-ups as new
messages, and `PATCH .../messages/@original` replacing the original response.
A token that was never answered gets Discord's 404 for both.

Reads follow Discord's documented shapes: a channel's messages
(`GET /channels/{id}/messages` with `after`, `before`, `limit`; newest first
whatever the direction), a guild's active threads
(`GET /guilds/{id}/threads/active`), and message create honours `nonce` +
`enforce_nonce` (the same author's message with that nonce is returned
instead of a new one, as Discord does for a few minutes).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1420070400000


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    json: Any

    def __repr__(self) -> str:  # short, for assertion messages
        return f"<{self.method} {self.path}>"


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: dict[str, Any]
    times: int
    headers: dict[str, str] = field(default_factory=dict)
    after: int = 0  # matching requests let through before failing


class FakeDiscord:
    """REST at `{url}/api/v10`, gateway at `{ws_url}`; see module docstring."""

    def __init__(self, *, bot_id: int = 900, app_id: int = 901) -> None:
        self.bot_user = {
            "id": str(bot_id),
            "username": "tribunal",
            "discriminator": "0",
            "global_name": "Tribunal",
            "avatar": None,
            "bot": True,
        }
        self.app_id = app_id
        self.calls: list[Call] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.channels: dict[int, dict[str, Any]] = {}
        self.guilds: list[dict[str, Any]] = []
        self.identify_payloads: list[dict[str, Any]] = []
        self.resume_payloads: list[dict[str, Any]] = []
        # Close code sent instead of READY (4014 = disallowed/privileged intents), if set.
        self.refuse_identify: int | None = None
        self._failures: list[Failure] = []
        self._holds: list[tuple[str, re.Pattern[str], asyncio.Event]] = []
        self.held: list[Call] = []  # calls waiting behind a hold
        self.replies: dict[str, Reply] = {}  # interaction token -> what the user sees
        self._ids = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._identified: dict[int, dict[str, Any]] = {}  # id(socket) -> its IDENTIFY
        self._seq = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- lifecycle -------------------------------------------------------------

    async def start(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    # -- scripting -------------------------------------------------------------

    def snowflake(self) -> int:
        return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) + next(self._ids)

    def add_guild(self, guild: dict[str, Any]) -> None:
        """A GUILD_CREATE payload sent after READY; its channels become fetchable."""
        self.guilds.append(guild)
        for channel in [*guild.get("channels", []), *guild.get("threads", [])]:
            self.channels[int(channel["id"])] = {**channel, "guild_id": guild["id"]}

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        body: dict[str, Any] | None = None,
        *,
        times: int = 1,
        after: int = 0,
    ) -> None:
        headers: dict[str, str] = {}
        if status == 429:
            body = body or {"message": "You are being rate limited.", "retry_after": 0.01,
                            "global": False}
            # discord.py treats a 429 without `Via` as a Cloudflare ban.
            headers = {"Via": "1.1 google", "Retry-After": "1", "X-RateLimit-Scope": "user"}
        self._failures.append(
            Failure(method.upper(), re.compile(path_regex), status, body or {}, times, headers,
                    after)
        )

    def hold(self, method: str, path_regex: str) -> asyncio.Event:
        """Keep the next matching call waiting until the returned event is set."""
        gate = asyncio.Event()
        self._holds.append((method.upper(), re.compile(path_regex), gate))
        return gate

    def rate_limit_next(self, method: str, path_regex: str, retry_after: float = 0.01) -> None:
        self.fail_next(method, path_regex, 429, {"message": "You are being rate limited.",
                                                 "retry_after": retry_after, "global": False})

    def forbid_next(self, method: str, path_regex: str, *, times: int = 1) -> None:
        self.fail_next(method, path_regex, 403, {"message": "Missing Permissions", "code": 50013},
                       times=times)

    def unknown_channel_next(self, method: str, path_regex: str, *, times: int = 1) -> None:
        self.fail_next(method, path_regex, 404, {"message": "Unknown Channel", "code": 10003},
                       times=times)

    def find(self, method: str, path_regex: str) -> list[Call]:
        pattern = re.compile(path_regex)
        return [c for c in self.calls if c.method == method.upper() and pattern.search(c.path)]

    def channel_messages(self, channel_id: int | str) -> list[dict[str, Any]]:
        return [m for m in self.messages.values() if m["channel_id"] == str(channel_id)]

    def add_message(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A message someone else posted: kept, as Discord keeps it, whether or
        not a gateway event tells a bot about it (a bot that is down hears nothing)."""
        self.messages[int(payload["id"])] = payload
        channel = self.channels.get(int(payload["channel_id"]))
        if channel is not None:
            channel["last_message_id"] = payload["id"]
        return payload

    async def say(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Posted while the bot listens: kept and dispatched as MESSAGE_CREATE."""
        self.add_message(payload)
        await self.dispatch("MESSAGE_CREATE", payload)
        return payload

    def add_thread(self, thread: dict[str, Any]) -> None:
        """A thread created later (no gateway event): fetchable and listed as active."""
        guild_id = str(self.channels[int(thread["parent_id"])]["guild_id"])
        self.channels[int(thread["id"])] = {**thread, "guild_id": guild_id}

    def sessions(self) -> list[list[int] | None]:
        """The `shard` of each identified open connection (None: not sharded)."""
        return [self._identified[id(ws)].get("shard") for ws in self._sockets
                if id(ws) in self._identified and not ws.closed]

    def _hears(self, ws: web.WebSocketResponse, guild_id: Any) -> bool:
        """Whether a connection gets a guild's events: its shard's guilds only."""
        shard = self._identified.get(id(ws), {}).get("shard")
        return not shard or guild_id is None or (int(guild_id) >> 22) % shard[1] == shard[0]

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Push a gateway DISPATCH event to every connected client (of the event's
        guild's shard)."""
        frame = json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data})
        for ws in list(self._sockets):
            if self._hears(ws, data.get("guild_id")):
                await ws.send_str(frame)

    async def request_reconnect(self) -> None:
        """Op 7 RECONNECT: clients drop the socket and RESUME their session on a new one."""
        for ws in list(self._sockets):
            await ws.send_str(json.dumps({"op": 7, "d": None}))

    # -- REST ------------------------------------------------------------------

    def _message(self, channel_id: str, body: dict[str, Any], *, flags: int = 0) -> dict[str, Any]:
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce"):
            for earlier in self.channel_messages(channel_id):
                if earlier.get("nonce") == nonce and earlier["author"]["id"] == self.bot_user["id"]:
                    return earlier
        msg_id = self.snowflake()
        channel = self.channels.get(int(channel_id), {})
        message = {
            "id": str(msg_id),
            "channel_id": channel_id,
            "author": self.bot_user,
            "content": body.get("content") or "",
            "timestamp": "2026-11-30T00:00:00.000000+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "pinned": False,
            "type": 0,
            "flags": body.get("flags", flags) or 0,
        }
        if "guild_id" in channel:
            message["guild_id"] = channel["guild_id"]
        if nonce is not None:
            message["nonce"] = nonce
        self.messages[msg_id] = message
        if channel:
            channel["last_message_id"] = message["id"]
        return message

    def _history(self, channel_id: str, query: dict[str, str]) -> list[dict[str, Any]]:
        """GET /channels/{id}/messages: up to `limit` (1..100, default 50) messages
        right after `after`, right before `before`, or the latest; newest first.
        Discord's history does not carry the create-time `nonce`."""
        limit = max(1, min(100, int(query.get("limit", 50))))
        ordered = sorted(self.channel_messages(channel_id), key=lambda m: int(m["id"]))
        if "after" in query:
            page = [m for m in ordered if int(m["id"]) > int(query["after"])][:limit]
        elif "before" in query:
            page = [m for m in ordered if int(m["id"]) < int(query["before"])][-limit:]
        else:
            page = ordered[-limit:]
        return [{k: v for k, v in m.items() if k != "nonce"} for m in reversed(page)]

    def _active_threads(self, guild_id: str) -> dict[str, Any]:
        threads = [c for c in self.channels.values()
                   if str(c.get("guild_id")) == guild_id and c.get("type") in (10, 11, 12)
                   and not (c.get("thread_metadata") or {}).get("archived")]
        return {"threads": threads, "members": []}

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            if request.content_type == "application/json" and raw:
                body = json.loads(raw)
            elif raw:
                body = raw.decode("utf-8", "replace")
        call = Call(request.method, path, dict(request.query), body)
        self.calls.append(call)
        for hold in self._holds:
            if hold[0] == request.method and hold[1].search(path):
                self._holds.remove(hold)
                self.held.append(call)
                await hold[2].wait()
                break
        for failure in self._failures:
            if failure.method == request.method and failure.pattern.search(path):
                if failure.after > 0:
                    failure.after -= 1
                    break
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                return _json(failure.body, status=failure.status,
                                         headers=failure.headers)
        return await self._route(request.method, path, body, dict(request.query))

    async def _route(
        self, method: str, path: str, raw: Any, query: dict[str, str]
    ) -> web.StreamResponse:
        body: dict[str, Any] = raw if isinstance(raw, dict) else {}
        parts = path.strip("/").split("/")
        if path == "/users/@me":
            return _json(self.bot_user)
        if path == "/oauth2/applications/@me":
            return _json({
                "id": str(self.app_id), "name": "Tribunal", "description": "", "icon": None,
                "bot_public": False, "bot_require_code_grant": False, "verify_key": "00",
                "owner": {"id": "1", "username": "owner", "discriminator": "0", "avatar": None},
                "flags": 1 << 19,
            })
        if path == "/users/@me/channels" and method == "POST":
            dm = {"id": str(self.snowflake()), "type": 1,
                  "recipients": [{"id": body.get("recipient_id"), "username": "someone",
                                  "discriminator": "0", "avatar": None}]}
            self.channels[int(dm["id"])] = dm
            return _json(dm)
        if parts[0] == "applications" and parts[-1] == "commands" and method == "PUT":
            return _json([
                {**cmd, "id": str(self.snowflake()), "application_id": str(self.app_id),
                 "version": "1"}
                for cmd in (raw if isinstance(raw, list) else [])
            ])
        if parts[0] == "channels" and len(parts) == 2 and method == "GET":
            channel = self.channels.get(int(parts[1]))
            if channel is None:
                return _json({"message": "Unknown Channel", "code": 10003}, status=404)
            return _json(channel)
        if parts[0] == "channels" and len(parts) == 3 and parts[2] == "messages":
            if method == "POST":
                return _json(self._message(parts[1], body))
            if method == "GET":
                if int(parts[1]) not in self.channels:
                    return _json({"message": "Unknown Channel", "code": 10003}, status=404)
                return _json(self._history(parts[1], query))
        if path.endswith("/threads/active") and parts[0] == "guilds" and method == "GET":
            return _json(self._active_threads(parts[1]))
        if parts[0] == "channels" and len(parts) == 4 and parts[2] == "messages":
            message = self.messages.get(int(parts[3]))
            if message is None or message["channel_id"] != parts[1]:
                return _json({"message": "Unknown Message", "code": 10008}, status=404)
            if method == "PATCH":
                for key in ("content", "components", "embeds", "flags"):
                    if key in body:
                        message[key] = body[key] if body[key] is not None else message[key]
                message["edited_timestamp"] = "2026-11-30T00:00:01.000000+00:00"
                return _json(message)
            if method == "DELETE":
                self.messages.pop(int(parts[3]), None)
                return web.Response(status=204)
            return _json(message)
        if parts[0] == "interactions" and parts[-1] == "callback":
            if len(parts) == 4:
                self.replies.setdefault(parts[2], Reply(int(body.get("type", 0)))).answer(
                    body.get("data") or {})
            return self._callback(parts[1], body, query)
        if parts[0] == "webhooks" and len(parts) >= 3:
            reply = self.replies.get(parts[2])
            if reply is None:
                return _json({"message": "Unknown Webhook", "code": 10015}, status=404)
            if len(parts) == 3 and method == "POST":
                reply.follow_up(body)
                return _json(self._message(str(self.snowflake()), body))
            if parts[-1] == "@original" and method == "PATCH":
                if reply.kind not in (4, 5):
                    return _json({"message": "Unknown Message", "code": 10008}, status=404)
                reply.edit(body)
                return _json(self._message(str(self.snowflake()), body))
        return _json({"message": "404: Not Found", "code": 0}, status=404)

    def _callback(self, interaction_id: str, body: dict[str, Any], query: dict[str, str]
                  ) -> web.StreamResponse:
        """POST /interactions/{id}/{token}/callback (InteractionCallbackResponse if asked)."""
        if query.get("with_response") not in ("true", "1"):
            return web.Response(status=204)
        kind = int(body.get("type", 0))
        data = body.get("data") or {}
        interaction: dict[str, Any] = {
            "id": interaction_id, "type": 3 if kind in (6, 7) else 2,
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(int(data.get("flags") or 0) & 64),
        }
        resource: dict[str, Any] = {"type": kind}
        if kind in (4, 5):
            message = self._message(str(self.snowflake()), data)
            interaction["response_message_id"] = message["id"]
            if kind == 4:
                resource["message"] = message
        return _json({"interaction": interaction, "resource": resource})

    # -- gateway ---------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                if frame.get("op") == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif frame.get("op") == 2:
                    self.identify_payloads.append(frame["d"])
                    if self.refuse_identify is not None:
                        await ws.close(code=self.refuse_identify, message=b"Disallowed intent(s).")
                        break
                    self._identified[id(ws)] = frame["d"]
                    await self._ready(ws)
                elif frame.get("op") == 6:  # RESUME: nothing to replay in a fake
                    self.resume_payloads.append(frame["d"])
                    await ws.send_str(json.dumps(
                        {"op": 0, "t": "RESUMED", "s": next(self._seq), "d": {}}))
        finally:
            self._sockets.remove(ws)
            self._identified.pop(id(ws), None)
        return ws

    async def _ready(self, ws: web.WebSocketResponse) -> None:
        guilds = [g for g in self.guilds if self._hears(ws, g["id"])]
        ready = {
            "v": 10,
            "user": self.bot_user,
            "guilds": [{"id": g["id"], "unavailable": True} for g in guilds],
            "session_id": "fake-session",
            "resume_gateway_url": self.ws_url,
            "application": {"id": str(self.app_id), "flags": 1 << 19},
        }
        shard = self._identified.get(id(ws), {}).get("shard")
        if shard:
            ready["shard"] = shard
        await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": next(self._seq), "d": ready}))
        for guild in guilds:
            await ws.send_str(json.dumps(
                {"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": guild}))


@dataclass
class Reply:
    """What the user sees of one interaction's responses (ephemeral or not)."""

    kind: int  # the first response's callback type
    original: str | None = None  # its message (None: a silent update, or still "thinking")
    followups: list[str] = field(default_factory=list)
    edits: int = 0  # PATCH @original calls

    def answer(self, data: dict[str, Any]) -> None:
        if self.kind == 4:
            self.original = str(data.get("content") or "")

    def follow_up(self, body: dict[str, Any]) -> None:
        if self.kind == 5 and self.original is None and not self.followups:
            self.original = str(body.get("content") or "")  # replaces "thinking..."
        else:
            self.followups.append(str(body.get("content") or ""))

    def edit(self, body: dict[str, Any]) -> None:
        self.edits += 1
        if "content" in body:
            self.original = str(body.get("content") or "")

    @property
    def shown(self) -> list[str]:
        """Every message this interaction shows the user, in order."""
        return ([self.original] if self.original is not None else []) + self.followups


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON with the exact content type Discord sends (discord.py compares it verbatim)."""
    return web.Response(body=json.dumps(data).encode(), status=status,
                        headers={**(headers or {}), "Content-Type": "application/json"})

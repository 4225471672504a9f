"""Fake OpenAI (`/v1/chat/completions`) and Anthropic (`/v1/messages`) servers.

Real HTTP on 127.0.0.1 (aiohttp.web), so the official SDKs are exercised end to
end, not patched. Each test scripts the replies: queued texts, status codes,
Retry-After headers, delays, invalid JSON bodies, or a request that never
answers. Every request body is recorded for assertions.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Scripted:
    """One scripted reply."""

    text: str | None = "REVISE 테스트 응답입니다."
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False
    body: str | None = None  # raw body, e.g. invalid JSON


_OPENAI_ERROR_TYPES = {429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeLLMServer:
    """One server answering both APIs from one queue of scripted replies."""

    def __init__(self, default: Scripted | None = None) -> None:
        self.queue: deque[Scripted] = deque()
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.in_flight = 0
        self.max_in_flight = 0  # to check the global concurrency limit

    # -- scripting --------------------------------------------------------------

    def push(self, *items: Scripted) -> FakeLLMServer:
        self.queue.extend(items)
        return self

    def reply(self, *texts: str) -> FakeLLMServer:
        return self.push(*(Scripted(text=t) for t in texts))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def base_url(self, backend: str) -> str:
        return self.openai_base_url if backend == "openai" else self.anthropic_base_url

    # -- lifecycle --------------------------------------------------------------

    async def start(self) -> FakeLLMServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/messages", self._anthropic)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None)
        assert sockets
        self.port = sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeLLMServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- handlers ---------------------------------------------------------------

    async def _next(self, request: web.Request, api: str) -> tuple[Scripted, dict[str, Any]]:
        raw = await request.read()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {"_invalid": raw.decode("utf-8", "replace")}
        self.requests.append(
            {"api": api, "path": request.path, "json": payload, "headers": dict(request.headers)}
        )
        if self.queue:
            script = self.queue.popleft()
        elif self.default is not None:
            script = self.default
        else:
            script = Scripted(text=None, status=500)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if script.hang:
                await self._release.wait()
            elif script.delay:
                await asyncio.sleep(script.delay)
        finally:
            self.in_flight -= 1
        return script, payload

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        script, payload = await self._next(request, "openai")
        if script.body is not None:
            return web.Response(
                text=script.body,
                status=script.status,
                headers=script.headers,
                content_type="application/json",
            )
        if script.status != 200:
            err = {
                "error": {
                    "message": f"scripted error {script.status}",
                    "type": _OPENAI_ERROR_TYPES.get(script.status, "invalid_request_error"),
                    "code": None,
                }
            }
            return web.json_response(err, status=script.status, headers=script.headers)
        body = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": payload.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": script.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return web.json_response(body, headers=script.headers)

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        script, payload = await self._next(request, "anthropic")
        if script.body is not None:
            return web.Response(
                text=script.body,
                status=script.status,
                headers=script.headers,
                content_type="application/json",
            )
        if script.status != 200:
            err = {
                "type": "error",
                "error": {
                    "type": _ANTHROPIC_ERROR_TYPES.get(script.status, "api_error"),
                    "message": f"scripted error {script.status}",
                },
            }
            return web.json_response(err, status=script.status, headers=script.headers)
        body = {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": payload.get("model", "fake"),
            "content": [{"type": "text", "text": script.text or ""}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return web.json_response(body, headers=script.headers)

    # -- assertions helpers -------------------------------------------------------

    def prompt_of(self, i: int = -1) -> str:
        """The user prompt of request `i`, whichever API it used."""
        body = self.requests[i]["json"]
        messages = body.get("messages", [])
        return str(messages[-1]["content"]) if messages else ""

    def system_of(self, i: int = -1) -> str:
        body = self.requests[i]["json"]
        if "system" in body:
            return str(body["system"])
        return str(body["messages"][0]["content"])

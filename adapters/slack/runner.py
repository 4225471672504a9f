"""SlackAdapter: what `tribunal run` starts for Slack (Socket Mode or HTTP mode).

`start()` checks the token with auth.test first (a clear error instead of a
bot that silently hears nothing), learns our own user and bot ids, then either
opens the Socket Mode connection or serves `/slack/events` (events,
interactivity and slash commands) with aiohttp on `settings.http_port`.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from adapters.slack.app import Inbound, build_app
from adapters.slack.translate import Identity
from adapters.slack.transport import SlackTransport, error_code, make_client
from bot.config import Settings
from bot.ports import Core

log = logging.getLogger("tribunal.slack")
EVENTS_PATH = "/slack/events"


class SlackStartError(RuntimeError):
    """The adapter cannot start (credentials missing or refused)."""


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


class SlackAdapter:
    """Owns the Web API client, the bolt app and the connection (socket or HTTP)."""

    def __init__(self, settings: Settings, engine: Core, *, post_interval: float = 1.0,
                 host: str | None = None, port: int | None = None) -> None:
        self.settings = settings
        self.engine = engine
        token = _secret(settings.slack_bot_token)
        if not token:
            raise SlackStartError("SLACK_BOT_TOKEN is not set")
        self.mode = settings.slack_mode
        self.client = make_client(token, settings.slack_api_url)
        self.transport = SlackTransport(self.client, post_interval=post_interval)
        self.host = host or settings.http_host
        self._listen_port = settings.http_port if port is None else port  # 0: any (tests)
        self.port: int | None = None
        self.inbound: Inbound | None = None
        self.app: AsyncApp | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        identity = await self._whoami()
        self.inbound = Inbound(self.engine, self.transport, self.client, identity)
        if self.mode == "socket":
            app_token = _secret(self.settings.slack_app_token)
            if not app_token:
                raise SlackStartError("Socket Mode needs SLACK_APP_TOKEN (xapp-...)")
            self.app = build_app(self.inbound, client=self.client, signing_secret=None,
                                 socket_mode=True)
            self._socket = AsyncSocketModeHandler(self.app, app_token, web_client=self.client)
            await self._socket.connect_async()
            log.info("slack: connected in Socket Mode as %s", identity.user_id)
            return
        secret = _secret(self.settings.slack_signing_secret)
        if not secret:
            raise SlackStartError("HTTP mode needs SLACK_SIGNING_SECRET")
        self.app = build_app(self.inbound, client=self.client, signing_secret=secret,
                             socket_mode=False)
        self._runner = web.AppRunner(self.web_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self._listen_port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self._listen_port
        log.info("slack: serving %s on %s:%s as %s", EVENTS_PATH, self.host, self.port,
                 identity.user_id)

    def web_app(self) -> web.Application:
        """aiohttp app: POST /slack/events (signature checked by bolt), GET /healthz."""
        app = self.app
        assert app is not None

        async def events(request: web.Request) -> web.Response:
            try:
                bolt_request = await to_bolt_request(request)
            except ValueError:  # body bolt cannot parse: refuse it, process nothing
                log.warning("slack: unparsable request body on %s refused", EVENTS_PATH)
                return web.json_response({"ok": False, "error": "bad_request"}, status=400)
            return await to_aiohttp_response(await app.async_dispatch(bolt_request))

        async def health(_: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        web_app = web.Application()
        web_app.router.add_post(EVENTS_PATH, events)
        web_app.router.add_get("/healthz", health)
        return web_app

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.inbound is not None:
            await self.inbound.shutdown()

    async def _whoami(self) -> Identity:
        try:
            response = await self.client.auth_test()
        except SlackApiError as exc:
            code = error_code(exc)
            raise SlackStartError(
                f"Slack refused SLACK_BOT_TOKEN ({code}); check the token and the app's "
                "installation") from exc
        return Identity(user_id=response.get("user_id"), bot_id=response.get("bot_id"),
                        team_id=response.get("team_id"))

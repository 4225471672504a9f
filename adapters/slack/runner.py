"""SlackAdapter: what `tribunal run` starts for Slack (Socket Mode or HTTP mode).

`start()` checks the token with auth.test first (a clear error instead of a
bot that silently hears nothing), learns our own user and bot ids, then either
opens the Socket Mode connection or serves `/slack/events` (events,
interactivity and slash commands) with aiohttp on `settings.http_port`.

A refused token raises `SlackStartError` (the platform stops for good); a
network failure raises anything else, and `tribunal run` tries again later.

Each start (and a Socket Mode link that comes back) catches up in the
background; on a shared database the catch-up is held by a lease
(`bot.catchup_leases`), so of instances starting together one reads Slack's
history, and one that found it held takes it over if its holder dies or
stops before it finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from adapters.slack.app import Inbound, build_app, dispatch_http
from adapters.slack.catchup import LEASE as CATCH_UP_LEASE
from adapters.slack.catchup import SlackCatchUp
from adapters.slack.translate import Identity
from adapters.slack.transport import SlackTransport, error_code, make_client
from bot.catchup_leases import LeasedCatchUp
from bot.config import Settings
from bot.ports import Core, PlatformFatal, SharesLeases, SharesPacing

if TYPE_CHECKING:  # Socket Mode's modules load only when Socket Mode is used
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

log = logging.getLogger("tribunal.slack")
EVENTS_PATH = "/slack/events"

# Errors of auth.test / apps.connections.open that a retry cannot fix.
AUTH_ERRORS = frozenset({
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
    "not_allowed_token_type", "team_access_not_granted", "ekm_access_denied", "no_permission",
})
CONNECT_TIMEOUT = 20.0  # seconds for the Socket Mode link to open before trying anew
RECONNECT_GRACE = 60.0  # seconds slack_sdk may spend reconnecting on its own


class SlackStartError(PlatformFatal):
    """The adapter cannot start (credentials missing or refused)."""


class _NoTracebacks(logging.Filter):
    """slack_sdk logs every failed Socket Mode attempt with a traceback; the
    message already says what failed, so keep the traceback for DEBUG only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not log.isEnabledFor(logging.DEBUG):
            record.exc_info = None
            record.exc_text = None
        return True


_socket_log = logging.getLogger("tribunal.slack.socket")
_socket_log.addFilter(_NoTracebacks())


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


class SlackAdapter:
    """Owns the Web API client, the bolt app and the connection (socket or HTTP)."""

    def __init__(self, settings: Settings, engine: Core, *, post_interval: float = 1.0,
                 host: str | None = None, port: int | None = None,
                 stop_grace: float = 5.0) -> None:
        self.settings = settings
        self.engine = engine
        token = _secret(settings.slack_bot_token)
        if not token:
            raise SlackStartError("SLACK_BOT_TOKEN is not set")
        self.mode = settings.slack_mode
        self.client = make_client(token, settings.slack_api_url)
        self.transport = SlackTransport(self.client, post_interval=post_interval)
        if isinstance(engine, SharesPacing):
            # Slack's limits count the calls of every instance of the app.
            self.transport.pacer.share(engine.pacing)
        self.host = host or settings.http_host
        self._listen_port = settings.http_port if port is None else port  # 0: any (tests)
        self.port: int | None = None
        self.stop_grace = stop_grace
        self.connect_timeout = CONNECT_TIMEOUT
        self.reconnect_grace = RECONNECT_GRACE
        self.inbound: Inbound | None = None
        self.app: AsyncApp | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None
        self._catch_up: asyncio.Task[None] | None = None
        self._catch_up_again = False
        # Several instances on a shared database: one of them catches up.
        self.catch_ups = LeasedCatchUp(engine.leases if isinstance(engine, SharesLeases)
                                       else None)

    async def start(self) -> None:
        identity = await self._whoami()
        self.transport.workspace_url = identity.url
        self.inbound = Inbound(self.engine, self.transport, self.client, identity)
        if self.mode == "socket":
            app_token = _secret(self.settings.slack_app_token)
            if not app_token:
                raise SlackStartError("Socket Mode needs SLACK_APP_TOKEN (xapp-...)")
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            url = await self._socket_url(app_token)
            self.app = build_app(self.inbound, client=self.client, signing_secret=None,
                                 socket_mode=True)
            self._socket = AsyncSocketModeHandler(self.app, app_token, web_client=self.client,
                                                  logger=_socket_log)
            self._socket.client.wss_uri = url  # checked above; slack_sdk asks anew later
            try:
                # slack_sdk retries a failing link forever inside connect(); bound
                # it so a shutdown or the next attempt is never stuck behind it.
                await asyncio.wait_for(self._socket.connect_async(), self.connect_timeout)
            except TimeoutError:
                raise ConnectionError(
                    f"Socket Mode link did not open within {self.connect_timeout:g} s") from None
            log.info("slack: connected in Socket Mode as %s", identity.user_id)
            self.start_catch_up()
            return
        secret = _secret(self.settings.slack_signing_secret)
        if not secret:
            raise SlackStartError("HTTP mode needs SLACK_SIGNING_SECRET")
        self.app = build_app(self.inbound, client=self.client, signing_secret=secret,
                             socket_mode=False)
        # Requests in flight get a short grace at shutdown: the whole stop must
        # fit in a few seconds (Slack retries an event that was not acked).
        self._runner = web.AppRunner(self.web_app(), access_log=None,
                                     shutdown_timeout=min(self.stop_grace, 2.0))
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self._listen_port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self._listen_port
        log.info("slack: serving %s on %s:%s as %s", EVENTS_PATH, self.host, self.port,
                 identity.user_id)
        self.start_catch_up()

    def start_catch_up(self) -> None:
        """Read what was missed, in the background: live events are served
        meanwhile (the core holds a room being caught up, not the others).
        One at a time; a trigger while this instance waits for another's
        catch-up (it holds the lease) asks for one of its own after."""
        if self.inbound is None:
            return
        if self._catch_up is not None and not self._catch_up.done():
            if self.catch_ups.owed:
                self._catch_up_again = True
            return
        self._catch_up = asyncio.create_task(self._run_catch_up(),
                                             name="tribunal-slack-catch-up")

    async def _run_catch_up(self) -> None:
        while self.inbound is not None:
            self._catch_up_again = False
            try:
                await self._catch_up_once([CATCH_UP_LEASE])
                # Held by another instance: done by it, or taken over here if it
                # stops unfinished (looked at every beat).
                await self.catch_ups.wait_owed(self._catch_up_once,
                                               lambda: self._catch_up_again)
            except Exception:  # never takes the adapter down; the next start tries again
                log.exception("slack: catch-up failed")
                return
            if not self._catch_up_again:
                return

    async def _catch_up_once(self, names: list[str]) -> None:
        assert self.inbound is not None
        catch_up = SlackCatchUp(self.engine, self.transport, self.inbound.identity)
        await self.catch_ups.run(names, catch_up.run)

    def web_app(self) -> web.Application:
        """aiohttp app: POST /slack/events (signature checked by bolt), GET /healthz."""
        app = self.app
        assert app is not None

        async def events(request: web.Request) -> web.Response:
            return await dispatch_http(app, request)  # never a 500, whatever the body

        async def health(_: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        web_app = web.Application()
        web_app.router.add_post(EVENTS_PATH, events)
        web_app.router.add_get("/healthz", health)
        return web_app

    async def wait_closed(self) -> None:
        """Return when the connection is lost for good (HTTP mode: never).

        slack_sdk reconnects a dropped Socket Mode link on its own; when it has
        not managed for `reconnect_grace` seconds (the app token was revoked,
        the network is gone), this gives up so the caller starts over and
        reports why.
        """
        down_since: float | None = None
        check_every = min(5.0, self.reconnect_grace / 4)
        while True:
            await asyncio.sleep(check_every)
            socket = self._socket
            if socket is None:
                continue  # HTTP mode: the listener does not drop
            if await socket.client.is_connected():
                if down_since is not None:
                    self.start_catch_up()  # slack_sdk reconnected: events were missed
                down_since = None
                continue
            now = time.monotonic()
            down_since = now if down_since is None else down_since
            if now - down_since >= self.reconnect_grace:
                raise ConnectionError(
                    f"Socket Mode link down for {self.reconnect_grace:g} s")

    async def stop(self) -> None:
        if self._catch_up is not None:
            self._catch_up.cancel()  # what it had not stored, the next start reads again
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._catch_up
            self._catch_up = None
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.inbound is not None:
            await self.inbound.shutdown(grace=self.stop_grace)
            self.inbound = None

    async def _whoami(self) -> Identity:
        try:
            response = await self.client.auth_test()
        except SlackApiError as exc:
            code = error_code(exc)
            if code in AUTH_ERRORS:
                raise SlackStartError(
                    f"Slack refused SLACK_BOT_TOKEN ({code}); check the token and the app's "
                    "installation") from exc
            raise ConnectionError(f"Slack auth.test failed ({code})") from exc
        url = response.get("url")
        return Identity(user_id=response.get("user_id"), bot_id=response.get("bot_id"),
                        team_id=response.get("team_id"),
                        url=url if isinstance(url, str) and url else None)

    async def _socket_url(self, app_token: str) -> str:
        """Open a Socket Mode URL ourselves: a refused app token is then a clear
        error, where slack_sdk would log it and retry for ever."""
        try:
            response = await self.client.apps_connections_open(app_token=app_token)
        except SlackApiError as exc:
            code = error_code(exc)
            if code in AUTH_ERRORS:
                raise SlackStartError(
                    f"Slack refused SLACK_APP_TOKEN ({code}); it must be an app-level token "
                    "(xapp-...) with connections:write") from exc
            raise ConnectionError(f"Slack apps.connections.open failed ({code})") from exc
        return str(response["url"])

"""DiscordAdapter: what `tribunal run` starts when DISCORD_BOT_TOKEN is set.

`start()` logs in, connects in a background task, waits for READY and syncs
`/arbiter` (to TRIBUNAL_DISCORD_GUILD_IDS, instant, or globally); `stop()`
closes the connection. With TRIBUNAL_DISCORD_SHARD_COUNT the client is
discord.py's AutoShardedClient on TRIBUNAL_DISCORD_SHARD_IDS (or every shard).

Several instances on a shared database (PostgreSQL: the core offers
`bot.ports.SharesLeases`) connect only while they hold the gateway's lease,
or shards' leases (`gateway.py`), renewed by a heartbeat here; an instance
that holds none stays logged in over REST, which discord.py serves without a
gateway connection, so the outbox posts through any instance. When the leases
change (taken over, lost, rebalanced) the client is closed and a new one logs
in and connects what is held now; its READY starts a catch-up of the rooms of
its guilds (`catchup.py`), held by the catch-up leases of what it connects
(`catchup:discord`, or `catchup:discord:<k>` per shard). `.transport` exists
before `start()` so the engine can register it first. A refused token or
intent raises `PlatformFatal` (the platform stops for good); anything else may
be retried: `start()` may be called again after `stop()`, with a new client
(read `.transport` at each use).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Any

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.client import TribunalClient, TribunalShardedClient
from adapters.discord.gateway import GatewayLeases, Plan
from adapters.discord.transport import DiscordTransport
from bot.catchup_leases import LeasedCatchUp
from bot.config import Settings
from bot.ports import Core, PlatformFatal, SharesLeases

log = logging.getLogger(__name__)

API_VERSION = 10
DEFAULT_API_BASE = f"https://discord.com/api/v{API_VERSION}"
DEFAULT_GATEWAY = yarl.URL("wss://gateway.discord.gg/")

# Gateway close codes after which reconnecting cannot help (Discord's docs).
BAD_TOKEN_CLOSE = 4004
FATAL_CLOSE = {
    4010: "invalid shard", 4011: "sharding required", 4012: "invalid API version",
    4013: "invalid intents", 4014: "disallowed intents",
}
INTENT_HELP = (
    "Discord refused the message_content intent: enable it in the developer "
    "portal (Bot -> Privileged Gateway Intents)"
)


def api_base(url: str | None) -> str:
    """`http://host:port` or `.../api/v10` -> the REST base discord.py prefixes to routes."""
    if not url:
        return DEFAULT_API_BASE
    url = url.rstrip("/")
    return url if re.search(r"/api/v\d+$", url) else f"{url}/api/v{API_VERSION}"


def configure_endpoints(api_url: str | None, gateway_url: str | None) -> None:
    """Point discord.py at a proxy or test server.

    discord.py reads the REST base from the class attribute `Route.BASE` when a
    route is built (every REST call, interaction callbacks and webhooks alike),
    and the first gateway URL from `DiscordWebSocket.DEFAULT_GATEWAY`; both are
    process-wide, which matches one Discord bot per process.
    """
    Route.BASE = api_base(api_url)
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url) if gateway_url else DEFAULT_GATEWAY


class DiscordAdapter:
    def __init__(self, settings: Settings, engine: Core, **client_options: Any) -> None:
        self.settings = settings
        self.engine = engine
        self._client_options = client_options
        leases = engine.leases if isinstance(engine, SharesLeases) else None
        # Several instances on a shared database hold the gateway by lease;
        # fixed shard ids, or a database of one process, connect at once.
        self.gateway: GatewayLeases | None = (
            GatewayLeases(leases, settings.discord_shard_count)
            if leases is not None and not settings.discord_shard_ids else None
        )
        self._plan: Plan | None = None if self.gateway is not None else fixed_plan(settings)
        self.client = self._new_client(self._plan)
        self._task: asyncio.Task[None] | None = None  # the gateway connection
        self._keeper: asyncio.Task[None] | None = None  # the leases' heartbeat

    @property
    def transport(self) -> DiscordTransport:
        return self.client.transport

    def _new_client(self, plan: Plan | None) -> TribunalClient:
        """A client for the plan: sharded when it names shards, else plain (a
        client that never connects, for REST only, is plain too)."""
        language = self.settings.language
        client: TribunalClient
        if plan is None or plan.shard_count is None:
            client = TribunalClient(self.engine, language=language, **self._client_options)
        else:
            shard_ids = None if plan.shard_ids is None else list(plan.shard_ids)
            client = TribunalShardedClient(self.engine, language=language,
                                           shard_count=plan.shard_count, shard_ids=shard_ids,
                                           **self._client_options)
        if self.gateway is not None:
            # What the gateway's leases connect is caught up under leases too.
            client.catch_ups = LeasedCatchUp(self.gateway.leases)
        return client

    async def start(self, *, ready_within: float = 60.0) -> None:
        """Log in, connect in the background, return once READY (or raise why not).

        Holding the gateway by lease (`self.gateway`): log in, connect (and
        wait for READY) only if this instance holds the gateway or some of its
        shards now, and keep claiming and renewing in the background; an
        instance that holds nothing posts over REST meanwhile.
        """
        token = self.settings.discord_bot_token
        if token is None or not token.get_secret_value().strip():
            raise PlatformFatal("DISCORD_BOT_TOKEN is not set")
        configure_endpoints(self.settings.discord_api_url, self.settings.discord_gateway_url)
        plan = self._plan
        if self.gateway is not None:
            plan = await self.gateway.beat()
        await self._login(plan)
        if plan is not None:
            await self._connect_and_wait(ready_within)
        await self.sync_commands()
        user = self.client.user
        if plan is not None:
            log.info("discord connected as %s (%s) on %s, %d guild(s)", user,
                     user.id if user else "?", plan.describe(), len(self.client.guilds))
        else:
            log.info("discord logged in as %s (%s) over REST; another instance holds the "
                     "gateway, this one takes over if it goes", user, user.id if user else "?")
        if self.gateway is not None:
            self._keeper = asyncio.create_task(self._keep(self.gateway),
                                               name="tribunal-discord-leases")

    async def _login(self, plan: Plan | None) -> None:
        """A logged-in client for the plan (REST works from here on)."""
        token = self.settings.discord_bot_token
        assert token is not None
        if self.client.is_closed() or plan != self._plan:
            # An earlier attempt closed it; a closed client keeps its closed HTTP
            # connector, so a new attempt gets a new client (and transport).
            self.client = self._new_client(plan)
        self._plan = plan
        try:
            await self.client.login(token.get_secret_value())
        except discord.LoginFailure:
            await self.client.close()
            raise PlatformFatal("Discord rejected DISCORD_BOT_TOKEN (401)") from None
        except BaseException:
            await self.client.close()
            raise

    async def _connect_and_wait(self, ready_within: float) -> None:
        self._task = asyncio.create_task(self._connect(), name="tribunal-discord-gateway")
        ready = asyncio.create_task(self.client.wait_until_ready())
        try:
            done, _ = await asyncio.wait({self._task, ready}, timeout=ready_within,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if ready not in done:
            error = self._task.exception() if self._task in done else None
            await self.stop()
            fatal = fatal_reason(error)
            if fatal is not None:
                raise PlatformFatal(fatal) from None
            raise RuntimeError(f"Discord gateway did not become ready: {error!r}") from error

    async def _connect(self) -> None:
        await self.client.connect(reconnect=True)

    async def _keep(self, gateway: GatewayLeases) -> None:
        """The leases' heartbeat: renew and claim, and follow what they say to
        connect. Returns (or raises why) when the gateway connection ends by
        itself, as `wait_closed` reports."""
        beat = gateway.leases.beat_seconds
        while True:
            task = self._task
            if task is None:
                await asyncio.sleep(beat)
            else:
                await asyncio.wait({task}, timeout=beat)
                if task.done():
                    task.result()  # raises why it ended
                    return
            try:
                plan = await gateway.beat()
            except Exception as exc:
                log.warning("discord: gateway leases not checked (%s); trying again", exc)
                plan = gateway.plan()
            if plan != self._plan:
                await self._switch(plan)
            await gateway.let_go()

    async def _switch(self, plan: Plan | None) -> None:
        """Disconnect, and connect what `plan` says (READY then starts a catch-up
        of what its guilds' rooms said meanwhile)."""
        before = "nothing" if self._plan is None else self._plan.describe()
        after = "nothing (REST only)" if plan is None else plan.describe()
        log.info("discord: gateway leases changed: from %s to %s", before, after)
        await self._close_client()
        await self._login(plan)
        if plan is not None:
            self._task = asyncio.create_task(self._connect(), name="tribunal-discord-gateway")

    async def wait_closed(self) -> None:
        """Return (or raise why) when the gateway connection has ended.

        discord.py reconnects on its own with backoff; its connection task
        ends only for what it cannot fix (a bad token, a refused intent) or
        when it was closed. Held by lease, the leases' heartbeat reports it.
        """
        task = self._keeper or self._task
        if task is None:
            return
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # we were cancelled, not the gateway task
        except Exception as exc:
            fatal = fatal_reason(exc)
            if fatal is not None:
                raise PlatformFatal(fatal) from None
            raise

    async def sync_commands(self) -> None:
        """Guild sync is instant; global sync can take up to an hour to show up."""
        tree = self.client.tree
        guild_ids = self.settings.discord_guild_ids
        if not guild_ids:
            try:
                await tree.sync()
                log.info("synced /arbiter globally")
            except discord.HTTPException as exc:
                log.error("global command sync failed: HTTP %s code %s", exc.status, exc.code)
            return
        for raw in guild_ids:
            if not raw.isdigit():
                log.error("TRIBUNAL_DISCORD_GUILD_IDS: %r is not a guild id; skipped", raw)
                continue
            guild = discord.Object(id=int(raw))
            tree.copy_global_to(guild=guild)
            try:
                await tree.sync(guild=guild)
                log.info("synced /arbiter to guild %s", raw)
            except discord.HTTPException as exc:
                # 403/50001: the bot was invited without the applications.commands scope.
                log.error("command sync to guild %s failed: HTTP %s code %s", raw, exc.status,
                          exc.code)

    async def stop(self) -> None:
        """Disconnect, then give the gateway's leases back for another instance."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None and keeper is not asyncio.current_task():
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await keeper
        await self._close_client()
        if self.gateway is not None:
            await self.gateway.release_all()

    async def _close_client(self) -> None:
        if not self.client.is_closed():
            await self.client.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None


def fixed_plan(settings: Settings) -> Plan:
    """What to connect without leases: the whole gateway, or with
    TRIBUNAL_DISCORD_SHARD_COUNT its shards (TRIBUNAL_DISCORD_SHARD_IDS, or all)."""
    count = settings.discord_shard_count
    if count is None:
        return Plan()
    return Plan(count, tuple(settings.discord_shard_ids) or None)


def fatal_reason(error: BaseException | None) -> str | None:
    """Why retrying cannot help, or None when it may."""
    if isinstance(error, discord.PrivilegedIntentsRequired):
        return INTENT_HELP
    if isinstance(error, discord.LoginFailure):
        return "Discord rejected DISCORD_BOT_TOKEN (401)"
    if isinstance(error, discord.ConnectionClosed):
        if error.code == BAD_TOKEN_CLOSE:
            return f"Discord rejected DISCORD_BOT_TOKEN (gateway close {error.code})"
        if error.code in FATAL_CLOSE:
            return f"Discord closed the gateway: {FATAL_CLOSE[error.code]} ({error.code})"
    return None

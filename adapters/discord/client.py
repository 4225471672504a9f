"""The discord.Client subclass: gateway events in, core calls out.

A plain Client with an `on_message` listener, not `commands.Bot`: the agents
are bots, and the command framework ignores bot authors. Slash commands are an
app-command group; escalation buttons are a DynamicItem registered at set-up,
so clicks on messages posted before a restart still resolve.

A slash command or a button click is stored by the core before the
interaction is answered or deferred (Discord's 3 seconds): an acknowledged
settings change, summon or answer survives a crash. The core applies it from
storage and its private reply comes back through the transport
(`DiscordTransport.post_reply`): the interaction's first response when it is
ready within `ack_deadline`, else the interaction is deferred and the reply
follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import discord
from discord import app_commands

from adapters.discord import translate
from adapters.discord.catchup import DiscordCatchUp, lease_names
from adapters.discord.commands import build_group
from adapters.discord.components import EscalationButton
from adapters.discord.transport import DiscordTransport
from bot.catchup_leases import LeasedCatchUp
from bot.lru import LRU
from bot.models import IncomingMessage
from bot.ports import Applying, Core
from prompts.strings import DEFAULT_LANGUAGE, supported, t

log = logging.getLogger(__name__)

# Discord drops an interaction not answered within 3 s; past this we defer first.
ACK_DEADLINE = 1.5


_CHANNEL_CLASSES = (
    discord.TextChannel,
    discord.VoiceChannel,
    discord.StageChannel,
    discord.ForumChannel,
)


def intents() -> discord.Intents:
    """guilds + guild_messages + message_content (privileged: enable it in the portal)."""
    value = discord.Intents.none()
    value.guilds = True
    value.guild_messages = True
    value.message_content = True
    return value


class TribunalClient(discord.Client):
    def __init__(self, core: Core, *, language: str = DEFAULT_LANGUAGE, **options: Any) -> None:
        options.setdefault("max_messages", None)  # the core stores what it needs
        super().__init__(
            intents=intents(), allowed_mentions=discord.AllowedMentions.none(), **options
        )
        self.core = core
        self._default_language = language  # TRIBUNAL_LANGUAGE
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(build_group())
        self.tree.on_error = self._on_tree_error  # type: ignore[method-assign]
        self.transport = DiscordTransport(self)
        self.ack_deadline = ACK_DEADLINE
        # channel id -> thread parent id (0: not a thread), learnt over REST
        self._parents: LRU[int, int] = LRU(10_000)
        self._channel_locks: dict[int, list[Any]] = {}  # channel id -> [lock, users]
        self._catch_up: asyncio.Task[None] | None = None
        self._catch_up_again = False
        # Catch-up leases (several instances: the adapter sets them when it
        # holds the gateway by lease); without them, every catch-up runs.
        self.catch_ups = LeasedCatchUp(None)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(EscalationButton)

    # -- catch-up --------------------------------------------------------------

    async def on_ready(self) -> None:
        self.start_catch_up()  # a start or a new session: events were missed

    async def on_resumed(self) -> None:
        self.start_catch_up()  # Discord replays a resumed session; the core drops repeats

    def start_catch_up(self) -> None:
        """Read what was missed, in the background (the bot is ready meanwhile).
        One run at a time; a trigger during a run asks for one more after it,
        since the run may have read a channel before the gap."""
        if self._catch_up is not None and not self._catch_up.done():
            self._catch_up_again = True
            return
        self._catch_up = asyncio.create_task(self._run_catch_up(),
                                             name="tribunal-discord-catch-up")

    async def _run_catch_up(self) -> None:
        while True:
            self._catch_up_again = False
            try:
                await self._catch_up_once(list(lease_names(self)))
                # Shards whose catch-up another instance holds: done by it, or
                # taken over here if it stops unfinished (looked at every beat).
                await self.catch_ups.wait_owed(
                    self._catch_up_once, lambda: self._catch_up_again or self.is_closed())
            except Exception:  # never takes the adapter down; the next READY tries again
                log.exception("discord: catch-up failed")
            if not self._catch_up_again or self.is_closed():
                return

    async def _catch_up_once(self, names: list[str]) -> None:
        await self.catch_ups.run(names, DiscordCatchUp(self.core, self).run)

    async def close(self) -> None:
        if self._catch_up is not None:
            # What it had not stored yet, the next start reads again.
            self._catch_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._catch_up
            self._catch_up = None
        await super().close()

    # -- rooms -----------------------------------------------------------------

    async def resolve_room(self, channel: Any) -> tuple[str, str | None] | None:
        """The room of a channel object, asking REST once if the cache does not know it."""
        if isinstance(channel, discord.Thread) and channel.parent_id:
            return str(channel.parent_id), str(channel.id)
        if isinstance(channel, _CHANNEL_CLASSES):
            return str(channel.id), None
        channel_id = getattr(channel, "id", None)
        if channel_id is None:
            return None
        parent = self._parents.get(channel_id)
        if parent is None:
            room = translate.room_of(channel)
            if room is not None and getattr(channel, "type", None) is not None:
                return room
            try:
                fetched = await self.fetch_channel(channel_id)
            except discord.HTTPException as exc:
                log.warning("cannot resolve channel %s: HTTP %s code %s", channel_id,
                            exc.status, exc.code)
                return None
            except (KeyError, ValueError, TypeError):
                log.warning("cannot resolve channel %s: malformed payload", channel_id)
                return None
            is_thread = translate.is_thread(fetched)
            parent = (getattr(fetched, "parent_id", None) or 0) if is_thread else 0
            self._parents.put(channel_id, parent)
        return (str(parent), str(channel_id)) if parent else (str(channel_id), None)

    # -- messages --------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        if self.user is not None and message.author.id == self.user.id:
            return
        if message.guild is None:
            return
        # discord.py runs each event in its own task and translating may await
        # (a thread's parent over REST): translate a channel's messages one at a
        # time and hand them to the core in that order. The core keeps each
        # room's order from there, and stores a message at once when its room
        # is busy, so nothing waits here behind a slow arbitration.
        key = message.channel.id
        entry = self._channel_locks.setdefault(key, [asyncio.Lock(), 0])
        entry[1] += 1
        try:
            async with entry[0]:
                incoming = await self._translate(message)
                if incoming is None:
                    return
                work = asyncio.ensure_future(self._deliver(incoming))
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del self._channel_locks[key]
        await work

    async def _translate(self, message: discord.Message) -> IncomingMessage | None:
        try:
            room = await self.resolve_room(message.channel)
            if room is None:
                return None
            return translate.to_incoming(
                message, self_id=self.user.id if self.user else None, room=room
            )
        except Exception:
            log.exception("failed to read discord message %s", message.id)
            return None

    async def _deliver(self, incoming: IncomingMessage) -> None:
        try:
            await self.core.on_message(incoming)
        except Exception:
            log.exception("failed to handle discord message %s", incoming.message_id)

    # -- interactions ----------------------------------------------------------

    async def _acknowledge(self, interaction: discord.Interaction, applying: Applying, *,
                           ephemeral: bool) -> None:
        """Once stored: wait up to `ack_deadline` for the core (its reply may be the
        interaction's first response), then defer if nothing answered it yet
        (silently for a click, "thinking" and private for a command)."""
        if applying is not None:
            await asyncio.wait({applying}, timeout=self.ack_deadline)  # never cancels it
        async with self.transport.answering(interaction):
            if interaction.response.is_done():
                return
            try:
                await interaction.response.defer(ephemeral=ephemeral, thinking=ephemeral)
            except discord.HTTPException as exc:
                log.warning("could not defer interaction: HTTP %s code %s", exc.status, exc.code)

    async def handle_click(
        self, interaction: discord.Interaction, escalation_id: int, option: int
    ) -> None:
        """A button of an escalation: stored, then acknowledged; the core decides and
        tells a refused clicker (ephemeral) along the stored route."""
        try:
            # The escalation id alone finds the room in the core; the channel is a courtesy.
            room = await self.resolve_room(interaction.channel) or (
                str(interaction.channel_id or ""), None)
            click = translate.to_click(
                interaction, escalation_id=escalation_id, option=option, room=room
            )
            route = self.transport.remember(interaction, "click")
            applying = await self.core.receive_click(
                click, translate.interaction_delivery_key(interaction), route=route)
        except Exception:
            log.exception("failed to store a click on escalation %s", escalation_id)
            await self._fail_safe(interaction)
            return
        await self._acknowledge(interaction, applying, ephemeral=False)

    async def handle_command(self, interaction: discord.Interaction, text: str) -> None:
        """`/arbiter ...`: stored, then answered or deferred; the reply is ephemeral;
        admin rights come from the member's permissions."""
        try:
            room = await self.resolve_room(interaction.channel)
            if room is None:
                # Nothing to store: no room, no change; the refusal is all there is.
                await self.transport.reply_ephemeral(
                    interaction, t("not_here", self._language(interaction))
                )
                return
            request = translate.to_command(interaction, text=text, room=room)
            route = self.transport.remember(interaction, "command")
            applying = await self.core.receive_command(
                request, translate.interaction_delivery_key(interaction), route=route)
        except Exception:
            log.exception("failed to store /arbiter %s", text.split(" ", 1)[0])
            await self._fail_safe(interaction)
            return
        await self._acknowledge(interaction, applying, ephemeral=True)

    def _language(self, interaction: discord.Interaction) -> str:
        """For replies the core never saw (no room, or the core failed): the
        clicker's own Discord language when a catalog ships it, else the default."""
        locale = getattr(interaction, "locale", None)
        return supported(str(getattr(locale, "value", locale) or "")) or self._default_language

    async def _fail_safe(self, interaction: discord.Interaction) -> None:
        try:
            await self.transport.reply_ephemeral(
                interaction, t("internal_error", self._language(interaction))
            )
        except Exception:
            log.warning("could not report an error to the user", exc_info=True)

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        log.error("app command error: %s", error)
        await self._fail_safe(interaction)


class TribunalShardedClient(TribunalClient, discord.AutoShardedClient):
    """The same client on some or all of the bot's gateway shards
    (TRIBUNAL_DISCORD_SHARD_COUNT, and TRIBUNAL_DISCORD_SHARD_IDS or the shards
    this instance holds by lease): discord.py's AutoShardedClient runs one
    connection per shard id in one client, and READY comes once all are in."""

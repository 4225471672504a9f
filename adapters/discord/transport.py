"""bot.ports.Transport for Discord: post, edit, private replies over REST.

A logical message may span several Discord messages (2000-character limit);
the engine only knows the first id, so the ids of the other chunks are kept
here (and rediscovered from channel history after a restart, when the buttons
of an old escalation must be disabled). Errors become TransportError:
permanent for 403/404/400 (retrying cannot help), transient otherwise.
429s are paced and retried by discord.py itself (it logs each one).

Exactly once across a crash: each chunk is sent with a `nonce` made from the
outbox's idempotency key and `enforce_nonce`, so Discord itself returns the
earlier message for a repeat within its few minutes. Past that window (a
longer outage), `find_post` looks for the post in the room's history. It
matches by content, not by a key written into the message: Discord keeps no
hidden metadata on a message (the nonce is not returned when history is
read), and a visible key would sit in every post the humans read. The
content is the rendered text, compared among our own messages created from
shortly before the outbox row was queued; the one ambiguity, the same text
posted by us in that window, is what a repeat of the same post would show.

Replies to interactions (`post_reply`): a command or click is stored before
it is answered, and its reply comes later from the outbox, with a `route`
naming the interaction (id, application id, token). While the interaction
object is at hand (`remember`, this process) the reply is its first response
or a follow-up; after a restart the token (valid 15 minutes) is used over
REST: a command's reply replaces the interaction's original response (the
deferred "thinking" message, or the reply itself when it was already given:
the same text again, never a second message); a click's refusal is a
follow-up, which Discord cannot look up, so a crash right after sending it
shows it twice. Without a usable token the user gets a DM.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any

import aiohttp
import discord
from discord.http import Route

from adapters.discord.render import MESSAGE_LIMIT, core_text, no_mentions, render
from bot import buttons
from bot.chunking import split_text
from bot.models import OutgoingMessage, RoomKey
from bot.ports import TransportError

log = logging.getLogger(__name__)

_KEEP_PARTS = 5000  # chunk maps remembered (LRU); older ones are rediscovered on demand
_PERMANENT_CODES = {
    50001: "missing access",
    50013: "missing permissions",
    10003: "unknown channel",
    10008: "unknown message",
    50035: "invalid form body (oversize?)",
    50007: "cannot message this user",
}


_KEEP_INTERACTIONS = 1000  # live interactions remembered for their replies (LRU)
EPHEMERAL = 64  # message flag: only the user sees it
NONCE_LIMIT = 25  # characters Discord accepts in a nonce
LOOKUP_LIMIT = 500  # of the room's messages since the row was queued, read for a lookup


def _target(room: RoomKey) -> int:
    return int(room.thread or room.channel)


def nonce(key: str | None, part: int) -> str | None:
    """The nonce of one chunk of a post (each chunk its own: Discord would
    return the first chunk for the second), or None when there is no key."""
    if not key:
        return None
    value = f"{key}:{part}"
    return value if len(value) <= NONCE_LIMIT else None


@contextmanager
def _errors(action: str, room: RoomKey) -> Iterator[None]:
    """Translate discord.py/aiohttp failures into TransportError, with a clear log line."""
    try:
        yield
    except discord.HTTPException as exc:
        reason = _PERMANENT_CODES.get(exc.code, exc.text or "")
        # 401 is not permanent: a bad token is fixed by an operator, and the
        # outbox keeps the post (with backoff) until then.
        permanent = exc.status in (400, 403, 404) or exc.code in _PERMANENT_CODES
        log.error(
            "discord %s failed in %s: HTTP %s code %s (%s)%s",
            action, room.id, exc.status, exc.code, reason,
            " - giving up" if permanent else " - will retry later",
        )
        raise TransportError(
            f"discord {action}: HTTP {exc.status} code {exc.code} {reason}", permanent=permanent
        ) from exc
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        log.warning("discord %s failed in %s: %s - will retry later", action, room.id,
                    type(exc).__name__)
        raise TransportError(f"discord {action}: {type(exc).__name__}") from exc


class DiscordTransport:
    """Implements bot.ports.Transport on top of a discord.Client's HTTP session."""

    platform = "discord"

    def __init__(self, client: discord.Client, *, limit: int = MESSAGE_LIMIT) -> None:
        self._client = client
        self._limit = limit
        self._parts: OrderedDict[str, list[int]] = OrderedDict()
        # interaction id -> (the interaction, a lock around its first response)
        self._live: OrderedDict[str, tuple[discord.Interaction, asyncio.Lock]] = OrderedDict()

    def _check_connected(self) -> None:
        """Before login (the engine may flush its outbox first) posts wait for a retry."""
        if self._client.user is None or self._client.is_closed():
            raise TransportError("discord client not logged in yet")

    # -- Transport -------------------------------------------------------------

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        self._check_connected()
        rendered = render(message, self._limit)
        channel = self._client.get_partial_messageable(_target(room))
        ids: list[int] = []
        try:
            with _errors("post", room):
                for i, chunk in enumerate(rendered.chunks):
                    last = i == len(rendered.chunks) - 1
                    kwargs: dict[str, Any] = {"allowed_mentions": rendered.allowed_mentions}
                    if last and rendered.view is not None:
                        kwargs["view"] = rendered.view
                    if (value := nonce(message.idempotency_key, i)) is not None:
                        kwargs["nonce"] = value  # discord.py adds enforce_nonce
                    sent = await channel.send(chunk, **kwargs)
                    ids.append(sent.id)
        except TransportError:
            # The outbox will post the whole message again: take back the part
            # that made it, so the room does not see it twice.
            for partial in ids:
                try:
                    await channel.get_partial_message(partial).delete()
                except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                    # The post is still retried as a whole; this part may show twice.
                    log.warning("could not take back a partial post in %s: %r", room.id, exc)
            raise
        self._remember(str(ids[0]), ids)
        return str(ids[0])

    async def find_post(self, room: RoomKey, message: OutgoingMessage,
                        since: datetime) -> str | None:
        """The id of our post of `message` in the room, created after `since`.

        All its chunks must be there, in order; a post cut short by a crash
        is taken back (like a post that failed midway) and None returned, so
        the outbox posts it whole.
        """
        self._check_connected()
        me = self._client.user.id if self._client.user else None
        wanted = [chunk.strip() for chunk in render(message, self._limit).chunks]
        channel = self._client.get_partial_messageable(_target(room))
        ours: list[tuple[int, str]] = []
        try:
            with _errors("lookup", room):
                async for earlier in channel.history(
                        after=since, limit=LOOKUP_LIMIT, oldest_first=True):
                    if earlier.author.id == me:
                        ours.append((earlier.id, earlier.content.strip()))
        except TransportError as exc:
            if exc.permanent:
                return None  # nothing to find there; the post itself will say why
            raise
        starts = [i for i, (_, content) in enumerate(ours) if content == wanted[0]]
        if not starts:
            return None
        start = starts[-1]  # the latest: an earlier same text is an earlier post
        found = ours[start:start + len(wanted)]
        if [content for _, content in found] == wanted:
            ids = [message_id for message_id, _ in found]
            self._remember(str(ids[0]), ids)
            return str(ids[0])
        # Cut short: only a prefix can be ours, and it would show twice.
        for (message_id, content), chunk in zip(found, wanted, strict=False):
            if content != chunk:
                break
            try:
                await channel.get_partial_message(message_id).delete()
            except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                log.warning("could not take back a partial post in %s: %r", room.id, exc)
        return None

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        self._check_connected()
        rendered = render(message, self._limit)
        channel = self._client.get_partial_messageable(_target(room))
        with _errors("edit", room):
            ids = self._parts.get(message_id) or await self._discover(channel, message_id, message)
            new_ids: list[int] = []
            for i, chunk in enumerate(rendered.chunks):
                last = i == len(rendered.chunks) - 1
                view = rendered.view if last else None
                if i < len(ids):
                    await channel.get_partial_message(ids[i]).edit(
                        content=chunk, view=view, allowed_mentions=rendered.allowed_mentions
                    )
                    new_ids.append(ids[i])
                else:
                    kwargs: dict[str, Any] = {"allowed_mentions": rendered.allowed_mentions}
                    if view is not None:
                        kwargs["view"] = view
                    new_ids.append((await channel.send(chunk, **kwargs)).id)
            for stale in ids[len(rendered.chunks):]:
                try:  # a leftover chunk that will not go away must not re-post the message
                    await channel.get_partial_message(stale).delete()
                except discord.HTTPException as exc:
                    log.warning("could not delete a stale chunk in %s: HTTP %s code %s",
                                room.id, exc.status, exc.code)
        self._remember(message_id, new_ids)

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        """A DM, else a reply in the room (an interaction's reply: `post_reply`)."""
        self._check_connected()
        text = core_text(text)[: self._limit]
        try:
            with _errors("direct message", room):
                dm = await self._client.create_dm(discord.Object(id=int(user_id)))
                await dm.send(self.about(room, text), allowed_mentions=no_mentions())
            return
        except TransportError:
            log.info("DM to a user failed in %s; replying in the room instead", room.id)
        channel = self._client.get_partial_messageable(_target(room))
        with _errors("post", room):
            await channel.send(
                f"<@{user_id}> {text}"[: self._limit],
                allowed_mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(id=int(user_id))]
                ),
            )

    async def post_reply(self, room: RoomKey, user_id: str, text: str,
                         route: dict[str, str]) -> None:
        """The private reply to a stored command or click (`route`: see the module)."""
        self._check_connected()
        parts = split_text(core_text(text) or "\u200b", self._limit)
        live = self._live.get(route.get("interaction", ""))
        if live is not None:
            interaction, lock = live
            async with lock:  # never two first responses (the client may be deferring)
                with _errors("interaction reply", room):
                    await self._respond(interaction, parts)
            return
        with _errors("interaction reply", room):
            if await self._reply_by_token(route, parts):
                return
        # Never answered (the process died before it deferred) or expired.
        log.info("interaction token unusable in %s; the reply goes by DM", room.id)
        await self.post_private(room, user_id, text)

    def about(self, room: RoomKey, text: str) -> str:
        """A DM read away from the room: it starts by naming and linking the
        thread it is about (`<#id>` shows the thread's name and opens it; the
        jump link, in `<…>` so Discord adds no preview, when the server is
        known). No words: the notice below is in the room's language."""
        target = _target(room)
        parent = self._client.get_channel(int(room.channel))
        guild = getattr(parent, "guild", None)
        link = f" · <https://discord.com/channels/{guild.id}/{target}>" if guild else ""
        return f"🧵 <#{target}>{link}\n{text}"[: self._limit]

    # -- interactions ----------------------------------------------------------

    def remember(self, interaction: discord.Interaction, kind: str) -> dict[str, str]:
        """Keep a live interaction for its reply; returns the route stored with it."""
        key = str(interaction.id)
        self._live[key] = (interaction, asyncio.Lock())
        self._live.move_to_end(key)
        while len(self._live) > _KEEP_INTERACTIONS:
            self._live.popitem(last=False)
        return {"interaction": key, "application_id": str(interaction.application_id),
                "token": interaction.token, "kind": kind}

    @asynccontextmanager
    async def answering(self, interaction: discord.Interaction) -> AsyncIterator[None]:
        """Hold the interaction's first response (the client deferring it)."""
        live = self._live.get(str(interaction.id))
        if live is None or live[0] is not interaction:
            yield
            return
        async with live[1]:
            yield

    async def _respond(self, interaction: discord.Interaction, parts: list[str]) -> None:
        mentions = no_mentions()
        for part in parts:
            if interaction.response.is_done():
                await interaction.followup.send(part, ephemeral=True, allowed_mentions=mentions)
            else:
                await interaction.response.send_message(part, ephemeral=True,
                                                        allowed_mentions=mentions)

    async def _reply_by_token(self, route: dict[str, str], parts: list[str]) -> bool:
        """After a restart: the interaction object is gone, its token is not.
        False when Discord refuses the token (expired, or never answered)."""
        app, token = route.get("application_id", ""), route.get("token", "")
        if not app or not token:
            return False
        try:
            await self._send_by_token(route.get("kind"), app, token, parts)
        except discord.HTTPException as exc:
            if exc.status in (400, 401, 403, 404):
                log.info("interaction token refused: HTTP %s code %s", exc.status, exc.code)
                return False
            raise
        return True

    async def _send_by_token(self, kind: str | None, app: str, token: str,
                             parts: list[str]) -> None:
        first, rest = parts[0], parts[1:]
        mentions = no_mentions().to_dict()
        if kind == "command":
            # The original response is ours alone (deferred, or the reply
            # itself): the same text again replaces it, nothing is repeated.
            await self._client.http.request(
                Route("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
                      webhook_id=app, webhook_token=token),
                json={"content": first, "allowed_mentions": mentions})
        else:
            rest = parts  # a click's original is the escalation itself: never edited
        for part in rest:
            await self._client.http.request(
                Route("POST", "/webhooks/{webhook_id}/{webhook_token}",
                      webhook_id=app, webhook_token=token),
                json={"content": part, "flags": EPHEMERAL, "allowed_mentions": mentions})

    async def reply_ephemeral(self, interaction: discord.Interaction, text: str) -> None:
        text = core_text(text)[: self._limit] or "\u200b"
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=no_mentions())
        else:
            await interaction.response.send_message(
                text, ephemeral=True, allowed_mentions=no_mentions()
            )

    # -- helpers ---------------------------------------------------------------

    def _remember(self, key: str, ids: list[int]) -> None:
        self._parts[key] = ids
        self._parts.move_to_end(key)
        while len(self._parts) > _KEEP_PARTS:
            self._parts.popitem(last=False)

    async def _discover(
        self, channel: discord.PartialMessageable, message_id: str, message: OutgoingMessage
    ) -> list[int]:
        """After a restart: find the later chunks of a multi-part escalation by their buttons.

        Only needed when the buttons live on a chunk other than the first; we look
        at a few of our own messages right after the first chunk.
        """
        first = int(message_id)
        if message.escalation_id is None or self._client.user is None:
            return [first]
        ids = [first]
        me = self._client.user.id
        async for later in channel.history(after=discord.Object(id=first), limit=10,
                                           oldest_first=True):
            if later.author.id != me:
                continue
            ids.append(later.id)
            if any(
                (decoded := buttons.decode(getattr(child, "custom_id", "") or "")) is not None
                and decoded[0] == message.escalation_id
                for row in later.components
                for child in getattr(row, "children", [])
            ):
                return ids
        return [first]


"""The two seams between the core and the outside world.

`Transport` is what an adapter gives the core (post, edit, private reply);
`Core` is what the core gives an adapter (feed it messages, clicks, commands).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from bot.catchup import CatchUpPlan, Fetch
from bot.leases import Lease
from bot.models import (
    AnswerResult,
    ButtonClick,
    CommandReply,
    CommandRequest,
    IncomingMessage,
    OutgoingMessage,
    RoomKey,
)


class TransportError(Exception):
    """A platform call failed for good (after the adapter's own retries).

    `permanent` means retrying will not help (channel gone, no permission);
    the outbox then stops retrying that post instead of looping forever.
    """

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


class PlatformFatal(RuntimeError):
    """An adapter cannot start and retrying will not help (a refused token, a
    missing privileged intent): its platform stops for good."""


class Transport(Protocol):
    platform: str

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        """Post into the room (thread reply); return the platform message id."""
        ...

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        """Replace an earlier post of ours (progress -> verdict, disable buttons)."""
        ...

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        """Tell one user something only they should see (ephemeral where possible)."""
        ...


@runtime_checkable
class FindsPosts(Protocol):
    """A transport that can tell whether a post of ours already reached the room.

    Optional (the outbox asks only transports that have it): before posting
    again something a crash may have posted already, the outbox looks for it.
    """

    async def find_post(
        self, room: RoomKey, message: OutgoingMessage, since: datetime
    ) -> str | None:
        """The platform id of our post carrying `message.idempotency_key`, posted
        after `since`, or None when the room shows no such post."""
        ...


@runtime_checkable
class RepliesPrivately(Protocol):
    """A transport that can answer a user's own command or click where they gave it.

    Optional: a private post that carries a `route` (what the adapter stored
    with the command or click: a Slack `response_url`, a Discord interaction's
    token) goes through `post_reply`; without the capability, or without a
    route, `post_private` is used.
    """

    async def post_reply(self, room: RoomKey, user_id: str, text: str,
                         route: dict[str, str]) -> None:
        """Answer privately along `route`, falling back to `post_private` when the
        route has expired (the platform's tokens last minutes)."""
        ...


@runtime_checkable
class ReportsPace(Protocol):
    """A transport that can say how long a call started now would wait for the
    platform's pace (its own queue of calls and the platform's rate limits).

    Optional: the outbox asks before it turns a progress post into its verdict
    by an edit. Where edits share one busy bucket (Slack's `chat.update`, per
    workspace) and the edit would reach the room much later than a new post,
    the verdict is posted anew instead.
    """

    def expected_wait(self, call: Literal["post", "edit"], room: RoomKey) -> float | None:
        """Seconds before a new post (`post`) or an edit (`edit`) into `room`,
        started now, would go out; None when this transport cannot tell (a
        wrapper around one that does not report its pace): edits are then
        always waited for."""
        ...


class Pacing(Protocol):
    """Pacing shared by every instance on the database (`bot.pacing`)."""

    async def reserve(self, key: str, spacing: float) -> datetime | None:
        """Take the next moment for a call of `key` (None: pace alone this time)."""
        ...

    def until(self, moment: datetime) -> float:
        """Seconds from now to `moment` (0 when it has passed)."""
        ...

    async def done(self, key: str, spacing: float) -> None:
        """The call ended: the next of `key` may start `spacing` seconds from now."""
        ...


@runtime_checkable
class ChecksAdmins(Protocol):
    """A transport that can say whether a user is an admin of the platform.

    Optional: a stored command whose adapter could not say at once (Slack asks
    `users.info`, which must not hold up the acknowledgement) is checked here
    when it is applied.
    """

    async def is_platform_admin(self, user_id: str) -> bool: ...


@runtime_checkable
class SharesPacing(Protocol):
    """A core whose platform calls are paced together with every other instance
    on its database (the engine); an adapter given one paces through it."""

    pacing: Pacing


class Leases(Protocol):
    """Named leases shared by every instance on the database (`bot.leases`)."""

    instance_id: str
    beat_seconds: float  # renew this often: at least thrice per lease

    async def claim(self, name: str) -> Lease | None:
        """The lease for this instance (a new token), or None while another holds it."""
        ...

    async def renew(self, lease: Lease) -> Lease | None:
        """The lease extended, or None when it is no longer this instance's."""
        ...

    async def record(self, lease: Lease, work: str) -> bool:
        """Write down what this instance does under the lease (fenced), for
        whoever takes it over unfinished (`Lease.left`)."""
        ...

    async def release(self, lease: Lease, *, finished: bool = False) -> None:
        """Give it up now, for another instance to claim (`finished`: its work
        is done; nobody waiting for it takes it over)."""
        ...

    async def finished(self, name: str) -> bool:
        """Whether the latest claim of the lease was released with its work done."""
        ...

    async def holders(self, prefix: str) -> dict[str, str]:
        """name -> holding instance, for the live leases whose name starts with `prefix`."""
        ...

    def expired(self, lease: Lease) -> bool:
        """Whether the lease has run out (its renewals failed)."""
        ...


@runtime_checkable
class SharesLeases(Protocol):
    """A core on a database that several instances may share (the engine on
    PostgreSQL): work only one instance may do at a time, such as holding
    Discord's gateway, is held by a named lease. `leases` is None when the
    database is one process's alone (SQLite): nothing to share."""

    leases: Leases | None


EventListener = Callable[[dict[str, Any]], None]

# What `Core.receive_click` and `receive_command` return: the task applying the
# stored action, for an adapter that answers once it is done (Discord), or None
# (a redelivery, or nothing to wait for).
Applying: TypeAlias = asyncio.Task[None] | None


class Core(Protocol):
    async def receive(self, message: IncomingMessage) -> None:
        """Store the message and return; it is processed afterwards, from storage.

        Adapters await this before they acknowledge the platform's delivery, so
        an acknowledged message survives a crash. It never waits for the room.
        """
        ...

    async def on_message(self, message: IncomingMessage) -> None:
        """Store and process the message before returning (replays, tests)."""
        ...

    async def catch_up_plan(self, platform: str) -> CatchUpPlan:
        """Where each watched channel's and open-task room's stored history ends."""
        ...

    async def catch_up(self, room: RoomKey, fetch: Fetch) -> int:
        """Store the room's missed messages `fetch` returns (deduplicated), apply
        them in platform order, then the live ones stored meanwhile; returns
        how many were new. The room is held from before `fetch` is called."""
        ...

    async def receive_click(self, click: ButtonClick, delivery_id: str, *,
                            route: dict[str, str] | None = None) -> Applying:
        """Store the click and return; it is applied afterwards, from storage, and
        a refusal reaches the clicker as a private post (along `route` when the
        transport `RepliesPrivately`). `delivery_id` is the platform's id of
        this delivery (a redelivery is dropped)."""
        ...

    async def receive_command(self, request: CommandRequest, delivery_id: str, *,
                              route: dict[str, str] | None = None,
                              ask_admin: bool = False) -> Applying:
        """Store an `/arbiter` command and return; it is applied afterwards, from
        storage, and its reply reaches the user as a private post (along
        `route`). Adapters await this before they acknowledge or defer, so an
        acknowledged settings change or summon survives a crash. `ask_admin`:
        the adapter could not tell yet whether the user is a platform admin;
        the core asks the transport (`ChecksAdmins`) when it applies the
        command."""
        ...

    async def on_button(self, click: ButtonClick) -> AnswerResult:
        """Apply the click before returning; the result's private text is for the
        caller to show (an adapter that answers the interaction itself)."""
        ...

    async def on_command(self, request: CommandRequest) -> CommandReply:
        """Apply a command before returning, and return its reply (replays, tests)."""
        ...

    async def tick(self) -> None:
        """Close quiet turns, send reminders, retry the outbox. Call about once a second."""
        ...

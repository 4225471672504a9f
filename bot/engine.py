"""The engine: wiring that runs the rooms' transitions and their effects.

An incoming message is stored first (`bot.ingest`), then each room applies
its stored messages oldest first, one unit of work (`Storage.room`) per
message (`bot.transitions`); a message whose room is free is stored and
applied in one unit (`on_message`). What a transition returns (arbitrations
to start, events, posts to flush) runs after its unit commits. An arbitration
holds its room's messages (`RoomState.arbitrating`) until its verdict, which
is recorded in a fresh unit; then the room goes on from storage. Nothing
here knows which platform it serves, and nothing here keeps a room's state:
it lives in storage.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from bot import catchup, telemetry
from bot.admin import AdminCommands
from bot.arbiter.judge import ProgressJudge
from bot.arbiter.service import Arbitrator
from bot.arbitration_flow import ArbitrationFlow
from bot.background import Background
from bot.channels import ChannelDirectory
from bot.click_flow import StoredClicks
from bot.clock import Clock, SystemClock
from bot.command_flow import StoredCommands
from bot.config import Settings
from bot.detection import Thresholds
from bot.escalation_flow import Reminders
from bot.faults import armed, hit
from bot.i18n import room_language
from bot.ingest import incoming_row, role_of, store_incoming, store_row
from bot.instances import Instance
from bot.leases import NamedLeases
from bot.models import (
    AnswerResult,
    ButtonClick,
    CommandReply,
    CommandRequest,
    IncomingMessage,
    Role,
    RoomKey,
)
from bot.outbox import Outbox
from bot.pacing import SharedPacing
from bot.ports import Applying, EventListener, Transport
from bot.recovery import Recovery
from bot.shards import ShardWatch
from bot.state import RoomState
from bot.transitions import AlreadyApplied, Effects, RoomContext, Transitions
from bot.turn_closing import TurnCloser, judged
from storage.base import ActionRow, DiscordShards, InstanceRow, Storage

log = logging.getLogger(__name__)

RECOVERY_EVERY = timedelta(seconds=30)


def discord_shards(settings: Settings) -> DiscordShards | None:
    """This process's Discord shard settings, when it runs Discord."""
    token = settings.discord_bot_token
    if token is None or not token.get_secret_value().strip():
        return None
    return DiscordShards(shard_count=settings.discord_shard_count,
                         shard_ids=list(settings.discord_shard_ids))


class Engine:
    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        clock: Clock | None = None,
        *,
        arbitrator: Arbitrator | None = None,
        room_overrides: Mapping[str, Any] | None = None,
    ) -> None:
        """`room_overrides`: settings that beat every room's own when its
        transitions are judged; `{"turn_quiet_seconds": None}` closes turns
        only when another role speaks or when told to (`close_turn`), never on
        silence."""
        self.settings = settings
        self.storage = storage
        self.clock: Clock = clock or SystemClock()
        self.transports: dict[str, Transport] = {}
        self.listeners: list[EventListener] = []
        self.room_overrides = dict(room_overrides or {})
        self.channels = ChannelDirectory(settings, storage)
        self.instance = Instance(storage, self.clock, settings.lease_seconds,
                                 discord=discord_shards(settings))
        self.shards = ShardWatch(settings.lease_seconds)  # what `check_shards` found last
        self.background = Background()
        self.spawn = self.background.spawn
        self.outbox = Outbox(storage, self.transports, self.clock,
                             instance_id=self.instance.id, lease_seconds=settings.lease_seconds)
        # The platforms' rate limits count every instance's calls (adapters
        # pace through it: bot.ports.SharesPacing).
        self.pacing = SharedPacing(storage)
        # Work one instance at a time may do (Discord's gateway: bot.ports.SharesLeases),
        # only where instances may share the database.
        self.leases: NamedLeases | None = (
            NamedLeases(storage, self.clock, self.instance.id, settings.lease_seconds)
            if storage.shared else None
        )
        self.transitions = Transitions(self.clock, settings.admin_ids)
        self.arbitration = ArbitrationFlow(
            storage=storage, clock=self.clock, channels=self.channels, outbox=self.outbox,
            arbitrator=arbitrator or Arbitrator(settings), settings=settings, emit=self.emit,
            room_language=self.room_language, instance_id=self.instance.id,
        )
        self.reminders = Reminders(storage, self.channels, self.clock, self.room_language)
        self.admin = AdminCommands(
            storage=storage, clock=self.clock, channels=self.channels,
            admin_ids=settings.admin_ids, default_language=settings.language,
            transitions=self.transitions, run_effects=self._run_spawned,
            room_language=self.room_language,
        )
        self.clicks = StoredClicks(
            storage=storage, clock=self.clock, transitions=self.transitions,
            outbox=self.outbox, language=settings.language, context=self.context,
            run_effects=self._run_spawned, spawn=self.spawn,
        )
        self.commands = StoredCommands(
            storage=storage, clock=self.clock, admin=self.admin, outbox=self.outbox,
            transports=self.transports, spawn=self.spawn,
        )
        self.catching_up: set[str] = set()  # rooms reading what they missed (bot.catchup)
        self.progress_judge = (
            ProgressJudge(settings) if settings.progress_judge_in_effect == "llm" else None
        )
        self.turns = TurnCloser(
            storage=storage, clock=self.clock, transitions=self.transitions,
            judge=self.progress_judge, context=self.context, run_effects=self._run_spawned,
        )
        self.recovery = Recovery(
            storage=storage, clock=self.clock, instance=self.instance,
            arbitration=self.arbitration, spawn=self.spawn, apply_stored=self.apply_stored,
            apply_action=self.apply_action,
        )
        self._last_recovery: datetime | None = None
        # Messages, clicks and open turns another instance left behind are
        # looked for this often; arbitrations whose lease ran out at every
        # heartbeat (`tick`), so a dead instance's arbitration is taken over
        # within its lease and a beat.
        self.recovery_every = min(RECOVERY_EVERY, timedelta(seconds=settings.lease_seconds))

    # -- wiring -----------------------------------------------------------
    def register_transport(self, transport: Transport) -> None:
        self.transports[transport.platform] = transport

    def add_listener(self, listener: EventListener) -> None:
        self.listeners.append(listener)

    def emit(self, event: dict[str, Any]) -> None:
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed")

    async def start(self) -> None:
        """Resume what a crash interrupted: arbitrations, waiting messages, posts.

        Each room resumes in its own task (a resumed model call can take
        minutes; the adapters must not wait for it). `drain()` waits for them.
        The turns left open are read when turns are first closed
        (`close_turns`), not here: reading every room's state is not needed
        to be ready.
        """
        await self.recover()
        await self.outbox.flush()

    async def recover(self) -> None:
        """Finish arbitrations, messages and actions left unfinished, room by
        room (`bot.recovery`), at start and from `tick()`: an exception after a
        commit, a crash or another instance dying must not strand a room.
        Rooms with an open turn are looked at again while other instances
        share the database: the one that would have closed it may be gone."""
        await self.recovery.run()
        if self.turns.read and await self.recovery.others_registered():
            await self.turns.look_again()

    async def check_shards(self, rows: list[InstanceRow] | None = None) -> list[str]:
        """Check the live instances' Discord shard settings together (`bot.shards`)
        when this one runs Discord, logging each change once. The problems found."""
        if self.instance.discord is None:
            return []
        if rows is None:
            rows = await self.storage.instances()
        return self.shards.check(rows, self.clock.now())

    async def drain(self) -> None:
        """Wait for the background work (`bot.background`), that spawned meanwhile included."""
        await self.background.drain()

    async def shutdown(self) -> None:
        """Stop background work now instead of waiting for it (`tribunal run`
        exiting): an arbitration cut short keeps its stored row and the next
        start finishes it, as after a crash."""
        await self.background.shutdown()

    # -- rooms --------------------------------------------------------------
    async def room_language(self, room: RoomKey) -> str:
        """The language everything the bot writes into `room` is in."""
        return await room_language(self.storage, self.channels, self.settings.language, room)

    async def load_state(self, room: RoomKey) -> RoomState:
        """The room's stored state (a read: displays, tests)."""
        raw = await self.storage.load_room_state(room.id)
        return RoomState() if raw is None else RoomState.model_validate_json(raw)

    async def context(self, room: RoomKey) -> RoomContext:
        """Settings a transition needs, read before its unit opens."""
        values = {**await self.channels.room_settings(room), **self.room_overrides}
        quiet = values["turn_quiet_seconds"]
        thresholds = Thresholds(
            stall_threshold=int(values["stall_threshold"]),
            max_rounds=int(values["max_rounds"]),
            turn_quiet_seconds=None if quiet is None else float(quiet),
        )
        channel = await self.channels.get(room.platform, room.channel)
        return RoomContext(
            channel, thresholds, values,
            configured_language=await self.channels.configured_language(room),
            default_language=self.settings.language,
            # No timer where turns never close on silence (a transcript's replay).
            reviewer_wait_seconds=None if quiet is None else self.settings.reviewer_wait_seconds,
        )

    async def apply_stored(self, room: RoomKey, *, platform_order: bool = False) -> None:
        """Apply the room's stored messages oldest first, one unit each.

        Stops when none is left or an arbitration holds the room; a deadlock
        found here is arbitrated before the next message (which may answer it).
        `platform_order` (catch-up) goes by the platform's order instead of the
        stored one: missed messages are stored after live ones that came later.
        """
        # Stored messages need no claim of their own (their claim columns stay
        # empty): the room's unit is serialized cluster-wide and a message is
        # marked applied in the unit that applies it, by a compare-and-set, so
        # several instances applying one room at once apply each message once.
        while True:
            ctx = await judged(self.storage, self.progress_judge, room, await self.context(room))
            try:
                async with self.storage.room(room.id) as unit:
                    rows = await unit.unprocessed_messages()
                    if not rows:
                        return
                    if platform_order:
                        # Time, then id: a Slack ts and a Discord snowflake both
                        # order by length, then digits.
                        rows.sort(key=lambda r: (r.ts, len(r.message_id), r.message_id))
                    effects = await self.transitions.message(unit, room, rows[0], ctx)
            except AlreadyApplied:
                continue  # another unit applied it (rolled back here): read again
            if effects is None:
                return  # held by an arbitration: its task goes on after the verdict
            hit("after_apply")
            await self._run(room, effects, inline=True)
            if len(rows) == 1 and effects.consumed and not effects.arbitrations:
                # That was the last one. A message stored since has its own
                # `apply_stored` waiting for the room (every store is followed
                # by one), so another unit here would only find nothing. After
                # an arbitration, though, what waited for it is ours to apply.
                return

    async def _run(self, room: RoomKey, effects: Effects, *, inline: bool) -> None:
        """What a committed transition asked for: reports, arbitrations, posts."""
        self.turns.note(room, effects)
        effects.run_reports(self.emit)
        if effects.posted:
            self.outbox.note(room.id)
        for arbitration_id in effects.arbitrations:
            if inline:
                await self.arbitration.carry(room, arbitration_id)
            else:
                self.spawn(self.recovery.resume(room, arbitration_id))
        await self.outbox.flush(room.id)

    async def _run_spawned(self, room: RoomKey, effects: Effects) -> None:
        await self._run(room, effects, inline=False)

    async def restore_state(self, room: RoomKey, state: RoomState) -> None:
        """Put back a state the room had before (read with `load_state`); what
        changed since is forgotten. For a driver that closed a turn itself
        (`close_turn`) and then finds that the turn goes on."""
        async with self.storage.room(room.id) as unit:
            effects = await self.transitions.restore(unit, room, state)
        await self._run(room, effects, inline=False)

    # -- inbound ----------------------------------------------------------
    async def store(self, message: IncomingMessage) -> Role | None:
        """Store a message without applying it (`apply_stored` does): the role it
        was stored with, or None when it was not stored (not ours, or a
        redelivery of a message already stored)."""
        if message.is_self:
            return None
        if await store_incoming(self.storage, self.channels, message) is None:
            return None
        return role_of(await self.channels.get(message.platform, message.channel), message)

    async def on_message(self, message: IncomingMessage) -> None:
        """Store and apply (Discord, tests). A message of a room busy with an
        arbitration in another task is applied by that task, after the verdict.

        When the room is free (no unit of it running or waiting, nothing older
        waiting to be applied) the message is stored and applied in one unit
        of work, one commit; else it is stored without waiting for the room
        and applied from storage, after what came before it.
        """
        if message.is_self:
            return
        row = await incoming_row(self.channels, message)
        if row is None:
            return  # not ours
        room = message.room
        if room.id in self.catching_up:
            await store_row(self.storage, row)
            return  # the room's catch-up applies it, after what it missed
        if self.progress_judge is not None:
            # A model call may come before the room's unit (`judged`): the
            # message is stored first, however long the judge takes.
            if await store_row(self.storage, row) is not None:
                await self.apply_stored(room)
            return
        ctx = await self.context(room)
        try:
            async with self.storage.transaction() as tx:
                stored = await tx.insert_message_taking_room(row)
                effects = None
                if stored.unit is not None:
                    effects = await self.transitions.message(
                        stored.unit, room, row.model_copy(update={"seq": stored.seq}), ctx)
        except Exception:
            # Nothing of it was committed. Keep the message (unapplied) if
            # the database takes it, as when applying fails after a store:
            # a platform that does not redeliver must not lose it.
            with contextlib.suppress(Exception):
                await store_row(self.storage, row)
            raise
        if stored.seq is None:
            # A redelivery. The first delivery may have been stored and left
            # unapplied (its applying failed): the room applies what waits.
            telemetry.redelivered(room, row.message_id)
            await self.apply_stored(room)
            return
        if stored.unit is None:
            await self.apply_stored(room)  # stored: the room applies it in its turn
            return
        if effects is None:
            return  # stored; the arbitration holding the room applies it after its verdict
        hit("after_apply")
        await self._run(room, effects, inline=True)
        if not effects.consumed or effects.arbitrations:
            await self.apply_stored(room)  # what waited for the verdict, this message included

    async def receive(self, message: IncomingMessage) -> None:
        """Store the message, then apply it in a task (adapters: before the ack).

        Returns once the message is stored: the platform may be told we have
        it. Storing takes no room lock, so a room busy with a minutes-long
        arbitration never delays an acknowledgement; the room applies its
        stored messages in stored order when it is free.
        """
        if message.is_self:
            return
        seq = await store_incoming(self.storage, self.channels, message)
        if seq is None or armed("after_store") or message.room.id in self.catching_up:
            # Not ours, a redelivery, a room catching up (it applies its
            # messages, live ones included, in platform order when done), or
            # (crash tests) acknowledged and never processed here: the next
            # start finds it in storage.
            return
        self.spawn(self.apply_stored(message.room))

    async def receive_click(self, click: ButtonClick, delivery_id: str, *,
                            route: dict[str, str] | None = None) -> Applying:
        """Store a click, then apply it in a task (adapters: before the ack;
        `bot.click_flow`). Returns the task applying it (None: a redelivery)."""
        return await self.clicks.receive(click, delivery_id, route=route)

    async def receive_command(self, request: CommandRequest, delivery_id: str, *,
                              route: dict[str, str] | None = None,
                              ask_admin: bool = False) -> Applying:
        """Store an `/arbiter` command, then apply it in a task (adapters: before
        the ack or the deferral; `bot.command_flow`)."""
        return await self.commands.receive(request, delivery_id, route=route,
                                           ask_admin=ask_admin)

    async def apply_action(self, action: ActionRow) -> None:
        """Apply a stored click or command (recovery: whatever a crash left)."""
        if action.kind == "command":
            await self.commands.apply(action.id)
        else:
            await self.clicks.apply(action.id)

    async def catch_up_plan(self, platform: str) -> catchup.CatchUpPlan:
        """Where each watched channel's and open room's stored history ends."""
        return await catchup.plan(self.storage, self.channels, platform)

    async def catch_up(self, room: RoomKey, fetch: catchup.Fetch) -> int:
        """Store and apply the room's missed messages (adapters fetch them)."""
        return await catchup.catch_up_room(
            room, fetch, storage=self.storage, channels=self.channels, outbox=self.outbox,
            catching_up=self.catching_up,
            apply_stored=lambda r: self.apply_stored(r, platform_order=True))

    async def on_button(self, click: ButtonClick) -> AnswerResult:
        """Apply a click now; what the clicker alone should read (tests)."""
        return await self.clicks.answer_now(click)

    async def on_command(self, request: CommandRequest) -> CommandReply:
        return await self.admin.handle(request)

    # -- time -------------------------------------------------------------
    async def close_turns(self, rooms: Iterable[str] | None = None, *, force: bool = False) -> None:
        """Close open turns that went quiet (or all of them now, `force`);
        each arbitration they fire runs in its own task (`bot.turn_closing`)."""
        await self.turns.close_quiet(rooms, force=force)

    async def close_turn(self, room: RoomKey) -> list[dict[str, Any]] | None:
        """Close the room's open turn now, whatever the silence, and run what it
        fires (an arbitration in its own task: `drain()` waits for it).

        Returns the events the closing reported (a deadlock, an approval; empty
        when it decided nothing), or None when no turn was closed: none open,
        the room paused, or busy (an arbitration in flight).
        """
        effects = await self.turns.close(room, force=True)
        return None if effects is None else list(effects.events)

    async def tick(self) -> None:
        try:
            if await self.instance.heartbeat():
                rows = await self.storage.instances()
                self.channels.share(any(row.id != self.instance.id for row in rows))
                await self.check_shards(rows)
                await self.recovery.take_over_arbitrations()
            await self.close_turns()
            now = self.clock.now()
            if self._last_recovery is None or now - self._last_recovery >= self.recovery_every:
                self._last_recovery = now
                await self.recover()
            for room_id in await self.reminders.send(
                self.clock.now() - timedelta(seconds=self.settings.reminder_after)
            ):
                self.outbox.note(room_id)
            await self.outbox.flush()
        except Exception:
            log.exception("tick failed; will try again")

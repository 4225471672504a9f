"""The engine: one inbound event at a time per room, rooms concurrently.

Every message goes through: watched? -> role -> the room's ingest (detection,
one storage transaction, events, arbitration: bot/ingest.py) -> outbox.
Nothing here knows which platform it serves.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Coroutine, Iterable
from datetime import datetime, timedelta
from typing import Any

from bot import catchup
from bot.admin import AdminCommands
from bot.arbiter.service import Arbitrator
from bot.arbitration_flow import ArbitrationFlow
from bot.channels import ChannelDirectory
from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.detection import Thresholds
from bot.escalation_flow import EscalationFlow
from bot.faults import armed
from bot.ingest import RoomIngest, clip
from bot.lru import LRU
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
from bot.ports import EventListener, Transport
from bot.state import RoomState
from storage.base import Storage

log = logging.getLogger(__name__)

RECOVERY_EVERY = timedelta(seconds=30)


class Engine:
    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        clock: Clock | None = None,
        *,
        arbitrator: Arbitrator | None = None,
        quiet_close: bool = True,
    ) -> None:
        self.settings = settings
        self.storage = storage
        self.clock: Clock = clock or SystemClock()
        self.transports: dict[str, Transport] = {}
        self.listeners: list[EventListener] = []
        self.quiet_close = quiet_close
        self.channels = ChannelDirectory(settings, storage)
        self.outbox = Outbox(storage, self.transports, self.clock)
        self.arbitration = ArbitrationFlow(self, arbitrator or Arbitrator(settings))
        self.escalations = EscalationFlow(self)
        self.admin = AdminCommands(self)
        self.rooms = RoomIngest(self)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.states: LRU[str, RoomState] = LRU(2048)
        self.open_turns: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.inflight: dict[str, int] = {}  # messages of a room handed in, not yet done
        self.recovering: set[str] = set()
        self._last_recovery: datetime | None = None
        self._closing = False

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
        """Resume what a crash interrupted: open turns, arbitrations, waiting messages.

        Each room resumes in its own task (a resumed model call can take
        minutes; the adapters must not wait for it). `drain()` waits for them.
        """
        self.open_turns.update(await self.storage.rooms_with_open_turns())
        await self.recover()
        await self.outbox.flush()

    async def recover(self) -> None:
        """Finish arbitrations and messages left unfinished, room by room.

        Called at start and from `tick()`: an exception after a commit (or a
        crash) must not strand a room until the next restart. Rooms that are
        busy right now are left for a later call.
        """
        rooms: dict[str, list[int]] = {}
        for row in await self.storage.unfinished_arbitrations():
            rooms.setdefault(row.room_id, []).append(row.id)
        for message in await self.storage.unprocessed_messages():
            rooms.setdefault(message.room_id, [])
        for room_id, arbitration_ids in rooms.items():
            room = RoomKey.parse(room_id)
            if self.inflight.get(room_id) or room_id in self.recovering or self.lock(room).locked():
                continue
            self.recovering.add(room_id)
            self.spawn(self._recover_room(room, arbitration_ids))

    async def _recover_room(self, room: RoomKey, arbitration_ids: list[int]) -> None:
        try:
            for arbitration_id in arbitration_ids:
                await self.resume_arbitration(room, arbitration_id)
            await self.rooms.finish_unprocessed(room)
        finally:
            self.recovering.discard(room.id)

    async def resume_arbitration(self, room: RoomKey, arbitration_id: int) -> None:
        async with self.lock(room):
            row = await self.storage.get_arbitration(arbitration_id)
            if row is None or row.status in ("done", "cancelled"):
                return
            state = await self.load_state(room)
            await self.arbitration.run(room, state, row.id, row.trigger, row.evidence)
        await self.outbox.flush(room.id)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run work in its own task (an arbitration, `/arbiter summon`); `drain()` waits."""
        if self._closing:
            # Shutting down: what this would do is already stored (an arbitration
            # row, unprocessed messages) and the next start recovers it.
            work.close()
            return
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def shutdown(self) -> None:
        """Stop background work now instead of waiting for it (`tribunal run` exiting).

        An arbitration cut short keeps its stored row (pending or running) and
        the room's messages stay stored; `start()` finishes them next time, as
        after a crash. Model calls can take minutes: waiting would break the
        promise to stop within seconds.
        """
        self._closing = True
        while self._tasks:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def lock(self, room: RoomKey) -> asyncio.Lock:
        lock = self._locks.get(room.id)
        if lock is None:
            lock = self._locks[room.id] = asyncio.Lock()
        return lock

    # -- state ------------------------------------------------------------
    async def load_state(self, room: RoomKey) -> RoomState:
        state = self.states.get(room.id)
        if state is None:
            raw = await self.storage.load_room_state(room.id)
            state = RoomState() if raw is None else RoomState.model_validate_json(raw)
            self.states.put(room.id, state)
        return state

    def forget_state(self, room: RoomKey) -> None:
        self.states.pop(room.id)

    async def thresholds(self, room: RoomKey) -> tuple[Thresholds, dict[str, Any]]:
        values = await self.channels.room_settings(room)
        quiet = float(values["turn_quiet_seconds"]) if self.quiet_close else None
        return (
            Thresholds(
                stall_threshold=int(values["stall_threshold"]),
                max_rounds=int(values["max_rounds"]),
                turn_quiet_seconds=quiet,
            ),
            values,
        )

    # -- inbound ----------------------------------------------------------
    async def on_message(self, message: IncomingMessage) -> None:
        if message.is_self:
            return
        room = message.room
        # A message's place in its room is fixed here, before anything awaits:
        # asyncio locks are FIFO, and while any message of the room is in
        # flight, later ones are stored first (the platform was already told
        # we have them) and then queue in the order their storing finished,
        # which is the order they came in.
        # Busy also when something else holds the room (an arbitration task, a
        # click, a command): a model call can take minutes.
        busy = (
            self.inflight.get(room.id, 0) > 0
            or self.lock(room).locked()
            or room.id in self.recovering  # older stored messages go first
        )
        self._enter(room)
        try:
            stored: int | None = None
            if busy:
                # The platform was already told we have it: store it now.
                stored = await self.rooms.store_incoming(room, message)
                if stored is None:
                    return  # not ours, or a redelivery of a message already stored
            async with self.lock(room):
                await self._accept(room, message, stored)
        finally:
            self._leave(room)
        await self.outbox.flush(room.id)

    async def receive(self, message: IncomingMessage) -> None:
        """Store the message, then process it in a task (adapters: before the ack).

        Returns once the message is stored: the platform may be told we have
        it. Storing takes no room lock, so a room busy with a minutes-long
        arbitration never delays an acknowledgement; the room applies its
        stored messages in stored order when it is free.
        """
        if message.is_self:
            return
        room = message.room
        self._enter(room)  # from here on, this room's later messages queue behind it
        try:
            seq = await self.rooms.store_incoming(room, message)
        except BaseException:
            self._leave(room)
            raise
        if seq is None or armed("after_store"):
            # Not ours, a redelivery, or (crash tests) acknowledged and never
            # processed here: the next start finds it in storage.
            self._leave(room)
            return
        self.spawn(self._process_received(room))

    async def _process_received(self, room: RoomKey) -> None:
        try:
            await self.rooms.finish_unprocessed(room)
        finally:
            self._leave(room)

    def _enter(self, room: RoomKey) -> None:
        self.inflight[room.id] = self.inflight.get(room.id, 0) + 1

    def _leave(self, room: RoomKey) -> None:
        self.inflight[room.id] -= 1
        if not self.inflight[room.id]:
            del self.inflight[room.id]

    async def _accept(self, room: RoomKey, message: IncomingMessage, stored: int | None) -> None:
        if stored:
            # Stored while the room was busy: apply it, and anything older still
            # waiting, in stored order (it may already have been applied).
            await self.rooms.apply_stored(room, up_to=stored)
            return
        channel = await self.channels.get(room.platform, room.channel)
        ids = [message.author_id, *message.author_alt_ids]
        role = message.role_hint or channel.role_of(ids)
        if role is Role.USER and message.is_bot:
            role = Role.OTHER
        if not channel.watched or channel.paused or role in (Role.OTHER, Role.ARBITER):
            return  # unwatched channels and unbound bots are never stored
        await self.rooms.ingest(room, message, role, clip(message.text), stored_seq=stored)

    async def catch_up_plan(self, platform: str) -> catchup.CatchUpPlan:
        """Where each watched channel's and open room's stored history ends."""
        return await catchup.plan(self, platform)

    async def catch_up(self, room: RoomKey, fetch: catchup.Fetch) -> int:
        """Store and apply the room's missed messages (adapters fetch them)."""
        return await catchup.catch_up_room(self, room, fetch)

    async def on_button(self, click: ButtonClick) -> AnswerResult:
        return await self.escalations.on_button(click)

    async def on_command(self, request: CommandRequest) -> CommandReply:
        return await self.admin.handle(request)

    # -- time -------------------------------------------------------------
    async def close_turns(
        self, rooms: Iterable[str] | None = None, *, force: bool = False, at_eof: bool = False
    ) -> None:
        """Close open turns that went quiet (or all of them, at the end of a replay).

        Live, each room's arbitration runs in its own task, so one slow model
        call does not hold up the other rooms, reminders or the outbox. At the
        end of a replay (`at_eof`) rooms are arbitrated in order, for
        reproducible output.
        """
        for room_id in list(rooms if rooms is not None else self.open_turns):
            room = RoomKey.parse(room_id)
            if not force:
                cached = self.states.get(room.id)
                turn = cached.open_turn if cached is not None else None
                if self.lock(room).locked() or room.id in self.inflight or (
                    turn is not None
                    and (self.clock.now() - turn.last_at).total_seconds()
                    < float((await self.channels.room_settings(room))["turn_quiet_seconds"])
                ):
                    continue  # busy (e.g. an arbitration), or not quiet yet: next tick
            channel = await self.channels.get(room.platform, room.channel)
            if channel.paused:
                continue  # a paused channel is not watched: its turns are not judged
            async with self.lock(room):
                state = await self.load_state(room)
                await self.rooms.close_turn(room, state, force=force, at_eof=at_eof)
            await self.outbox.flush(room.id)

    async def tick(self) -> None:
        try:
            await self.close_turns()
            now = self.clock.now()
            if self._last_recovery is None or now - self._last_recovery >= RECOVERY_EVERY:
                self._last_recovery = now
                await self.recover()
            await self.escalations.send_reminders(
                self.clock.now() - timedelta(seconds=self.settings.reminder_after)
            )
            await self.outbox.flush()
        except Exception:
            log.exception("tick failed; will try again")

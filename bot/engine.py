"""The engine: one inbound event at a time per room, rooms concurrently.

Every message goes through: watched? -> role -> detection -> one storage
transaction (message, room state, new arbitrations) -> events -> arbitration
-> outbox. Nothing here knows which platform it serves.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Coroutine, Iterable
from datetime import timedelta
from typing import Any

from bot import detection
from bot.admin import AdminCommands
from bot.arbiter.service import Arbitrator
from bot.arbitration_flow import ArbitrationFlow
from bot.channels import ChannelDirectory
from bot.clock import Clock, SystemClock
from bot.config import Settings
from bot.detection import Approved, Deadlock, RoomState, Thresholds
from bot.escalation_flow import EscalationFlow
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
from storage.base import MessageRow, Storage

log = logging.getLogger(__name__)

MAX_TEXT = 40_000  # longer messages are stored cut, with a marker
MAX_HUMANS = 50


def _clip(text: str) -> str:
    """Oversized messages are kept, cut, with a visible marker."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n[…truncated]"


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
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._states: LRU[str, RoomState] = LRU(2048)
        self._open_turns: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

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
        """Resume what a crash interrupted: open turns, arbitrations, the outbox."""
        self._open_turns.update(await self.storage.rooms_with_open_turns())
        await asyncio.gather(
            *(
                self.resume_arbitration(RoomKey.parse(row.room_id), row.id)
                for row in await self.storage.unfinished_arbitrations()
            )
        )
        await self._finish_unprocessed()
        await self.outbox.flush()

    async def resume_arbitration(self, room: RoomKey, arbitration_id: int) -> None:
        async with self.lock(room):
            row = await self.storage.get_arbitration(arbitration_id)
            if row is None or row.status == "done":
                return
            state = await self.load_state(room)
            await self.arbitration.run(room, state, row.id, row.trigger, row.evidence)
        await self.outbox.flush(room.id)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run work in its own task (an arbitration, `/arbiter summon`); `drain()` waits."""
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

    def lock(self, room: RoomKey) -> asyncio.Lock:
        lock = self._locks.get(room.id)
        if lock is None:
            lock = self._locks[room.id] = asyncio.Lock()
        return lock

    # -- state ------------------------------------------------------------
    async def load_state(self, room: RoomKey) -> RoomState:
        state = self._states.get(room.id)
        if state is None:
            raw = await self.storage.load_room_state(room.id)
            state = RoomState() if raw is None else RoomState.model_validate_json(raw)
            self._states.put(room.id, state)
        return state

    def forget_state(self, room: RoomKey) -> None:
        self._states.pop(room.id)

    async def thresholds(self, room: RoomKey) -> tuple[Thresholds, dict[str, Any]]:
        values = await self.channels.room_settings(room)
        quiet = float(values["turn_quiet_seconds"]) if self.quiet_close else None
        return (
            Thresholds(
                stall_threshold=int(values["stall_threshold"]),
                max_rounds=int(values["max_rounds"]),
                similarity_threshold=float(values["similarity_threshold"]),
                turn_quiet_seconds=quiet,
            ),
            values,
        )

    # -- inbound ----------------------------------------------------------
    async def on_message(self, message: IncomingMessage) -> None:
        if message.is_self:
            return
        room = message.room
        lock = self.lock(room)
        stored: int | None = None
        if lock.locked():
            stored = await self._store_while_busy(room, message)
            if stored is None:
                return  # a redelivery of a message already stored
        # The lock is taken before anything else awaits on the fast path, so a
        # room's messages are applied in the order they were handed in.
        async with lock:
            channel = await self.channels.get(room.platform, room.channel)
            if not channel.watched or channel.paused:
                return  # unwatched channels are never stored
            ids = [message.author_id, *message.author_alt_ids]
            role = message.role_hint or channel.role_of(ids)
            if role is Role.USER and message.is_bot:
                role = Role.OTHER
            if role in (Role.OTHER, Role.ARBITER):
                return
            text = _clip(message.text)
            await self._ingest(room, message, role, text, stored_seq=stored or None)
        await self.outbox.flush(room.id)

    async def _store_while_busy(self, room: RoomKey, message: IncomingMessage) -> int | None:
        """Store a message that must wait for its room (an arbitration is running).

        The platform has already been told we have it; if the process stops
        before the room is free, `start()` applies it. Returns its seq, or None
        for a redelivery.
        """
        channel = await self.channels.get(room.platform, room.channel)
        role = message.role_hint or channel.role_of([message.author_id, *message.author_alt_ids])
        if not channel.watched or channel.paused or (message.is_bot and role is Role.USER):
            return 0  # not ours to store; the normal path will say so
        row = MessageRow(
            platform=room.platform,
            message_id=message.message_id,
            room_id=room.id,
            author=message.author_id,
            role=role.value,
            text=_clip(message.text),
            ts=message.ts,
            processed=False,
        )
        async with self.storage.transaction() as tx:
            return await tx.insert_message(row)

    async def _ingest(
        self,
        room: RoomKey,
        message: IncomingMessage,
        role: Role,
        text: str,
        stored_seq: int | None = None,
    ) -> None:
        """Apply one message; `stored_seq` when it was stored before (see below)."""
        state = await self.load_state(room)
        before = state.model_dump_json()  # put back on a redelivery or a failure
        try:
            await self._apply(room, state, message, role, text, stored_seq, before)
        except BaseException:
            self._restore(room, before)  # the cache must not run ahead of the database
            raise

    async def _apply(
        self,
        room: RoomKey,
        state: RoomState,
        message: IncomingMessage,
        role: Role,
        text: str,
        stored_seq: int | None,
        before: str,
    ) -> None:
        if state.eof_snapshot is not None:
            state = self._resume_after_eof(room, state, role)
        thresholds, values = await self.thresholds(room)
        events: list[detection.Event] = []
        turn = state.open_turn
        if turn is not None and (
            turn.role != role or detection.is_quiet(turn, message.ts, thresholds)
        ):
            # Another role speaks (or silence fell): the open turn ends here.
            events = detection.close_turn(state, thresholds)
            if any(isinstance(e, Deadlock) for e in events):
                # Arbitrate first: this very message may answer what the turn
                # triggered. Store it now, unprocessed, so that a crash during
                # the arbitration does not lose it (`start()` finishes it).
                if stored_seq is not None:
                    await self._persist_closed(room, state, events)
                else:
                    stored_seq = await self._persist_closed(
                        room, state, events, message=self._row(room, message, role, text, state)
                    )
                    if stored_seq is None:
                        self._restore(room, before)  # a redelivery
                        return
                events = []
        task_open = state.task_active and not state.approved
        answer = None
        if role is Role.USER:
            if state.awaiting_escalation is not None:
                answer = await self.escalations.prepare_reply(state, message, text, values)
            if answer is None or answer.starts_epoch:
                self._human_starts_epoch(state, message)
        else:
            events += detection.add_agent_message(
                state, role, message.message_id, message.author_id, text, message.ts, thresholds
            )
        deadlocks = [e for e in events if isinstance(e, Deadlock)]
        row = self._row(room, message, role, text, state)
        async with self.storage.transaction() as tx:
            if stored_seq is None:
                seq = await tx.insert_message(row)
                if seq is None:
                    self._restore(room, before)
                    return
            else:
                seq = stored_seq
                await tx.mark_processed(seq, epoch=row.epoch, turn_no=row.turn_no)
            if role is Role.USER and not task_open and (answer is None or answer.starts_epoch):
                state.task_start_seq = seq
            if answer is not None:
                await self.escalations.apply_reply(tx, room, state, answer, message)
            arbitration_ids = [
                await tx.create_arbitration(
                    room.id, state.epoch, d.trigger.value, d.evidence, self.clock.now()
                )
                for d in deadlocks
            ]
            await tx.save_room_state(
                room.id,
                room.platform,
                room.channel,
                room.thread,
                state.model_dump_json(),
                self.clock.now(),
            )
        self._track_open(room, state)
        if answer is not None:
            self.outbox.note(room.id)
            self.escalations.announce(room, answer)
        self._emit_detection(room, events)
        for deadlock, arbitration_id in zip(deadlocks, arbitration_ids, strict=True):
            await self.arbitration.run(
                room, state, arbitration_id, deadlock.trigger.value, deadlock.evidence
            )

    @staticmethod
    def _row(
        room: RoomKey, message: IncomingMessage, role: Role, text: str, state: RoomState
    ) -> MessageRow:
        turn = state.open_turn
        return MessageRow(
            platform=room.platform,
            message_id=message.message_id,
            room_id=room.id,
            author=message.author_id,
            role=role.value,
            text=text,
            ts=message.ts,
            epoch=state.epoch,
            turn_no=turn.turn_no if role.is_agent and turn else None,
        )

    async def _finish_unprocessed(self) -> None:
        """Messages stored before a crash interrupted their processing."""
        for row in await self.storage.unprocessed_messages():
            room = RoomKey.parse(row.room_id)
            message = IncomingMessage(
                platform=room.platform,
                channel=room.channel,
                thread=room.thread,
                message_id=row.message_id,
                author_id=row.author,
                text=row.text,
                ts=row.ts,
            )
            async with self.lock(room):
                await self._ingest(room, message, Role(row.role), row.text, stored_seq=row.seq)
            await self.outbox.flush(room.id)

    def _restore(self, room: RoomKey, state_json: str) -> None:
        self._states.put(room.id, RoomState.model_validate_json(state_json))

    def _resume_after_eof(self, room: RoomKey, state: RoomState, role: Role) -> RoomState:
        snapshot = RoomState.model_validate_json(state.eof_snapshot or "{}")
        if snapshot.open_turn is not None and snapshot.open_turn.role == role:
            state = snapshot  # the same role goes on: it was one turn after all
        state.eof_snapshot = None
        self._states.put(room.id, state)
        return state

    def _human_starts_epoch(self, state: RoomState, message: IncomingMessage) -> None:
        if not state.task_active or state.approved:
            state.task_active = True
            state.approved = False
            state.task_started_at = message.ts
            state.humans = []
        if message.author_id not in state.humans:
            state.humans = [*state.humans, message.author_id][-MAX_HUMANS:]
        state.requester = message.author_id
        state.arbitrations_since_human = 0
        state.proceed_triggers = []
        detection.start_epoch(state)

    def _track_open(self, room: RoomKey, state: RoomState) -> None:
        if state.open_turn is not None:
            self._open_turns.add(room.id)
        else:
            self._open_turns.discard(room.id)

    def _emit_detection(self, room: RoomKey, events: Iterable[detection.Event]) -> None:
        for event in events:
            if isinstance(event, Deadlock):
                self.emit(
                    {
                        "event": "deadlock",
                        "room": room.label,
                        "after_message": event.after_message,
                        "trigger": event.trigger.value,
                        "stalled_rounds": event.evidence.get("stalled_rounds", 0),
                        "rounds": event.evidence.get("rounds", 0),
                    }
                )
            elif isinstance(event, Approved):
                self.emit(
                    {
                        "event": "approved",
                        "room": room.label,
                        "after_message": event.after_message,
                    }
                )

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
        for room_id in list(rooms if rooms is not None else self._open_turns):
            room = RoomKey.parse(room_id)
            channel = await self.channels.get(room.platform, room.channel)
            if channel.paused:
                continue  # a paused channel is not watched: its turns are not judged
            async with self.lock(room):
                state = await self.load_state(room)
                await self._close_turn(room, state, force=force, at_eof=at_eof)
            await self.outbox.flush(room.id)

    async def _close_turn(
        self, room: RoomKey, state: RoomState, *, force: bool, at_eof: bool = False
    ) -> None:
        """Close the room's open turn, persist, and arbitrate what it triggers.

        The caller holds the room lock.
        """
        thresholds, _ = await self.thresholds(room)
        snapshot = state.model_dump_json() if at_eof and state.open_turn is not None else None
        if force:
            events = detection.close_turn(state, thresholds)
        else:
            events = detection.close_if_quiet(state, self.clock.now(), thresholds)
        if not events:
            return
        if snapshot is not None and not any(isinstance(e, Deadlock | Approved) for e in events):
            state.eof_snapshot = snapshot
        await self._persist_closed(room, state, events, inline=at_eof)

    async def _persist_closed(
        self,
        room: RoomKey,
        state: RoomState,
        events: list[detection.Event],
        message: MessageRow | None = None,
        *,
        inline: bool = True,
    ) -> int | None:
        """Save a closed turn's state (and the message that closed it, unprocessed),
        then arbitrate the deadlocks it triggered. Returns the message's seq, or
        None when that message is a redelivery (then nothing is saved)."""
        deadlocks = [e for e in events if isinstance(e, Deadlock)]
        seq: int | None = None
        async with self.storage.transaction() as tx:
            if message is not None:
                seq = await tx.insert_message(message.model_copy(update={"processed": False}))
                if seq is None:
                    return None
            ids = [
                await tx.create_arbitration(
                    room.id, state.epoch, d.trigger.value, d.evidence, self.clock.now()
                )
                for d in deadlocks
            ]
            await tx.save_room_state(
                room.id,
                room.platform,
                room.channel,
                room.thread,
                state.model_dump_json(),
                self.clock.now(),
            )
        self._track_open(room, state)
        self._emit_detection(room, events)
        for deadlock, arbitration_id in zip(deadlocks, ids, strict=True):
            if inline:
                await self.arbitration.run(
                    room, state, arbitration_id, deadlock.trigger.value, deadlock.evidence
                )
            else:
                self.spawn(self.resume_arbitration(room, arbitration_id))
        return seq

    async def tick(self) -> None:
        try:
            await self.close_turns()
            await self.escalations.send_reminders(
                self.clock.now() - timedelta(seconds=self.settings.reminder_after)
            )
            await self.outbox.flush()
        except Exception:
            log.exception("tick failed; will try again")

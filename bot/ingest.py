"""How one message, or one closing turn, changes a room.

Detection -> one storage transaction (the message, the room state, new
arbitrations) -> events -> arbitration. The engine calls this with the room
lock held; rooms never share state here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from bot import detection, faults, telemetry
from bot.detection import Approved, Deadlock
from bot.i18n import text_language
from bot.models import IncomingMessage, Role, RoomKey
from bot.state import RoomState
from storage.base import MessageRow, Transaction

if TYPE_CHECKING:
    from bot.engine import Engine

MAX_TEXT = 40_000  # longer messages are stored cut, with a marker
MAX_HUMANS = 50


def clip(text: str) -> str:
    """Oversized messages are kept, cut, with a visible marker."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n[…truncated]"


class RoomIngest:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def store_incoming(self, room: RoomKey, message: IncomingMessage) -> int | None:
        """Store a message unprocessed, before anything else happens to it.

        The platform is told we have it only after this; processing comes
        later, from storage (`apply_stored`), so a crash in between loses
        nothing. It takes no room lock: a busy room never delays it. Returns
        its seq; None when it is not ours (unwatched channel, unbound bot) or
        is a redelivery of a stored message.
        """
        channel = await self.engine.channels.get(room.platform, room.channel)
        role = message.role_hint or channel.role_of([message.author_id, *message.author_alt_ids])
        if role is Role.USER and message.is_bot:
            role = Role.OTHER
        if not channel.watched or channel.paused or role in (Role.OTHER, Role.ARBITER):
            return None  # unwatched channels and unbound bots are never stored
        row = MessageRow(
            platform=room.platform,
            message_id=message.message_id,
            room_id=room.id,
            author=message.author_id,
            role=role.value,
            text=clip(message.text),
            ts=message.ts,
            processed=False,
        )
        async with self.engine.storage.transaction() as tx:
            seq = await tx.insert_message(row)
        if seq is None:
            telemetry.redelivered(room, message.message_id)
        return seq

    async def ingest(
        self,
        room: RoomKey,
        message: IncomingMessage,
        role: Role,
        text: str,
        stored_seq: int | None = None,
    ) -> None:
        """Apply one message; `stored_seq` when it was stored before (see below)."""
        state = await self.engine.load_state(room)
        try:
            await self._apply(room, state, message, role, text, stored_seq)
        except BaseException:
            self.engine.forget_state(room)  # the cache must not run ahead of the database
            raise

    async def _apply(
        self,
        room: RoomKey,
        state: RoomState,
        message: IncomingMessage,
        role: Role,
        text: str,
        stored_seq: int | None,
    ) -> None:
        if state.eof_snapshot is not None:
            state = self._resume_after_eof(room, state, role)
        thresholds, values = await self.engine.thresholds(room)
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
                        self.engine.forget_state(room)  # a redelivery: reload what is stored
                        telemetry.redelivered(room, message.message_id)
                        return
                events = []
        task_open = state.task_active and not state.approved
        answer = None
        if role is Role.USER:
            answer = await self.engine.escalations.prepare_reply(state, message, text, values)
            if answer is None or answer.starts_epoch:
                self._human_starts_epoch(state, message)
        else:
            events += detection.add_agent_message(
                state, role, message.message_id, message.author_id, text, message.ts, thresholds
            )
        deadlocks = [e for e in events if isinstance(e, Deadlock)]
        row = self._row(room, message, role, text, state)
        async with self.engine.storage.transaction() as tx:
            if stored_seq is None:
                seq = await tx.insert_message(row)
                if seq is None:
                    self.engine.forget_state(room)  # a redelivery: reload what is stored
                    telemetry.redelivered(room, message.message_id)
                    return
            else:
                seq = stored_seq
                await tx.mark_processed(seq, epoch=row.epoch, turn_no=row.turn_no)
            if role is Role.USER and not task_open and (answer is None or answer.starts_epoch):
                state.task_start_seq = seq
            if answer is not None:
                await self.engine.escalations.apply_reply(tx, room, state, answer, message)
            arbitration_ids = await self._write(tx, room, state, deadlocks)
        faults.hit("after_apply")
        self.track_open(room, state)
        if answer is not None:
            self.engine.outbox.note(room.id)
            self.engine.escalations.announce(room, answer)
        self._emit_detection(room, events)
        for deadlock, arbitration_id in zip(deadlocks, arbitration_ids, strict=True):
            await self.engine.arbitration.run(
                room, state, arbitration_id, deadlock.trigger.value, deadlock.evidence
            )

    async def _write(
        self, tx: Transaction, room: RoomKey, state: RoomState, deadlocks: list[Deadlock]
    ) -> list[int]:
        """Record the deadlocks' arbitrations and the room's new state (one transaction)."""
        now = self.engine.clock.now()
        ids = [
            await tx.create_arbitration(room.id, state.epoch, d.trigger.value, d.evidence, now)
            for d in deadlocks
        ]
        await tx.save_room_state(
            room.id, room.platform, room.channel, room.thread, state.model_dump_json(), now
        )
        return ids

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

    async def finish_unprocessed(self, room: RoomKey) -> None:
        """Apply the room's messages that were stored but not applied (crash, failure)."""
        async with self.engine.lock(room):
            await self.apply_stored(room)
        await self.engine.outbox.flush(room.id)

    async def apply_stored(
        self, room: RoomKey, up_to: int | None = None, *, platform_order: bool = False
    ) -> None:
        """Apply the room's stored, unapplied messages oldest first (up to seq `up_to`).

        `platform_order` (catch-up) applies them in the platform's order instead.
        The caller holds the room lock. The rows are read under it, so a row
        applied by someone else meanwhile is not applied twice, and every
        applier goes in stored order: a message never overtakes an older one.
        """
        engine = self.engine
        rows = await engine.storage.unprocessed_messages(room.id)
        if platform_order:
            # Catch-up stores what the room missed after what arrived live
            # meanwhile: apply by the platform's order (time, then id: a Slack
            # ts, a Discord snowflake, both ordered by length then digits).
            rows.sort(key=lambda r: (r.ts, len(r.message_id), r.message_id))
        for row in rows:
            if up_to is not None and row.seq > up_to:
                break
            channel = await engine.channels.get(room.platform, room.channel)
            if not channel.watched or channel.paused:
                await self.settle_ignored(row.seq)
                continue
            message = IncomingMessage(
                platform=room.platform,
                channel=room.channel,
                thread=room.thread,
                message_id=row.message_id,
                author_id=row.author,
                text=row.text,
                ts=row.ts,
            )
            await self.ingest(room, message, Role(row.role), row.text, stored_seq=row.seq)

    async def settle_ignored(self, seq: int) -> None:
        """A stored message that will not be applied (its channel is paused now)."""
        async with self.engine.storage.transaction() as tx:
            await tx.mark_processed(seq, epoch=-1, turn_no=None)

    def _resume_after_eof(self, room: RoomKey, state: RoomState, role: Role) -> RoomState:
        snapshot = RoomState.model_validate_json(state.eof_snapshot or "{}")
        if snapshot.open_turn is not None and snapshot.open_turn.role == role:
            state = snapshot  # the same role goes on: it was one turn after all
        state.eof_snapshot = None
        self.engine.states.put(room.id, state)
        return state

    def _human_starts_epoch(self, state: RoomState, message: IncomingMessage) -> None:
        if not state.task_active or state.approved:
            state.task_active = True
            state.approved = False
            state.task_started_at = message.ts
            state.language = text_language(message.text)
            state.humans = []
            detection.start_task(state)
        if message.author_id not in state.humans:
            state.humans = [*state.humans, message.author_id][-MAX_HUMANS:]
        state.requester = message.author_id
        state.arbitrations_since_human = 0
        state.proceed_triggers = []
        detection.start_epoch(state)

    def track_open(self, room: RoomKey, state: RoomState) -> None:
        if state.open_turn is not None:
            self.engine.open_turns.add(room.id)
        else:
            self.engine.open_turns.discard(room.id)

    def _emit_detection(self, room: RoomKey, events: Iterable[detection.Event]) -> None:
        for event in events:
            if isinstance(event, Deadlock):
                telemetry.deadlock(
                    room, event.trigger.value, after_message=event.after_message,
                    finding=event.finding, stalled_rounds=event.evidence.get("stalled_rounds"),
                    rounds=event.evidence.get("rounds"),
                )
                payload: dict[str, object] = {
                    "event": "deadlock",
                    "room": room.label,
                    "after_message": event.after_message,
                    "trigger": event.trigger.value,
                    "stalled_rounds": event.evidence.get("stalled_rounds", 0),
                    "rounds": event.evidence.get("rounds", 0),
                }
                if event.finding is not None:
                    payload["finding"] = event.finding
                    payload["finding_rounds"] = event.finding_rounds
                self.engine.emit(payload)
            elif isinstance(event, Approved):
                self.engine.emit(
                    {
                        "event": "approved",
                        "room": room.label,
                        "after_message": event.after_message,
                    }
                )

    async def close_turn(
        self, room: RoomKey, state: RoomState, *, force: bool, at_eof: bool = False
    ) -> None:
        """Close the room's open turn, persist, and arbitrate what it triggers.

        The caller holds the room lock.
        """
        thresholds, _ = await self.engine.thresholds(room)
        snapshot = state.model_dump_json() if at_eof and state.open_turn is not None else None
        if force:
            events = detection.close_turn(state, thresholds)
        else:
            events = detection.close_if_quiet(state, self.engine.clock.now(), thresholds)
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
        async with self.engine.storage.transaction() as tx:
            if message is not None:
                seq = await tx.insert_message(message.model_copy(update={"processed": False}))
                if seq is None:
                    return None
            ids = await self._write(tx, room, state, deadlocks)
        self.track_open(room, state)
        self._emit_detection(room, events)
        for deadlock, arbitration_id in zip(deadlocks, ids, strict=True):
            if inline:
                await self.engine.arbitration.run(
                    room, state, arbitration_id, deadlock.trigger.value, deadlock.evidence
                )
            else:
                self.engine.spawn(self.engine.resume_arbitration(room, arbitration_id))
        return seq

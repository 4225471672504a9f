"""Answering escalations by digit, button or free text (DESIGN §5).

Exactly one answer wins: storage does a compare-and-set; the room lock keeps
a digit and a click for the same room from interleaving in this process.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from bot import telemetry
from bot.answers import parse_digit_answer
from bot.detection import start_epoch
from bot.escalation import (
    Rejection,
    check_option,
    confirmation_text,
    decided_note,
    may_answer,
    rejection_text,
)
from bot.i18n import room_language
from bot.models import (
    AnswerKind,
    AnswerResult,
    ButtonClick,
    IncomingMessage,
    MessageKind,
    Option,
    OutgoingMessage,
    RoomKey,
)
from bot.state import RoomState
from prompts.strings import t
from storage.base import EscalationRow, Transaction

if TYPE_CHECKING:
    from bot.engine import Engine

LATE_ANSWER_WINDOW = timedelta(minutes=10)


@dataclass(slots=True)
class Reply:
    escalation: EscalationRow
    by: str
    language: str
    kind: AnswerKind | None = None  # None = rejected
    option: Option | None = None
    text: str | None = None
    rejection: Rejection | None = None
    private_text: str | None = None

    @property
    def starts_epoch(self) -> bool:
        return self.kind is not None


class EscalationFlow:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _is_admin(self, user_id: str, platform_admin: bool = False) -> bool:
        return platform_admin or user_id in self.engine.settings.admin_ids

    async def prepare_reply(
        self, state: RoomState, message: IncomingMessage, text: str, values: dict[str, Any]
    ) -> Reply | None:
        """What a human message means for the room's escalation (no writes).

        None: it is not an answer. A bare digit after the escalation was
        decided is a late answer: its author is told who decided what, when.
        """
        number = parse_digit_answer(text)
        if state.awaiting_escalation is None:
            # A late answer: a bare digit shortly after the decision, before the
            # agents said anything more. Later, a digit is an ordinary message.
            if number is None or state.last_escalation is None:
                return None
            if state.decided_turn_seq != state.turn_seq:
                return None
            late = await self.engine.storage.get_escalation(state.last_escalation)
            if (
                late is None
                or late.status != "answered"
                or late.answered_at is None
                or self.engine.clock.now() - late.answered_at > LATE_ANSWER_WINDOW
            ):
                return None
            lang = await room_language(self.engine, message.room, state)
            reply = Reply(late, message.author_id, lang)
            return self._reject(reply, Rejection.ALREADY_ANSWERED)
        row = await self.engine.storage.get_escalation(state.awaiting_escalation)
        if row is None or row.status != "pending":
            state.awaiting_escalation = None
            return None
        lang = await room_language(self.engine, message.room, state)
        reply = Reply(row, message.author_id, lang)
        if not may_answer(row, message.author_id, is_admin=self._is_admin(message.author_id)):
            return self._reject(reply, Rejection.NOT_ALLOWED)
        if number is None:
            reply.kind, reply.text = AnswerKind.FREE_TEXT, text
            return reply
        option = check_option(row, number)
        if option is None:
            return self._reject(reply, Rejection.OUT_OF_RANGE, n=number)
        reply.kind, reply.option = AnswerKind.DIGIT, option
        return reply

    def _reject(self, reply: Reply, reason: Rejection, **extra: object) -> Reply:
        reply.rejection = reason
        reply.private_text = rejection_text(reason, reply.escalation, reply.language, **extra)
        return reply

    async def apply_reply(
        self,
        tx: Transaction,
        room: RoomKey,
        state: RoomState,
        reply: Reply,
        message: IncomingMessage,
    ) -> None:
        now = self.engine.clock.now()
        if reply.kind is None:
            await self._enqueue_private(tx, room, reply.by, reply.private_text or "", now)
            return
        if not await self._decide(tx, room, state, reply, now):
            reply.kind = None
            reply.rejection = Rejection.ALREADY_ANSWERED
            fresh = await tx.get_escalation(reply.escalation.id)
            reply.private_text = rejection_text(Rejection.ALREADY_ANSWERED, fresh, reply.language)
            await self._enqueue_private(tx, room, reply.by, reply.private_text, now)

    async def _decide(
        self, tx: Transaction, room: RoomKey, state: RoomState, reply: Reply, now: datetime
    ) -> bool:
        """CAS the answer, then confirm in the room and retire the buttons."""
        assert reply.kind is not None
        won = await tx.answer_escalation(
            reply.escalation.id,
            option=reply.option.n if reply.option else None,
            label=reply.option.label if reply.option else None,
            text=reply.text,
            kind=reply.kind.value,
            by=reply.by,
            at=now,
        )
        if not won:
            return False
        await tx.cancel_other_escalations(room.id, keep=reply.escalation.id)
        state.awaiting_escalation = None
        state.decided_turn_seq = state.turn_seq
        confirmation = OutgoingMessage(
            kind=MessageKind.CONFIRMATION,
            text=confirmation_text(reply.option, reply.text, reply.language),
        )
        await tx.enqueue(room.id, "confirmation", confirmation.model_dump(mode="json"), now)
        original_id = reply.escalation.verdict_outbox_id
        original = await tx.get_outbox(original_id) if original_id else None
        if original is not None:
            decided = OutgoingMessage.model_validate(original.payload)
            decided.decided = reply.option or Option(
                n=0, label=confirmation_text(None, reply.text, reply.language)
            )
            decided.decided_note = decided_note(reply.by, now, reply.language)
            decided.mention_user_ids = []
            await tx.enqueue(
                room.id, "decided", decided.model_dump(mode="json"), now, edit_of=original.id
            )
        return True

    async def _enqueue_private(
        self, tx: Transaction, room: RoomKey, user_id: str, text: str, now: datetime
    ) -> None:
        payload = OutgoingMessage(kind=MessageKind.NOTICE, text=text).model_dump(mode="json")
        payload["user_id"] = user_id
        await tx.enqueue(room.id, "private", payload, now)

    def announce(self, room: RoomKey, reply: Reply) -> None:
        telemetry_reply(room, reply)
        if reply.kind is not None:
            self.engine.emit(
                {
                    "event": "escalation_answered",
                    "room": room.label,
                    "option": reply.option.n if reply.option else None,
                    "by": reply.by,
                    "kind": reply.kind.value,
                }
            )
        else:
            self.engine.emit(
                {
                    "event": "answer_rejected",
                    "room": room.label,
                    "by": reply.by,
                    "reason": (reply.rejection or Rejection.UNKNOWN).value,
                }
            )

    async def on_button(self, click: ButtonClick) -> AnswerResult:
        engine = self.engine
        row = await engine.storage.get_escalation(click.escalation_id)
        if row is None:
            return AnswerResult(
                accepted=False, private_text=t("answer_unknown", engine.settings.language)
            )
        room = RoomKey.parse(row.room_id)
        async with engine.lock(room):
            row = await engine.storage.get_escalation(click.escalation_id)
            assert row is not None
            state = await engine.load_state(room)
            reply = Reply(row, click.user_id, await room_language(engine, room, state))
            if row.status != "pending" or row.id != state.awaiting_escalation:
                # Answered, cancelled, or no longer the question the room waits on.
                self._reject(reply, Rejection.ALREADY_ANSWERED)
            elif not may_answer(
                row, click.user_id, is_admin=self._is_admin(click.user_id, click.is_platform_admin)
            ):
                self._reject(reply, Rejection.NOT_ALLOWED)
            else:
                option = check_option(row, click.option)
                if option is None:
                    self._reject(reply, Rejection.OUT_OF_RANGE, n=click.option)
                else:
                    reply.kind, reply.option = AnswerKind.BUTTON, option
            if reply.kind is not None:
                now = engine.clock.now()
                async with engine.storage.transaction() as tx:
                    if await self._decide(tx, room, state, reply, now):
                        _answered(state)
                        await tx.save_room_state(
                            room.id,
                            room.platform,
                            room.channel,
                            room.thread,
                            state.model_dump_json(),
                            now,
                        )
                    else:
                        reply.kind = None
                        reply.rejection = Rejection.ALREADY_ANSWERED
                if reply.kind is None:
                    fresh = await engine.storage.get_escalation(row.id)
                    self._reject(reply, Rejection.ALREADY_ANSWERED)
                    reply.private_text = rejection_text(
                        Rejection.ALREADY_ANSWERED, fresh, reply.language
                    )
            self.announce(room, reply)
        engine.outbox.note(room.id)
        await engine.outbox.flush(room.id)
        return AnswerResult(accepted=reply.kind is not None, private_text=reply.private_text)

    async def send_reminders(self, created_before: datetime) -> None:
        for row in await self.engine.storage.due_reminders(created_before):
            room = RoomKey.parse(row.room_id)
            message = OutgoingMessage(
                kind=MessageKind.REMINDER,
                text=t("reminder", await room_language(self.engine, room)),
                escalation_id=row.id,
                mention_user_ids=[row.requester] if row.requester else [],
            )
            async with self.engine.storage.transaction() as tx:
                await tx.enqueue(
                    room.id, "reminder", message.model_dump(mode="json"), self.engine.clock.now()
                )
                await tx.mark_reminded(row.id, self.engine.clock.now())


def _answered(state: RoomState) -> None:
    """A decision is a human word: budgets reset and a new epoch starts."""
    state.arbitrations_since_human = 0
    state.proceed_triggers = []
    start_epoch(state)


def telemetry_reply(room: RoomKey, reply: Reply) -> None:
    """The operator's log line and counter for an answer, taken or refused."""
    if reply.kind is not None:
        telemetry.answer(room, reply.escalation.id, by=reply.by, kind=reply.kind.value,
                         option=reply.option.n if reply.option else None)
    else:
        telemetry.answer_rejected(room, reply.escalation.id, by=reply.by,
                                  reason=(reply.rejection or Rejection.UNKNOWN).value)

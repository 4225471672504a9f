"""What an answer to an escalation writes and tells (the rules: bot/transitions.py).

Exactly one answer wins: storage does a compare-and-set, inside the room's
unit of work, so a digit and a click for the same room never interleave.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot import rulings
from bot.channels import ChannelDirectory
from bot.clock import Clock
from bot.escalation import Rejection, confirmation_text, decided_note
from bot.ledger import apply_ruling
from bot.models import AnswerKind, MessageKind, Option, OutgoingMessage, RoomKey
from bot.state import RoomState
from bot.wording import LABEL
from prompts.strings import t
from storage.base import EscalationRow, Storage, Transaction


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
    ruling: tuple[str, str] | None = None  # (upheld, retired) when the choice keeps one finding

    @property
    def starts_epoch(self) -> bool:
        return self.kind is not None

    @property
    def ends_task(self) -> bool:
        """The chosen option stops the task (`Option.ends_task`)."""
        return self.kind is not None and self.option is not None and self.option.ends_task


async def decide(
    unit: Transaction, room: RoomKey, state: RoomState, reply: Reply, now: datetime
) -> bool:
    """CAS the answer, then confirm in the room and retire the buttons.

    False when another answer won; then nothing was written.
    """
    assert reply.kind is not None
    ruling = chosen_ruling(state, reply.option) if reply.option is not None else None
    won = await unit.answer_escalation(
        reply.escalation.id,
        option=reply.option.n if reply.option else None,
        label=reply.option.label if reply.option else None,
        text=reply.text,
        kind=reply.kind.value,
        by=reply.by,
        at=now,
        # Stored with the answer, so `/arbiter history` shows what the human ruled.
        ruling=None if ruling is None else rulings.record(state.findings, *ruling),
    )
    if not won:
        return False
    await unit.cancel_other_escalations(room.id, keep=reply.escalation.id)
    reply.ruling = ruling
    if ruling is not None:
        # "Keep F1 (F3 no longer applies)": the human ruled as an arbiter would.
        apply_ruling(state.findings, *ruling, state.task_rounds)
    state.awaiting_escalation = None
    state.decided_turn_seq = state.turn_seq
    text = confirmation_text(reply.option, reply.text, reply.language)
    if reply.ends_task:
        # The caller ends the task (bot.transitions); the agents read it here.
        text = f"{text}\n{t('task_stopped', reply.language)}"
    confirmation = OutgoingMessage(kind=MessageKind.CONFIRMATION, text=text)
    await unit.enqueue(room.id, "confirmation", confirmation.model_dump(mode="json"), now)
    original_id = reply.escalation.verdict_outbox_id
    original = await unit.get_outbox(original_id) if original_id else None
    if original is not None:
        decided = OutgoingMessage.model_validate(original.payload)
        decided.decided = reply.option or Option(
            n=0, label=confirmation_text(None, reply.text, reply.language)
        )
        decided.decided_note = decided_note(reply.by, now, reply.language)
        decided.mention_user_ids = []
        await unit.enqueue(
            room.id, "decided", decided.model_dump(mode="json"), now, edit_of=original.id
        )
    return True


async def enqueue_private(
    unit: Transaction, room: RoomKey, user_id: str, text: str, now: datetime,
    route: dict[str, str] | None = None,
) -> None:
    """A post only `user_id` reads; `route` (the adapter's, kept with a stored
    command or click) answers them where they asked (`ports.RepliesPrivately`)."""
    payload = OutgoingMessage(kind=MessageKind.NOTICE, text=text).model_dump(mode="json")
    payload["user_id"] = user_id
    if route:
        payload["route"] = route
    await unit.enqueue(room.id, "private", payload, now)




def chosen_ruling(state: RoomState, option: Option) -> tuple[str, str] | None:
    """The ruling an option of a contradiction's escalation stands for: its label
    names the finding kept first and the one that no longer applies second
    (`opt_keep` in the catalogs), both open or contested in the ledger."""
    labels = list(dict.fromkeys(LABEL.findall(option.label)))
    if len(labels) != 2:
        return None
    live = {f.label for f in state.findings if f.is_open}
    return (labels[0], labels[1]) if set(labels) <= live else None


def announce(room: RoomKey, reply: Reply) -> dict[str, Any]:
    """The listeners' event for an answer, taken or refused."""
    if reply.kind is not None:
        event: dict[str, Any] = {
            "event": "escalation_answered",
            "room": room.label,
            "option": reply.option.n if reply.option else None,
            "by": reply.by,
            "kind": reply.kind.value,
        }
        if reply.ruling is not None:
            event["ruling"] = {"upheld": reply.ruling[0], "retired": reply.ruling[1]}
        if reply.ends_task:
            event["task_ended"] = True
        return event
    return {
        "event": "answer_rejected",
        "room": room.label,
        "by": reply.by,
        "reason": (reply.rejection or Rejection.UNKNOWN).value,
    }


class Reminders:
    """The one reminder of an escalation left unanswered for `reminder_after`."""

    def __init__(
        self, storage: Storage, channels: ChannelDirectory, clock: Clock,
        room_language: Callable[[RoomKey], Awaitable[str]],
    ) -> None:
        self.storage = storage
        self.channels = channels
        self.clock = clock
        self.room_language = room_language  # bot.i18n: the language the room is written in

    async def send(self, created_before: datetime) -> list[str]:
        """Queue the due reminders; the rooms that got one (their outbox to flush)."""
        rooms = []
        for row in await self.storage.due_reminders(created_before):
            room = RoomKey.parse(row.room_id)
            message = OutgoingMessage(
                kind=MessageKind.REMINDER,
                text=t("reminder", await self.room_language(room)),
                escalation_id=row.id,
                mention_user_ids=[row.requester] if row.requester else [],
            )
            async with self.storage.transaction() as tx:
                await tx.enqueue(
                    room.id, "reminder", message.model_dump(mode="json"), self.clock.now()
                )
                await tx.mark_reminded(row.id, self.clock.now())
            rooms.append(room.id)
        return rooms

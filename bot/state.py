"""A room's memory between events: `RoomState` and the turn it may hold open.

Stored as JSON in the room's row and loaded inside the room's unit of work
(`Storage.room`); only `bot.transitions` and the pure detection functions it
calls change it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from bot.finding import Finding, OwnerAction
from bot.models import Role, Trigger


class TurnPart(BaseModel):
    """One message of a turn: fences never span two, and several reviewers
    may share one reviewer turn, so each part keeps its author."""

    author: str
    text: str


class OpenTurn(BaseModel):
    role: Role
    author: str
    turn_no: int
    first_message_id: str
    last_message_id: str
    started_at: datetime
    last_at: datetime
    parts: list[TurnPart] = Field(default_factory=list)
    chars: int = 0

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.parts)

    def messages(self, author: str | None = None) -> list[str]:
        return [p.text for p in self.parts if author is None or p.author == author]

    def authors(self) -> list[str]:
        return list(dict.fromkeys(p.author for p in self.parts))


class PendingOwner(BaseModel):
    """An owner turn waiting for the reviewer turn that completes its round."""

    turn_no: int
    last_message_id: str
    actions: dict[str, OwnerAction] = Field(default_factory=dict)
    # Owner clauses the rules could not place (see bot.finding.Question): the
    # progress judge may answer them when the round closes.
    questions: list[dict[str, str]] = Field(default_factory=list)
    # What the turn said, when it refused or put off a finding (its anchors and terms, as
    # `bot.topics.topic` reads them): a reviewer answering those reasons in
    # their words argues for the refused point (`bot.refusal_arguments`).
    reasons: list[str] = Field(default_factory=list)


class RoomState(BaseModel):
    epoch: int = 0
    task_active: bool = False
    task_started_at: datetime | None = None
    task_start_seq: int = 0  # seq of the human message that opened the task
    humans: list[str] = Field(default_factory=list)  # who may answer escalations
    # The task's language, fixed at its first human message (None: not a
    # shipped one, or too short to tell; the global default applies). See bot.i18n.
    language: str | None = None
    requester: str | None = None  # the last human who wrote; pinged on ESCALATE
    turn_seq: int = 0
    open_turn: OpenTurn | None = None
    pending_owner: PendingOwner | None = None
    rounds: int = 0  # completed rounds in this epoch
    stalled_rounds: int = 0
    task_rounds: int = 0  # completed rounds in this task (the ledger's history)
    carry_progress: bool = False  # a reviewer turn that completed no round raised something
    findings: list[Finding] = Field(default_factory=list)  # the task's ledger
    # Pairs of setting names the owner said are one in this task
    # (`bot.setting_aliases`): a value asked of one is asked of the other.
    aliases: list[list[str]] = Field(default_factory=list)
    # Reviewers who have posted in this task: with several, a reviewer turn
    # waits for all of them (up to `reviewer_wait_seconds`).
    task_reviewers: list[str] = Field(default_factory=list)
    fired: list[Trigger] = Field(default_factory=list)
    # Arbitrations in flight: the room's stored messages wait for their verdicts.
    arbitrating: list[int] = Field(default_factory=list)
    awaiting_escalation: int | None = None
    last_escalation: int | None = None  # the latest one, answered or not
    decided_turn_seq: int | None = None  # turn_seq when it was answered (late digits)
    arbitrations_since_human: int = 0
    proceed_triggers: list[Trigger] = Field(default_factory=list)
    approved: bool = False
    last_detection: dict[str, Any] | None = None

"""The storage interface. The core depends on this file only.

Reads are plain methods; every write happens inside `transaction()`, so one
inbound event changes the database all at once or not at all. A PostgreSQL
backend implements the same two classes.
"""

from __future__ import annotations

import abc
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class MessageRow(BaseModel):
    seq: int = 0
    platform: str
    message_id: str
    room_id: str
    author: str
    role: str
    text: str
    ts: datetime
    epoch: int = 0
    turn_no: int | None = None
    processed: bool = True


class ArbitrationRow(BaseModel):
    id: int
    room_id: str
    epoch: int
    trigger: str
    evidence: dict[str, Any] = Field(default_factory=dict)
    status: str
    progress_outbox_id: int | None = None
    prompt_chars: int | None = None
    backend: str | None = None
    model: str | None = None
    raw_output: str | None = None
    model_verdict: str | None = None
    verdict: str | None = None
    source: str | None = None
    verdict_text: str | None = None
    options: list[dict[str, Any]] = Field(default_factory=list)
    overrides: list[str] = Field(default_factory=list)
    latency_ms: int | None = None
    created_at: datetime
    finished_at: datetime | None = None


class EscalationRow(BaseModel):
    id: int
    room_id: str
    options: list[dict[str, Any]]
    allowed: list[str]
    requester: str | None = None
    status: str
    verdict_outbox_id: int | None = None
    answer_option: int | None = None
    answer_label: str | None = None
    answer_text: str | None = None
    answer_kind: str | None = None
    answered_by: str | None = None
    answered_at: datetime | None = None
    reminded_at: datetime | None = None
    created_at: datetime


class OutboxRow(BaseModel):
    id: int
    room_id: str
    kind: str
    payload: dict[str, Any]
    edit_of: int | None = None
    status: str
    platform_message_id: str | None = None
    attempts: int = 0
    last_error: str | None = None
    created_at: datetime
    next_attempt_at: datetime | None = None


class AuditRow(BaseModel):
    id: int
    at: datetime
    platform: str
    channel: str
    user_id: str
    action: str
    scope: str
    before: str | None = None
    after: str | None = None


class Transaction(abc.ABC):
    """Writes of one unit of work; committed together when the block exits."""

    @abc.abstractmethod
    async def insert_message(self, row: MessageRow) -> int | None:
        """Store a message; its seq, or None when (platform, message_id) is known."""

    @abc.abstractmethod
    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> None: ...

    @abc.abstractmethod
    async def save_room_state(
        self,
        room_id: str,
        platform: str,
        channel: str,
        thread: str | None,
        state: str,
        at: datetime,
    ) -> None: ...

    @abc.abstractmethod
    async def create_arbitration(
        self, room_id: str, epoch: int, trigger: str, evidence: dict[str, Any], at: datetime
    ) -> int: ...

    @abc.abstractmethod
    async def update_arbitration(self, arbitration_id: int, **fields: Any) -> None: ...

    @abc.abstractmethod
    async def create_escalation(self, row: EscalationRow) -> None: ...

    @abc.abstractmethod
    async def answer_escalation(
        self,
        escalation_id: int,
        *,
        option: int | None,
        label: str | None,
        text: str | None,
        kind: str,
        by: str,
        at: datetime,
    ) -> bool:
        """Compare-and-set pending -> answered; False when someone else won."""

    @abc.abstractmethod
    async def cancel_other_escalations(self, room_id: str, keep: int) -> None:
        """Pending escalations of the room other than `keep` become `cancelled`."""

    @abc.abstractmethod
    async def mark_reminded(self, escalation_id: int, at: datetime) -> None: ...

    @abc.abstractmethod
    async def set_escalation_outbox(self, escalation_id: int, outbox_id: int) -> None: ...

    @abc.abstractmethod
    async def enqueue(
        self,
        room_id: str,
        kind: str,
        payload: dict[str, Any],
        at: datetime,
        edit_of: int | None = None,
    ) -> int: ...

    @abc.abstractmethod
    async def mark_outbox(
        self,
        outbox_id: int,
        status: str,
        *,
        platform_message_id: str | None = None,
        error: str | None = None,
        at: datetime | None = None,
        next_attempt_at: datetime | None = None,
    ) -> None: ...

    @abc.abstractmethod
    async def set_setting(self, scope: str, scope_id: str, key: str, value: Any) -> None: ...

    @abc.abstractmethod
    async def set_bindings(
        self, platform: str, channel: str, role: str, ids: list[str]
    ) -> None: ...

    @abc.abstractmethod
    async def add_audit(
        self,
        *,
        at: datetime,
        platform: str,
        channel: str,
        user_id: str,
        action: str,
        scope: str,
        before: str | None,
        after: str | None,
    ) -> None: ...


class Storage(abc.ABC):
    @abc.abstractmethod
    async def open(self) -> None:
        """Connect and apply pending migrations."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Transaction]: ...

    @abc.abstractmethod
    async def load_room_state(self, room_id: str) -> str | None: ...

    @abc.abstractmethod
    async def unprocessed_messages(self, room_id: str | None = None) -> list[MessageRow]:
        """Messages stored but not yet applied (a crash came in between), oldest first."""

    @abc.abstractmethod
    async def rooms_with_open_turns(self) -> list[str]:
        """Rooms whose state has an open turn (checked once at start-up)."""

    @abc.abstractmethod
    async def latest_room(self, platform: str, channel: str) -> str | None: ...

    @abc.abstractmethod
    async def get_bindings(self, platform: str, channel: str) -> dict[str, list[str]]: ...

    @abc.abstractmethod
    async def get_settings(self, scope: str, scope_id: str) -> dict[str, Any]: ...

    @abc.abstractmethod
    async def get_arbitration(self, arbitration_id: int) -> ArbitrationRow | None: ...

    @abc.abstractmethod
    async def unfinished_arbitrations(self) -> list[ArbitrationRow]: ...

    @abc.abstractmethod
    async def room_arbitrations(
        self, room_id: str, *, since: datetime | None = None, limit: int = 10
    ) -> list[ArbitrationRow]:
        """Finished arbitrations of a room, oldest first (the last `limit`)."""

    @abc.abstractmethod
    async def get_escalation(self, escalation_id: int) -> EscalationRow | None: ...

    @abc.abstractmethod
    async def due_reminders(self, created_before: datetime) -> list[EscalationRow]: ...

    @abc.abstractmethod
    async def get_outbox(self, outbox_id: int) -> OutboxRow | None: ...

    @abc.abstractmethod
    async def pending_rooms(self, platforms: list[str], limit: int = 1000) -> list[str]:
        """Rooms of these platforms with posts still to send."""

    @abc.abstractmethod
    async def pending_outbox(self, room_id: str, limit: int = 50) -> list[OutboxRow]:
        """A room's unsent posts, oldest first."""

    @abc.abstractmethod
    async def human_messages(
        self, room_id: str, since_seq: int, limit: int
    ) -> tuple[list[MessageRow], int]:
        """Human messages from `since_seq` on: the first one (the task's request) and
        the last `limit`, oldest first, and how many between them were left out.

        Bounded reads: the cost follows `limit`, not the room's history.
        """

    @abc.abstractmethod
    async def agent_turn_messages(
        self, room_id: str, turns: int, since_seq: int = 0
    ) -> tuple[list[MessageRow], int]:
        """Messages of the last `turns` agent turns from `since_seq` on (the current
        task's), oldest first, and how many earlier turns from `since_seq` on exist."""

    @abc.abstractmethod
    async def list_audit(self, platform: str, channel: str, limit: int = 20) -> list[AuditRow]: ...

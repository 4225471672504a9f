"""The storage interface. The core depends on this file only.

Reads are plain methods; every write happens inside a unit of work, so one
inbound event changes the database all at once or not at all:

- `room(room_id)` is one state transition of one room: it takes the room's
  lock (the backend's choice: an asyncio.Lock for SQLite, a row or advisory
  lock for PostgreSQL), loads the room's state and offers reads and writes in
  one transaction. It is held for a transition only, never across a model
  call or a platform call.
- `transaction()` is a unit of work that belongs to no room (settings,
  bindings, audit, storing an incoming event, outbox bookkeeping). It never
  waits for a room's lock; storing a message, it may take the room's lock
  when the room is free at once and apply the message in the same commit
  (`Transaction.insert_message_taking_room`).

Inside a unit, read through the unit (`Transaction.get_escalation`, ...), never
through `Storage`: a backend may serialise units on one connection.

A PostgreSQL backend implements the same three classes; the contract tests in
tests/storage/test_storage_contract.py run against every backend.
"""

from __future__ import annotations

import abc
import json
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator


class DatabaseUnusable(RuntimeError):
    """The database cannot be used (not a database, read-only, from a newer
    release, locked); the message says which and what to do."""


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
    processed: bool = True  # False: stored, not yet applied to the room's state
    # Left NULL: a stored message needs no claim of its own. It is applied in
    # its room's unit of work, whose lock is cluster-wide (`Storage.room`), and
    # marked applied in that same unit by a compare-and-set, so whichever
    # instance takes the room's lock first applies it and the others find it
    # done; an instance that dies mid-unit holds nothing (its transaction, and
    # with it the lock, is gone).
    claimed_by: str | None = None
    lease_until: datetime | None = None


class CatchUpMark(BaseModel):
    """Where a room's stored history ends, for catching up after downtime."""

    room_id: str
    last_message_id: str  # the platform id of its latest stored message
    last_ts: datetime
    open_task: bool = False  # a task is open (not approved): its replies matter
    last_activity_at: datetime | None = None


class ActionRow(BaseModel):
    """A stored click (or command): kept before the platform is acknowledged,
    applied from storage afterwards."""

    id: int = 0
    platform: str
    delivery_id: str  # the platform's id of this delivery: a redelivery is dropped
    kind: str  # "click"
    room_id: str
    payload: dict[str, Any]  # the core's model of it (`bot.models.ButtonClick`)
    received_at: datetime
    processed: bool = False
    claimed_by: str | None = None  # the instance applying it (several instances)
    lease_until: datetime | None = None  # ... until then; after, another may


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
    # The arbiter's ruling on two findings (migration 008), or None:
    # {"upheld", "retired", "upheld_summary", "retired_summary", "applied"}.
    ruling: dict[str, Any] | None = None
    # The lease of the instance running it (several instances, migration 007):
    # `fence` grows by one with every claim, and the claimer's writes carry it.
    claimed_by: str | None = None
    lease_until: datetime | None = None
    fence: int = 0


# What `Transaction.update_arbitration` may set: the lease columns change only
# through `claim_arbitration` and `renew_arbitration`.
ARBITRATION_FIELDS = frozenset(ArbitrationRow.model_fields) - {
    "id", "claimed_by", "lease_until", "fence",
}


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
    # The ruling the chosen option stands for (one finding of a contradiction
    # kept, the other retired; migration 008), or None:
    # {"upheld", "retired", "upheld_summary", "retired_summary"}.
    answer_ruling: dict[str, Any] | None = None


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
    claimed_by: str | None = None  # the instance sending it (several instances)
    lease_until: datetime | None = None  # ... until then; after, another may
    # Not a column: set by `claim_outbox` when this claim replaced another
    # instance's (its lease ran out, or it is gone), which may have posted the
    # row before it could record so (the outbox then looks before posting).
    taken_from: str | None = None


class DiscordShards(BaseModel):
    """An instance's Discord shard settings (migration 010), for the others to
    check theirs against: `shard_count` None is one unsharded connection;
    `shard_ids` empty is every shard (alone) or a share by lease."""

    shard_count: int | None = None
    shard_ids: list[int] = Field(default_factory=list)


class InstanceRow(BaseModel):
    """A `tribunal run` process sharing the database (migration 006)."""

    id: str
    host: str
    pid: int
    started_at: datetime
    last_seen: datetime  # its latest heartbeat
    discord: DiscordShards | None = None  # None: it does not run Discord

    @field_validator("discord", mode="before")
    @classmethod
    def _stored(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


class LeaseRow(BaseModel):
    """A named lease (migration 009): work that one instance at a time holds,
    such as Discord's gateway connection. `fence` grows by one with every
    claim; renewals and releases carry it."""

    name: str
    holder: str | None = None  # None: released (or never claimed)
    lease_until: datetime | None = None
    fence: int = 0
    # What the holder is doing, for whoever takes it over unfinished (migration
    # 010; a catch-up's plan as JSON text); cleared when it is finished.
    work: str | None = None
    # The token of the claim whose holder released it having finished its work
    # (0: none did). `finished == fence`: the latest claim did.
    finished: int = 0


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


def held_by_another(
    claimed_by: str | None, lease_until: datetime | None, instance_id: str, now: datetime,
    registered: set[str],
) -> bool:
    """Whether a claim keeps `instance_id` off a row now: another instance's
    lease that has not run out. A claim by an instance no longer registered
    (stopped, or cleared as dead at another's start; a replay never
    registers) holds nothing."""
    return (
        claimed_by not in (None, instance_id)
        and claimed_by in registered
        and lease_until is not None
        and lease_until > now
    )


def claimable(
    rows: list[OutboxRow], instance_id: str, now: datetime, registered: set[str]
) -> list[OutboxRow]:
    """The run of a room's pending posts (id order) an instance may claim now:
    up to the first that waits for its retry or is held by another instance's
    live lease (`held_by_another`). Every backend's `claim_outbox` applies
    this rule."""
    out: list[OutboxRow] = []
    for row in rows:
        if held_by_another(row.claimed_by, row.lease_until, instance_id, now, registered):
            break
        if row.next_attempt_at is not None and row.next_attempt_at > now:
            break
        out.append(row)
    return out


def as_claimed(row: OutboxRow, instance_id: str, lease_until: datetime) -> OutboxRow:
    """A row `claim_outbox` took, as it returns it."""
    taken_from = row.claimed_by if row.claimed_by not in (None, instance_id) else None
    return row.model_copy(
        update={"claimed_by": instance_id, "lease_until": lease_until, "taken_from": taken_from}
    )


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """What `Transaction.insert_message_taking_room` did."""

    seq: int | None  # the stored row's seq; None: a redelivery (nothing stored)
    # The room's unit, taken for the rest of the transaction (None: the room
    # was busy, or has older unapplied messages; the row waits, stored).
    unit: RoomTransaction | None = None


class Transaction(abc.ABC):
    """Writes of one unit of work; committed together when the block exits."""

    @abc.abstractmethod
    async def insert_message(self, row: MessageRow) -> int | None:
        """Store a message; its seq, or None when the room already has its message id."""

    async def insert_message_taking_room(self, row: MessageRow) -> StoredMessage:
        """`insert_message` (unapplied), and the room's unit in this same
        transaction when the room is free at once: no unit of it holds or
        awaits its lock (here, or in another instance sharing the database)
        and it has no older unapplied message. Never waits for the lock.

        The unit (`StoredMessage.unit`) holds the room's lock until this
        transaction ends, its `state` read after the lock was taken, so the
        row may be applied through it: stored and applied in one commit.
        Marking that row applied cannot fail (this transaction stored it).
        A backend that cannot take a lock without waiting takes no room
        (this default): the row is stored and applied later, as by
        `insert_message`."""
        return StoredMessage(await self.insert_message(row))

    @abc.abstractmethod
    async def mark_processed(self, seq: int, *, epoch: int, turn_no: int | None) -> bool:
        """Compare-and-set unapplied -> applied for the stored message `seq`, with
        its epoch and agent turn; False (and no change) when it was applied
        already."""

    @abc.abstractmethod
    async def insert_action(self, row: ActionRow) -> int | None:
        """Store a click or command, unprocessed; its id, or None for a redelivery
        (the platform already gave us this `delivery_id`)."""

    @abc.abstractmethod
    async def mark_action_processed(self, action_id: int) -> bool:
        """Compare-and-set unprocessed -> processed; False when it was already."""

    @abc.abstractmethod
    async def save_room_state(
        self,
        room_id: str,
        platform: str,
        channel: str,
        thread: str | None,
        state: str,
        at: datetime,
    ) -> None:
        """Insert or replace the room's state (JSON of `bot.state.RoomState`); `at` is
        its last activity."""

    @abc.abstractmethod
    async def create_arbitration(
        self, room_id: str, epoch: int, trigger: str, evidence: dict[str, Any], at: datetime
    ) -> int:
        """A new `pending` arbitration; its id (ids grow)."""

    @abc.abstractmethod
    async def update_arbitration(
        self, arbitration_id: int, *, fence: int | None = None, **fields: Any
    ) -> bool:
        """Set fields of `ArbitrationRow` (ValueError for a name not in
        `ARBITRATION_FIELDS`). With `fence` (a fenced write of leased work): only
        while that token is the arbitration's current one and it is unfinished
        (`pending` or `running`); False, and nothing changed, otherwise. On
        success the row stays locked until the unit ends, so no claim slips in
        before the unit's other writes commit."""

    @abc.abstractmethod
    async def claim_arbitration(
        self, arbitration_id: int, instance_id: str, now: datetime, lease_until: datetime
    ) -> ArbitrationRow | None:
        """Compare-and-set: the arbitration's lease for `instance_id` until
        `lease_until`, with a new fencing token (`fence` + 1). Taken when the
        arbitration is unfinished and no other instance holds a live lease on it
        (`held_by_another`: a lease that ran out, or a claim by an instance no
        longer registered, holds nothing); the row as claimed, or None. Of two
        instances claiming at once, one gets it."""

    @abc.abstractmethod
    async def renew_arbitration(
        self, arbitration_id: int, instance_id: str, fence: int, lease_until: datetime
    ) -> bool:
        """Extend `instance_id`'s lease to `lease_until` (a heartbeat while the
        model thinks); False when `fence` is no longer current (another instance
        took it over) or the arbitration is finished."""

    @abc.abstractmethod
    async def claim_lease(
        self, name: str, instance_id: str, now: datetime, lease_until: datetime
    ) -> LeaseRow | None:
        """Compare-and-set: the named lease for `instance_id` until `lease_until`,
        with a new fencing token (`fence` + 1; a lease never claimed before is
        created with token 1). Taken when no other instance holds it live
        (`held_by_another`, the rule of `claim_arbitration`: a lease that ran
        out, or one held by an instance no longer registered, holds nothing);
        the holder itself may claim again, for a new token. The lease as
        claimed, or None. Of instances claiming at once, one gets it."""

    @abc.abstractmethod
    async def renew_lease(
        self, name: str, instance_id: str, fence: int, lease_until: datetime
    ) -> bool:
        """Extend `instance_id`'s lease to `lease_until` (a heartbeat); False, and
        nothing changed, when `fence` is no longer the lease's current token or
        the lease was released (another instance may have claimed it since)."""

    @abc.abstractmethod
    async def release_lease(
        self, name: str, instance_id: str, fence: int, *, finished: bool = False
    ) -> bool:
        """Give the lease up at once (a clean stop, or a rebalance), so another
        instance need not wait for it to run out; False, and nothing changed,
        when `fence` is no longer current. The token stays: the next claim gets
        a newer one. `finished`: the work it held is done (`LeaseRow.finished`
        becomes this token and `work` is cleared), so nobody waiting for it
        takes it over."""

    @abc.abstractmethod
    async def set_lease_work(self, name: str, instance_id: str, fence: int, work: str) -> bool:
        """Record what the holder is doing (`LeaseRow.work`), for whoever takes it
        over unfinished; False, and nothing changed, when `fence` is no longer
        current (a fenced write)."""

    @abc.abstractmethod
    async def create_escalation(self, row: EscalationRow) -> None:
        """Store an escalation; its id is the arbitration's that asked the question."""

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
        ruling: dict[str, Any] | None = None,
    ) -> bool:
        """Compare-and-set pending -> answered; False when someone else won.

        `ruling`: what the chosen option rules on findings (`EscalationRow.answer_ruling`)."""

    @abc.abstractmethod
    async def cancel_other_escalations(self, room_id: str, keep: int) -> None:
        """Pending escalations of the room other than `keep` become `cancelled`."""

    @abc.abstractmethod
    async def mark_reminded(self, escalation_id: int, at: datetime) -> None:
        """The escalation's one reminder was enqueued at `at`."""

    @abc.abstractmethod
    async def set_escalation_outbox(self, escalation_id: int, outbox_id: int) -> None:
        """The outbox post that shows the escalation's buttons."""

    @abc.abstractmethod
    async def enqueue(
        self,
        room_id: str,
        kind: str,
        payload: dict[str, Any],
        at: datetime,
        edit_of: int | None = None,
    ) -> int:
        """Queue a post (`pending`), or an edit of post `edit_of`; its outbox id.
        A room's posts go out in id order."""

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
    ) -> None:
        """Record a send attempt: status `sent`, `pending` (retry at `next_attempt_at`)
        or `failed`; counts the attempt and keeps an earlier platform id."""

    @abc.abstractmethod
    async def set_setting(self, scope: str, scope_id: str, key: str, value: Any) -> None:
        """Set a JSON-able setting; `None` deletes it."""

    @abc.abstractmethod
    async def set_bindings(self, platform: str, channel: str, role: str, ids: list[str]) -> None:
        """Replace the ids bound to `role` in the channel."""

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
    ) -> None:
        """Append one audit line (who changed what, before and after, as JSON text)."""

    @abc.abstractmethod
    async def renew_outbox(self, room_id: str, instance_id: str, lease_until: datetime) -> int:
        """Extend `instance_id`'s claims on the room's unsent posts to `lease_until`
        (a heartbeat while it sends them, pacing waits included); how many."""

    @abc.abstractmethod
    async def save_instance(self, row: InstanceRow) -> None:
        """Register an instance, or renew its `last_seen` (a heartbeat); its
        Discord shard settings are stored with it."""

    @abc.abstractmethod
    async def remove_instance(self, instance_id: str) -> None:
        """The instance stopped (or was found dead); its claims on unsent posts
        and unfinished arbitrations, and its named leases, are released for the
        others at once."""

    # -- reads inside the unit (they see its own writes) ----------------------
    @abc.abstractmethod
    async def get_escalation(self, escalation_id: int) -> EscalationRow | None:
        """The escalation as this unit sees it."""

    @abc.abstractmethod
    async def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        """The outbox row as this unit sees it."""


class RoomTransaction(Transaction):
    """One state transition of one room (`Storage.room`): the room's lock is held
    for the whole unit, so `state` cannot change under it."""

    room_id: str
    state: str | None  # the room's stored state at entry (None: a new room)

    @abc.abstractmethod
    async def unprocessed_messages(self) -> list[MessageRow]:
        """The room's stored, unapplied messages, oldest first. (A backend may
        read them with the state, at the unit's start, and answer a first call
        made before the unit wrote any message from that read.)"""


@dataclass(frozen=True, slots=True)
class PendingCounts:
    outbox: int  # posts not yet sent (retrying or waiting for their platform)
    escalations: int  # escalations waiting for a human


class Storage(abc.ABC):
    # Whether several `tribunal run` processes may share the database
    # (PostgreSQL). SQLite is one process's: what only one instance may do
    # (hold Discord's gateway) needs no lease there.
    shared: ClassVar[bool] = False

    @abc.abstractmethod
    async def open(self) -> None:
        """Connect and apply pending migrations."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the connection(s); the object may be opened again."""

    @abc.abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Transaction]:
        """A unit of work of no room: committed when the block exits, rolled back if
        it raises. Never waits for a room's lock."""

    @abc.abstractmethod
    def room(self, room_id: str) -> AbstractAsyncContextManager[RoomTransaction]:
        """One state transition of the room: its lock (units of the same room run
        one at a time, in the order they asked), its state loaded, reads and writes
        committed together when the block exits, rolled back if it raises. Hold it
        for a transition only: never across a model call or a platform call."""

    @abc.abstractmethod
    async def load_room_state(self, room_id: str) -> str | None:
        """The room's stored state, outside any unit (status displays, start-up)."""

    @abc.abstractmethod
    async def unprocessed_messages(self, room_id: str | None = None) -> list[MessageRow]:
        """Messages stored but not yet applied (a crash came in between), oldest first."""

    @abc.abstractmethod
    async def get_action(self, action_id: int) -> ActionRow | None:
        """One stored click or command, or None."""

    @abc.abstractmethod
    async def unprocessed_actions(self) -> list[ActionRow]:
        """Clicks and commands stored but not yet applied, oldest first."""

    @abc.abstractmethod
    async def rooms_with_open_turns(self) -> list[str]:
        """Rooms whose state has an open turn (checked once at start-up)."""

    @abc.abstractmethod
    async def catch_up_marks(self, platform: str) -> list[CatchUpMark]:
        """Every room of the platform with a stored message: its latest stored
        message and whether its task is open, most recently active first."""

    @abc.abstractmethod
    async def latest_room(self, platform: str, channel: str) -> str | None:
        """The channel's room with the latest activity, if any."""

    @abc.abstractmethod
    async def get_bindings(self, platform: str, channel: str) -> dict[str, list[str]]:
        """role -> bound ids, for the roles that have any."""

    @abc.abstractmethod
    async def get_settings(self, scope: str, scope_id: str) -> dict[str, Any]:
        """The stored settings of one scope (`channel`, `room`, `replay`)."""

    @abc.abstractmethod
    async def get_arbitration(self, arbitration_id: int) -> ArbitrationRow | None:
        """One arbitration, or None."""

    @abc.abstractmethod
    async def unfinished_arbitrations(self) -> list[ArbitrationRow]:
        """Arbitrations still `pending` or `running`, oldest first (recovery)."""

    @abc.abstractmethod
    async def room_arbitrations(
        self, room_id: str, *, since: datetime | None = None, limit: int = 10
    ) -> list[ArbitrationRow]:
        """Finished arbitrations of a room, oldest first (the last `limit`)."""

    @abc.abstractmethod
    async def get_escalation(self, escalation_id: int) -> EscalationRow | None:
        """One escalation, or None."""

    @abc.abstractmethod
    async def due_reminders(self, created_before: datetime) -> list[EscalationRow]:
        """Pending escalations created at or before the time, not reminded yet."""

    @abc.abstractmethod
    async def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        """One outbox row, or None."""

    @abc.abstractmethod
    async def pending_rooms(self, platforms: list[str], limit: int = 1000) -> list[str]:
        """Rooms of these platforms with posts still to send."""

    @abc.abstractmethod
    async def pending_outbox(self, room_id: str, limit: int = 50) -> list[OutboxRow]:
        """A room's unsent posts, oldest first."""

    @abc.abstractmethod
    async def claim_outbox(
        self, room_id: str, instance_id: str, now: datetime, lease_until: datetime,
        limit: int = 50,
    ) -> list[OutboxRow]:
        """Claim the room's due posts for `instance_id` until `lease_until`, oldest first.

        One transaction: the claimed rows are the longest run of the room's
        pending posts, in id order, that are due (`next_attempt_at` passed) and
        not held by another instance's live lease (nor being claimed by it right
        now; a claim by an unregistered instance holds nothing); the run stops
        at the first that is not, so a room's posts keep
        their order. Two instances claiming the same room get disjoint sets;
        a lease that ran out may be claimed again (the row then names the
        instance it was taken from: `OutboxRow.taken_from`)."""

    @abc.abstractmethod
    async def reserve_slot(self, key: str, now: datetime, spacing: timedelta) -> datetime:
        """Take the next free moment of `key` (a paced thing shared by every
        instance: one method's calls into one channel) for one call: the later
        of `now` and the key's next free moment, which moves `spacing` past it.
        One atomic statement; of two instances asking at once each gets its own
        moment. Millisecond precision."""

    @abc.abstractmethod
    async def push_slot(self, key: str, not_before: datetime) -> None:
        """A call of `key` ended: its next free moment is at least `not_before`."""

    @abc.abstractmethod
    async def instances(self) -> list[InstanceRow]:
        """Every registered instance, oldest start first."""

    @abc.abstractmethod
    async def leases(self, prefix: str = "") -> list[LeaseRow]:
        """Every named lease whose name starts with `prefix`, by name, held or
        not (whether one is live is the reader's rule: `held_by_another`)."""

    @abc.abstractmethod
    async def room_states(self) -> list[tuple[str, str]]:
        """(room id, stored state) of every room, by id (`tribunal status`)."""

    @abc.abstractmethod
    async def pending_escalations(self) -> list[EscalationRow]:
        """Escalations waiting for a human, oldest first."""

    @abc.abstractmethod
    async def recent_arbitrations(self, limit: int = 10) -> list[ArbitrationRow]:
        """The latest arbitrations of every room, newest first."""

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
    async def list_audit(self, platform: str, channel: str, limit: int = 20) -> list[AuditRow]:
        """The channel's latest audit lines, newest first."""

    async def pending_counts(self) -> PendingCounts | None:
        """What waits, for the metrics and the health check (bot/ops_server.py).

        Not abstract: a backend that cannot count cheaply returns None, and the
        health check then proves the database answers with another read.
        """
        return None

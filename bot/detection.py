"""Turns, rounds and deadlock detection (DESIGN §2-§3). No I/O.

`RoomState` is the whole per-room memory the detector needs; the engine loads
it from storage, lets these functions mutate it, and saves it back in the same
transaction as the message that changed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from bot.models import Role, Status, Trigger
from bot.similarity import compare
from bot.status import parse_status

# A turn longer than this is compared on its first part only; the messages
# themselves are stored in full.
TURN_TEXT_CAP = 16_000


class OpenTurn(BaseModel):
    role: Role
    author: str
    turn_no: int
    first_message_id: str
    last_message_id: str
    started_at: datetime
    last_at: datetime
    text: str = ""


class PendingOwner(BaseModel):
    turn_no: int
    last_message_id: str
    similarity: float | None = None
    near_repeat: bool = False


class RoomState(BaseModel):
    epoch: int = 0
    task_active: bool = False
    task_started_at: datetime | None = None
    task_start_seq: int = 0  # seq of the human message that opened the task
    humans: list[str] = Field(default_factory=list)  # who may answer escalations
    requester: str | None = None  # the last human who wrote; pinged on ESCALATE
    turn_seq: int = 0
    open_turn: OpenTurn | None = None
    last_owner_text: str | None = None
    last_owner_turn: int | None = None
    last_reviewer_text: str | None = None
    last_reviewer_turn: int | None = None
    pending_owner: PendingOwner | None = None
    rounds: int = 0
    stalled_rounds: int = 0
    fired: list[Trigger] = Field(default_factory=list)
    awaiting_escalation: int | None = None
    last_escalation: int | None = None  # the latest one, answered or not
    decided_turn_seq: int | None = None  # turn_seq when it was answered (late digits)
    arbitrations_since_human: int = 0
    proceed_triggers: list[Trigger] = Field(default_factory=list)
    approved: bool = False
    last_detection: dict[str, Any] | None = None
    # Replay only: the state just before end-of-input closed a turn that
    # triggered nothing, so a replay continuing in another process can resume
    # that turn exactly as a single run would have.
    eof_snapshot: str | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    stall_threshold: int = 2
    max_rounds: int = 6
    similarity_threshold: float = 0.5
    turn_quiet_seconds: float | None = 3.0


@dataclass(slots=True)
class Deadlock:
    trigger: Trigger
    after_message: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Approved:
    after_message: str


@dataclass(slots=True)
class TurnClosed:
    role: Role
    turn_no: int
    status: Status
    last_message_id: str


Event = Deadlock | Approved | TurnClosed


def start_epoch(state: RoomState) -> None:
    """Counters and comparisons restart; the same triggers may fire again."""
    state.epoch += 1
    state.rounds = 0
    state.stalled_rounds = 0
    state.fired = []
    state.last_owner_text = None
    state.last_owner_turn = None
    state.last_reviewer_text = None
    state.last_reviewer_turn = None
    state.pending_owner = None


def add_agent_message(
    state: RoomState,
    role: Role,
    message_id: str,
    author: str,
    text: str,
    ts: datetime,
    thresholds: Thresholds,
) -> list[Event]:
    """Extend the open turn, or close it and open a new one."""
    events: list[Event] = []
    turn = state.open_turn
    if turn is not None and turn.role == role and not is_quiet(turn, ts, thresholds):
        if len(turn.text) < TURN_TEXT_CAP:
            turn.text = (turn.text + "\n" + text)[:TURN_TEXT_CAP]
        turn.last_message_id = message_id
        turn.last_at = max(turn.last_at, ts)
        return events
    events.extend(close_turn(state, thresholds))
    state.turn_seq += 1
    state.open_turn = OpenTurn(
        role=role,
        author=author,
        turn_no=state.turn_seq,
        first_message_id=message_id,
        last_message_id=message_id,
        started_at=ts,
        last_at=ts,
        text=text[:TURN_TEXT_CAP],
    )
    return events


def is_quiet(turn: OpenTurn, now: datetime, thresholds: Thresholds) -> bool:
    quiet = thresholds.turn_quiet_seconds
    return quiet is not None and (now - turn.last_at).total_seconds() >= quiet


def close_if_quiet(state: RoomState, now: datetime, thresholds: Thresholds) -> list[Event]:
    turn = state.open_turn
    if turn is None or not is_quiet(turn, now, thresholds):
        return []
    return close_turn(state, thresholds)


def close_turn(
    state: RoomState, thresholds: Thresholds, *, allow_deadlock: bool = True
) -> list[Event]:
    """Close the open turn and judge the round it may complete."""
    turn = state.open_turn
    if turn is None:
        return []
    state.open_turn = None
    status = parse_status(turn.text)
    events: list[Event] = [TurnClosed(turn.role, turn.turn_no, status, turn.last_message_id)]
    if state.awaiting_escalation is not None:
        return events  # the room waits for the human; nothing is judged meanwhile
    trigger: Trigger | None = None
    evidence: dict[str, Any] = {}
    if turn.role == Role.OWNER:
        cmp = compare(state.last_owner_text, turn.text, thresholds.similarity_threshold)
        state.pending_owner = PendingOwner(
            turn_no=turn.turn_no,
            last_message_id=turn.last_message_id,
            similarity=None if state.last_owner_text is None else cmp.similarity,
            near_repeat=state.last_owner_text is not None and not cmp.is_new,
        )
        state.last_owner_text, state.last_owner_turn = turn.text, turn.turn_no
    elif turn.role == Role.REVIEWER:
        if status.is_approval:
            state.approved = True
            state.task_active = False
            start_epoch(state)
            events.append(Approved(turn.last_message_id))
            return events
        previous_turn = state.last_reviewer_turn
        cmp = compare(state.last_reviewer_text, turn.text, thresholds.similarity_threshold)
        state.last_reviewer_text, state.last_reviewer_turn = turn.text, turn.turn_no
        owner = state.pending_owner
        if owner is not None:
            state.pending_owner = None
            state.rounds += 1
            progress = cmp.is_new and not owner.near_repeat
            state.stalled_rounds = 0 if progress else state.stalled_rounds + 1
            evidence["round"] = {
                "owner_turn": owner.turn_no,
                "owner_similarity_to_previous": owner.similarity,
                "owner_near_repeat": owner.near_repeat,
                "reviewer_turn": turn.turn_no,
                "reviewer_previous_turn": previous_turn,
                "reviewer_similarity_to_previous": (
                    None if previous_turn is None else cmp.similarity
                ),
                "reviewer_new_fingerprints": list(cmp.new_fingerprints),
                "reviewer_materially_new": cmp.is_new,
                "progress": progress,
            }
            if state.stalled_rounds >= thresholds.stall_threshold:
                trigger = Trigger.NO_PROGRESS
            elif state.rounds >= thresholds.max_rounds:
                trigger = Trigger.MAX_ROUNDS
    if turn.role.is_agent and status in (Status.BLOCKED, Status.NEEDS_CONTEXT):
        trigger = Trigger.BLOCKED if status == Status.BLOCKED else Trigger.NEEDS_CONTEXT
        evidence["status_turn"] = {"role": turn.role.value, "turn": turn.turn_no}
    if trigger is not None and allow_deadlock and trigger not in state.fired:
        state.fired.append(trigger)
        evidence.update(
            trigger=trigger.value,
            rounds=state.rounds,
            stalled_rounds=state.stalled_rounds,
            stall_threshold=thresholds.stall_threshold,
            max_rounds=thresholds.max_rounds,
            similarity_threshold=thresholds.similarity_threshold,
            after_message=turn.last_message_id,
        )
        state.last_detection = evidence
        events.append(Deadlock(trigger, turn.last_message_id, evidence))
    return events


def manual_deadlock(state: RoomState, after_message: str) -> Deadlock | None:
    """`/arbiter summon`: arbitrate now, unless already waiting for a human."""
    if state.awaiting_escalation is not None:
        return None
    evidence = {
        "trigger": Trigger.MANUAL.value,
        "rounds": state.rounds,
        "stalled_rounds": state.stalled_rounds,
        "after_message": after_message,
    }
    state.last_detection = evidence
    return Deadlock(Trigger.MANUAL, after_message, evidence)

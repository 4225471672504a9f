"""Turns, rounds and deadlock detection. No I/O.

`RoomState` is the whole per-room memory the detector needs; the engine loads
it from storage, lets these functions mutate it, and saves it back in the same
transaction as the message that changed it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from bot.finding import Finding, OwnerAction, Question
from bot.fix_values import fixed_by_value, names_set
from bot.ledger import disputed, judge_round, reset_stalls, snapshot, stuck
from bot.models import Role, Status, Trigger
from bot.owner_turn import declared_conflict, read_owner, refusal_reasons
from bot.setting_aliases import aliases_said, teach

# The state types live in bot.state; re-exported for the detection functions' callers.
from bot.state import OpenTurn, PendingOwner, RoomState, TurnPart
from bot.status import parse_status
from bot.topics import restored, stored

# A turn longer than this is compared on its first part only; the messages
# themselves are stored in full.
TURN_TEXT_CAP = 16_000


@dataclass(frozen=True, slots=True)
class Thresholds:
    stall_threshold: int = 2
    max_rounds: int = 6
    turn_quiet_seconds: float | None = 3.0


@dataclass(slots=True)
class Deadlock:
    trigger: Trigger
    after_message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    finding: str | None = None
    finding_rounds: int | None = None


@dataclass(slots=True)
class Approved:
    after_message: str


@dataclass(slots=True)
class TurnClosed:
    role: Role
    turn_no: int
    status: Status
    last_message_id: str
    # The round's readings the rules were unsure of (reviewer turns only): what
    # the optional progress judge is asked about (bot/arbiter/judge.py).
    questions: list[Question] = field(default_factory=list)


Event = Deadlock | Approved | TurnClosed


def start_task(state: RoomState) -> None:
    """A human message after an approval (or the first one): a new ledger."""
    state.findings = []
    state.aliases = []
    state.task_rounds = 0
    state.carry_progress = False


def start_epoch(state: RoomState) -> None:
    """Counters restart and the same triggers may fire again; findings stay."""
    state.epoch += 1
    state.rounds = 0
    state.stalled_rounds = 0
    state.fired = []
    state.pending_owner = None
    reset_stalls(state.findings)


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
        if turn.chars < TURN_TEXT_CAP:
            part = text[: TURN_TEXT_CAP - turn.chars]
            turn.parts.append(TurnPart(author=author, text=part))
            turn.chars += len(part)
        elif author not in turn.authors():
            # Its words are past the cap, but it spoke: not a silent reviewer
            # whose findings a reported fix settles, nor one who approved.
            turn.parts.append(TurnPart(author=author, text=""))
        turn.last_message_id = message_id
        turn.last_at = max(turn.last_at, ts)
        return events
    events.extend(close_turn(state, thresholds))
    state.turn_seq += 1
    part = text[:TURN_TEXT_CAP]
    state.open_turn = OpenTurn(
        role=role,
        author=author,
        turn_no=state.turn_seq,
        first_message_id=message_id,
        last_message_id=message_id,
        started_at=ts,
        last_at=ts,
        parts=[TurnPart(author=author, text=part)],
        chars=len(part),
    )
    return events


def is_quiet(turn: OpenTurn, now: datetime, thresholds: Thresholds) -> bool:
    quiet = thresholds.turn_quiet_seconds
    return quiet is not None and (now - turn.last_at).total_seconds() >= quiet


def close_if_quiet(
    state: RoomState,
    now: datetime,
    thresholds: Thresholds,
    *,
    decisions: dict[str, str] | None = None,
    judge: dict[str, Any] | None = None,
) -> list[Event]:
    turn = state.open_turn
    if turn is None or not is_quiet(turn, now, thresholds):
        return []
    return close_turn(state, thresholds, decisions=decisions, judge=judge)


def _approves(turn: OpenTurn, findings: list[Finding]) -> bool:
    """Every reviewer who spoke approves, and no silent reviewer has an open finding."""
    authors = turn.authors()
    if not all(parse_status(turn.messages(a)).is_approval for a in authors):
        return False
    return not any(f.is_open and f.author not in authors for f in findings)


def _status(turn: OpenTurn) -> Status:
    """The turn's status; with several authors, BLOCKED / NEEDS_CONTEXT of any wins."""
    statuses = [parse_status(turn.messages(a)) for a in turn.authors()]
    for wanted in (Status.BLOCKED, Status.ESCALATE, Status.NEEDS_CONTEXT):
        if wanted in statuses:
            return wanted
    return statuses[0] if statuses else Status.CONTINUE


def close_turn(
    state: RoomState,
    thresholds: Thresholds,
    *,
    allow_deadlock: bool = True,
    decisions: dict[str, str] | None = None,
    judge: dict[str, Any] | None = None,
) -> list[Event]:
    """Close the open turn, update the ledger, and judge the round it may complete.

    `decisions`: the progress judge's answers to the questions a first, dry
    closing of the same turn reported (`TurnClosed.questions`); `judge`: the
    record of that call, kept in the evidence.
    """
    turn = state.open_turn
    if turn is None:
        return []
    state.open_turn = None
    status = _status(turn)
    closed = TurnClosed(turn.role, turn.turn_no, status, turn.last_message_id)
    events: list[Event] = [closed]
    waiting = state.awaiting_escalation is not None
    candidates: list[tuple[Trigger, dict[str, Any]]] = []
    evidence: dict[str, Any] = {}
    stuck_finding: Finding | None = None
    if turn.role == Role.OWNER:
        owner_questions: list[Question] = []
        actions = read_owner(state.findings, turn.messages(), questions=owner_questions)
        for label in fixed_by_value(state.findings, actions, turn.messages()):
            actions[label] = OwnerAction.FIX  # the fix set the value it asked
        state.pending_owner = PendingOwner(
            turn_no=turn.turn_no,
            last_message_id=turn.last_message_id,
            actions=actions,
            questions=[asdict(q) for q in owner_questions],
            # (Only a refusal's, or a promise's: the reviewer may answer its reasons.)
            reasons=stored(reasons) if (reasons := refusal_reasons(turn.messages())) else [],
        )
        taught = names_set(state.findings, actions, turn.messages())
        for finding in state.findings:
            if finding.label in taught:  # the fix named the setting the finding asked a value of
                finding.learn_setting(*taught[finding.label])
        for names in aliases_said(turn.messages()):  # "`A`와 `B`은 같은 설정입니다"
            if list(names) not in state.aliases:
                state.aliases.append(list(names))
        teach(state.findings, state.aliases)
        pair = declared_conflict(state.findings, turn.messages())
        if pair is not None:
            candidates.append((Trigger.CONTRADICTION, {"pair": list(pair), "declared_by": "owner"}))
    elif turn.role == Role.REVIEWER:
        if not waiting and _approves(turn, state.findings):
            state.approved = True
            state.task_active = False
            start_epoch(state)
            events.append(Approved(turn.last_message_id))
            return events
        owner = state.pending_owner
        state.pending_owner = None
        round_no = state.task_rounds + (1 if owner is not None else 0)
        pending = [Question(**q) for q in owner.questions] if owner is not None else []
        if owner is not None:
            for q in pending:  # the judge's reading of an owner clause wins
                answer = (decisions or {}).get(q.key)
                if answer in {a.value for a in OwnerAction}:
                    owner.actions[q.label] = OwnerAction(answer)
        outcome = judge_round(
            state.findings,
            [(a, turn.messages(a)) for a in turn.authors()],
            owner.actions if owner is not None else None,
            max(round_no, 1),
            decisions,
            approving=frozenset(a for a in turn.authors()
                                if parse_status(turn.messages(a)).is_approval),
            aliases=state.aliases,
            reasons=restored(owner.reasons) if owner is not None and owner.reasons else None,
        )
        closed.questions = [*pending, *outcome.questions]
        if outcome.contradictions:
            earlier, new = outcome.contradictions[0]
            candidates.append((Trigger.CONTRADICTION, {"pair": [earlier, new]}))
        if owner is None:
            state.carry_progress = state.carry_progress or outcome.progress
        elif not waiting:
            state.rounds += 1
            state.task_rounds += 1
            progress = outcome.progress or state.carry_progress
            state.carry_progress = False
            state.stalled_rounds = 0 if progress else state.stalled_rounds + 1
            evidence["round"] = {
                "owner_turn": owner.turn_no,
                "reviewer_turn": turn.turn_no,
                "owner": {k: v.value for k, v in owner.actions.items()},
                "reviewer": outcome.events,
                "comparisons": outcome.comparisons[:20],
                "uncertain": outcome.uncertain,
                "questions": [asdict(q) for q in closed.questions],
                "progress": progress,
            }
            if judge is not None:
                evidence["round"]["judge"] = judge
            if state.stalled_rounds >= thresholds.stall_threshold:
                candidates.append((Trigger.NO_PROGRESS, {"rule": "round"}))
            else:
                stuck_finding = stuck(state.findings, thresholds.stall_threshold)
                if stuck_finding is not None:
                    candidates.append((Trigger.NO_PROGRESS, {"rule": stuck_finding.label}))
            if state.rounds >= thresholds.max_rounds:
                candidates.append((Trigger.MAX_ROUNDS, {}))
        else:
            state.task_rounds += 1
    if waiting:
        return events  # the room waits for the human; the ledger moved, nothing fires
    if turn.role.is_agent and status in (Status.BLOCKED, Status.ESCALATE, Status.NEEDS_CONTEXT):
        trigger = Trigger.NEEDS_CONTEXT if status == Status.NEEDS_CONTEXT else Trigger.BLOCKED
        status_turn = {"role": turn.role.value, "turn": turn.turn_no}
        # Second in priority: after a contradiction the same close holds.
        first = sum(1 for t, _ in candidates if t is Trigger.CONTRADICTION)
        candidates.insert(first, (trigger, {"status_turn": status_turn}))
    live = [(t, extra) for t, extra in candidates if t not in state.fired]
    if not live or not allow_deadlock:
        return events
    trigger, extra = live[0]
    state.fired.append(trigger)
    evidence.update(extra)
    evidence.update(
        trigger=trigger.value,
        rounds=state.rounds,
        stalled_rounds=state.stalled_rounds,
        stall_threshold=thresholds.stall_threshold,
        max_rounds=thresholds.max_rounds,
        after_message=turn.last_message_id,
        also=[t.value for t, _ in candidates[1:] if t != trigger],
        ledger=snapshot(state.findings),
        disputed=[f.label for f in disputed(state.findings)],
    )
    deadlock = Deadlock(trigger, turn.last_message_id, evidence)
    if trigger is Trigger.CONTRADICTION:
        evidence["disputed"] = list(extra["pair"])
    on_finding = extra.get("rule") not in (None, "round")
    if trigger is Trigger.NO_PROGRESS and stuck_finding is not None and on_finding:
        deadlock.finding, deadlock.finding_rounds = stuck_finding.label, stuck_finding.stall
        evidence["finding"], evidence["finding_rounds"] = deadlock.finding, deadlock.finding_rounds
        evidence["disputed"] = [stuck_finding.label]
    state.last_detection = evidence
    events.append(deadlock)
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
        "ledger": snapshot(state.findings),
        "disputed": [f.label for f in disputed(state.findings)],
    }
    state.last_detection = evidence
    return Deadlock(Trigger.MANUAL, after_message, evidence)

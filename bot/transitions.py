"""Every change of a room's state, in one place.

An input comes in with the room's unit of work (`Storage.room`: its lock, its
stored state, one transaction): a stored message, a turn closing, an answer
(by digit, button or free text), a verdict, `/arbiter summon`. The transition
changes the `RoomState`, writes what belongs with it through the unit (the
message marked applied, arbitration rows, the posts to queue, the state
itself) and returns `Effects`, which the engine runs after the commit:
arbitrations to start (each outside any unit: a model call takes minutes),
events to emit, outbox rooms to flush. Nothing here calls a model or a
platform, and nothing here reads through `Storage` (only through the unit):
what a transition needs from elsewhere (`RoomContext`) is read before the
unit is opened.

Answers follow one set of rules whatever their form (`judge`): who may
answer, whether the option exists, then a compare-and-set that exactly one
answer wins, and a new epoch for the room.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from bot import detection, telemetry
from bot.answers import parse_digit_answer
from bot.channels import ChannelInfo
from bot.clock import Clock
from bot.detection import Approved, Deadlock, Thresholds
from bot.escalation import Rejection, check_option, may_answer, rejection_text
from bot.escalation_flow import Reply, announce, decide, enqueue_private
from bot.i18n import resolve, text_language
from bot.ledger import apply_ruling
from bot.lru import LRU
from bot.models import AnswerKind, Role, RoomKey, Trigger, Verdict, VerdictKind
from bot.state import RoomState
from storage.base import EscalationRow, MessageRow, RoomTransaction

MAX_HUMANS = 50
LATE_ANSWER_WINDOW = timedelta(minutes=10)


@dataclass(slots=True)
class RoomContext:
    """What a transition needs besides the room's unit, read before the unit opens
    (a backend may serialise units on one connection: no reads through `Storage`
    inside one)."""

    channel: ChannelInfo
    thresholds: Thresholds
    values: dict[str, Any]
    # The language set on the room or its channel, if any, and the global one:
    # with the task's own (in the state the unit loaded) they give the room's
    # language (`language_of`, bot.i18n), without another read of the state.
    configured_language: str | None = None
    default_language: str = "ko"
    # Several reviewers: how long a reviewer turn that some reviewer of
    # the task has not spoken in yet stays open in silence (None: no timer,
    # as in a replay, where turns close at a role change or the end of input).
    reviewer_wait_seconds: float | None = None
    # The progress judge's answers for the turn this transition closes, and
    # the record of that call (bot/arbiter/judge.py; None: rules only).
    decisions: dict[str, str] | None = None
    judge: dict[str, Any] | None = None

    def language_of(self, state: RoomState) -> str:
        return resolve(self.configured_language, state, self.default_language)


@dataclass(slots=True)
class Effects:
    """What the engine does once the unit has committed."""

    arbitrations: list[int] = field(default_factory=list)  # to run, outside any unit
    events: list[dict[str, Any]] = field(default_factory=list)  # for the listeners
    reports: list[Callable[[], None]] = field(default_factory=list)  # log lines, counters
    posted: bool = False  # the unit queued posts: flush the room's outbox
    saved: bool = False  # the state was written (then `open_turn_at` is current)
    open_turn_at: datetime | None = None  # last message of the open turn, if any
    # The open turn waits for reviewers of the task who have not spoken in it
    # (`waits_for_reviewers`): it closes after `reviewer_wait_seconds` of silence.
    open_turn_waits: bool = False
    consumed: bool = True  # False: the message stays stored (an arbitration goes first)
    reply: Reply | None = None  # an answer, taken or refused

    def run_reports(self, emit: Callable[[dict[str, Any]], None]) -> None:
        for report in self.reports:
            report()
        for event in self.events:
            emit(event)


def load(unit: RoomTransaction) -> RoomState:
    return RoomState() if unit.state is None else RoomState.model_validate_json(unit.state)


async def save(unit: RoomTransaction, room: RoomKey, state: RoomState, now: datetime,
               effects: Effects) -> str:
    """Write the room's state through the unit; the JSON written."""
    text = state.model_dump_json()
    await unit.save_room_state(room.id, room.platform, room.channel, room.thread, text, now)
    effects.saved = True
    effects.open_turn_at = state.open_turn.last_at if state.open_turn is not None else None
    return text


class ParsedStates:
    """The state objects of the rooms saved last, each beside the exact JSON it
    was saved as, so that the next unit of the room need not parse and
    validate that JSON again (on a busy room it costs more than the unit's
    statements).

    The JSON the unit read decides: the same text is the same state, whoever
    wrote it and whether or not the save it came from was committed; another
    instance's change, a rolled-back save, anything else makes the text
    differ, and the object is not used. A taken object leaves the cache (the
    transition changes it); one is put back only as the JSON just saved of it,
    or unchanged as the JSON it was taken for. Bounded: the rooms active last.
    """

    def __init__(self, size: int = 256) -> None:
        self._kept: LRU[str, tuple[str, RoomState]] = LRU(size)

    def take(self, unit: RoomTransaction) -> RoomState:
        """The unit's state, as `load`."""
        kept = self._kept.get(unit.room_id)
        if kept is not None:
            self._kept.pop(unit.room_id)
            if kept[0] == unit.state:
                return kept[1]
        return load(unit)

    def keep(self, room_id: str, text: str | None, state: RoomState) -> None:
        """`state` is exactly `text` parsed (just saved as it, or taken for it and
        left unchanged), and nothing will change it any more."""
        if text is not None:
            self._kept.put(room_id, (text, state))


class AlreadyApplied(RuntimeError):
    """The stored message was applied by another unit meanwhile: this unit must
    write nothing (raised inside it, so it rolls back). The room's lock makes
    this impossible on a backend whose lock spans processes; it guards a
    database shared without one."""


async def mark_applied(unit: RoomTransaction, row: MessageRow, *, epoch: int,
                       turn_no: int | None) -> None:
    if not await unit.mark_processed(row.seq, epoch=epoch, turn_no=turn_no):
        raise AlreadyApplied(f"message {row.seq} of {row.room_id} is applied already")


def waits_for_reviewers(state: RoomState) -> bool:
    """The open turn is a reviewer turn that not every reviewer who has posted in
    this task has spoken in yet (several reviewers). With one reviewer, that
    reviewer is in its own turn: never."""
    turn = state.open_turn
    if turn is None or turn.role is not Role.REVIEWER:
        return False
    spoken = set(turn.authors())
    return any(r not in spoken for r in state.task_reviewers)


def turn_thresholds(state: RoomState, ctx: RoomContext) -> Thresholds:
    """The thresholds that close the room's open turn.

    A reviewer turn closes at the owner's next message or after
    `turn_quiet_seconds` of silence once every reviewer of the task has
    spoken in it; until then the silence that closes it is
    `reviewer_wait_seconds` (never shorter than the quiet time: an agent
    splitting its output over several messages is not cut off).
    """
    quiet, wait = ctx.thresholds.turn_quiet_seconds, ctx.reviewer_wait_seconds
    if quiet is None or wait is None or not waits_for_reviewers(state):
        return ctx.thresholds
    return replace(ctx.thresholds, turn_quiet_seconds=max(quiet, wait))


def _reviewer_spoke(state: RoomState, role: Role, author: str) -> None:
    if role is Role.REVIEWER and author not in state.task_reviewers:
        state.task_reviewers = [*state.task_reviewers, author]


def is_admin(user_id: str, admin_ids: list[str], platform_admin: bool = False) -> bool:
    return platform_admin or user_id in admin_ids


class Transitions:
    def __init__(self, clock: Clock, admin_ids: list[str]) -> None:
        self.clock = clock
        self.admin_ids = admin_ids
        self.states = ParsedStates()  # for messages and turns closing: the busy path

    # -- messages and turns ---------------------------------------------------
    async def message(
        self, unit: RoomTransaction, room: RoomKey, row: MessageRow, ctx: RoomContext
    ) -> Effects | None:
        """Apply one stored message. None: the room holds its messages (an
        arbitration is in flight; they are applied after its verdict)."""
        state = self.states.take(unit)
        if state.arbitrating:
            self.states.keep(room.id, unit.state, state)  # unchanged
            return None
        effects = Effects()
        if not ctx.channel.watched or ctx.channel.paused:
            await mark_applied(unit, row, epoch=-1, turn_no=None)  # never applied
            return effects
        role = Role(row.role)
        events: list[detection.Event] = []
        turn = state.open_turn
        thresholds = turn_thresholds(state, ctx)
        if turn is not None and (
            turn.role != role or detection.is_quiet(turn, row.ts, thresholds)
        ):
            # Another role speaks (or silence fell): the open turn ends here.
            events = detection.close_turn(
                state, ctx.thresholds, decisions=ctx.decisions, judge=ctx.judge
            )
            if any(isinstance(e, Deadlock) for e in events):
                # Arbitrate first: this very message may answer what the turn
                # triggered. It stays stored and is applied after the verdict.
                await self._record_detection(unit, room, state, events, effects)
                text = await save(unit, room, state, self.clock.now(), effects)
                self.states.keep(room.id, text, state)
                effects.open_turn_waits = waits_for_reviewers(state)
                effects.consumed = False
                return effects
        task_open = state.task_active and not state.approved
        reply = None
        if role is Role.USER:
            reply = await self._digit_reply(unit, state, row, ctx)
            if reply is None or reply.starts_epoch:
                _human_spoke(state, row.author, row.ts)
                if not task_open:
                    state.task_start_seq = row.seq
                    # One voice per room: the task's language is its first human message's.
                    state.language = text_language(row.text)
        else:
            events += detection.add_agent_message(
                state, role, row.message_id, row.author, row.text, row.ts, thresholds
            )
            _reviewer_spoke(state, role, row.author)
        turn = state.open_turn
        await mark_applied(
            unit, row, epoch=state.epoch, turn_no=turn.turn_no if role.is_agent and turn else None
        )
        if reply is not None:
            if reply.kind is None:
                await enqueue_private(unit, room, reply.by, reply.private_text or "",
                                      self.clock.now())
            elif await decide(unit, room, state, reply, self.clock.now()):
                if reply.ends_task:
                    _end_task(state)
            else:
                await self._lost(unit, room, reply)
            self._answered(room, reply, effects)
        await self._record_detection(unit, room, state, events, effects)
        text = await save(unit, room, state, self.clock.now(), effects)
        self.states.keep(room.id, text, state)
        effects.open_turn_waits = waits_for_reviewers(state)
        return effects

    async def close_turn(
        self, unit: RoomTransaction, room: RoomKey, ctx: RoomContext, *, force: bool,
    ) -> Effects | None:
        """Close the room's open turn if it went quiet (or now, `force`).

        None when there is nothing to do, or the room is busy: an arbitration
        in flight, or stored messages waiting to be applied (they come first).
        """
        state = self.states.take(unit)
        if state.open_turn is None or state.arbitrating or (
            not force and await unit.unprocessed_messages()
        ):
            self.states.keep(room.id, unit.state, state)  # unchanged
            return None
        if force:
            events = detection.close_turn(
                state, ctx.thresholds, decisions=ctx.decisions, judge=ctx.judge
            )
        else:
            events = detection.close_if_quiet(
                state, self.clock.now(), turn_thresholds(state, ctx), decisions=ctx.decisions,
                judge=ctx.judge,
            )
        if not events:
            return None
        effects = Effects()
        await self._record_detection(unit, room, state, events, effects)
        text = await save(unit, room, state, self.clock.now(), effects)
        self.states.keep(room.id, text, state)
        return effects

    async def restore(self, unit: RoomTransaction, room: RoomKey, state: RoomState) -> Effects:
        """Put back a state the room had before (`Engine.restore_state`)."""
        effects = Effects()
        await save(unit, room, state, self.clock.now(), effects)
        return effects

    async def _record_detection(
        self, unit: RoomTransaction, room: RoomKey, state: RoomState,
        events: list[detection.Event], effects: Effects,
    ) -> None:
        """Deadlocks become arbitration rows the room waits for; events are reported."""
        for event in events:
            if isinstance(event, Deadlock):
                arbitration_id = await unit.create_arbitration(
                    room.id, state.epoch, event.trigger.value, event.evidence, self.clock.now()
                )
                state.arbitrating = [*state.arbitrating, arbitration_id]
                effects.arbitrations.append(arbitration_id)
                _report_deadlock(room, event, effects)
            elif isinstance(event, Approved):
                effects.events.append(
                    {"event": "approved", "room": room.label, "after_message": event.after_message}
                )

    async def summon(self, unit: RoomTransaction, room: RoomKey) -> Effects | None:
        """`/arbiter summon`: a manual deadlock, unless the room already waits for
        a human or an arbiter (None)."""
        state = load(unit)
        if state.arbitrating:
            return None
        deadlock = detection.manual_deadlock(state, after_message="")
        if deadlock is None:
            return None
        effects = Effects()
        await self._record_detection(unit, room, state, [deadlock], effects)
        await save(unit, room, state, self.clock.now(), effects)
        return effects

    # -- answers ----------------------------------------------------------------
    async def _digit_reply(
        self, unit: RoomTransaction, state: RoomState, row: MessageRow, ctx: RoomContext
    ) -> Reply | None:
        """What a human message means for the room's escalation (no writes).

        None: it is not an answer. A bare digit after the escalation was
        decided is a late answer: its author is told who decided what, when.
        """
        number = parse_digit_answer(row.text)
        if state.awaiting_escalation is None:
            # A late answer: a bare digit shortly after the decision, before the
            # agents said anything more. Later, a digit is an ordinary message.
            if number is None or state.last_escalation is None:
                return None
            if state.decided_turn_seq != state.turn_seq:
                return None
            late = await unit.get_escalation(state.last_escalation)
            if (
                late is None
                or late.status != "answered"
                or late.answered_at is None
                or self.clock.now() - late.answered_at > LATE_ANSWER_WINDOW
            ):
                return None
            reply = Reply(late, row.author, ctx.language_of(state))
            return _reject(reply, Rejection.ALREADY_ANSWERED)
        escalation = await unit.get_escalation(state.awaiting_escalation)
        if escalation is None or escalation.status != "pending":
            state.awaiting_escalation = None
            return None
        kind = AnswerKind.FREE_TEXT if number is None else AnswerKind.DIGIT
        return self.judge(escalation, state, row.author, kind, number, ctx.language_of(state),
                          text=row.text if number is None else None)

    def judge(
        self, escalation: EscalationRow, state: RoomState, by: str, kind: AnswerKind,
        number: int | None, language: str, *, text: str | None = None,
        platform_admin: bool = False,
    ) -> Reply:
        """The one rule for an answer, by digit, button or free text (no writes)."""
        reply = Reply(escalation, by, language)
        if escalation.status != "pending" or escalation.id != state.awaiting_escalation:
            # Answered, cancelled, or no longer the question the room waits on.
            return _reject(reply, Rejection.ALREADY_ANSWERED)
        if not may_answer(escalation, by,
                          is_admin=is_admin(by, self.admin_ids, platform_admin)):
            return _reject(reply, Rejection.NOT_ALLOWED)
        if kind is AnswerKind.FREE_TEXT:
            reply.kind, reply.text = kind, text
            return reply
        assert number is not None
        option = check_option(escalation, number)
        if option is None:
            return _reject(reply, Rejection.OUT_OF_RANGE, n=number)
        reply.kind, reply.option = kind, option
        return reply

    async def click(
        self, unit: RoomTransaction, room: RoomKey, escalation_id: int, by: str, option: int,
        ctx: RoomContext, *, platform_admin: bool = False, tell_privately: bool = False,
        route: dict[str, str] | None = None,
    ) -> Effects:
        """A button: the same rules as a digit; the clicker alone reads a refusal
        (queued here as a private post with `tell_privately`, along the
        adapter's `route`, else the caller's)."""
        state = load(unit)
        effects = Effects()
        escalation = await unit.get_escalation(escalation_id)
        assert escalation is not None  # escalations are never deleted
        reply = self.judge(escalation, state, by, AnswerKind.BUTTON, option,
                           ctx.language_of(state), platform_admin=platform_admin)
        if reply.kind is not None:
            if await decide(unit, room, state, reply, self.clock.now()):
                _answer_starts_epoch(state)
                if reply.ends_task:
                    _end_task(state)
                await save(unit, room, state, self.clock.now(), effects)
            else:
                reply.kind = None
                reply.rejection = Rejection.ALREADY_ANSWERED
                fresh = await unit.get_escalation(escalation_id)
                reply.private_text = rejection_text(
                    Rejection.ALREADY_ANSWERED, fresh, reply.language
                )
        if tell_privately and reply.private_text:
            await enqueue_private(unit, room, by, reply.private_text, self.clock.now(), route)
        self._answered(room, reply, effects)
        return effects

    async def _lost(self, unit: RoomTransaction, room: RoomKey, reply: Reply) -> None:
        """Someone else's answer won the compare-and-set: tell this one."""
        reply.kind = None
        reply.rejection = Rejection.ALREADY_ANSWERED
        fresh = await unit.get_escalation(reply.escalation.id)
        reply.private_text = rejection_text(Rejection.ALREADY_ANSWERED, fresh, reply.language)
        await enqueue_private(unit, room, reply.by, reply.private_text, self.clock.now())

    @staticmethod
    def _answered(room: RoomKey, reply: Reply, effects: Effects) -> None:
        effects.posted = True
        effects.reply = reply
        effects.reports.append(lambda: telemetry_reply(room, reply))
        effects.events.append(announce(room, reply))

    # -- arbitrations -------------------------------------------------------------
    @staticmethod
    def arbitration_started(state: RoomState, arbitration_id: int) -> None:
        """The room holds its messages until this arbitration ends (a verdict or
        a cancellation); a row a crash left behind is counted in here too."""
        if arbitration_id not in state.arbitrating:
            state.arbitrating = [*state.arbitrating, arbitration_id]

    @staticmethod
    def arbitration_ended(state: RoomState, arbitration_id: int) -> None:
        state.arbitrating = [a for a in state.arbitrating if a != arbitration_id]

    @staticmethod
    def verdict(state: RoomState, arbitration_id: int, verdict: Verdict, trigger: Trigger) -> None:
        """A recorded verdict: ESCALATE waits for a human; the others start an epoch."""
        Transitions.arbitration_ended(state, arbitration_id)
        state.arbitrations_since_human += 1
        if verdict.kind is VerdictKind.ESCALATE:
            state.awaiting_escalation = state.last_escalation = arbitration_id
        else:
            if verdict.kind is VerdictKind.PROCEED:
                state.proceed_triggers = [*state.proceed_triggers, trigger]
            detection.start_epoch(state)
        if verdict.ruling is not None:
            apply_ruling(state.findings, verdict.ruling.upheld, verdict.ruling.retired,
                         state.task_rounds)


def _reject(reply: Reply, reason: Rejection, **extra: object) -> Reply:
    reply.rejection = reason
    reply.private_text = rejection_text(reason, reply.escalation, reply.language, **extra)
    return reply


def _answer_starts_epoch(state: RoomState) -> None:
    """A decision is a human word: budgets reset and a new epoch starts."""
    state.arbitrations_since_human = 0
    state.proceed_triggers = []
    detection.start_epoch(state)


def _end_task(state: RoomState) -> None:
    """The human chose to stop the task: it ends as an approval ends it
    (`bot.detection.close_turn`: no task open, counters restarted; the next
    human message starts a new task, `_human_spoke`), and its ledger is
    dropped now (`detection.start_task`) rather than at that message, so
    nothing of the stopped task is shown or ruled on meanwhile. The caller
    has already started the answer's epoch."""
    state.task_active = False
    state.task_reviewers = []
    detection.start_task(state)


def _human_spoke(state: RoomState, author: str, ts: datetime) -> None:
    """A human message (an answer by digit or free text included) starts an epoch,
    and a task when none is open."""
    if not state.task_active or state.approved:
        state.task_active = True
        state.approved = False
        state.task_started_at = ts
        state.humans = []
        state.task_reviewers = []
        detection.start_task(state)
    if author not in state.humans:
        state.humans = [*state.humans, author][-MAX_HUMANS:]
    state.requester = author
    _answer_starts_epoch(state)


def _report_deadlock(room: RoomKey, event: Deadlock, effects: Effects) -> None:
    effects.reports.append(lambda: telemetry.deadlock(
        room, event.trigger.value, after_message=event.after_message, finding=event.finding,
        stalled_rounds=event.evidence.get("stalled_rounds"), rounds=event.evidence.get("rounds"),
    ))
    payload: dict[str, Any] = {
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
    effects.events.append(payload)


def telemetry_reply(room: RoomKey, reply: Reply) -> None:
    """The operator's log line and counter for an answer, taken or refused."""
    if reply.kind is not None:
        telemetry.answer(room, reply.escalation.id, by=reply.by, kind=reply.kind.value,
                         option=reply.option.n if reply.option else None)
    else:
        telemetry.answer_rejected(room, reply.escalation.id, by=reply.by,
                                  reason=(reply.rejection or Rejection.UNKNOWN).value)

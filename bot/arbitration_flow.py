"""From a recorded deadlock to a posted verdict (DESIGN §4 flow).

The arbitration row exists before anything is called; each step is written
down before the next, so a restart resumes where the crash stopped and the
verdict is enqueued exactly once.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from bot import telemetry
from bot.arbiter.base import ArbitrationOutcome
from bot.arbiter.fallback import deterministic_escalation
from bot.arbiter.service import Arbitrator
from bot.context_loader import load_context
from bot.detection import Deadlock, start_epoch
from bot.i18n import room_language
from bot.ledger import Finding, apply_ruling
from bot.models import (
    EscalationStatus,
    MessageKind,
    OutgoingMessage,
    RoomKey,
    Ruling,
    Trigger,
    VerdictKind,
    VerdictSource,
)
from bot.state import RoomState
from prompts.strings import t
from storage.base import EscalationRow

if TYPE_CHECKING:
    from bot.engine import Engine

log = logging.getLogger(__name__)


class ArbitrationFlow:
    def __init__(self, engine: Engine, arbitrator: Arbitrator) -> None:
        self.engine = engine
        self.arbitrator = arbitrator

    async def run(
        self, room: RoomKey, state: RoomState, arbitration_id: int, trigger: str,
        evidence: dict[str, Any],
    ) -> None:
        """Carry one arbitration to its verdict. The caller holds the room lock."""
        engine, storage = self.engine, self.engine.storage
        row = await storage.get_arbitration(arbitration_id)
        if row is None or row.status in ("done", "cancelled"):
            return
        stale = None
        if state.awaiting_escalation is not None and state.awaiting_escalation != arbitration_id:
            # Another arbitration already put this deadlock to the human (e.g. two
            # `/arbiter summon`s at once): one deadlock, one verdict.
            stale = f"superseded by escalation #{state.awaiting_escalation}"
        elif row.epoch != state.epoch and row.progress_outbox_id is None:
            # A verdict or a human message started a new epoch since: moot.
            stale = f"epoch {row.epoch} ended (room is at epoch {state.epoch})"
        if stale is not None:
            async with storage.transaction() as tx:
                await tx.update_arbitration(
                    arbitration_id, status="cancelled", finished_at=engine.clock.now(),
                    overrides=[stale],
                )
            return
        _, values = await engine.thresholds(room)
        language = await room_language(engine, room, state)
        progress_id = row.progress_outbox_id
        if progress_id is None:
            progress = OutgoingMessage(kind=MessageKind.PROGRESS, text=t("progress", language))
            async with storage.transaction() as tx:
                progress_id = await tx.enqueue(
                    room.id, "progress", progress.model_dump(mode="json"), engine.clock.now()
                )
                await tx.update_arbitration(
                    arbitration_id, status="running", progress_outbox_id=progress_id
                )
        engine.outbox.note(room.id)
        await engine.outbox.flush(room.id)

        deadlock = Deadlock(Trigger(trigger), str(evidence.get("after_message", "")), evidence)
        started = time.monotonic()
        ctx = await load_context(
            storage, room, state, deadlock, {**values, "language": language},
            turns=engine.settings.arbiter_context_turns,
        )
        try:
            outcome = await self.arbitrator.arbitrate(ctx)
        except Exception as exc:  # the arbitrator must not raise; if it does, fail closed
            log.exception("arbitrator failed for room %s", room.id)
            outcome = ArbitrationOutcome(
                verdict=deterministic_escalation(
                    ctx, reason=t("arbiter_unavailable", language), source=VerdictSource.FALLBACK
                ),
                backend=engine.settings.arbiter_backend,
                status="fallback",
                overrides=[f"arbitrator error: {type(exc).__name__}"],
            )
        latency = outcome.latency_ms or int((time.monotonic() - started) * 1000)
        snapshot = state.model_copy(deep=True)
        try:
            await self._record(room, state, arbitration_id, deadlock.trigger, progress_id,
                               outcome, latency, values)
        except Exception as exc:
            # Whatever made this verdict unrecordable, the humans still get a
            # decision to make, and the arbitration does not stay `running`
            # for recovery to call the model again every 30 s.
            _restore(state, snapshot)
            log.exception("recording the verdict of arbitration %s failed; escalating",
                          arbitration_id)
            fallback = ArbitrationOutcome(
                verdict=deterministic_escalation(
                    ctx, reason=t("arbiter_unavailable", language), source=VerdictSource.FALLBACK
                ),
                backend=outcome.backend,
                model=outcome.model,
                prompt_chars=outcome.prompt_chars,
                model_verdict=outcome.model_verdict,
                status="fallback",
                overrides=[*outcome.overrides,
                           f"recording the verdict failed: {type(exc).__name__}"],
            )
            try:
                await self._record(room, state, arbitration_id, deadlock.trigger, progress_id,
                                   fallback, latency, values)
            except Exception:
                _restore(state, snapshot)
                log.exception("recording the fallback of arbitration %s failed too", arbitration_id)
                await self._give_up(room, arbitration_id, progress_id, language, exc)
        engine.outbox.note(room.id)
        await engine.outbox.flush(room.id)

    async def _give_up(
        self, room: RoomKey, arbitration_id: int, progress_id: int, language: str,
        error: Exception,
    ) -> None:
        """Not even the deterministic ESCALATE could be recorded: end the arbitration.

        A fault that survives the fallback is not one a retry fixes; leaving
        the row `running` would only call the model again every 30 s. If this
        write fails too, the database itself is failing, and recovery retrying
        later is the right thing.
        """
        engine = self.engine
        async with engine.storage.transaction() as tx:
            await tx.update_arbitration(
                arbitration_id, status="cancelled", finished_at=engine.clock.now(),
                overrides=[f"no verdict could be recorded: {type(error).__name__}"],
            )
        # The room is not left reading "judging..." forever.
        notice = OutgoingMessage(kind=MessageKind.NOTICE, text=t("arbiter_gave_up", language))
        try:
            async with engine.storage.transaction() as tx:
                await tx.enqueue(room.id, "notice", notice.model_dump(mode="json"),
                                 engine.clock.now(), edit_of=progress_id)
        except Exception:
            log.exception("arbitration %s: the progress message could not be replaced",
                          arbitration_id)

    async def _record(
        self, room: RoomKey, state: RoomState, arbitration_id: int, trigger: Trigger,
        progress_id: int, outcome: ArbitrationOutcome, latency: int, values: dict[str, Any],
    ) -> None:
        engine = self.engine
        verdict = outcome.verdict
        escalate = verdict.kind is VerdictKind.ESCALATE
        if verdict.ruling is not None:
            # People read which demand stands, not the two raw lines.
            language = await room_language(self.engine, room, state)
            sentence = ruling_sentence(state.findings, verdict.ruling, language)
            verdict = verdict.model_copy(update={"text": f"{verdict.text}\n\n{sentence}"})
        message = OutgoingMessage(
            kind=MessageKind.VERDICT,
            text=verdict.text,
            escalation_id=arbitration_id if escalate else None,
            options=verdict.options if escalate else [],
            mention_user_ids=[state.requester] if escalate and state.requester else [],
        )
        channel = await engine.channels.get(room.platform, room.channel)
        now = engine.clock.now()
        async with engine.storage.transaction() as tx:
            await tx.update_arbitration(
                arbitration_id,
                status="done",
                prompt_chars=outcome.prompt_chars,
                backend=outcome.backend,
                model=outcome.model,
                raw_output=outcome.raw_output,
                model_verdict=outcome.model_verdict,
                verdict=verdict.kind.value,
                source=verdict.source.value,
                verdict_text=verdict.text,
                options=[o.model_dump() for o in verdict.options],
                overrides=outcome.overrides,
                latency_ms=latency,
                finished_at=now,
            )
            outbox_id = await tx.enqueue(
                room.id, "verdict", message.model_dump(mode="json"), now, edit_of=progress_id
            )
            state.arbitrations_since_human += 1
            if escalate:
                await tx.create_escalation(
                    EscalationRow(
                        id=arbitration_id,
                        room_id=room.id,
                        options=[o.model_dump() for o in verdict.options],
                        allowed=sorted({*state.humans, *channel.approvers}),
                        requester=state.requester,
                        status=EscalationStatus.PENDING.value,
                        verdict_outbox_id=outbox_id,
                        created_at=now,
                    )
                )
                state.awaiting_escalation = state.last_escalation = arbitration_id
            else:
                if verdict.kind is VerdictKind.PROCEED:
                    state.proceed_triggers = [*state.proceed_triggers, trigger]
                start_epoch(state)
            if verdict.ruling is not None:
                apply_ruling(
                    state.findings, verdict.ruling.upheld, verdict.ruling.retired,
                    state.task_rounds,
                )
            await tx.save_room_state(
                room.id, room.platform, room.channel, room.thread, state.model_dump_json(), now
            )
        telemetry.verdict(room, arbitration_id, kind=verdict.kind.value,
                          source=verdict.source.value, backend=outcome.backend,
                          model=outcome.model, latency_ms=latency)
        event: dict[str, Any] = {
            "event": "verdict",
            "room": room.label,
            "verdict": verdict.kind.value,
            "source": verdict.source.value,
            "text": verdict.text,
            "options": [{"n": o.n, "label": o.label} for o in verdict.options],
        }
        if verdict.ruling is not None:
            event["ruling"] = {"upheld": verdict.ruling.upheld, "retired": verdict.ruling.retired}
        engine.emit(event)


def ruling_sentence(findings: list[Finding], ruling: Ruling, language: str) -> str:
    """The plain sentence that replaces `UPHELD:` / `RETIRED:` in the posted verdict."""
    by_label = {f.label: f for f in findings}

    def summary(label: str) -> str:
        finding = by_label.get(label)
        return f"{finding.author}: {finding.summary[:80]}" if finding else label

    return t("ruling_sentence", language, upheld=ruling.upheld, retired=ruling.retired,
             upheld_summary=summary(ruling.upheld), retired_summary=summary(ruling.retired))


def _restore(state: RoomState, snapshot: RoomState) -> None:
    """Put back, in place, a room state a failed record changed before its rollback.

    In place: the engine's cache and the caller hold this very object.
    """
    for name in type(state).model_fields:
        setattr(state, name, getattr(snapshot, name))

"""From a recorded deadlock to a posted verdict.

The arbitration row exists before anything is called; each step is written
down before the next, so a restart resumes where the crash stopped and the
verdict is enqueued exactly once. The room's unit of work is held to start
the arbitration and to record its verdict, never across the model call;
meanwhile the room's stored messages wait (`RoomState.arbitrating`).

Several instances on one database: an instance claims the arbitration
(`claim_arbitration`, a lease of `TRIBUNAL_LEASE_SECONDS` and a new fencing
token) in the unit that starts it, renews the lease while the model thinks,
and writes the arbitration's work (its status, the verdict, its posts) only
in units whose first write is fenced by that token: once another instance
has taken the arbitration over (the lease ran out: this one died or
stalled), those writes change nothing and the model's answer is dropped. A
model call may so be made twice; a post never is.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from bot import rulings, telemetry
from bot.arbiter.base import ArbitrationOutcome
from bot.arbiter.fallback import deterministic_escalation
from bot.arbiter.service import Arbitrator
from bot.channels import ChannelDirectory
from bot.clock import Clock
from bot.config import Settings
from bot.context_loader import load_context
from bot.detection import Deadlock
from bot.instances import MAX_BEAT_SECONDS
from bot.models import (
    EscalationStatus,
    MessageKind,
    OutgoingMessage,
    RoomKey,
    Trigger,
    VerdictKind,
    VerdictSource,
)
from bot.outbox import Outbox
from bot.transitions import Effects, Transitions, load, save
from prompts.strings import t
from storage.base import EscalationRow, Storage

log = logging.getLogger(__name__)

T = TypeVar("T")


class LeaseLost(Exception):
    """Another instance took the arbitration over: this one writes nothing more."""


class ArbitrationFlow:
    """Runs one arbitration at a time per call; the engine decides when."""

    def __init__(
        self, *, storage: Storage, clock: Clock, channels: ChannelDirectory, outbox: Outbox,
        arbitrator: Arbitrator, settings: Settings, emit: Callable[[dict[str, Any]], None],
        room_language: Callable[[RoomKey], Awaitable[str]], instance_id: str,
    ) -> None:
        self.room_language = room_language  # bot.i18n: the language the room is written in
        self.storage = storage
        self.clock = clock
        self.channels = channels
        self.outbox = outbox
        self.arbitrator = arbitrator
        self.settings = settings
        self.emit = emit
        self.instance_id = instance_id
        self.lease = timedelta(seconds=settings.lease_seconds)
        # Renewed thrice per lease at least: two missed beats still hold it.
        self.renew_every = min(MAX_BEAT_SECONDS, settings.lease_seconds / 3)
        # Arbitrations this process is carrying now: recovery leaves them alone.
        self.carrying: set[int] = set()

    async def carry(self, room: RoomKey, arbitration_id: int) -> None:
        """`run`, unless another task of this process carries it already."""
        if arbitration_id in self.carrying:
            return
        self.carrying.add(arbitration_id)
        try:
            await self.run(room, arbitration_id)
        finally:
            self.carrying.discard(arbitration_id)

    async def run(self, room: RoomKey, arbitration_id: int) -> None:
        """Carry one arbitration to its verdict: a unit to claim and start it,
        the model call outside any unit (the lease renewed meanwhile), a fresh
        unit for the verdict."""
        storage = self.storage
        row = await storage.get_arbitration(arbitration_id)
        if row is None or row.status in ("done", "cancelled"):
            return
        values = await self.channels.room_settings(room)
        language = await self.room_language(room)
        values = {**values, "language": language}  # the prompt asks for the room's language
        async with storage.room(room.id) as unit:
            now = self.clock.now()
            claimed = await unit.claim_arbitration(
                arbitration_id, self.instance_id, now, now + self.lease
            )
            if claimed is None:
                # Finished meanwhile, or another instance runs it under a live
                # lease: it records the verdict (or it is taken over from it).
                return
            row, fence = claimed, claimed.fence  # what the last holder left, fresh
            state = load(unit)
            stale = None
            if (
                state.awaiting_escalation is not None
                and state.awaiting_escalation != arbitration_id
            ):
                # Another arbitration already put this deadlock to the human (e.g.
                # two `/arbiter summon`s at once): one deadlock, one verdict.
                stale = f"superseded by escalation #{state.awaiting_escalation}"
            elif row.epoch != state.epoch and row.progress_outbox_id is None:
                # A verdict or a human message started a new epoch since: moot.
                stale = f"epoch {row.epoch} ended (room is at epoch {state.epoch})"
            # The claim above locked the row for this unit: these fenced
            # writes cannot be refused.
            if stale is not None:
                await unit.update_arbitration(
                    arbitration_id, fence=fence, status="cancelled",
                    finished_at=self.clock.now(), overrides=[stale],
                )
                Transitions.arbitration_ended(state, arbitration_id)
                await save(unit, room, state, self.clock.now(), Effects())
                return
            Transitions.arbitration_started(state, arbitration_id)
            progress_id = row.progress_outbox_id
            if progress_id is None:
                progress = OutgoingMessage(kind=MessageKind.PROGRESS, text=t("progress", language))
                progress_id = await unit.enqueue(
                    room.id, "progress", progress.model_dump(mode="json"), self.clock.now()
                )
                await unit.update_arbitration(
                    arbitration_id, fence=fence, status="running", progress_outbox_id=progress_id
                )
            await save(unit, room, state, self.clock.now(), Effects())
        self.outbox.note(room.id)
        await self.outbox.flush(room.id)

        evidence = row.evidence
        deadlock = Deadlock(Trigger(row.trigger), str(evidence.get("after_message", "")), evidence)
        started = time.monotonic()
        # The room's messages wait while the model thinks, so the state read
        # above is the one the verdict is about.
        ctx = await load_context(
            storage, room, state, deadlock, values, turns=self.settings.arbiter_context_turns,
            human_messages=self.settings.human_messages,
        )
        try:
            outcome = await self._holding_lease(
                arbitration_id, fence, self.arbitrator.arbitrate(ctx)
            )
        except LeaseLost:
            log.warning("arbitration %s was taken over by another instance; its model "
                        "call here is dropped", arbitration_id)
            return
        except Exception as exc:  # the arbitrator must not raise; if it does, fail closed
            log.exception("arbitrator failed for room %s", room.id)
            outcome = ArbitrationOutcome(
                verdict=deterministic_escalation(
                    ctx, reason=t("arbiter_unavailable", language), source=VerdictSource.FALLBACK
                ),
                backend=self.settings.arbiter_backend,
                status="fallback",
                overrides=[f"arbitrator error: {type(exc).__name__}"],
            )
        latency = outcome.latency_ms or int((time.monotonic() - started) * 1000)
        try:
            await self._record(room, arbitration_id, fence, deadlock.trigger, progress_id,
                               outcome, latency, language)
        except LeaseLost:
            log.warning("arbitration %s was taken over by another instance before its "
                        "verdict was recorded here; not recorded", arbitration_id)
            return
        except Exception as exc:
            # Whatever made this verdict unrecordable, the humans still get a
            # decision to make, and the arbitration does not stay `running`
            # for recovery to call the model again every 30 s. The failed
            # unit rolled back: the fallback starts from the stored state.
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
                await self._record(room, arbitration_id, fence, deadlock.trigger, progress_id,
                                   fallback, latency, language)
            except LeaseLost:
                return
            except Exception:
                log.exception("recording the fallback of arbitration %s failed too", arbitration_id)
                await self._give_up(room, arbitration_id, fence, progress_id, language, exc)
        self.outbox.note(room.id)
        await self.outbox.flush(room.id)

    async def _holding_lease(self, arbitration_id: int, fence: int, work: Awaitable[T]) -> T:
        """Await `work` (the model call), renewing the lease every few seconds.

        Raises LeaseLost, with the call cancelled, as soon as a renewal finds
        the arbitration taken over: its answer could not be recorded anyway.
        A renewal that fails for another reason (the database away for a
        moment) is logged and retried at the next beat; fencing still keeps a
        late verdict out if the lease runs out meanwhile.
        """
        task = asyncio.ensure_future(work)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.renew_every)
                if done:
                    return task.result()
                now = self.clock.now()
                try:
                    async with self.storage.transaction() as tx:
                        held = await tx.renew_arbitration(
                            arbitration_id, self.instance_id, fence, now + self.lease
                        )
                except Exception as exc:
                    log.warning("arbitration %s: lease not renewed (%s); trying again",
                                arbitration_id, exc)
                    continue
                if not held:
                    raise LeaseLost(arbitration_id)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _give_up(
        self, room: RoomKey, arbitration_id: int, fence: int, progress_id: int, language: str,
        error: Exception,
    ) -> None:
        """Not even the deterministic ESCALATE could be recorded: end the arbitration.

        A fault that survives the fallback is not one a retry fixes; leaving
        the row `running` would only call the model again every 30 s (and hold
        the room's messages). If this write fails too, the database itself is
        failing, and recovery retrying later is the right thing.
        """
        async with self.storage.room(room.id) as unit:
            if not await unit.update_arbitration(
                arbitration_id, fence=fence, status="cancelled", finished_at=self.clock.now(),
                overrides=[f"no verdict could be recorded: {type(error).__name__}"],
            ):
                return  # taken over meanwhile: the new holder ends it
            state = load(unit)
            Transitions.arbitration_ended(state, arbitration_id)
            await save(unit, room, state, self.clock.now(), Effects())
        # The room is not left reading "judging..." forever. (Cancelled above
        # under this lease: no other instance writes this arbitration now.)
        notice = OutgoingMessage(kind=MessageKind.NOTICE, text=t("arbiter_gave_up", language))
        try:
            async with self.storage.transaction() as tx:
                await tx.enqueue(room.id, "notice", notice.model_dump(mode="json"),
                                 self.clock.now(), edit_of=progress_id)
        except Exception:
            log.exception("arbitration %s: the progress message could not be replaced",
                          arbitration_id)

    async def _record(
        self, room: RoomKey, arbitration_id: int, fence: int, trigger: Trigger,
        progress_id: int, outcome: ArbitrationOutcome, latency: int, language: str,
    ) -> None:
        """The verdict, its post, its escalation and the room's new state: one
        unit, whose first write is fenced (LeaseLost, nothing written, when the
        arbitration was taken over)."""
        verdict = outcome.verdict
        escalate = verdict.kind is VerdictKind.ESCALATE
        channel = await self.channels.get(room.platform, room.channel)
        async with self.storage.room(room.id) as unit:
            state = load(unit)
            # The model's valid ruling is stored even when a guardrail overrode
            # the verdict (then `verdict.ruling` is None: recorded, not applied).
            ruled = verdict.ruling or outcome.ruling
            stored_ruling = None if ruled is None else rulings.record(
                state.findings, ruled.upheld, ruled.retired, applied=verdict.ruling is not None
            )
            if verdict.ruling is not None and stored_ruling is not None:
                # People read which demand stands, not the two raw lines.
                sentence = rulings.sentence(stored_ruling, language)
                verdict = verdict.model_copy(update={"text": f"{verdict.text}\n\n{sentence}"})
            message = OutgoingMessage(
                kind=MessageKind.VERDICT,
                text=verdict.text,
                escalation_id=arbitration_id if escalate else None,
                options=verdict.options if escalate else [],
                mention_user_ids=[state.requester] if escalate and state.requester else [],
            )
            now = self.clock.now()
            recorded = await unit.update_arbitration(
                arbitration_id,
                fence=fence,
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
                ruling=stored_ruling,
            )
            if not recorded:
                raise LeaseLost(arbitration_id)  # rolls the unit back: it wrote nothing
            outbox_id = await unit.enqueue(
                room.id, "verdict", message.model_dump(mode="json"), now, edit_of=progress_id
            )
            if escalate:
                await unit.create_escalation(
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
            Transitions.verdict(state, arbitration_id, verdict, trigger)
            await save(unit, room, state, now, Effects())
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
        self.emit(event)


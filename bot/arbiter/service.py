"""The Arbitrator: context in, validated verdict out; never raises.

Only the `none` backend is wired here so far; LLM backends, repair,
guardrails and MoA plug in behind the same `arbitrate()` call.
"""

from __future__ import annotations

from bot.arbiter.base import ArbitrationContext, ArbitrationOutcome
from bot.arbiter.fallback import deterministic_escalation
from bot.config import Settings
from bot.models import VerdictSource


class Arbitrator:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        verdict = deterministic_escalation(ctx, source=VerdictSource.NONE)
        return ArbitrationOutcome(verdict=verdict, backend="none", status="done")

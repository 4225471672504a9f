"""Inputs and outputs of one arbitration, and the backend interface.

The engine fills an `ArbitrationContext` from storage (bounded queries) and
hands it to the `Arbitrator`; backends only turn a prompt into text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from bot.models import Role, RoomKey, Ruling, Status, Trigger, Verdict, VerdictKind
from bot.repair import RepairedStr


class ContextMessage(BaseModel):
    role: Role
    author: str
    ts: datetime
    text: str


class ContextTurn(BaseModel):
    """One agent turn (several messages joined), as the arbiter will see it."""

    role: Role
    author: str
    started_at: datetime
    text: str
    # The turn's messages one by one: fences never span two messages.
    parts: list[str] = Field(default_factory=list)
    status: Status = Status.CONTINUE

    @property
    def messages(self) -> list[str]:
        return self.parts or [self.text]


class PastVerdict(BaseModel):
    kind: VerdictKind
    trigger: Trigger
    at: datetime
    text: str


class ArbitrationContext(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    room: RoomKey
    language: str = "ko"
    trigger: Trigger
    evidence: dict[str, Any] = Field(default_factory=dict)
    rounds: int = 0
    stalled_rounds: int = 0
    stall_threshold: int = 2
    max_rounds: int = 6
    task_started_at: datetime | None = None
    earlier_verdicts: list[PastVerdict] = Field(default_factory=list)
    human_messages: list[ContextMessage] = Field(default_factory=list)
    omitted_human_messages: int = 0
    # The first of `human_messages` is the task's request: it is shown before the
    # omitted ones' marker and never left out (the loader keeps it plus the latest).
    first_human_is_request: bool = False
    agent_turns: list[ContextTurn] = Field(default_factory=list)
    omitted_turns: int = 0
    # Guardrail facts, computed by the engine from stored state.
    arbitrations_since_human: int = 0
    max_arbitrations: int = 3
    proceed_earlier_same_trigger: bool = False

    @property
    def rulable(self) -> frozenset[str]:
        """Findings the arbiter may rule on: open or contested ones in the ledger."""
        ledger = self.evidence.get("ledger")
        if not isinstance(ledger, list):
            return frozenset()
        return frozenset(
            str(f.get("label")) for f in ledger
            if isinstance(f, dict) and f.get("status") in ("open", "contested")
        )

    def last_turn(self, role: Role) -> ContextTurn | None:
        for turn in reversed(self.agent_turns):
            if turn.role == role:
                return turn
        return None


class ArbitrationOutcome(BaseModel):
    # What the model said is stored with the arbitration: repaired like all
    # text entering the core, whichever way the outcome was built.
    verdict: Verdict
    backend: str
    model: str | None = None
    prompt_chars: int = 0
    raw_output: RepairedStr | None = None
    model_verdict: str | None = None
    overrides: list[RepairedStr] = Field(default_factory=list)
    latency_ms: int = 0
    status: str = "done"
    # Added by the arbiter: what a record or `/arbiter history` may want to show.
    language: str | None = None
    references: list[str] = Field(default_factory=list)  # MoA names that answered
    problems: list[RepairedStr] = Field(default_factory=list)  # validation problems seen
    # The model's valid ruling, kept even when a guardrail overrode the verdict
    # (then it is recorded, not applied: `verdict.ruling` is None).
    ruling: Ruling | None = None


class BackendUnavailable(Exception):
    """The backend could not produce text after its retries."""


class Backend(Protocol):
    name: str
    model: str | None

    async def complete(self, system: str, prompt: str) -> str:
        """Return the model's raw text; raise BackendUnavailable on failure."""
        ...

"""Core vocabulary shared by every part of Tribunal.

These types are the seam between adapters, the engine and storage: adapters
translate platform payloads into them and never pass raw platform objects in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from bot.repair import RepairedStr


class Platform(StrEnum):
    SLACK = "slack"
    DISCORD = "discord"
    CONSOLE = "console"


class Role(StrEnum):
    OWNER = "owner"
    REVIEWER = "reviewer"
    USER = "user"
    ARBITER = "arbiter"
    OTHER = "other"

    @property
    def is_agent(self) -> bool:
        return self in (Role.OWNER, Role.REVIEWER)


class Status(StrEnum):
    """Status of a turn, parsed from its status line."""

    BLOCKED = "BLOCKED"
    NEEDS_CONTEXT = "NEEDS_CONTEXT"
    ESCALATE = "ESCALATE"
    STEP_DONE = "STEP_DONE"
    TASK_DONE = "TASK_DONE"
    DONE_WITH_CONCERNS = "DONE_WITH_CONCERNS"
    APPROVED = "APPROVED"
    CONTINUE = "continue"

    @property
    def is_approval(self) -> bool:
        return self in (Status.TASK_DONE, Status.APPROVED)


class Trigger(StrEnum):
    CONTRADICTION = "contradiction"
    NO_PROGRESS = "no_progress"
    MAX_ROUNDS = "max_rounds"
    BLOCKED = "blocked"
    NEEDS_CONTEXT = "needs_context"
    MANUAL = "manual"


class VerdictKind(StrEnum):
    PROCEED = "PROCEED"
    REVISE = "REVISE"
    RESET = "RESET"
    ESCALATE = "ESCALATE"


class VerdictSource(StrEnum):
    LLM = "llm"
    REPAIRED = "repaired"
    GUARDRAIL = "guardrail"
    FALLBACK = "fallback"
    NONE = "none"


class AnswerKind(StrEnum):
    DIGIT = "digit"
    BUTTON = "button"
    FREE_TEXT = "free_text"


class EscalationStatus(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    CANCELLED = "cancelled"


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class RoomKey:
    """(platform, channel, thread or none): one conversation."""

    platform: str
    channel: str
    thread: str | None = None

    @property
    def id(self) -> str:
        return f"{self.platform}:{self.channel}:{self.thread or ''}"

    @property
    def label(self) -> str:
        """How events name a room: the transcript's name for replays, the key otherwise."""
        return self.channel if self.platform == Platform.CONSOLE else self.id

    @classmethod
    def parse(cls, room_id: str) -> RoomKey:
        # The thread (a Slack ts, a Discord id) never holds ":"; a replay's
        # room name (the channel) may.
        platform, rest = room_id.split(":", 1)
        channel, thread = rest.rsplit(":", 1)
        return cls(platform, channel, thread or None)


class IncomingMessage(BaseModel):
    """A message as the core sees it, whatever platform it came from.

    Every str is repaired on the way in (bot.repair): whatever the platform's
    JSON carried, what is stored and judged is storable text.
    """

    platform: RepairedStr
    channel: RepairedStr
    thread: RepairedStr | None = None
    message_id: RepairedStr
    author_id: RepairedStr
    author_name: RepairedStr | None = None
    # Other ids the author is known by (Slack: bot_id beside the bot user id);
    # role bindings match any of them.
    author_alt_ids: list[RepairedStr] = Field(default_factory=list)
    text: RepairedStr
    ts: datetime = Field(default_factory=utcnow)
    is_bot: bool = False
    is_self: bool = False
    role_hint: Role | None = None

    @property
    def room(self) -> RoomKey:
        return RoomKey(self.platform, self.channel, self.thread)


class Option(BaseModel):
    # Model output: repaired like everything else that enters the core.
    n: int
    label: RepairedStr
    consequence: RepairedStr = ""
    # Chosen, this option ends the task (the deterministic ESCALATE's "stop the
    # task"): the ledger and counters are dropped and the next human message
    # starts a new task. Stored with the escalation's options.
    ends_task: bool = False


class Ruling(BaseModel):
    """The arbiter's ruling on two findings: one stands, one no longer applies."""

    upheld: str
    retired: str


class Verdict(BaseModel):
    """A parsed, validated verdict ready to post."""

    kind: VerdictKind
    text: RepairedStr
    options: list[Option] = Field(default_factory=list)
    source: VerdictSource = VerdictSource.LLM
    ruling: Ruling | None = None  # applied with the verdict (not when a guardrail overrode it)


class ButtonClick(BaseModel):
    platform: RepairedStr
    channel: RepairedStr
    thread: RepairedStr | None = None
    escalation_id: int
    option: int
    user_id: RepairedStr
    is_platform_admin: bool = False


class CommandRequest(BaseModel):
    """`/arbiter ...` as typed by a user; `text` is everything after `/arbiter`."""

    platform: RepairedStr
    channel: RepairedStr
    thread: RepairedStr | None = None
    user_id: RepairedStr
    text: RepairedStr
    is_platform_admin: bool = False
    # Where the command was typed, when it names a thread of another channel
    # (a Slack thread link): the core refuses it there.
    typed_in: RepairedStr | None = None


class CommandReply(BaseModel):
    text: str
    ok: bool = True
    ephemeral: bool = True


class AnswerResult(BaseModel):
    """Outcome of a click or digit, so the adapter can reply privately."""

    accepted: bool
    private_text: str | None = None


class MessageKind(StrEnum):
    PROGRESS = "progress"
    VERDICT = "verdict"
    CONFIRMATION = "confirmation"
    NOTICE = "notice"
    REMINDER = "reminder"


class OutgoingMessage(BaseModel):
    """What the core wants posted; adapters render it for their platform.

    `text` is untrusted (it carries model and room text): adapters must
    neutralise mentions in it. Only `mention_user_ids` may be pinged.
    """

    kind: MessageKind
    text: RepairedStr
    escalation_id: int | None = None
    options: list[Option] = Field(default_factory=list)
    decided: Option | None = None
    decided_note: RepairedStr | None = None
    mention_user_ids: list[RepairedStr] = Field(default_factory=list)
    # Set by the outbox when it sends (`tribunal:<outbox id>`): adapters carry it
    # in the post (Slack message metadata, Discord nonce) so that after a crash
    # the post can be found on the platform instead of being posted twice.
    idempotency_key: str | None = None

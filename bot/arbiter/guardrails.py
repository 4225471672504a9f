"""Guardrails enforced in code, not only asked of the model (DESIGN §4). Pure.

The prompt tells the model the same rules, but a model can ignore a prompt;
these checks cannot be argued with. Every override carries a reason string
that ends up in the arbitration record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.arbiter.base import ArbitrationContext
from bot.arbiter.context import attr
from bot.models import Role, VerdictKind
from bot.status import visible_lines

_KO_QUESTION = re.compile(
    r"[가-힣]까요\s*[?？]"
    r"|(?:시겠|원하시|괜찮으시|승인하시|허락하시|알려\s*주시)[가-힣]*\s*[?？]"
    r"|(?:해도|되어도|돼도|올려도|만들어도|배포해도|진행해도|머지해도)\s*(?:될까요|되나요|괜찮|돼요)"
    r"|(?:승인|허락|확인|결정)(?:해\s*주시겠|을\s*부탁|해\s*주세요|\s*부탁)"
)
_EN_QUESTION = re.compile(
    r"\b(?:shall|should)\s+(?:I|we)\b[^.?!\n]*\?"
    r"|\b(?:may|can|could)\s+I\b[^.?!\n]*\?"
    r"|\b(?:do|would)\s+you\s+(?:want|like)\b[^.?!\n]*\?"
    r"|\bwant\s+me\s+to\b[^.?!\n]*\?"
    r"|\b(?:is\s+it\s+|are\s+you\s+)?ok(?:ay)?\s+(?:if\s+I|to|with)\b[^.?!\n]*\?"
    r"|\bplease\s+(?:confirm|approve|decide|advise|let\s+me\s+know)\b"
    r"|\b(?:awaiting|waiting\s+for|need)\s+your\s+(?:approval|permission|decision|go-ahead)\b",
    re.IGNORECASE,
)
# A question explicitly put to the other agent is not a question to the user.
_TO_REVIEWER = re.compile(r"리뷰어|검토자|\breviewer\b|@reviewer", re.IGNORECASE)
# "Why would it fail?" is the owner thinking aloud, not asking for a decision.
_RHETORICAL = re.compile(r"^(?:왜|어째서|why)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[?!？。])\s*|(?<=\.)\s+")


@dataclass(frozen=True)
class Override:
    """A guardrail's decision: the verdict forced, and why."""

    kind: VerdictKind
    reason: str


def owner_question(ctx: ArbitrationContext) -> str | None:
    """The question the owner's last turn puts to the user, if any."""
    turn = ctx.last_turn(Role.OWNER)
    if turn is None:
        return None
    for line in visible_lines(turn.text, limit=200):
        if line.lstrip().startswith(">"):  # quoted text is someone else's words
            continue
        for sentence in _SENTENCE_END.split(line):
            sentence = sentence.strip()
            if not sentence or _TO_REVIEWER.search(sentence) or _RHETORICAL.match(sentence):
                continue
            if _KO_QUESTION.search(sentence) or _EN_QUESTION.search(sentence):
                return sentence[:200]
    return None


def proceed_repeats(ctx: ArbitrationContext) -> bool:
    """An earlier PROCEED for the same trigger, with no human message since."""
    if ctx.proceed_earlier_same_trigger:
        return True
    last_human = max((m.ts for m in ctx.human_messages), default=None)
    return any(
        v.kind == VerdictKind.PROCEED
        and v.trigger == ctx.trigger
        and (last_human is None or v.at > last_human)
        for v in ctx.earlier_verdicts
    )


def budget_exhausted(ctx: ArbitrationContext) -> str | None:
    """Too many verdicts since the humans last spoke: stop asking the model."""
    if ctx.arbitrations_since_human >= ctx.max_arbitrations:
        return (
            f"arbitration budget spent: {ctx.arbitrations_since_human} verdicts since the last "
            f"human message (max_arbitrations={ctx.max_arbitrations}); escalated without "
            "calling the model"
        )
    return None


def hints(ctx: ArbitrationContext) -> list[str]:
    """What the guardrails will enforce, told to the model up front."""
    notes: list[str] = []
    question = owner_question(ctx)
    if question:
        notes.append(
            # The question is room text: escaped like all room text in the prompt.
            f'The owner\'s last turn asks the user a question ("{attr(question)}"): '
            "the verdict must be ESCALATE."
        )
    if proceed_repeats(ctx):
        notes.append(
            "An earlier verdict in this task was PROCEED and the same trigger came back "
            "without a human message: PROCEED is not allowed; ESCALATE."
        )
    return notes


def check(ctx: ArbitrationContext, kind: VerdictKind) -> Override | None:
    """Post-check of a valid model verdict; an Override when it must not stand."""
    question = owner_question(ctx)
    if question and kind != VerdictKind.ESCALATE:
        return Override(
            VerdictKind.ESCALATE,
            f"model said {kind.value}, but the owner asked the user a question "
            f"({question!r}); only the user can answer it",
        )
    if kind == VerdictKind.PROCEED and proceed_repeats(ctx):
        return Override(
            VerdictKind.ESCALATE,
            "model said PROCEED, but an earlier PROCEED in this task did not resolve the same "
            f"trigger ({ctx.trigger.value}) and no human has spoken since",
        )
    return None

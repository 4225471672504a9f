"""Guardrails enforced in code, not only asked of the model. Pure.

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
from bot.textscan import turn_lines

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
# "Why would it fail?" is the owner thinking aloud, not asking for a decision.
_RHETORICAL = re.compile(r"^(?:왜|어째서|why)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[?!？。])\s*|(?<=\.)\s+")

# Who a question is put to. Mentioning the reviewer is not asking the reviewer
# ("리뷰어 의견과 별개로, 사용자님 지금 배포할까요?" asks the user): only a
# question that addresses the reviewer is exempt, by a vocative (written with
# its comma: "리뷰어님, …", "Reviewer, …", "…, reviewer?") or a mention that
# opens the sentence ("@reviewer can you …"). Naming the user wins over both:
# when in doubt the question goes to the human (fail closed: ESCALATE).
_REVIEWER_NAME = r"(?:리뷰어|검토자|reviewer)(?:\s*님)?"
_GREETING = r"(?:(?:hey|hi|ok|okay|so|then|그럼|그러면|자)\s*,?\s*)?"
_PUNCT = r"\s*[,，:：!！—–]"
_USER_ADDRESS = re.compile(
    r"(?:사용자|유저|user)\s*님(?![가-힣])|사용자분(?![가-힣])|@user\b"
    r"|^" + _GREETING + r"(?:user|사용자)" + _PUNCT,
    re.IGNORECASE,
)


def _reviewer_address(mentions: str) -> re.Pattern[str]:
    """The reviewer addressed: a vocative or a mention opening or closing the sentence,
    or a mention set off by a comma ("thanks @reviewer, can you …")."""
    # "@reviewer's point aside, …" names the reviewer's words, not the reviewer.
    mention = r"(?:@reviewer\b|@리뷰어)(?!['’]s\b)" + (f"|{mentions}" if mentions else "")
    return re.compile(
        r"^" + _GREETING + r"(?:" + mention + r"|" + _REVIEWER_NAME + _PUNCT + r")"
        r"|\s(?:" + mention + r")" + _PUNCT
        + r"|[,，]\s*(?:" + mention + r"|" + _REVIEWER_NAME + r")\s*[?？!.。]*\s*$",
        re.IGNORECASE,
    )


def _mentions(ids: set[str]) -> str:
    """Platform mentions of these ids: Slack `<@U1>`/`<@U1|name>`, Discord `<@1>`/`<@!1>`."""
    if not ids:
        return ""
    alternatives = "|".join(re.escape(i) for i in sorted(ids))
    return r"<@!?(?:" + alternatives + r")(?:\|[^>]*)?>"


def _is_question(sentence: str) -> bool:
    return bool(_KO_QUESTION.search(sentence) or _EN_QUESTION.search(sentence))


@dataclass(frozen=True)
class Override:
    """A guardrail's decision: the verdict forced, and why."""

    kind: VerdictKind
    reason: str


def owner_question(ctx: ArbitrationContext) -> str | None:
    """The question the owner's last turn puts to the user, if any.

    The whole turn is read, message by message, with the one rule for quotes
    and fences (bot.textscan): a fence left open does not hide what follows,
    quoted lines are someone else's words, and a question at the end of a
    long test log is still found.
    """
    turn = ctx.last_turn(Role.OWNER)
    if turn is None:
        return None
    reviewers = {t.author for t in ctx.agent_turns if t.role is Role.REVIEWER}
    to_reviewer = _reviewer_address(_mentions(reviewers))
    humans = _mentions({m.author for m in ctx.human_messages})
    to_user = re.compile(humans) if humans else None
    addressed = False  # the previous sentence was only "@reviewer" / "리뷰어님,"
    for line in turn_lines(turn.messages):
        if line.quoted:
            continue
        for sentence in _SENTENCE_END.split(line.text):
            sentence = sentence.strip()
            if not sentence:
                continue
            carried, addressed = addressed, False
            if not _is_question(sentence):
                # "@reviewer" or "리뷰어님," alone: the next sentence is put to the reviewer.
                addressed = not re.search(r"\w", to_reviewer.sub("", sentence))
                continue
            if _RHETORICAL.match(sentence):
                continue
            if not (_USER_ADDRESS.search(sentence) or (to_user and to_user.search(sentence))):
                if carried or to_reviewer.search(sentence):
                    continue
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

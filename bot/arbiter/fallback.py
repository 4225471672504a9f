"""The deterministic ESCALATE: used by the `none` backend and whenever the model
cannot be trusted (unavailable, invalid twice, guardrail budget spent).

It never guesses who is right; it summarises both positions and hands the
decision to the human with numbered options.
"""

from __future__ import annotations

import re

from bot.arbiter.base import ArbitrationContext
from bot.models import Option, Role, Trigger, Verdict, VerdictKind, VerdictSource
from bot.status import visible_lines

_TRIGGER_KO = {
    Trigger.NO_PROGRESS: "{n}라운드 연속으로 진전 없이 같은 논쟁을 반복하고 있습니다",
    Trigger.MAX_ROUNDS: "이번 작업에서 최대 라운드 수({n})에 도달했습니다",
    Trigger.CONTRADICTION: "두 리뷰어의 요구가 서로 맞지 않아 둘 다 반영할 수 없습니다",
    Trigger.BLOCKED: "에이전트가 BLOCKED 상태를 보고했습니다",
    Trigger.NEEDS_CONTEXT: "에이전트가 추가 정보(NEEDS_CONTEXT)를 요청했습니다",
    Trigger.MANUAL: "관리자가 중재를 요청했습니다",
}
_TRIGGER_EN = {
    Trigger.NO_PROGRESS: "they have repeated the same argument for {n} rounds without progress",
    Trigger.MAX_ROUNDS: "the task reached the maximum number of rounds ({n})",
    Trigger.CONTRADICTION: "two reviewers ask for changes that cannot both be made",
    Trigger.BLOCKED: "an agent reported BLOCKED",
    Trigger.NEEDS_CONTEXT: "an agent asked for more context (NEEDS_CONTEXT)",
    Trigger.MANUAL: "an admin asked for arbitration",
}

OPTIONS_KO = [
    Option(
        n=1,
        label="오너 의견대로 진행",
        consequence="리뷰어의 지적을 보류하고 오너가 현재 방향으로 계속합니다.",
    ),
    Option(
        n=2,
        label="리뷰어 의견대로 수정",
        consequence="오너가 리뷰어의 지적을 반영해 수정합니다.",
    ),
    Option(
        n=3,
        label="새 방향으로 다시 시작",
        consequence="두 에이전트가 현재 접근을 버리고 다른 방법을 찾습니다.",
    ),
    Option(
        n=4,
        label="작업 중단",
        consequence="작업을 멈추고 사람이 직접 확인합니다.",
    ),
]
OPTIONS_EN = [
    Option(
        n=1,
        label="Go with the owner",
        consequence="The reviewer's objection is set aside; the owner continues.",
    ),
    Option(
        n=2,
        label="Go with the reviewer",
        consequence="The owner applies the reviewer's requested changes.",
    ),
    Option(
        n=3,
        label="Start over differently",
        consequence="Both agents drop the current approach and try another.",
    ),
    Option(
        n=4,
        label="Stop the task",
        consequence="Work stops; a human looks at it directly.",
    ),
]

# When the owner asked the user something, the decision is the answer to that question.
QUESTION_OPTIONS_KO = [
    Option(n=1, label="예, 진행", consequence="오너가 물어본 작업을 그대로 진행합니다."),
    Option(
        n=2,
        label="아니요, 하지 않음",
        consequence="오너는 그 작업을 하지 않고 현재 상태로 리뷰를 마무리합니다.",
    ),
    Option(
        n=3,
        label="리뷰어 지적 먼저 반영",
        consequence="오너가 리뷰어의 지적부터 고친 뒤 다시 묻습니다.",
    ),
    Option(n=4, label="작업 중단", consequence="작업을 멈추고 사람이 직접 확인합니다."),
]
QUESTION_OPTIONS_EN = [
    Option(n=1, label="Yes, go ahead", consequence="The owner does what it asked about."),
    Option(
        n=2,
        label="No, do not",
        consequence="The owner skips it and the review finishes on the current state.",
    ),
    Option(
        n=3,
        label="Reviewer's points first",
        consequence="The owner fixes the reviewer's findings first, then asks again.",
    ),
    Option(n=4, label="Stop the task", consequence="Work stops; a human looks at it directly."),
]

_SUMMARY_CHARS = 240


def summarize_position(text: str) -> str:
    """One line: the first visible lines of a turn, flattened and cut."""
    lines = visible_lines(text, limit=6)
    flat = " ".join(line.strip() for line in lines)
    flat = re.sub(r"\s+", " ", flat).strip().replace("`", "'")
    if len(flat) > _SUMMARY_CHARS:
        flat = flat[: _SUMMARY_CHARS - 1].rstrip() + "…"
    return flat or "(내용 없음)"


def deterministic_escalation(
    ctx: ArbitrationContext,
    *,
    reason: str | None = None,
    source: VerdictSource = VerdictSource.NONE,
    question: str | None = None,
) -> Verdict:
    """A self-contained Korean (or English) ESCALATE with numbered options.

    With `question` (the owner asked the user something), the decision asked
    of the user is that question, with yes/no style options.
    """
    english = ctx.language == "en"
    n = ctx.stalled_rounds if ctx.trigger == Trigger.NO_PROGRESS else ctx.rounds
    why = (_TRIGGER_EN if english else _TRIGGER_KO)[ctx.trigger].format(n=n)
    owner = ctx.last_turn(Role.OWNER)
    reviewer = ctx.last_turn(Role.REVIEWER)
    nothing = "(none)" if english else "(발언 없음)"
    owner_pos = summarize_position(owner.text) if owner else nothing
    reviewer_pos = summarize_position(reviewer.text) if reviewer else nothing
    if question:
        question = re.sub(r"\s+", " ", question).replace("`", "'").strip()
        options = QUESTION_OPTIONS_EN if english else QUESTION_OPTIONS_KO
    else:
        options = OPTIONS_EN if english else OPTIONS_KO
    if english:
        headline = (
            f"ESCALATE The owner is asking you: «{question}» — please decide."
            if question
            else f"ESCALATE Your decision is needed: {why}."
        )
        lines = [headline]
        if reason:
            lines.append(reason)
        lines += [
            "",
            f"- Owner (implementer): {owner_pos}",
            f"- Reviewer (verifier): {reviewer_pos}",
            "",
            "Reply with a number:",
        ]
    else:
        headline = (
            f"ESCALATE 오너가 사용자에게 묻고 있습니다: «{question}» — 결정해 주세요."
            if question
            else f"ESCALATE 사용자 결정이 필요합니다: {why}."
        )
        lines = [headline]
        if reason:
            lines.append(reason)
        lines += [
            "",
            f"- 오너(구현자) 입장: {owner_pos}",
            f"- 리뷰어(검증자) 입장: {reviewer_pos}",
            "",
            "번호로 답해 주세요:",
        ]
    lines += [f"{o.n}. {o.label} — {o.consequence}" for o in options]
    return Verdict(
        kind=VerdictKind.ESCALATE,
        text="\n".join(lines),
        options=[o.model_copy() for o in options],
        source=source,
    )

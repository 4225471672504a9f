"""Who may answer an escalation, and how answers are described. Pure.

The atomic part (exactly one answer wins) is the storage compare-and-set;
these functions decide what to do before and after it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from bot import markup
from bot.models import Option
from prompts.strings import t
from storage.base import EscalationRow


class Rejection(StrEnum):
    OUT_OF_RANGE = "out_of_range"
    NOT_ALLOWED = "not_allowed"
    ALREADY_ANSWERED = "already_answered"
    UNKNOWN = "unknown"


def options_of(row: EscalationRow) -> list[Option]:
    return [Option.model_validate(o) for o in row.options]


def may_answer(row: EscalationRow, user_id: str, *, is_admin: bool) -> bool:
    return is_admin or user_id in row.allowed


def check_option(row: EscalationRow, option: int) -> Option | None:
    for candidate in options_of(row):
        if candidate.n == option:
            return candidate
    return None


def rejection_text(reason: Rejection, row: EscalationRow | None, lang: str, **extra: object) -> str:
    if reason is Rejection.OUT_OF_RANGE and row is not None:
        return t("answer_out_of_range", lang, n=extra.get("n"), max=len(row.options))
    if reason is Rejection.NOT_ALLOWED:
        return t("answer_not_allowed", lang)
    if reason is Rejection.ALREADY_ANSWERED and row is not None and row.status == "answered":
        if row.answer_option is not None:
            choice = f"{row.answer_option}. {row.answer_label or ''}".strip()
        else:
            choice = (row.answer_text or "")[:80]
        return t(
            "answer_already", lang,
            by=markup.mention(row.answered_by) if row.answered_by else "?",
            at=markup.moment(row.answered_at) if row.answered_at else "?",
            choice=choice,
        )
    return t("answer_unknown", lang)


def confirmation_text(option: Option | None, free_text: str | None, lang: str) -> str:
    if option is not None:
        return t("confirmation", lang, n=option.n, label=option.label)
    snippet = " ".join((free_text or "").split())
    if len(snippet) > 300:
        snippet = snippet[:299] + "…"
    return t("confirmation_free_text", lang, text=snippet)


def decided_note(by: str, at: datetime, lang: str) -> str:
    return t("decided_note", lang, by=markup.mention(by), at=markup.moment(at))

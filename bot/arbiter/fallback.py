"""The deterministic ESCALATE: used by the `none` backend and whenever the model
cannot be trusted (unavailable, invalid twice, guardrail budget spent).

It never guesses who is right. It is written from the findings ledger, in the
room's language and in the bot's own words: the task, the disputed point, what
each side holds (from the finding's history, not the agents' messages quoted),
and options that fit the trigger, answered by a button or a digit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bot.arbiter.base import ArbitrationContext
from bot.models import Option, Role, Trigger, Verdict, VerdictKind, VerdictSource
from bot.status import status_reason, visible_lines
from prompts.strings import t

_SUMMARY_CHARS = 240
_TASK_CHARS = 120
_POINT_CHARS = 200
_MAX_POINTS = 3  # more than this and the message stops being readable in a thread
_OWNER_ACTIONS = ("declined", "fix_reported", "untouched")

# "Stop the task": chosen, it ends the task (`Option.ends_task`, bot/transitions.py).
_STOP = "opt_stop"
# Each trigger's options, as catalog keys (label; its consequence is `<key>_do`).
_OPTIONS: dict[Trigger, tuple[str, ...]] = {
    Trigger.NO_PROGRESS: ("opt_owner", "opt_reviewer", "opt_restart", "opt_stop"),
    Trigger.MANUAL: ("opt_owner", "opt_reviewer", "opt_restart", "opt_stop"),
    # Progress may still be being made: going on is a real choice here.
    Trigger.MAX_ROUNDS: ("opt_continue", "opt_owner", "opt_reviewer", "opt_stop"),
    # Nobody is wrong about a missing credential: the choices are about the blocker.
    Trigger.BLOCKED: ("opt_unblocked", "opt_workaround", "opt_stop"),
    Trigger.NEEDS_CONTEXT: ("opt_context_given", "opt_assume", "opt_stop"),
}
# Without open findings there is no side to take.
_NO_FINDING_OPTIONS = ("opt_continue", "opt_restart", "opt_stop")
_QUESTION_OPTIONS = ("opt_yes", "opt_no", "opt_review_first", "opt_stop")


def summarize_position(text: str) -> str:
    """One line: the first visible lines of a text, flattened and cut."""
    lines = visible_lines(text, limit=6)
    return _flat(" ".join(line.strip() for line in lines), _SUMMARY_CHARS) or "-"


def _flat(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip().replace("`", "'")
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _options(keys: tuple[str, ...], tr: Callable[..., str], **fields: Any) -> list[Option]:
    return [
        Option(n=i, label=tr(key, **fields), consequence=tr(f"{key}_do", **fields),
               ends_task=key == _STOP)
        for i, key in enumerate(keys, 1)
    ]


def _ledger(ctx: ArbitrationContext) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(disputed findings, the other open ones) from the detection's evidence."""
    ledger = ctx.evidence.get("ledger")
    rows = [f for f in ledger if isinstance(f, dict)] if isinstance(ledger, list) else []
    wanted = ctx.evidence.get("disputed")
    labels = [str(x) for x in wanted] if isinstance(wanted, list) else []
    by_label = {str(f.get("label")): f for f in rows}
    disputed = [by_label[label] for label in labels if label in by_label]
    others = [
        f for f in rows
        if f.get("status") in ("open", "contested") and f.get("label") not in labels
    ]
    return disputed, others


def _owner_action(finding: dict[str, Any]) -> str:
    """What the owner last did about a finding, read from its history: a refusal
    or a fix report stands through the rounds the owner then says nothing."""
    for entry in reversed([str(h) for h in finding.get("history", [])]):
        for action in _OWNER_ACTIONS:
            if action != "untouched" and f": {action}" in entry:
                return action
    return "untouched"


def _task(ctx: ArbitrationContext) -> str | None:
    """The task, as its first human message (shortened) names it."""
    for message in ctx.human_messages:
        text = _flat(" ".join(visible_lines(message.text, limit=3)), _TASK_CHARS)
        if text:
            return text
    return None


def _reported(ctx: ArbitrationContext) -> tuple[Role, str | None]:
    """Who reported BLOCKED / NEEDS_CONTEXT, and the reason on its status line."""
    status_turn = ctx.evidence.get("status_turn")
    role = Role.OWNER
    if isinstance(status_turn, dict) and status_turn.get("role") == Role.REVIEWER.value:
        role = Role.REVIEWER
    turn = ctx.last_turn(role)
    reason = status_reason(turn.messages) if turn is not None else None
    return role, _flat(reason, _SUMMARY_CHARS) if reason else None


def _why(ctx: ArbitrationContext, tr: Callable[..., str], who: str) -> str:
    trigger = ctx.trigger
    if trigger is Trigger.NO_PROGRESS:
        finding = ctx.evidence.get("finding")
        if finding:
            rounds = ctx.evidence.get("finding_rounds") or ctx.stalled_rounds
            return tr("why_no_progress_finding", label=finding, n=rounds)
        return tr("why_no_progress", n=ctx.stalled_rounds)
    if trigger is Trigger.MAX_ROUNDS:
        return tr("why_max_rounds", n=ctx.max_rounds)
    if trigger in (Trigger.BLOCKED, Trigger.NEEDS_CONTEXT):
        return tr(f"why_{trigger.value}", who=who)
    return tr(f"why_{trigger.value}")


def deterministic_escalation(
    ctx: ArbitrationContext,
    *,
    reason: str | None = None,
    source: VerdictSource = VerdictSource.NONE,
    question: str | None = None,
) -> Verdict:
    """A self-contained ESCALATE in the room's language, with options that fit.

    With `question` (the owner asked the user something), the decision asked
    of the user is that question, with yes/no style options.
    """

    def tr(key: str, **fields: Any) -> str:
        return t(key, ctx.language, **fields)

    disputed, others = _ledger(ctx)
    role, reported = _reported(ctx)
    who = tr("role_reviewer" if role is Role.REVIEWER else "role_owner")
    body: list[str] = []
    task = _task(ctx)
    if task:
        body.append(tr("esc_task", task=task))
    if question:
        headline = tr("esc_headline_question", question=_flat(question, _SUMMARY_CHARS))
        options = _options(_QUESTION_OPTIONS, tr)
    else:
        headline = tr("esc_headline", why=_why(ctx, tr, who))
        options, points = _body(ctx, tr, disputed, others, reported)
        body += points
    lines = [headline, *body]
    if reason:
        lines.append(reason)
    lines += ["", tr("esc_reply_hint")]
    lines += [f"{o.n}. {o.label} — {o.consequence}" for o in options]
    return Verdict(kind=VerdictKind.ESCALATE, text="\n".join(lines), options=options,
                   source=source)


def _body(
    ctx: ArbitrationContext,
    tr: Callable[..., str],
    disputed: list[dict[str, Any]],
    others: list[dict[str, Any]],
    reported: str | None,
) -> tuple[list[Option], list[str]]:
    """The options, and the lines that say what is to be decided."""
    trigger = ctx.trigger
    if trigger in (Trigger.BLOCKED, Trigger.NEEDS_CONTEXT):
        line = tr("esc_reported", text=reported) if reported else tr("esc_reported_none")
        return _options(_OPTIONS[trigger], tr), [line]
    if trigger is Trigger.CONTRADICTION and len(disputed) >= 2:
        first, second = disputed[0], disputed[1]
        a, b = str(first.get("label")), str(second.get("label"))
        lines = [
            tr("esc_requirement", label=label,
               summary=_flat(str(f.get("summary", "")), _POINT_CHARS))
            for label, f in ((a, first), (b, second))
        ]
        options = [
            Option(n=1, label=tr("opt_keep", keep=a, drop=b),
                   consequence=tr("opt_keep_do", keep=a, drop=b)),
            Option(n=2, label=tr("opt_keep", keep=b, drop=a),
                   consequence=tr("opt_keep_do", keep=b, drop=a)),
            Option(n=3, label=tr(_STOP), consequence=tr(f"{_STOP}_do"), ends_task=True),
        ]
        return options, lines
    if not disputed:
        # Nothing recorded to take sides on: after many rounds or on request,
        # the choice is whether to go on; a stalled argument still has two sides.
        keys = (_NO_FINDING_OPTIONS if trigger in (Trigger.MAX_ROUNDS, Trigger.MANUAL)
                else _OPTIONS.get(trigger, _OPTIONS[Trigger.NO_PROGRESS]))
        return _options(keys, tr), [tr("esc_no_points")]
    lines = []
    for finding in disputed[:_MAX_POINTS]:
        lines.append(tr("esc_point", label=finding.get("label"),
                        summary=_flat(str(finding.get("summary", "")), _POINT_CHARS)))
        stall = int(finding.get("stall") or 0)
        reviewer = (tr("claim_reviewer_repeated", n=stall + 1) if stall
                    else tr("claim_reviewer"))
        lines.append("- " + reviewer)
        lines.append("- " + tr(f"claim_owner_{_owner_action(finding)}"))
    more = len(disputed) - _MAX_POINTS + len(others)
    if more > 0:
        lines.append(tr("esc_points_more", count=more))
    return _options(_OPTIONS.get(trigger, _OPTIONS[Trigger.NO_PROGRESS]), tr), lines

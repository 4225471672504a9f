"""The findings ledger: what each round did to each reviewer finding.

The ledger lives for the task. A new epoch resets the counters (each
finding's stall count included), never the findings. Pure: `judge_round()`
reads a reviewer turn against the ledger and the owner's turn before it (read
by `bot.owner_turn.read_owner`) and returns what happened, mutating the
findings it is given. One reviewer's part of a turn is read in
`bot.reviewer_turn`; a finding and how a clause is matched to one are in
`bot.finding`; reversals between reviewers in `bot.contradictions`.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.contradictions import reversals
from bot.finding import (
    Finding,
    FindingStatus,
    OwnerAction,
    RoundOutcome,
)
from bot.reviewer_turn import judge_author
from bot.setting_aliases import teach
from bot.topics import Topic


def judge_round(
    findings: list[Finding],
    turns: Iterable[tuple[str, list[str]]],
    owner: dict[str, OwnerAction] | None,
    round_no: int,
    decisions: dict[str, str] | None = None,
    *,
    approving: frozenset[str] = frozenset(),
    aliases: list[list[str]] | None = None,
    reasons: Topic | None = None,
) -> RoundOutcome:
    """Apply one reviewer turn (per author) to the ledger, after the owner's turn.

    `owner` is None when the reviewer turn completes no round (it spoke before
    any owner turn); findings it raises still count, in the next round.
    `decisions`: the optional judge's answers to the rules' questions, by key.
    `approving`: the reviewers whose status approves (the turn as a whole may
    not: another reviewer has points open).
    `aliases`: pairs of setting names the owner said are one; the findings
    this turn raised learn them before reversals are looked for.
    `reasons`: what the owner's turn said, when it refused or put off a finding.
    """
    out = RoundOutcome()
    owner = owner or {}
    for author, messages in turns:
        judge_author(findings, author, messages, owner, round_no, out, decisions or {},
                     approving=author in approving, reasons=reasons)
    # (A fix reported for a reviewer who stayed silent leaves its point open:
    # only its author can say it holds. But the change is made, and another
    # reviewer asking it undone reverses it.)
    reported = frozenset(label for label, action in owner.items() if action is OwnerAction.FIX)
    teach(findings, aliases or [])
    reversals(findings, out, round_no, reported)
    return out

def apply_ruling(findings: list[Finding], upheld: str, retired: str, round_no: int) -> bool:
    """An arbiter's ruling (or a human's choice between two findings): the retired
    finding no longer applies for the rest of the task; raised again, it counts
    as repeated against the ruling, never as new. False when a label is gone."""
    by_label = {f.label: f for f in findings}
    keep, drop = by_label.get(upheld), by_label.get(retired)
    if keep is None or drop is None or keep is drop:
        return False
    drop.status, drop.stall = FindingStatus.RETIRED, 0
    drop.history.append(f"R{round_no}: retired by a ruling ({upheld} stands)")
    if keep.status is FindingStatus.CONTESTED:
        keep.status = FindingStatus.OPEN
    keep.history.append(f"R{round_no}: upheld by a ruling ({retired} no longer applies)")
    return True

def reset_stalls(findings: list[Finding]) -> None:
    """A new epoch: counters restart, findings stay."""
    for finding in findings:
        finding.stall = 0

def stuck(findings: list[Finding], threshold: int) -> Finding | None:
    """The open finding whose stall count reached the threshold, if any."""
    candidates = [f for f in findings if f.is_open and f.stall >= threshold]
    return max(candidates, key=lambda f: (f.stall, -int(f.label[1:])), default=None)

def disputed(findings: list[Finding]) -> list[Finding]:
    """Open findings the pair is stuck on (stall ≥ 1), else every open one."""
    open_findings = [f for f in findings if f.is_open]
    stalled = [f for f in open_findings if f.stall >= 1]
    return stalled or open_findings

def snapshot(findings: list[Finding]) -> list[dict[str, object]]:
    """The ledger as the detection evidence records it."""
    return [
        {
            "label": f.label,
            "author": f.author,
            "summary": f.summary,
            "status": f.status.value,
            "stall": f.stall,
            "history": list(f.history[-12:]),
        }
        for f in findings
    ]

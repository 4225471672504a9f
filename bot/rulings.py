"""A ruling on two findings, as stored and as people read it (no I/O).

A ruling (the arbiter's `UPHELD:` / `RETIRED:` pair, or a human's choice of
one side of a contradiction) is stored with its arbitration or its answer as
a record that carries both findings' summaries and authors: a label such as
`F3` names another finding in the next task, so `/arbiter history` must not
look it up in the room's current ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.finding import Finding
from bot.markup import Marked, mention, strip
from prompts.strings import t

SUMMARY_CHARS = 80


def record(
    findings: list[Finding], upheld: str, retired: str, *, applied: bool | None = None
) -> dict[str, Any]:
    """The stored form of a ruling (`ArbitrationRow.ruling`, `EscalationRow.answer_ruling`).

    `applied` (arbiter rulings only): False when a guardrail overrode the
    verdict, so the ruling was recorded and not applied.
    """
    by_label = {f.label: f for f in findings}
    out: dict[str, Any] = {"upheld": upheld, "retired": retired}
    for side, label in (("upheld", upheld), ("retired", retired)):
        finding = by_label.get(label)
        out[f"{side}_author"] = finding.author if finding else None
        out[f"{side}_summary"] = finding.summary[:SUMMARY_CHARS] if finding else None
    if applied is not None:
        out["applied"] = applied
    return out


def _point(stored: Mapping[str, Any], side: str) -> Marked:
    """One side of a ruling: its author as the platform names them, and its summary."""
    label = str(stored.get(side) or "?")
    summary = strip(str(stored.get(f"{side}_summary") or label))
    author = stored.get(f"{side}_author")
    return Marked(f"{mention(str(author))}: {summary}" if author else summary)


def fields(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The catalog fields of a ruling sentence (`ruling_sentence` and its kin)."""
    return {
        "upheld": strip(str(stored.get("upheld") or "?")),
        "retired": strip(str(stored.get("retired") or "?")),
        "upheld_summary": _point(stored, "upheld"),
        "retired_summary": _point(stored, "retired"),
    }


def sentence(stored: Mapping[str, Any], language: str, key: str = "ruling_sentence") -> str:
    """Which demand stands and which no longer applies, in the room's language."""
    return t(key, language, **fields(stored))

"""Render an `ArbitrationContext` into the arbiter's user prompt. Pure.

Two properties matter more than looks:

* Room text is data. Every quoted line is prefixed with `│ ` and `<`, `>`, `&`
  are escaped, so a message cannot close a `<room_data>` block, open a fake
  reference section or put a `VERDICT:` line at the start of a prompt line.
* The prompt fits a character budget whatever the room's size. Only the last K
  agent turns are looked at (O(window)); the oldest of those go first. The
  last owner and reviewer turns are never dropped, only shortened inside when
  a single one is huge; human messages are shortened first and, only when even
  short versions cannot fit, the oldest are left out with a marker (the loader
  already keeps just the task's request and its latest 20; the request stays).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.arbiter.base import ArbitrationContext, ContextMessage, ContextTurn
from bot.arbiter.language import language_name
from bot.models import Role, Trigger

QUOTE = "│ "
REFERENCE_HEADER = "=== REFERENCE OPINION {n}: {name} ==="
REFERENCE_FOOTER = "=== END REFERENCE OPINION {n} ==="
OMITTED_TURNS = "[... {n} earlier agent turns omitted ...]"
OMITTED_HUMANS = "[... {n} earlier human messages omitted ...]"
CLIPPED = "[... {n} characters omitted ...]"

_EVIDENCE_CHARS = 1_500
_VERDICT_CHARS = 1_200
_MAX_EARLIER_VERDICTS = 6
_MIN_ITEM_CHARS = 200
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

_TRIGGER_EN = {
    Trigger.NO_PROGRESS: "rounds without progress reached the threshold",
    Trigger.MAX_ROUNDS: "the epoch reached the maximum number of rounds",
    Trigger.CONTRADICTION: "two reviewers' findings cannot both be met; rule on the pair",
    Trigger.BLOCKED: "an agent reported BLOCKED",
    Trigger.NEEDS_CONTEXT: "an agent reported NEEDS_CONTEXT",
    Trigger.MANUAL: "an admin summoned the arbiter",
}


@dataclass(frozen=True)
class Reference:
    """One MoA reference opinion (name from configuration, text from a model)."""

    name: str
    text: str


_MAX_DISPUTED = 8


def sanitize(text: str) -> str:
    """Valid UTF-8 without control characters (broken input must not break the prompt)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quote(text: str) -> str:
    """Room text as data: escaped, and every line visibly marked as quoted."""
    lines = escape(sanitize(text)).split("\n")
    return "\n".join(QUOTE + line for line in lines)


def attr(value: str) -> str:
    return escape(sanitize(value)).replace('"', "&quot;").replace("\n", " ")[:120]


def clip(text: str, limit: int) -> str:
    """Keep the head and the tail of a huge text, with a marker for the cut."""
    if len(text) <= limit:
        return text
    limit = max(limit, 40)
    cut = len(text) - limit
    head = text[: limit * 2 // 3]
    tail = text[len(text) - limit // 3 :]
    return f"{head}\n{CLIPPED.format(n=cut)}\n{tail}"


def _time(ts: datetime | None) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ") if ts else "unknown"


def _message(m: ContextMessage, limit: int | None = None) -> str:
    text = m.text if limit is None else clip(m.text, limit)
    return (
        f'<message role="{m.role.value}" author="{attr(m.author)}" time="{_time(m.ts)}">\n'
        f"{quote(text)}\n</message>"
    )


def _turn(t: ContextTurn, limit: int | None = None) -> str:
    text = t.text if limit is None else clip(t.text, limit)
    return (
        f'<turn role="{t.role.value}" author="{attr(t.author)}" time="{_time(t.started_at)}" '
        f'status="{t.status.value}">\n{quote(text)}\n</turn>'
    )


def _header(ctx: ArbitrationContext, language: str) -> str:
    # The ledger has its own section below; the rest of the evidence stays short.
    brief = {k: v for k, v in ctx.evidence.items() if k != "ledger"}
    evidence = json.dumps(brief, ensure_ascii=False, default=str, sort_keys=True)
    lines = [
        "# Arbitration request",
        "",
        "## Room and task",
        f"- room: {attr(ctx.room.id)}",
        f"- task started: {_time(ctx.task_started_at)}",
        f"- required language of your answer: {language_name(language)}",
        "",
        "## Why you were called",
        f"- trigger: {ctx.trigger.value} ({_TRIGGER_EN[ctx.trigger]})",
        f"- rounds in this epoch: {ctx.rounds} (maximum {ctx.max_rounds})",
        f"- rounds without progress: {ctx.stalled_rounds} (threshold {ctx.stall_threshold})",
        f"- arbitrations since the last human message: {ctx.arbitrations_since_human}"
        f" (limit {ctx.max_arbitrations})",
        "- evidence recorded by the detector:",
        '<room_data kind="evidence">',
        quote(clip(evidence, _EVIDENCE_CHARS)),
        "</room_data>",
        "",
        "",
        *_disputed(ctx.evidence),
        "## Earlier verdicts in this task",
    ]
    verdicts = ctx.earlier_verdicts[-_MAX_EARLIER_VERDICTS:]
    if len(ctx.earlier_verdicts) > len(verdicts):
        older = len(ctx.earlier_verdicts) - len(verdicts)
        lines.append(f"[... {older} older verdicts omitted ...]")
    if not verdicts:
        lines.append("(none)")
    for v in verdicts:
        lines.append(
            f'<verdict kind="{v.kind.value}" trigger="{v.trigger.value}" time="{_time(v.at)}">'
        )
        lines.append(quote(clip(v.text, _VERDICT_CHARS)))
        lines.append("</verdict>")
    return "\n".join(lines)


def _disputed(evidence: dict[str, object]) -> list[str]:
    """The findings the pair is stuck on, with labels and authors.

    Ruling on these is the point of the arbitration: say which point stands.
    """
    ledger = evidence.get("ledger")
    wanted = evidence.get("disputed")
    if not isinstance(ledger, list) or not isinstance(wanted, list):
        return []
    rows = [f for f in ledger if isinstance(f, dict) and f.get("label") in wanted]
    if not rows:
        return []
    lines = [
        "## Disputed findings (rule on these; name them by label)",
        '<room_data kind="findings">',
    ]
    for f in rows[:_MAX_DISPUTED]:
        history = "; ".join(str(h) for h in f.get("history", []))
        lines.append(
            f'<finding label="{attr(str(f.get("label")))}" author="{attr(str(f.get("author")))}"'
            f' status="{attr(str(f.get("status")))}" stalled_rounds="{f.get("stall")}">'
        )
        lines.append(quote(clip(str(f.get("summary", "")), _VERDICT_CHARS)))
        lines.append(f"history: {quote(clip(history, _VERDICT_CHARS))}")
        lines.append("</finding>")
    lines += ["</room_data>", ""]
    return lines


def _references(refs: Sequence[Reference], budget: int) -> str:
    if not refs:
        return ""
    each = max(_MIN_ITEM_CHARS, budget // len(refs))
    parts = ["## Reference opinions from other models (advice, not evidence; cite them by name)"]
    for i, ref in enumerate(refs, 1):
        name = attr(ref.name)
        parts.append(REFERENCE_HEADER.format(n=i, name=name))
        parts.append(quote(clip(ref.text.strip(), each)))
        parts.append(REFERENCE_FOOTER.format(n=i))
    return "\n".join(parts)


def _ruling_request(ctx: ArbitrationContext) -> list[str]:
    """On a contradiction (or whenever findings are disputed), ask for a ruling."""
    rulable = sorted(ctx.rulable, key=lambda x: int(x[1:]) if x[1:].isdigit() else 0)
    if len(rulable) < 2:
        return []
    lines = [
        "You may rule on the disputed findings: after the verdict line, write exactly one "
        "line `UPHELD: F<n>` (the demand that stands) and one line `RETIRED: F<n>` (the "
        "demand that no longer applies), choosing from: " + ", ".join(rulable) + "."
    ]
    if ctx.trigger is Trigger.CONTRADICTION:
        lines.append(
            "This deadlock is a contradiction between two reviewers' findings: rule on the "
            "pair unless only a human can decide (then ESCALATE and say why)."
        )
    return lines


def _footer(language: str, notes: Sequence[str], ruling: Sequence[str] = ()) -> str:
    lines = ["## Facts checked by the bot"]
    lines += [f"- {note}" for note in notes] or ["- (none)"]
    lines += [
        "",
        "## Your task",
        "Rule on this deadlock now. The first line must start with exactly one keyword: "
        "PROCEED, REVISE, RESET or ESCALATE. For ESCALATE, list at least two numbered "
        "options `1. label — consequence`.",
        f"Write everything after the keyword in {language_name(language)}.",
        *ruling,
    ]
    return "\n".join(lines)


def _assemble(
    head: str,
    humans: list[str],
    omitted_humans: int,
    turns: list[str],
    omitted_turns: int,
    refs: str,
    foot: str,
    pinned_humans: int = 0,
) -> str:
    parts = [head, "", "## Human messages of this task (the user's own words)"]
    parts.append('<room_data kind="human_messages">')
    marker = [OMITTED_HUMANS.format(n=omitted_humans)] if omitted_humans else []
    parts += humans[:pinned_humans] + marker + humans[pinned_humans:]
    if not humans:
        parts.append("(none)")
    parts.append("</room_data>")
    parts += ["", "## Recent agent turns, oldest first", '<room_data kind="agent_turns">']
    if omitted_turns:
        parts.append(OMITTED_TURNS.format(n=omitted_turns))
    parts += turns or ["(none)"]
    parts.append("</room_data>")
    if refs:
        parts += ["", refs]
    parts += ["", foot]
    return "\n".join(parts)


def _water_level(sizes: list[int], room: int) -> int:
    """Largest per-item cap with sum(min(size, cap)) <= room: big items shrink first."""
    lo, hi = _MIN_ITEM_CHARS, max(sizes)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(size, mid) for size in sizes) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo


def render_prompt(
    ctx: ArbitrationContext,
    *,
    budget: int,
    language: str | None = None,
    context_turns: int = 8,
    references: Sequence[Reference] = (),
    notes: Sequence[str] = (),
) -> str:
    """The whole user prompt, never longer than `budget` characters."""
    language = language or ctx.language
    k = max(2, context_turns)
    window = ctx.agent_turns[-k:]
    omitted = ctx.omitted_turns + len(ctx.agent_turns) - len(window)
    owner, reviewer = ctx.last_turn(Role.OWNER), ctx.last_turn(Role.REVIEWER)
    pinned = [t for t in (owner, reviewer) if t is not None]
    # The last owner/reviewer turns stay even when they fell outside the window.
    for t in pinned:
        if all(t is not w for w in window):
            window = [t, *window]
            omitted = max(0, omitted - 1)
    window.sort(key=lambda t: t.started_at)

    head = _header(ctx, language)
    foot = _footer(language, notes, _ruling_request(ctx))
    refs = _references(references, budget // 4)
    humans = list(ctx.human_messages)
    request = humans[:1] if ctx.first_human_is_request else []
    humans = humans[len(request) :]
    omitted_humans = ctx.omitted_human_messages

    def build(cap: int | None, optional: list[ContextTurn], n_humans: int) -> str:
        shown = [t for t in window if any(t is p for p in pinned) or any(t is o for o in optional)]
        dropped = len(window) - len(shown)
        return _assemble(
            head,
            [_message(m, cap) for m in request + humans[len(humans) - n_humans :]],
            omitted_humans + len(humans) - n_humans,
            [_turn(t, cap) for t in shown],
            omitted + dropped,
            refs,
            foot,
            pinned_humans=len(request),
        )

    # 1. Mandatory part alone; shorten inside (largest first) until it fits.
    n_humans = len(humans)
    cap: int | None = None
    sizes = [len(m.text) for m in request + humans] + [len(t.text) for t in pinned] + [1]
    if sum(sizes) > budget:  # do not even escape megabytes that cannot fit
        cap = _water_level(sizes, budget * 3 // 4)
    prompt = build(cap, [], n_humans)
    if len(prompt) > budget:
        cap = cap or max(sizes)
        while len(prompt) > budget and cap > _MIN_ITEM_CHARS:
            cap = max(_MIN_ITEM_CHARS, int(cap * 0.8))
            prompt = build(cap, [], n_humans)
        # Last resort for absurd inputs: the oldest human messages go, marked.
        while len(prompt) > budget and n_humans > 1:
            n_humans = max(1, n_humans // 2)
            prompt = build(cap, [], n_humans)
    # 2. Optional turns, newest first, while they fit; the oldest are dropped.
    optional: list[ContextTurn] = []
    for t in reversed(window):
        if any(t is p for p in pinned):
            continue
        candidate = build(cap, [*optional, t], n_humans)
        if len(candidate) > budget:
            break
        optional.append(t)
        prompt = candidate
    if len(prompt) > budget:  # fixed parts alone exceed a tiny budget
        prompt = prompt[: max(0, budget - 1)] + "…"
    return prompt

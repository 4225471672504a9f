"""OutgoingMessage -> Slack `text` + Block Kit, and mention neutralising (pure).

The core's text is untrusted (model output, quoted room text), so everything in
it is escaped the way Slack documents (`&`, `<`, `>`): `<!channel>` or `<@U1>`
then shows as text and pings nobody. Text objects are `verbatim` so Slack does
not auto-parse `@here`-style words either; only `mention_user_ids` are rendered
as real mentions. Limits: section text <= 3000 chars, <= 50 blocks, <= 25
buttons per actions block, button label <= 75 chars; `text` is always set (it
is the notification and the accessibility fallback).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from adapters.slack.translate import permalink
from bot import buttons, markup
from bot.chunking import split_text
from bot.models import MessageKind, Option, OutgoingMessage

SECTION_LIMIT = 3000
MAX_BLOCKS = 50
FALLBACK_LIMIT = 3000
BUTTON_LABEL_LIMIT = 75
BUTTONS_PER_ACTIONS = 25
TRUNCATED = "… (truncated)"

_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
# Plain-word broadcasts some clients parse even without <...> markup.
_BROADCAST = re.compile(r"([@＠])(channel|here|everyone)\b", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass
class Rendered:
    """What goes into chat.postMessage / chat.update."""

    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)


def escape(text: str) -> str:
    """Slack's three control characters; after this no `<...>` markup survives."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def neutralise(text: str, workspace: str | None = None) -> str:
    """Untrusted text that can be posted without pinging anyone; the core's own
    mention, time and thread markers (`bot.markup`) become Slack markup after
    escaping (a thread links into `workspace`, the address auth.test gives)."""
    # A zero-width joiner after the @ keeps the word readable but unparsable.
    return markup.render(
        _BROADCAST.sub("\\1\u2060\\2", escape(text)), user=_user, time=_date,
        room=lambda room_id: permalink(workspace, room_id),
    )


def _user(user_id: str) -> str:
    # Only user ids have a mention syntax; a bot id (B…) is shown as it is.
    return f"<@{user_id}>" if _USER_ID.match(user_id) else escape(user_id)


def _date(at: datetime) -> str:
    """Slack shows `<!date>` in each reader's time zone; the fallback is UTC."""
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} {{time}}|{markup.utc_text(at)}>"


def mentions(user_ids: list[str]) -> str:
    """Real mentions, only for well-formed user ids (nothing else can be injected)."""
    seen: list[str] = []
    for uid in user_ids:
        if _USER_ID.match(uid) and uid not in seen:
            seen.append(uid)
    return " ".join(f"<@{uid}>" for uid in seen)


def to_mrkdwn(text: str) -> str:
    """Light Markdown -> Slack mrkdwn (bold, headings) outside code fences."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            out.append(line)
            continue
        if not fenced:
            heading = _HEADING.match(line)
            if heading:
                line = f"*{heading.group(1).strip('*')}*"
            else:
                line = _BOLD.sub(r"*\1*", line)
        out.append(line)
    return "\n".join(out)


def _safe_chunks(text: str, limit: int = SECTION_LIMIT, cap: int = SECTION_LIMIT) -> list[str]:
    """Neutralised chunks of at most `cap` chars (escaping grows the text)."""
    result: list[str] = []
    for chunk in split_text(text, limit):
        safe = neutralise(chunk)
        if len(safe) <= cap:
            result.append(safe)
            continue
        smaller = max(20, int(limit * cap / len(safe)) - 16)
        result.extend(_safe_chunks(chunk, smaller, cap) if smaller < limit else [safe[:cap]])
    return result


def _section(mrkdwn: str, *, verbatim: bool = True) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn, "verbatim": verbatim}}


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(TRUNCATED)] + TRUNCATED


def option_label(option: Option) -> str:
    return _truncate(f"{option.n}. {option.label}".replace("\n", " "), BUTTON_LABEL_LIMIT)


def decision_line(message: OutgoingMessage) -> str:
    """The decision shown instead of the buttons once an escalation is answered:
    the chosen option, then the core's note (who, when)."""
    assert message.decided is not None
    decided = message.decided
    # n == 0: a free-text answer; the label already carries the whole line.
    line = decided.label if decided.n == 0 else f"✅ {decided.n}. {decided.label}"
    return f"{line} — {message.decided_note}" if message.decided_note else line


def _buttons(escalation_id: int, options: list[Option]) -> list[dict[str, Any]]:
    blocks = []
    for start in range(0, len(options), BUTTONS_PER_ACTIONS):
        elements = [
            {
                "type": "button",
                # plain_text is never parsed for mentions; emoji only.
                "text": {"type": "plain_text", "text": option_label(o), "emoji": True},
                "value": buttons.encode(escalation_id, o.n),
                "action_id": buttons.encode(escalation_id, o.n),
            }
            for o in options[start : start + BUTTONS_PER_ACTIONS]
        ]
        blocks.append({"type": "actions", "block_id": f"tribunal-esc-{escalation_id}-{start}",
                       "elements": elements})
    return blocks


def render(message: OutgoingMessage) -> Rendered:
    """Block Kit for one core message, within Slack's limits."""
    head = mentions(message.mention_user_ids)
    body = to_mrkdwn(message.text) if message.text.strip() else "…"
    tail: list[dict[str, Any]] = []
    if message.decided is not None:
        tail.append(_section(_truncate(neutralise(decision_line(message)), SECTION_LIMIT)))
    elif message.options and message.escalation_id is not None:
        tail.extend(_buttons(message.escalation_id, message.options))

    if head:  # after the text: agents read the verdict keyword on the first line
        tail.insert(0, _section(head, verbatim=False))
    blocks: list[dict[str, Any]] = []
    tail = tail[: MAX_BLOCKS - 1]
    room = MAX_BLOCKS - len(tail)
    chunks = _safe_chunks(body)
    if len(chunks) > room:
        last = _truncate(chunks[room - 1], SECTION_LIMIT - 20) + "\n" + TRUNCATED
        chunks = [*chunks[: room - 1], last]
    blocks.extend(_section(c) for c in chunks)
    blocks.extend(tail)
    return Rendered(text=fallback_text(message), blocks=blocks)


def fallback_text(message: OutgoingMessage) -> str:
    """The top-level `text`: notification preview, and what plain clients show."""
    parts = [neutralise(_truncate(message.text.strip() or "…", FALLBACK_LIMIT))]
    if message.decided is not None:
        parts.append(neutralise(decision_line(message)))
    parts.append(mentions(message.mention_user_ids))
    return "\n".join(p for p in parts if p)


def render_plain(message: OutgoingMessage) -> Rendered:
    """Last resort when Slack rejects the blocks: text only (digits still answer)."""
    text = fallback_text(message)
    if message.options and message.decided is None and message.kind == MessageKind.VERDICT:
        missing = [option_label(o) for o in message.options if f"{o.n}." not in text]
        if missing:
            text = text + "\n" + neutralise("\n".join(missing))
    return Rendered(text=_truncate(text, FALLBACK_LIMIT + 1000))

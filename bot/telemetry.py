"""What the operator sees of the rooms: one INFO line and a metric per event.

The core calls these hooks where a deadlock is recorded, a verdict is
recorded, an escalation is answered and a setting is changed; each writes one
log line naming the room id (the JSON format carries the same as fields) and
bumps the matching counter. Message texts are never logged: rooms hold the
users' work, and the log is read by other people.
"""

from __future__ import annotations

import logging
from typing import Any

from bot import metrics
from bot.models import RoomKey

log = logging.getLogger("tribunal.events")


def _info(message: str, fields: dict[str, Any]) -> None:
    log.info(message, extra={"fields": fields})


def deadlock(
    room: RoomKey, trigger: str, *, after_message: str = "", finding: str | None = None,
    stalled_rounds: int | None = None, rounds: int | None = None,
) -> None:
    metrics.DEADLOCKS.labels(trigger).inc()
    where = f" after message {after_message}" if after_message else ""
    about = f" on finding {finding}" if finding else ""
    _info(
        f"deadlock in room {room.id}: {trigger}{about}{where}",
        {"event": "deadlock", "room": room.id, "trigger": trigger,
         "after_message": after_message or None, "finding": finding,
         "stalled_rounds": stalled_rounds, "rounds": rounds},
    )


def verdict(
    room: RoomKey, arbitration_id: int, *, kind: str, source: str, backend: str,
    model: str | None, latency_ms: int,
) -> None:
    metrics.VERDICTS.labels(kind, source).inc()
    metrics.ARBITER_LATENCY.labels(backend).observe(latency_ms / 1000)
    model_part = f" ({model})" if model else ""
    _info(
        f"verdict in room {room.id}: {kind} from {source}, backend {backend}{model_part}, "
        f"{latency_ms} ms (arbitration {arbitration_id})",
        {"event": "verdict", "room": room.id, "arbitration": arbitration_id, "verdict": kind,
         "source": source, "backend": backend, "model": model, "latency_ms": latency_ms},
    )


def answer(
    room: RoomKey, escalation_id: int, *, by: str, kind: str, option: int | None
) -> None:
    metrics.ANSWERS.labels(kind).inc()
    chosen = f"option {option}" if option is not None else "free text"
    _info(
        f"answer in room {room.id}: {chosen} by {by} ({kind}, escalation {escalation_id})",
        {"event": "answer", "room": room.id, "escalation": escalation_id, "by": by,
         "kind": kind, "option": option},
    )


def answer_rejected(room: RoomKey, escalation_id: int, *, by: str, reason: str) -> None:
    metrics.ANSWERS_REJECTED.labels(reason).inc()
    _info(
        f"answer refused in room {room.id}: {reason} ({by}, escalation {escalation_id})",
        {"event": "answer_rejected", "room": room.id, "escalation": escalation_id, "by": by,
         "reason": reason},
    )


def setting_changed(
    *, platform: str, channel: str, by: str, action: str, scope: str, before: Any, after: Any,
) -> None:
    metrics.SETTINGS_CHANGES.labels(action).inc()
    _info(
        f"settings in {platform}:{channel}: {action} {before!r} -> {after!r} at {scope} by {by}",
        {"event": "settings_changed", "platform": platform, "channel": channel, "by": by,
         "action": action, "scope": scope, "before": before, "after": after},
    )


def redelivered(room: RoomKey, message_id: str) -> None:
    """A message already stored came again (a platform's redelivery, a replay run twice)."""
    metrics.MESSAGES_REDELIVERED.inc()
    log.debug("message %s in room %s was already stored; skipped", message_id, room.id)


def outbox_retry(kind: str) -> None:
    metrics.OUTBOX_RETRIES.labels(kind).inc()


def outbox_dropped(kind: str) -> None:
    metrics.OUTBOX_DROPPED.labels(kind).inc()


def outbox_found_posted(kind: str) -> None:
    metrics.OUTBOX_FOUND_POSTED.labels(kind).inc()


def caught_up(platform: str, count: int) -> None:
    metrics.CAUGHT_UP.labels(platform).inc(count)


def rate_limited(service: str) -> None:
    """A 429 from `service` (slack, discord, arbiter); the caller logs it its own way."""
    metrics.RATE_LIMITED.labels(service).inc()

"""Prometheus metrics, every name prefixed `tribunal_` (served by bot/ops_server.py).

A registry of our own rather than prometheus-client's global one: the
endpoint then shows Tribunal's series only, and importing a library that
registers its own metrics cannot collide with ours. Counters are bumped where
things happen (bot/telemetry.py and a few hooks); the gauges that describe
stored state (outbox depth, pending escalations) are read from the database
at each scrape, so they are right after a restart too.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.models import Trigger, VerdictKind, VerdictSource

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

DEADLOCKS = Counter(
    "tribunal_deadlocks", "Deadlocks detected, by trigger", ["trigger"], registry=REGISTRY
)
VERDICTS = Counter(
    "tribunal_verdicts", "Verdicts recorded, by kind and source", ["kind", "source"],
    registry=REGISTRY,
)
# A model call takes from under a second (a local server) to minutes (a busy
# vendor with retries); the buckets span both ends.
ARBITER_LATENCY = Histogram(
    "tribunal_arbiter_latency_seconds", "Time from asking the arbiter to its verdict",
    ["backend"], buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600),
    registry=REGISTRY,
)
ANSWERS = Counter(
    "tribunal_escalation_answers", "Escalations answered by a human, by kind of answer",
    ["kind"], registry=REGISTRY,
)
ANSWERS_REJECTED = Counter(
    "tribunal_escalation_answers_rejected", "Answers refused, by reason", ["reason"],
    registry=REGISTRY,
)
ESCALATIONS_PENDING = Gauge(
    "tribunal_escalations_pending", "Escalations waiting for a human", registry=REGISTRY
)
SETTINGS_CHANGES = Counter(
    "tribunal_settings_changes", "Changes made with /arbiter, by subcommand", ["action"],
    registry=REGISTRY,
)
MESSAGES_REDELIVERED = Counter(
    "tribunal_messages_redelivered", "Messages skipped because they were already stored",
    registry=REGISTRY,
)
OUTBOX_DEPTH = Gauge(
    "tribunal_outbox_depth", "Posts waiting in the outbox to be sent", registry=REGISTRY
)
OUTBOX_RETRIES = Counter(
    "tribunal_outbox_retries", "Failed post attempts that will be retried, by kind of post",
    ["kind"], registry=REGISTRY,
)
OUTBOX_DROPPED = Counter(
    "tribunal_outbox_dropped", "Posts given up (permanent failure or a day of retries)",
    ["kind"], registry=REGISTRY,
)
OUTBOX_FOUND_POSTED = Counter(
    "tribunal_outbox_found_posted",
    "Posts found already on the platform after a crash, so not posted again, by kind",
    ["kind"], registry=REGISTRY,
)
CAUGHT_UP = Counter(
    "tribunal_caught_up_messages",
    "Messages found by catch-up (missed while the bot was down), by platform",
    ["platform"], registry=REGISTRY,
)
RATE_LIMITED = Counter(
    "tribunal_rate_limited", "HTTP 429 answers received, by service (slack, discord, arbiter)",
    ["service"], registry=REGISTRY,
)
PLATFORM_UP = Gauge(
    "tribunal_platform_up", "1 while the platform is connected", ["platform"], registry=REGISTRY
)
DATABASE_UP = Gauge(
    "tribunal_database_up", "1 when the last check of the database succeeded", registry=REGISTRY
)

# Series that exist from the start at zero: a rate() over a counter that
# appears only at its first event misses that event.
for _trigger in Trigger:
    DEADLOCKS.labels(_trigger.value)
for _kind in VerdictKind:
    for _source in VerdictSource:
        VERDICTS.labels(_kind.value, _source.value)
for _service in ("slack", "discord", "arbiter"):
    RATE_LIMITED.labels(_service)


def exposition() -> bytes:
    """The registry in Prometheus' text format."""
    return generate_latest(REGISTRY)

"""Prometheus metrics, every name prefixed `tribunal_` (served by bot/ops_server.py).

A registry of our own rather than prometheus-client's global one: the
endpoint then shows Tribunal's series only, and importing a library that
registers its own metrics cannot collide with ours. Counters are bumped where
things happen (bot/telemetry.py and a few hooks); the gauges that describe
stored state (outbox depth, pending escalations) are read from the database
at each scrape, so they are right after a restart too.

prometheus-client is imported, and the metrics made, at the first use of any
of them (`metrics.DEADLOCKS`...), not when this module is imported: a start
does not wait for a library that is needed only when something happens or
the endpoint is scraped.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    REGISTRY: CollectorRegistry
    DEADLOCKS: Counter
    VERDICTS: Counter
    ARBITER_LATENCY: Histogram
    ANSWERS: Counter
    ANSWERS_REJECTED: Counter
    ESCALATIONS_PENDING: Gauge
    SETTINGS_CHANGES: Counter
    MESSAGES_REDELIVERED: Counter
    OUTBOX_DEPTH: Gauge
    OUTBOX_RETRIES: Counter
    OUTBOX_DROPPED: Counter
    OUTBOX_FOUND_POSTED: Counter
    CAUGHT_UP: Counter
    RATE_LIMITED: Counter
    PLATFORM_UP: Gauge
    DATABASE_UP: Gauge

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


_MAKING = threading.Lock()


def _make() -> None:
    """Every metric, made once, as this module's attributes."""
    with _MAKING:
        if "REGISTRY" not in globals():
            _make_now()


def _make_now() -> None:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    from bot.models import Trigger, VerdictKind, VerdictSource

    registry = CollectorRegistry(auto_describe=True)

    def counter(name: str, about: str, labels: tuple[str, ...] = ()) -> Counter:
        return Counter(name, about, labels, registry=registry)

    def gauge(name: str, about: str, labels: tuple[str, ...] = ()) -> Gauge:
        return Gauge(name, about, labels, registry=registry)

    made: dict[str, Any] = {
        "REGISTRY": registry,
        "DEADLOCKS": counter("tribunal_deadlocks", "Deadlocks detected, by trigger",
                             ("trigger",)),
        "VERDICTS": counter("tribunal_verdicts", "Verdicts recorded, by kind and source",
                            ("kind", "source")),
        # A model call takes from under a second (a local server) to minutes (a
        # busy vendor with retries); the buckets span both ends.
        "ARBITER_LATENCY": Histogram(
            "tribunal_arbiter_latency_seconds", "Time from asking the arbiter to its verdict",
            ["backend"], buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600),
            registry=registry,
        ),
        "ANSWERS": counter("tribunal_escalation_answers",
                           "Escalations answered by a human, by kind of answer", ("kind",)),
        "ANSWERS_REJECTED": counter("tribunal_escalation_answers_rejected",
                                    "Answers refused, by reason", ("reason",)),
        "ESCALATIONS_PENDING": gauge("tribunal_escalations_pending",
                                     "Escalations waiting for a human"),
        "SETTINGS_CHANGES": counter("tribunal_settings_changes",
                                    "Changes made with /arbiter, by subcommand", ("action",)),
        "MESSAGES_REDELIVERED": counter("tribunal_messages_redelivered",
                                        "Messages skipped because they were already stored"),
        "OUTBOX_DEPTH": gauge("tribunal_outbox_depth", "Posts waiting in the outbox to be sent"),
        "OUTBOX_RETRIES": counter(
            "tribunal_outbox_retries",
            "Failed post attempts that will be retried, by kind of post", ("kind",)),
        "OUTBOX_DROPPED": counter(
            "tribunal_outbox_dropped",
            "Posts given up (permanent failure or a day of retries)", ("kind",)),
        "OUTBOX_FOUND_POSTED": counter(
            "tribunal_outbox_found_posted",
            "Posts found already on the platform after a crash, so not posted again, by kind",
            ("kind",)),
        "CAUGHT_UP": counter(
            "tribunal_caught_up_messages",
            "Messages found by catch-up (missed while the bot was down), by platform",
            ("platform",)),
        "RATE_LIMITED": counter(
            "tribunal_rate_limited",
            "HTTP 429 answers received, by service (slack, discord, arbiter)", ("service",)),
        "PLATFORM_UP": gauge("tribunal_platform_up", "1 while the platform is connected",
                             ("platform",)),
        "DATABASE_UP": gauge("tribunal_database_up",
                             "1 when the last check of the database succeeded"),
    }
    # Series that exist from the start at zero: a rate() over a counter that
    # appears only at its first event misses that event.
    for trigger in Trigger:
        made["DEADLOCKS"].labels(trigger.value)
    for kind in VerdictKind:
        for source in VerdictSource:
            made["VERDICTS"].labels(kind.value, source.value)
    for service in ("slack", "discord", "arbiter"):
        made["RATE_LIMITED"].labels(service)
    globals().update(made)


_NAMES = frozenset({
    "REGISTRY", "DEADLOCKS", "VERDICTS", "ARBITER_LATENCY", "ANSWERS", "ANSWERS_REJECTED",
    "ESCALATIONS_PENDING", "SETTINGS_CHANGES", "MESSAGES_REDELIVERED", "OUTBOX_DEPTH",
    "OUTBOX_RETRIES", "OUTBOX_DROPPED", "OUTBOX_FOUND_POSTED", "CAUGHT_UP", "RATE_LIMITED",
    "PLATFORM_UP", "DATABASE_UP",
})


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        _make()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def exposition() -> bytes:
    """The registry in Prometheus' text format."""
    from prometheus_client import generate_latest

    _make()
    registry: CollectorRegistry = globals()["REGISTRY"]
    return generate_latest(registry)

"""Every benchmark of `python -m bench`, and the rows each one promises.

Row names are a public interface (tools outside the project read
`bench/results.json`): add rows, never rename them. Units and targets live
here only; a benchmark builds its rows with `row(name, value, ...)`. Each
benchmark module is imported only when it runs.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Literal

from bench.harness import Benchmark, Options, Row, RunFn, Spec, Target

GE: Literal[">="] = ">="
LE: Literal["<="] = "<="
RATIO: Literal["ratio"] = "ratio"
VALUE: Literal["value"] = "value"


def _lazy(module: str, function: str) -> RunFn:
    async def run(options: Options) -> list[Row]:
        fn = getattr(importlib.import_module(module), function)
        rows: list[Row] = await fn(options)
        return rows

    return run


def _bench(name: str, module: str, function: str, about: str, specs: list[Spec]) -> Benchmark:
    return Benchmark(name, specs, _lazy(module, function), about)


# Detection quality: the same rows on the tuning corpus and on the newest held-out set.
_DETECTION = [
    Spec("detection_recall", "", Target(GE, 0.95), VALUE),
    Spec("detection_false_alarms", "rooms", Target(LE, 0), VALUE),
    Spec("detection_exact_message", "", Target(GE, 0.95), VALUE),
    Spec("detection_precision", "", Target(GE, 0.95), VALUE),
    Spec("detection_trigger_accuracy", "", Target(GE, 0.95), VALUE),
    Spec("detection_latency_rounds", "rounds", Target(LE, 0.5), VALUE),
    Spec("contradiction_recall", "", Target(GE, 0.95), VALUE),
    Spec("contradiction_precision", "", Target(GE, 0.95), VALUE),
]

SUITE: list[Benchmark] = [
    _bench("ingest", "bench.bench_ingest", "run",
           "whole pipeline vs raw inserts with the same driver and durability", [
               Spec("ingest_sqlite", "msg/s", Target(GE, 0.6), RATIO),
               Spec("ingest_postgres", "msg/s", Target(GE, 0.6), RATIO),
               Spec("ingest_postgres_2_instances", "msg/s", Target(GE, 1.0), RATIO),
               Spec("ingest_postgres_3_instances", "msg/s", Target(GE, 1.0), RATIO),
           ]),
    _bench("context", "bench.bench_rooms", "run_context",
           "context assembly from storage, 100,000- vs 1,000-message room", [
               Spec("context_100k_vs_1k", "ms", Target(LE, 1.5), RATIO),
           ]),
    _bench("overhead", "bench.bench_rooms", "run_overhead",
           "detection to verdict, instant fake model, vs the bare HTTP call", [
               Spec("arbitration_overhead", "ms", Target(LE, 50.0), VALUE),
               Spec("arbiter_call_overhead", "ms", Target(LE, 2.0), RATIO),
           ]),
    _bench("ack", "bench.bench_ack", "run",
           "Slack HTTP events acknowledged under a 200-room burst vs a bare handler", [
               Spec("ack_latency_p99", "ms", Target(LE, 3000.0), VALUE),
               Spec("ack_latency_p50", "ms", Target(LE, 3000.0), VALUE),
           ]),
    _bench("startup", "bench.bench_startup", "run",
           "process start to ready with 10,000 rooms vs reading the rows directly", [
               Spec("startup_10k_rooms", "s", Target(LE, 3.0), RATIO),
               Spec("startup_resume", "s", Target(LE, 60.0), VALUE),
               Spec("startup_catchup", "s", Target(LE, 60.0), VALUE),
               Spec("startup_vs_sdk_imports", "s", Target(LE, 1.5), RATIO),
           ]),
    _bench("burst", "bench.bench_burst", "run",
           "simultaneous deadlocks against the fake Slack's documented limits", [
               Spec("burst_delivery", "s", Target(LE, 1.2), RATIO),
               Spec("burst_429", "count", Target(LE, 0), VALUE),
               Spec("burst_lost", "count", Target(LE, 0), VALUE),
               Spec("burst_strict_lost", "count", Target(LE, 0), VALUE),
               Spec("burst_strict_retry_after", "count", Target(LE, 0), VALUE),
           ]),
    _bench("memory", "bench.bench_rooms", "run_memory",
           "RSS of a process after traffic in 10,000 rooms", [
               Spec("memory_10k_rooms", "MB", Target(LE, 150.0), VALUE),
           ]),
    _bench("cost", "bench.bench_rooms", "run_cost",
           "prompt size for rooms of 10, 1,000 and 100,000 messages", [
               Spec("cost_prompt_chars", "chars", Target(LE, 1.05), RATIO),
               Spec("cost_prompt_budget", "chars", Target(LE, 60_000), VALUE),
           ]),
    _bench("crash", "bench.bench_crash_sweep", "run",
           "`tribunal run` SIGKILLed at 100 distinct fault points, restarted, each run checked", [
               Spec("crash_kill_points", "points", Target(GE, 1.0), RATIO),
               Spec("crash_acked_lost", "events", Target(LE, 0), VALUE),
               Spec("crash_duplicate_posts", "posts", Target(LE, 0), VALUE),
               Spec("crash_failed_trials", "trials", Target(LE, 0), VALUE),
               Spec("crash_private_repeats", "replies", Target(LE, 0), VALUE),
               Spec("crash_429", "count", Target(LE, 0), VALUE),
           ]),
    _bench("detection", "bench.bench_detection", "run",
           "labelled corpus through the replay pipeline", _DETECTION),
    _bench("detection_heldout", "bench.bench_detection", "run_heldout",
           "the newest held-out labelled set (written from the rules, not tuned on)",
           [replace(spec, name=spec.name + "_heldout") for spec in _DETECTION]),
]

SPECS: dict[str, Spec] = {spec.name: spec for bench in SUITE for spec in bench.rows}


def by_name() -> dict[str, Benchmark]:
    return {b.name: b for b in SUITE}


def row(name: str, value: float | None, *, baseline: float | None = None,
        ratio: float | None = None, note: str | None = None) -> Row:
    """A row of the suite: unit and target come from its spec above."""
    return SPECS[name].row(value, baseline=baseline, ratio=ratio, note=note)


def missing(name: str, note: str) -> Row:
    return SPECS[name].missing(note)

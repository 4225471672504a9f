"""The benchmark harness's table and JSON file, on tiny fake benchmarks (no timing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import main
from bench.harness import Benchmark, Options, Row, Spec, Target, table

SPECS = [
    Spec("fake_speed", "msg/s", Target(">=", 0.6), "ratio"),
    Spec("fake_errors", "count", Target("<=", 0), "value"),
    Spec("fake_backend", "msg/s", Target(">=", 0.6), "ratio"),
]


async def _fake(options: Options) -> list[Row]:
    return [
        SPECS[0].row(700.0, baseline=1000.0, note="quick" if options.quick else None),
        SPECS[1].row(3),
        SPECS[2].missing("no such backend yet"),
    ]


async def _broken(options: Options) -> list[Row]:
    raise RuntimeError("boom")


FAKE = Benchmark("fake", SPECS, _fake, "a fake benchmark")
BROKEN = Benchmark("broken", [Spec("broken_figure", "s", Target("<=", 1.0), "value")],
                   _broken, "always fails")

ROW_KEYS = {"name", "value", "unit", "baseline", "ratio", "target", "met"}


def _check_schema(doc: dict[str, Any]) -> None:
    assert {"date", "machine", "results"} <= doc.keys()
    assert isinstance(doc["date"], str) and doc["date"].endswith("Z")
    assert isinstance(doc["machine"], str) and doc["machine"]
    for row in doc["results"]:
        assert ROW_KEYS <= row.keys()
        assert isinstance(row["name"], str) and isinstance(row["unit"], str)
        assert row["target"]["op"] in (">=", "<=")
        assert isinstance(row["target"]["value"], int | float)
        for key in ("value", "baseline", "ratio"):
            assert row[key] is None or isinstance(row[key], int | float)
        assert row["met"] in (True, False, None)
        if row["value"] is None:
            assert row["met"] is None and row["note"]


def test_results_file_schema_and_out_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    out = tmp_path / "sub" / "results.json"
    assert main(["--inline", "--quick", "--out", str(out)], suite=[FAKE, BROKEN]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    _check_schema(doc)
    rows = {r["name"]: r for r in doc["results"]}
    assert list(rows) == ["fake_speed", "fake_errors", "fake_backend", "broken_figure"]
    speed = rows["fake_speed"]
    assert (speed["value"], speed["baseline"], speed["ratio"]) == (700.0, 1000.0, 0.7)
    assert speed["met"] is True and speed["target"] == {"op": ">=", "value": 0.6}
    errors = rows["fake_errors"]
    assert errors["baseline"] is None and errors["ratio"] is None and errors["met"] is False
    assert rows["fake_backend"]["value"] is None and rows["fake_backend"]["met"] is None
    assert "RuntimeError: boom" in rows["broken_figure"]["note"]
    printed = capsys.readouterr().out
    assert "fake_speed" in printed and str(out) in printed
    assert "no such backend yet" in printed


def test_only_selects_by_benchmark_or_row_name(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    main(["--inline", "--only", "fake_errors", "--out", str(out)], suite=[FAKE, BROKEN])
    names = [r["name"] for r in json.loads(out.read_text(encoding="utf-8"))["results"]]
    assert names == ["fake_speed", "fake_errors", "fake_backend"]
    with pytest.raises(SystemExit):
        main(["--inline", "--only", "nothing", "--out", str(out)], suite=[FAKE])


def test_only_merges_its_rows_into_the_results_file(tmp_path: Path) -> None:
    """A partial run replaces its own rows and keeps every other row of the
    file, each row saying which run measured it (a full run, then `--quick`)."""
    out = tmp_path / "results.json"
    assert main(["--inline", "--out", str(out)], suite=[FAKE, BROKEN]) == 0
    full = json.loads(out.read_text(encoding="utf-8"))
    assert "measured" not in full["results"][0]  # one run: the top level says it all
    assert main(["--inline", "--quick", "--only", "fake_errors", "--out", str(out)],
                suite=[FAKE, BROKEN]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    _check_schema(doc)
    rows = {r["name"]: r for r in doc["results"]}
    assert list(rows) == ["fake_speed", "fake_errors", "fake_backend", "broken_figure"]
    assert rows["fake_speed"]["note"] == "quick"  # this run's row
    assert rows["broken_figure"] == {**full["results"][3], "measured": {
        "date": full["date"], "commit": full.get("commit"), "quick": False}}
    assert rows["fake_errors"]["measured"]["quick"] is True and doc["quick"] is True

    # merged again: the kept row keeps saying which run it came from
    main(["--inline", "--only", "fake", "--out", str(out)], suite=[FAKE, BROKEN])
    again = {r["name"]: r for r in json.loads(out.read_text(encoding="utf-8"))["results"]}
    assert again["broken_figure"]["measured"] == rows["broken_figure"]["measured"]
    assert again["fake_speed"]["measured"]["quick"] is False


def test_only_without_a_results_file_writes_its_rows(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("not json", encoding="utf-8")  # nothing to merge into
    main(["--inline", "--only", "broken", "--out", str(out)], suite=[FAKE, BROKEN])
    names = [r["name"] for r in json.loads(out.read_text(encoding="utf-8"))["results"]]
    assert names == ["broken_figure"]


def test_table_lists_every_row_with_its_verdict() -> None:
    rows = [SPECS[0].row(700.0, baseline=1000.0), SPECS[1].row(0), SPECS[2].missing("why")]
    text = table(rows)
    lines = text.splitlines()
    assert len(lines) == 2 + len(rows)
    assert "yes" in lines[2] and "0.70" in lines[2] and "ratio >= 0.60" in lines[2]
    assert lines[3].rstrip().endswith("yes")  # 0 errors <= 0
    assert lines[4].rstrip().endswith("n/a")
    assert table(rows, markdown=True).startswith("| figure |")


def test_the_suite_promises_every_named_figure() -> None:
    from bench.suite import SPECS as SUITE_SPECS

    required = {
        "ingest_sqlite", "ingest_postgres", "context_100k_vs_1k", "arbitration_overhead",
        "ack_latency_p99", "startup_10k_rooms", "burst_delivery", "burst_429", "burst_lost",
        "memory_10k_rooms", "cost_prompt_chars", "detection_recall", "detection_false_alarms",
        "crash_kill_points", "crash_acked_lost", "crash_duplicate_posts",
    }
    assert required <= SUITE_SPECS.keys()


def test_the_crash_sweep_takes_distinct_kill_points_round_robin() -> None:
    from bench.bench_crash_sweep import POINTS, kill_points

    census = {"after_ack": 20, "after_apply": 13, "after_action": 7, "before_post": 23,
              "after_post_before_record": 23, "after_record": 23}
    points = list(kill_points(census, 100))
    assert len(points) == len(set(points)) == 100
    assert all(1 <= n <= census[p] for p, n in points)
    assert points[:len(POINTS)] == [(p, 1) for p in POINTS]  # every point first, then n = 2
    assert {n for p, n in points if p == "after_action"} == set(range(1, 8))
    assert len(list(kill_points(census, 500))) == sum(census.values())  # never past the census

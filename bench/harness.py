"""The benchmark suite's plumbing: result rows, the registry, the table, the JSON file.

A benchmark is a function that returns result rows; each row is one figure
beside the baseline measured in the same run, and a target. The harness runs
the selected benchmarks (each in a fresh Python process by default, so one
benchmark's heap, threads or page cache never colour the next), prints one
table and writes `bench/results.json`:

    {"date": ISO-8601 UTC, "machine": "...", "quick": bool, "commit": "...",
     "results": [{"name", "value", "unit", "baseline", "ratio",
                  "target": {"op": ">=" | "<=", "value"}, "met",
                  "target_of": "ratio" | "value", "note"?}]}

`target_of` says what the target is compared with: the ratio when the row has
a baseline, the value itself otherwise (a count of 429s, a recall). `met` is
null when that number could not be measured; such a row says why in `note`.

A run of some benchmarks only (`--only`) merges its rows into the results file
already there (`merge`): its rows replace the rows of the same name, the others
stay. The top level then describes the latest run, and every row of a merged
file says which run measured it: `"measured": {"date", "commit", "quick"}`.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

Op = Literal[">=", "<="]
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / "results.json"
DEFAULT_CORPUS = ROOT / "tests" / "detection" / "corpus"


@dataclass(frozen=True)
class Target:
    op: Op
    value: float

    def check(self, x: float) -> bool:
        return x >= self.value if self.op == ">=" else x <= self.value

    def __str__(self) -> str:
        return f"{self.op} {_num(self.value)}"


@dataclass
class Row:
    """One figure of the table (one entry of `results`)."""

    name: str
    value: float | None
    unit: str
    target: Target
    baseline: float | None = None
    ratio: float | None = None
    note: str | None = None
    target_of: Literal["ratio", "value"] | None = None

    def __post_init__(self) -> None:
        if self.ratio is None and self.value is not None and self.baseline:
            self.ratio = self.value / self.baseline
        if self.target_of is None:
            self.target_of = "ratio" if self.baseline is not None else "value"

    @property
    def met(self) -> bool | None:
        judged = self.ratio if self.target_of == "ratio" else self.value
        if judged is None or (isinstance(judged, float) and math.isnan(judged)):
            return None
        return self.target.check(judged)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "value": _clean(self.value),
            "unit": self.unit,
            "baseline": _clean(self.baseline),
            "ratio": _clean(self.ratio),
            "target": {"op": self.target.op, "value": self.target.value},
            "met": self.met,
            "target_of": self.target_of,
        }
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        target = data["target"]
        return cls(
            name=str(data["name"]),
            value=data.get("value"),
            unit=str(data.get("unit", "")),
            target=Target(target["op"], float(target["value"])),
            baseline=data.get("baseline"),
            ratio=data.get("ratio"),
            note=data.get("note"),
            target_of=data.get("target_of"),
        )


def _clean(x: float | None) -> float | None:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return None
    return round(x, 6) if isinstance(x, float) else x


@dataclass
class Options:
    quick: bool = False
    corpus: Path = DEFAULT_CORPUS
    verbose: bool = False


RunFn = Callable[[Options], Coroutine[Any, Any, list[Row]]]


@dataclass(frozen=True)
class Spec:
    """What a row is: its unit, its target, and what the target judges."""

    name: str
    unit: str
    target: Target
    target_of: Literal["ratio", "value"]

    def row(self, value: float | None, *, baseline: float | None = None,
            ratio: float | None = None, note: str | None = None) -> Row:
        return Row(self.name, value, self.unit, self.target, baseline=baseline, ratio=ratio,
                   note=note, target_of=self.target_of)

    def missing(self, note: str) -> Row:
        return self.row(None, note=note)


@dataclass
class Benchmark:
    """A registered benchmark: its name, the rows it promises, how to run it."""

    name: str
    rows: list[Spec]  # it always returns these, in this order (and may add others)
    run: RunFn
    about: str = ""

    def placeholders(self, note: str) -> list[Row]:
        return [spec.missing(note) for spec in self.rows]


def run_inline(bench: Benchmark, options: Options) -> list[Row]:
    """Run one benchmark in this process; a failure becomes rows that say so."""
    import asyncio

    try:
        rows = asyncio.run(bench.run(options))
    except Exception as exc:  # a broken benchmark must not hide the other figures
        traceback.print_exc(file=sys.stderr)
        return bench.placeholders(f"benchmark failed: {type(exc).__name__}: {exc}"[:300])
    return complete(bench, rows)


def complete(bench: Benchmark, rows: list[Row]) -> list[Row]:
    """Every promised row is there, in the promised order, then any extra ones."""
    got = {r.name: r for r in rows}
    out = [got.pop(spec.name) if spec.name in got else spec.missing("benchmark returned no figure")
           for spec in bench.rows]
    return out + list(got.values())


def run_isolated(bench: Benchmark, options: Options, timeout: float) -> list[Row]:
    """Run one benchmark in a fresh interpreter (`python -m bench --child NAME`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, "-m", "bench", "--child", bench.name, "--child-out", str(out),
               "--corpus", str(options.corpus)]
        if options.quick:
            cmd.append("--quick")
        if options.verbose:
            cmd.append("--verbose")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return bench.placeholders(f"benchmark timed out after {timeout:.0f} s")
        if proc.returncode != 0 or not out.exists():
            return bench.placeholders(f"benchmark process exited with {proc.returncode}")
        rows = [Row.from_json(r) for r in json.loads(out.read_text(encoding="utf-8"))]
    return complete(bench, rows)


# -- output -------------------------------------------------------------------
def machine() -> str:
    """One line naming the machine the figures came from."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}){memory},"
            f" Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}")


def commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def document(rows: Sequence[Row], *, quick: bool, when: datetime | None = None,
             machine_name: str | None = None) -> dict[str, Any]:
    when = when or datetime.now(UTC)
    doc: dict[str, Any] = {
        "date": when.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "machine": machine_name if machine_name is not None else machine(),
        "quick": quick,
        "results": [r.to_json() for r in rows],
    }
    sha = commit()
    if sha:
        doc["commit"] = sha
    return doc


def _provenance(doc: dict[str, Any]) -> dict[str, Any]:
    return {"date": doc.get("date"), "commit": doc.get("commit"), "quick": doc.get("quick")}


def merge(earlier: dict[str, Any], latest: dict[str, Any],
          order: Sequence[str] = ()) -> dict[str, Any]:
    """`latest`'s rows merged into `earlier`'s: same-named rows replaced, the
    others kept, each row stamped with the run that measured it. Rows follow
    `order` (the suite's row names), then any others in the order they came."""
    rows: dict[str, dict[str, Any]] = {}
    for source in (earlier, latest):
        stamp = _provenance(source)
        for row in source.get("results", []):
            rows[str(row["name"])] = {**row, "measured": row.get("measured", stamp)}
    known = [name for name in order if name in rows]
    ordered = known + [name for name in rows if name not in known]
    return {**latest, "results": [rows[name] for name in ordered]}


def read(path: Path) -> dict[str, Any] | None:
    """The results file at `path`, or None when there is none (or it is not one)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        return None
    return doc


def write(doc: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e9):
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}" if abs(x) >= 0.1 else f"{x:.3g}"


def table(rows: Sequence[Row], *, markdown: bool = False) -> str:
    """The figures as one table (plain text, or Markdown for the README)."""
    head = ["figure", "value", "unit", "baseline", "ratio", "target", "met"]
    body = []
    for r in rows:
        met = {True: "yes", False: "NO", None: "n/a"}[r.met]
        target = f"{'ratio' if r.target_of == 'ratio' else 'value'} {r.target}"
        body.append([r.name, _num(r.value), r.unit, _num(r.baseline), _num(r.ratio), target, met])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[i]) for c in body)) if body else len(h)
              for i, h in enumerate(head)]
    right = {1, 3, 4}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(head), line(["-" * w for w in widths])] + [line(c) for c in body]
    return "\n".join(out)


def notes(rows: Sequence[Row]) -> str:
    return "\n".join(f"  {r.name}: {r.note}" for r in rows if r.note)


"""Detection quality on a labelled corpus, through the real replay pipeline.

A corpus folder holds cases: `<case>.jsonl` (a replay transcript) and
`<case>.label.json` = {"case", "language", "category", "reviewers",
"deadlock": bool, "trigger", "rule": "round" | "F<n>" | null,
"after_message", "reason"}. Each case is replayed in-process by the same code
as `tribunal replay --json` (SQLite in a temporary folder, arbiter backend
`none`), and the FIRST `deadlock` event is compared with the label:

* precision / recall: did the room deadlock at all (stuck rooms are the
  positives, productive rooms the negatives);
* exact message: among stuck rooms, the deadlock fired after the labelled
  message; trigger accuracy: with the labelled trigger;
* false alarms: productive rooms that deadlocked (count and rate);
* latency in rounds: agent turns between the labelled message and the one the
  detector fired after, halved (one round = an owner and a reviewer turn;
  negative = early), over stuck rooms that were detected;
* the same per language and per category, and for rooms with two reviewers
  the contradiction trigger's precision and recall.

Files that cannot be read (a case being written) are skipped and counted.

    python -m bench.bench_detection [--corpus tests/detection/corpus] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import DEFAULT_CORPUS, ROOT, Options, Row
from bench.suite import missing, row
from bot.app import replay as _replay
from bot.config import Settings

LABEL_KEYS = {"case", "language", "category", "reviewers", "deadlock", "trigger",
              "after_message"}


@dataclass
class Case:
    name: str
    label: dict[str, Any]
    lines: list[str]
    got: dict[str, Any] | None = None  # the first deadlock event, if any
    error: str | None = None
    turn_of: dict[str, int] = field(default_factory=dict)  # message id -> agent turn number

    @property
    def stuck(self) -> bool:
        return bool(self.label["deadlock"])

    @property
    def fired(self) -> bool:
        return self.got is not None

    @property
    def exact(self) -> bool:
        return self.got is not None and self.got.get("after_message") == self.label[
            "after_message"]

    @property
    def trigger_ok(self) -> bool:
        return self.got is not None and self.got.get("trigger") == self.label["trigger"]

    @property
    def latency(self) -> float | None:
        if not (self.stuck and self.fired):
            return None
        assert self.got is not None
        want = self.turn_of.get(str(self.label["after_message"]))
        have = self.turn_of.get(str(self.got.get("after_message")))
        return None if want is None or have is None else (have - want) / 2


def load(folder: Path) -> tuple[list[Case], list[str]]:
    """Every readable case of the folder, and what was skipped (and why)."""
    cases: list[Case] = []
    skipped: list[str] = []
    for label_file in sorted(folder.glob("*.label.json")):
        name = label_file.name.removesuffix(".label.json")
        transcript = folder / f"{name}.jsonl"
        try:
            label = json.loads(label_file.read_text(encoding="utf-8"))
            if not isinstance(label, dict) or not LABEL_KEYS <= label.keys():
                raise ValueError("label misses keys")
            lines = transcript.read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError) as exc:
            skipped.append(f"{name}: {type(exc).__name__}: {exc}"[:160])
            continue
        cases.append(Case(name, label, lines, turn_of=agent_turns(lines)))
    return cases, skipped


def agent_turns(lines: list[str]) -> dict[str, int]:
    """Message id -> number of the agent turn it belongs to (or follows, for humans).

    A turn is a maximal run of messages by one agent role; several reviewers in a
    row make one reviewer turn, as the replay semantics say.
    """
    roles: dict[str, str] = {}
    out: dict[str, int] = {}
    turn, last = 0, ""
    for number, raw in enumerate(lines, start=1):
        try:
            item = json.loads(raw) if raw.strip() else None
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        if item.get("type") == "room":
            for role, ids in (item.get("roles") or {}).items():
                for who in [ids] if isinstance(ids, str) else ids:
                    roles[str(who)] = str(role)
            continue
        if item.get("type") != "message":
            continue
        role = str(item.get("role") or roles.get(str(item.get("author")), "user"))
        if role in ("owner", "reviewer"):
            if role != last:
                turn += 1
            last = role
        else:
            last = ""
        out[str(item.get("id") or f"line{number}")] = turn
    return out


async def replay(case: Case, tmp: Path) -> None:
    """The case through `tribunal replay --json`'s code; keep the first deadlock."""
    events: list[dict[str, Any]] = []
    db = tmp / f"{case.name}.db"
    settings = Settings(_env_file=None, database=str(db),  # type: ignore[call-arg]
                        arbiter_backend="none")
    code = await _replay(settings, str(db), case.lines, True, case.name, listener=events.append)
    if code != 0:
        case.error = f"replay exited with {code}"
    case.got = next((e for e in events if e.get("event") == "deadlock"), None)


@dataclass
class Scores:
    cases: int = 0
    stuck: int = 0
    productive: int = 0
    tp: int = 0
    fp: int = 0
    exact: int = 0
    trigger: int = 0
    latencies: list[float] = field(default_factory=list)

    @property
    def fn(self) -> int:
        return self.stuck - self.tp

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.stuck if self.stuck else None

    @property
    def exact_rate(self) -> float | None:
        return self.exact / self.stuck if self.stuck else None

    @property
    def trigger_rate(self) -> float | None:
        return self.trigger / self.stuck if self.stuck else None

    @property
    def false_alarm_rate(self) -> float | None:
        return self.fp / self.productive if self.productive else None

    @property
    def mean_abs_latency(self) -> float | None:
        return statistics.mean(abs(x) for x in self.latencies) if self.latencies else None


def score(cases: Iterable[Case]) -> Scores:
    s = Scores()
    for case in cases:
        s.cases += 1
        if case.stuck:
            s.stuck += 1
            s.tp += case.fired
            s.exact += case.exact
            s.trigger += case.trigger_ok
            if case.latency is not None:
                s.latencies.append(case.latency)
        else:
            s.productive += 1
            s.fp += case.fired
    return s


def contradiction(cases: Iterable[Case]) -> tuple[float | None, float | None, int, int]:
    """Precision and recall of the contradiction trigger in rooms with 2 reviewers."""
    tp = fp = fn = labelled = rooms = 0
    for case in cases:
        if int(case.label.get("reviewers") or 1) < 2:
            continue
        rooms += 1
        want = case.stuck and case.label.get("trigger") == "contradiction"
        have = case.got is not None and case.got.get("trigger") == "contradiction"
        labelled += want
        tp += want and have
        fp += have and not want
        fn += want and not have
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall, labelled, rooms


def _f(x: float | None, pct: bool = True) -> str:
    if x is None:
        return "-"
    return f"{x:.0%}" if pct else f"{x:+.2f}"


def report(cases: list[Case], skipped: list[str], verbose: bool) -> str:
    lines = []
    head = (f"{'group':34} {'rooms':>5} {'stuck':>5} {'prec':>5} {'recall':>6} {'exact':>6}"
            f" {'trig':>5} {'FA':>5} {'lat':>6}")

    def line(name: str, group: list[Case]) -> str:
        s = score(group)
        lat = statistics.mean(s.latencies) if s.latencies else None
        return (f"{name[:34]:34} {s.cases:5} {s.stuck:5} {_f(s.precision):>5}"
                f" {_f(s.recall):>6} {_f(s.exact_rate):>6} {_f(s.trigger_rate):>5}"
                f" {s.fp:5} {_f(lat, pct=False):>6}")

    lines += [head, line("all", cases)]
    for key in ("language", "reviewers", "category"):
        groups: dict[str, list[Case]] = defaultdict(list)
        for case in cases:
            groups[f"{key}={case.label.get(key)}"].append(case)
        lines += [line(name, group) for name, group in sorted(groups.items())]
    precision, recall, labelled, rooms = contradiction(cases)
    lines.append(f"contradiction (rooms with 2 reviewers: {rooms}, labelled {labelled}):"
                 f" precision {_f(precision)}, recall {_f(recall)}")
    lines.append("FA = productive rooms that deadlocked; lat = mean latency in rounds"
                 " (agent turns / 2; negative = early)")
    if skipped:
        lines.append(f"skipped {len(skipped)} unreadable case(s): " + "; ".join(skipped[:5]))
    if verbose:
        lines.append("\nmismatches:")
        for case in cases:
            want = (f"{case.label['trigger']} after {case.label['after_message']}"
                    if case.stuck else "no deadlock")
            have = (f"{case.got.get('trigger')} after {case.got.get('after_message')}"
                    if case.got else "no deadlock")
            if want != have or case.error:
                lines.append(f"  {case.name} [{case.label.get('category')}]: labelled {want},"
                             f" got {have}{' (' + case.error + ')' if case.error else ''}"
                             f" - {case.label.get('reason', '')}"[:400])
    return "\n".join(lines)


async def evaluate(*folders: Path) -> tuple[list[Case], list[str]]:
    cases: list[Case] = []
    skipped: list[str] = []
    for folder in folders:
        more, unread = load(folder)
        cases += more
        skipped += unread
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            await replay(case, Path(tmp))
    return cases, skipped


# The newest held-out sets (one of 40 rooms, one of 30 rooms with several
# reviewers, for contradictions); after their one measured run they are tuned
# on like the others, and new ones take their place here.
HELDOUT = tuple(ROOT / "tests" / "detection" / f"heldout{n}" for n in (97, 98))


async def run(options: Options) -> list[Row]:
    return await _figures(options.corpus, "", options.verbose)


async def run_heldout(options: Options) -> list[Row]:
    """The same figures on the newest held-out sets (`HELDOUT`) together: rooms
    written from the rules by people who never read the detector, not tuned on
    when first measured (tests/detection/FORMAT.md says which set is where)."""
    return await _figures(HELDOUT, "_heldout", options.verbose)


async def _figures(folders: Path | tuple[Path, ...], suffix: str, verbose: bool) -> list[Row]:
    folders = folders if isinstance(folders, tuple) else (folders,)
    cases, skipped = await evaluate(*folders)
    folder_names = " + ".join(f"{f.name}/" for f in folders)
    names = tuple(n + suffix for n in (
        "detection_recall", "detection_false_alarms", "detection_exact_message",
        "detection_precision", "detection_trigger_accuracy", "detection_latency_rounds",
        "contradiction_recall", "contradiction_precision"))
    if not cases:
        why = f"no labelled case in {folder_names}" + (f" ({len(skipped)} unreadable)"
                                                       if skipped else "")
        return [missing(name, why) for name in names]
    print(report(cases, skipped, verbose))
    s = score(cases)
    where = (f"{s.cases} cases in {folder_names} ({s.stuck} stuck, {s.productive} productive"
             f"{f', {len(skipped)} unreadable skipped' if skipped else ''})")

    def rate(name: str, value: float | None, why: str, note: str) -> Row:
        name += suffix
        return row(name, value, note=note) if value is not None else missing(name, why)

    precision, recall, labelled, rooms = contradiction(cases)
    return [
        rate("detection_recall", s.recall, "no stuck room in the corpus",
             f"{s.tp}/{s.stuck} stuck rooms deadlocked; {where}"),
        row("detection_false_alarms" + suffix, s.fp,
            note=(f"{s.fp}/{s.productive} productive rooms deadlocked"
                  f" (rate {_f(s.false_alarm_rate)})")),
        rate("detection_exact_message", s.exact_rate, "no stuck room in the corpus",
             f"{s.exact}/{s.stuck} stuck rooms deadlocked after the labelled message"),
        rate("detection_precision", s.precision, "nothing deadlocked",
             f"{s.tp}/{s.tp + s.fp} deadlocked rooms were stuck"),
        rate("detection_trigger_accuracy", s.trigger_rate, "no stuck room in the corpus",
             f"{s.trigger}/{s.stuck} stuck rooms deadlocked with the labelled trigger"),
        rate("detection_latency_rounds", s.mean_abs_latency, "no stuck room was detected",
             (f"mean |latency| over {len(s.latencies)} detected stuck rooms; signed mean"
              f" {statistics.mean(s.latencies) if s.latencies else 0:+.2f};"
              f" early {sum(x < 0 for x in s.latencies)}, late {sum(x > 0 for x in s.latencies)}")),
        rate("contradiction_recall", recall,
             f"no labelled contradiction among {rooms} rooms with 2 reviewers",
             f"{labelled} labelled contradictions among {rooms} rooms with 2 reviewers"),
        rate("contradiction_precision", precision,
             f"the detector flagged no contradiction ({rooms} rooms with 2 reviewers)",
             f"rooms with 2 reviewers: {rooms}"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, nargs="+", default=[DEFAULT_CORPUS],
                        help="one or more folders of labelled rooms, read together")
    parser.add_argument("--verbose", action="store_true", help="print every mismatch")
    args = parser.parse_args()
    cases, skipped = asyncio.run(evaluate(*args.corpus))
    if not cases:
        print(f"no labelled case in {args.corpus}" + (f"; skipped: {skipped}" if skipped else ""))
        return
    print(report(cases, skipped, args.verbose))


if __name__ == "__main__":
    main()

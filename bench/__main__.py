"""`python -m bench`: run the benchmarks, print one table, write bench/results.json.

    python -m bench                 # every benchmark, full size (tens of minutes)
    python -m bench --quick         # scaled down: under five minutes on 2 cores
    python -m bench --only ingest --only context_100k_vs_1k
    python -m bench --out other.json --markdown

`--only` takes a benchmark name or a row name (that row's benchmark runs); its
rows are merged into the results file already at `--out` (the other rows stay,
each row says which run measured it). Each benchmark runs in its own Python
process unless `--inline`. Nothing here
is a test: a missed target is reported, and the exit status stays 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.harness import (
    DEFAULT_CORPUS,
    DEFAULT_OUT,
    Benchmark,
    Options,
    Row,
    document,
    merge,
    notes,
    read,
    run_inline,
    run_isolated,
    table,
    write,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="scaled-down run (< 5 min)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where to write the JSON results (default: bench/results.json)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="a benchmark or row name; repeat or comma-separate for several")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="labelled detection corpus (default: tests/detection/corpus)")
    parser.add_argument("--verbose", action="store_true", help="benchmarks print details")
    parser.add_argument("--inline", action="store_true",
                        help="run every benchmark in this process (no isolation)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--list", action="store_true", help="list benchmarks and rows, run none")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    return parser


def select(suite: Sequence[Benchmark], only: Sequence[str]) -> list[Benchmark]:
    names = [n.strip() for item in only for n in item.split(",") if n.strip()]
    if not names:
        return list(suite)
    chosen: list[Benchmark] = []
    for name in names:
        found = [b for b in suite if b.name == name or any(s.name == name for s in b.rows)]
        if not found:
            raise SystemExit(f"python -m bench: no benchmark or row named {name!r}"
                             f" (see --list)")
        chosen += [b for b in found if b not in chosen]
    return [b for b in suite if b in chosen]  # suite order


def main(argv: Sequence[str] | None = None, suite: Sequence[Benchmark] | None = None) -> int:
    args = _parser().parse_args(argv)
    if suite is None:
        from bench.suite import SUITE

        suite = SUITE
    options = Options(quick=args.quick, corpus=args.corpus, verbose=args.verbose)
    if args.child:  # one benchmark, inside the process the parent started
        bench = next(b for b in suite if b.name == args.child)
        got = run_inline(bench, options)
        args.child_out.write_text(json.dumps([r.to_json() for r in got]), encoding="utf-8")
        return 0
    if args.list:
        for bench in suite:
            print(f"{bench.name:10} {bench.about}")
            for spec in bench.rows:
                print(f"{'':10}   {spec.name:28} {spec.target_of} {spec.target} {spec.unit}")
        return 0
    chosen = select(suite, args.only)
    rows: list[Row] = []
    timeout = 900.0 if args.quick else 7200.0
    for bench in chosen:
        started = time.perf_counter()
        print(f"== {bench.name}: {bench.about}", file=sys.stderr, flush=True)
        got = run_inline(bench, options) if args.inline else run_isolated(bench, options, timeout)
        print(f"   {bench.name} took {time.perf_counter() - started:.1f} s", file=sys.stderr,
              flush=True)
        rows += got
    doc = document(rows, quick=args.quick)
    earlier = read(args.out) if args.only else None
    if earlier is not None:
        doc = merge(earlier, doc, [spec.name for b in suite for spec in b.rows])
    print(f"Tribunal benchmarks, {doc['date']}{' (--quick)' if args.quick else ''}")
    print(f"machine: {doc['machine']}")
    print(table(rows, markdown=args.markdown))
    extra = notes(rows)
    if extra:
        print("\nnotes:\n" + extra)
    write(doc, args.out)
    merged = f" (merged into the {len(earlier['results'])} rows there)" if earlier else ""
    print(f"\nwritten: {args.out}{merged}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

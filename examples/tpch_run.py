"""The command-line driver shared by the TPC-H examples (`make run` uses Q7's).

    python -m examples.tpch_q7 --data data/tpch-sf0.01 --scale 0.01 [--as-written]

Generates the data when it is missing, optimizes the flow, runs the chosen plan
on the embedded Spark session and prints its rows, the rewrites applied and
the timings. `--as-written` runs the flow exactly as written instead, and
`--compare` runs both, alternately, and prints the ratio.
"""

from __future__ import annotations

import argparse
import time
from decimal import Decimal
from typing import Callable

import udflow


def print_table(rows: list[dict], columns: tuple[str, ...]) -> None:
    """Rows as a plain text table, in a stable order (the flow itself does not sort)."""
    ordered = sorted(rows, key=lambda r: tuple(r.get(c) for c in columns))
    cells = [[_cell(r.get(c)) for c in columns] for r in ordered]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def _cell(value) -> str:
    if isinstance(value, (Decimal, float)):
        return f"{value:.4f}"  # the sums' exact scale (2 + 2 decimals); Spark may widen it
    return str(value)


def _timed(run: Callable[[], list]) -> tuple[list, float]:
    t0 = time.perf_counter()
    rows = run()
    return rows, time.perf_counter() - t0


def run_example(description: str, build_flow, generate_data, select_list, argv=None) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", default="data/tpch-sf0.01", help="folder of the TPC-H parquet files")
    parser.add_argument("--scale", type=float, default=0.01, help="TPC-H scale factor, used when generating")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--as-written", action="store_true", help="run the flow as written, do not optimize")
    mode.add_argument("--compare", action="store_true", help="run as written and optimized, print the ratio")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    generate_data(args.data, args.scale)
    print(f"data: {args.data} ({time.perf_counter() - t0:.2f} s; generation is skipped when present)")
    flow = build_flow(args.data)
    print(f"\nThe flow as written:\n{flow}\n")
    if args.as_written:
        rows, seconds = _timed(flow.collect)
        _report(rows, select_list, f"run as written on Spark: {seconds:.2f} s (including Spark start-up)")
        return

    opt, opt_seconds = _timed(lambda: udflow.optimize(flow))
    print(f"optimized in {opt_seconds:.2f} s: {len(opt.alternatives)} alternatives, "
          f"{len(opt.certificates)} rewrite(s) applied")
    print(f"\nThe chosen plan:\n{opt.best}\n")
    if not args.compare:
        rows, seconds = _timed(opt.best.collect)
        _report(rows, select_list, f"run on Spark: {seconds:.2f} s (including Spark start-up)")
        return
    opt.best.collect()  # warm-up: Spark start-up and JIT would otherwise favour the second plan
    written_rows, written = _timed(flow.collect)
    rows, chosen = _timed(opt.best.collect)
    _report(rows, select_list, f"as written {written:.2f} s, optimized {chosen:.2f} s, "
                               f"speed-up {written / chosen:.2f}x; same rows: {_same(rows, written_rows, select_list)}")


def _same(a: list[dict], b: list[dict], columns) -> bool:
    key = lambda r: tuple(str(r.get(c)) for c in columns)  # noqa: E731
    return sorted(map(key, a)) == sorted(map(key, b))


def _report(rows: list[dict], columns, timing: str) -> None:
    print_table(rows, columns)
    print(f"\n{len(rows)} rows\n{timing}")

"""Are the cardinality estimates close to reality?  (issue 15, item 2)

    python -m bench.estimates [--data data/estimates] [--only NAME ...] [--speedup] [--runs 3]

For every example pipeline (and every user pipeline of `examples/` that has
`generate_data(dir, scale)` and `build_flow(dir)`: ratings, taxi, documents when
present), at a scale where every large source is bigger than the optimizer's
sample (so the estimates are extrapolations, not counts):

1. optimize it, then count every operator's output rows of the plan as written
   and of the chosen plan on the reference interpreter (each operator once,
   over its inputs' records: exact counts, no Spark);
2. the q-error of each operator's estimate, max(est / actual, actual / est);
   a table per pipeline (operators, median, max, the worst operator) and over
   all of them. Targets: median at most 2, maximum at most 10.
3. with `--speedup`, both plans run on local Spark (one untimed warm-up each,
   then `--runs` rounds alternating the order, median), and the estimated
   speed-up of the chosen plan is printed beside the measured one.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from dataclasses import dataclass

from udflow.engine.analyzed import on_reference, operator_rows, q_error

TPCH = os.environ.get("UDFLOW_TPCH_DIR", "data/tpch-sf0.01")


@dataclass(frozen=True)
class Pipeline:
    name: str
    module: str
    scale: float
    options: tuple = ()  # keyword arguments of build_flow

    def build(self, data: str):
        mod = importlib.import_module(self.module)
        where = TPCH if self.module.startswith("examples.tpch") else os.path.join(data, self.module.split(".")[-1])
        if not os.path.exists(where) or not os.listdir(where):
            mod.generate_data(where, self.scale)
        return mod.build_flow(where, **dict(self.options))


PIPELINES = (
    Pipeline("tpch_q7", "examples.tpch_q7", 0.01),
    Pipeline("tpch_q15", "examples.tpch_q15", 0.01),
    Pipeline("clickstream", "examples.clickstream", 0.05),
    Pipeline("clickstream/parse_urls", "examples.clickstream", 0.05, (("parse_urls", True),)),
    Pipeline("text_mining", "examples.text_mining", 0.5),
    Pipeline("ratings", "examples.ratings", 0.01),
    Pipeline("taxi", "examples.taxi", 0.01),
    Pipeline("documents", "examples.documents", 0.05),
)


def available(pipeline: Pipeline) -> bool:
    try:
        importlib.import_module(pipeline.module)
        return True
    except ImportError:
        return False


def estimates(flow) -> tuple:
    """(optimized, [(plan, label, estimated, actual rows)]) for both plans."""
    import udflow as uf

    opt = uf.optimize(flow)
    rows = []
    plans = [("as written", opt.original_alternative)]
    if opt.chosen.node != opt.original_alternative.node:
        plans.append(("chosen", opt.chosen))
    for plan, alt in plans:
        actual = on_reference(alt.node, {})
        for label, est, got in operator_rows(alt.node, lambda n: opt.model.estimate(n).rows, actual):
            rows.append((plan, label, est, got.rows))
    return opt, rows


def measured_speedup(opt, runs: int, spark) -> tuple[float, float, float]:
    """(as written s, chosen s, speed-up): medians over `runs` alternating rounds after a warm-up."""
    plans = {"written": opt.original, "chosen": opt.best}
    times = {k: [] for k in plans}
    for flow in plans.values():
        flow.collect(spark=spark)  # warm-up: JIT, Python workers, file cache
    for i in range(runs):
        for k in (("written", "chosen") if i % 2 == 0 else ("chosen", "written")):
            started = time.perf_counter()
            plans[k].collect(spark=spark)
            times[k].append(time.perf_counter() - started)
    written, chosen = statistics.median(times["written"]), statistics.median(times["chosen"])
    return written, chosen, written / chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/estimates")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--speedup", action="store_true", help="also run both plans on Spark")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--verbose", action="store_true", help="every operator's estimate")
    args = parser.parse_args(argv)
    chosen = [p for p in PIPELINES if (args.only is None or p.name in args.only) and available(p)]
    spark = None
    if args.speedup:
        from udflow.spark_backend.session import get_session

        spark = get_session(None)
    every, table = [], []
    for p in chosen:
        flow = p.build(args.data)
        opt, rows = estimates(flow)
        errors = [q_error(e, a) for _, _, e, a in rows]
        every += errors
        worst = max(rows, key=lambda r: q_error(r[2], r[3]))
        same = opt.chosen.node == opt.original_alternative.node
        line = (f"| {p.name} | {len(errors)} | {statistics.median(errors):.2f} | {max(errors):.2f} | "
                f"{worst[1]} ({worst[0]}): est {worst[2]:.0f}, actual {worst[3]} | "
                + ("chosen = as written |" if same else f"{opt.speedup:.2f}x |"))
        if spark is not None and same:
            line += " (one plan) |"
        elif spark is not None:
            written, best, measured = measured_speedup(opt, args.runs, spark)
            line += f" {measured:.2f}x ({written:.2f} s / {best:.2f} s) |"
        table.append(line)
        if args.verbose:
            for plan, label, est, got in rows:
                print(f"  {p.name:24} {plan:10} {label[:60]:60} est {est:10.1f} actual {got:8d} "
                      f"q {q_error(est, got):.2f}", file=sys.stderr)
    head = "| pipeline | operators | median q-error | max q-error | worst operator | est. speed-up |"
    print(head + (" measured speed-up |" if spark is not None else ""))
    print("|" + "---|" * (head.count("|") - 1 + (1 if spark is not None else 0)))
    print("\n".join(table))
    if every:
        print(f"\nall {len(every)} operators: median q-error {statistics.median(every):.2f} (target <= 2), "
              f"max {max(every):.2f} (target <= 10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

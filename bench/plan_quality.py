"""Does the cost model rank plans the way Spark runs them?  (the paper's Figure 5, issue 5)

    python -m bench.plan_quality [--data data/tpch-sf0.1] [--scale 0.1] [--others 9] [--runs 5] [--warmup 1]

TPC-H Q7 as written (Figure 2(a)) at scale 0.1: optimize it (full enumeration),
then run on Spark the chosen plan, the plan as written and `--others` plans
picked at regular rank intervals. Targets: the chosen plan within 1.10x of the
fastest measured, and faster than the plan as written.

Why the measurement is built this way: the top plans of Q7 differ by a few
percent, less than the run-to-run noise of a local Spark job, so a single run
per plan (or a median of 3 taken back to back) ranks them at random.

1. **Warm-up per plan** (`--warmup`, untimed): the JVM's JIT, the Python
   workers and the file cache are warm for every plan before any timing, and
   every plan's answer is checked against the plan as written's already here.
2. **Rounds, alternated**: each of `--runs` (>= 5) rounds runs every plan
   once, in ascending rank order, the next round descending, so a drift of
   the machine hits all plans alike.
3. **Median and spread** per plan: median of its runs, and the spread
   (slowest - fastest) / median, printed next to it; a ratio between two
   plans means little when it is smaller than their spreads.
4. **Paired ratios**: chosen / fastest and written / chosen are also given as
   the median over rounds of the ratio *within* a round (both plans measured
   minutes apart at most), which cancels slow drifts that the per-plan
   medians keep.

Every run's answer is compared with the plan as written's (same groups, same
sums within a relative 1e-9); a difference stops the benchmark.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time


class ResultMismatch(AssertionError):
    """A plan returned another answer than the plan as written."""


def pick(n: int, count: int) -> list[int]:
    """Up to `count` 0-based positions spread evenly over 0..n-1, first and last included."""
    if n <= count:
        return list(range(n))
    return sorted({round(i * (n - 1) / (count - 1)) for i in range(count)})


def answer(rows: list[dict]) -> dict:
    return {(r["supp_nation"], r["cust_nation"], r["l_year"]): float(r["revenue"]) for r in rows}


def same_answer(got: dict, expected: dict) -> bool:
    return set(got) == set(expected) and all(math.isclose(got[k], expected[k], rel_tol=1e-9) for k in got)


def spread(times: list[float]) -> float:
    """(slowest - fastest) / median: how far apart one plan's own runs are."""
    return (max(times) - min(times)) / statistics.median(times)


def paired_ratio(times: dict[int, list[float]], a: int, b: int) -> float:
    """Median over rounds of a's time / b's time within the same round."""
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def choose_plans(opt, others: int) -> dict:
    """Rank -> alternative: the chosen plan, the plan as written and `others` at regular rank intervals."""
    ranked = opt.alternatives
    plans = {ranked[0].rank: ranked[0], opt.original_alternative.rank: opt.original_alternative}
    for i in pick(len(ranked), others + 2):
        if len(plans) >= others + 2:
            break
        plans.setdefault(ranked[i].rank, ranked[i])
    return dict(sorted(plans.items()))


def measure(plans: dict, expected_plan, runs: int, warmup: int, spark, log) -> dict[int, list[float]]:
    """Warm-ups per plan, then `runs` alternated rounds; every answer checked. Rank -> run times."""
    expected = answer(expected_plan.flow.collect(spark=spark))

    def run(rank: int) -> float:
        started = time.perf_counter()
        got = answer(plans[rank].flow.collect(spark=spark))
        seconds = time.perf_counter() - started
        if not same_answer(got, expected):
            raise ResultMismatch(f"rank {rank} returns another answer than the plan as written:\n"
                                 f"{sorted(got.items())}\nvs\n{sorted(expected.items())}\nplan:\n{plans[rank].node}")
        return seconds

    started = time.perf_counter()
    for _ in range(warmup):
        for rank in plans:
            log(f"  warm-up rank {rank}: {run(rank):.2f} s (not timed)")
    if warmup:
        per_round = (time.perf_counter() - started) / warmup
        log(f"  {runs} rounds of {len(plans)} plans to go: about {runs * per_round / 60:.1f} min")
    times: dict[int, list[float]] = {rank: [] for rank in plans}
    for round_ in range(runs):
        for rank in list(plans) if round_ % 2 == 0 else list(reversed(plans)):
            times[rank].append(run(rank))
            log(f"  round {round_ + 1}/{runs}: rank {rank}: {times[rank][-1]:.2f} s")
    return times


def main(argv=None) -> None:
    from bench.paper_eval import spark_session
    from examples import tpch_q7
    from examples.tpch_data import generate_tpch
    from udflow.engine.optimize import optimize

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/tpch-sf0.1")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--others", type=int, default=9)
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (each runs every plan once); >= 5")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds before timing")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    generate_tpch(args.data, args.scale)
    flow = tpch_q7.build_flow(args.data)
    started = time.perf_counter()
    opt = optimize(flow, mode="full")
    print(f"optimize: {len(opt.alternatives)} alternatives in {time.perf_counter() - started:.2f} s")
    plans = choose_plans(opt, args.others)
    chosen, written = opt.alternatives[0], opt.original_alternative

    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    times = measure(plans, written, args.runs, args.warmup, spark_session(), log)

    measured = {rank: statistics.median(ts) for rank, ts in times.items()}
    low_cost = min(plans[r].cost for r in plans)
    low_time = min(measured.values())
    fastest = min(measured, key=measured.get)
    print(f"\nTPC-H Q7, scale {args.scale}, {len(plans)} plans, {args.warmup} warm-up round(s), "
          f"median of {args.runs} alternated rounds")
    print(f"{'rank':>6} {'est. cost':>10} {'measured':>10} {'seconds':>9} {'spread':>7}  plan")
    for rank, alt in plans.items():
        tag = "chosen" if rank == chosen.rank else ("as written" if rank == written.rank else "")
        print(f"{rank:>6} {alt.cost / low_cost:>10.2f} {measured[rank] / low_time:>10.2f} {measured[rank]:>9.2f} "
              f"{100 * spread(times[rank]):>6.0f}%  {tag}")
    ratio = measured[chosen.rank] / low_time
    print(f"\nchosen / fastest measured: {ratio:.2f} (fastest: rank {fastest}; "
          f"paired per round {paired_ratio(times, chosen.rank, fastest):.2f}; target <= 1.10: "
          f"{'met' if ratio <= 1.10 else 'NOT met'})")
    speedup = measured[written.rank] / measured[chosen.rank]
    print(f"as written / chosen, measured: {speedup:.2f} (paired per round "
          f"{paired_ratio(times, written.rank, chosen.rank):.2f}; target > 1: {'met' if speedup > 1 else 'NOT met'})")
    print(f"spread of the chosen plan {100 * spread(times[chosen.rank]):.0f}%, of the fastest "
          f"{100 * spread(times[fastest]):.0f}%: differences below these are noise")


if __name__ == "__main__":
    main()

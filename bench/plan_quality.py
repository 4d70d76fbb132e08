"""Does the cost model rank plans the way Spark runs them?  (the paper's Figure 5, issue 5)

    python -m bench.plan_quality [--data data/tpch-sf0.1] [--scale 0.1] [--others 9] [--runs 3] [--warmup 3]

TPC-H Q7 as written (Figure 2(a)) at scale 0.1: optimize it (full enumeration),
then run on Spark the chosen plan, the plan as written and `--others` plans
picked at regular rank intervals, each `--runs` times after `--warmup`
untimed runs, alternating the order of plans between rounds (ascending rank,
then descending) so that a drift over time is shared. Prints, per
plan, its rank, estimated cost and measured time (median), both normalized to
the lowest, and the ratio chosen / fastest measured. Every run's answer is
compared with the plan as written's (same groups, same sums within 1e-9).
Targets: chosen within 1.10x of the fastest measured, and faster than as written.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time


def pick(n: int, count: int) -> list[int]:
    if n <= count:
        return list(range(n))
    return sorted({round(i * (n - 1) / (count - 1)) for i in range(count)})


def answer(rows: list[dict]) -> dict:
    return {(r["supp_nation"], r["cust_nation"], r["l_year"]): float(r["revenue"]) for r in rows}


def main(argv=None) -> None:
    from examples import tpch_q7
    from examples.tpch_data import generate_tpch
    from udflow.engine.optimize import optimize
    from udflow.spark_backend.session import get_session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/tpch-sf0.1")
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--others", type=int, default=9)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)

    generate_tpch(args.data, args.scale)
    flow = tpch_q7.build_flow(args.data)
    started = time.perf_counter()
    opt = optimize(flow, mode="full")
    print(f"optimize: {len(opt.alternatives)} alternatives in {time.perf_counter() - started:.2f} s")
    ranked = opt.alternatives
    chosen, written = ranked[0], opt.original_alternative
    plans = {chosen.rank: chosen, written.rank: written}
    for i in pick(len(ranked), args.others + 2):
        if len(plans) >= args.others + 2:
            break
        plans.setdefault(ranked[i].rank, ranked[i])
    plans = dict(sorted(plans.items()))

    spark = get_session()
    # Warm-up, not timed: the JVM's JIT, the Python workers and the file cache need a few runs;
    # measured times keep falling over the first ~5 runs otherwise (seen: 34 s -> 14 s).
    for i in range(args.warmup):
        t = time.perf_counter()
        reference = answer((written if i % 2 == 0 else chosen).flow.collect(spark=spark))
        print(f"  warm-up {i + 1} (not timed): {time.perf_counter() - t:.2f} s", flush=True)
    times: dict[int, list[float]] = {rank: [] for rank in plans}
    for round_ in range(args.runs):
        order = list(plans) if round_ % 2 == 0 else list(reversed(plans))
        for rank in order:
            alt = plans[rank]
            t = time.perf_counter()
            rows = alt.flow.collect(spark=spark)
            times[rank].append(time.perf_counter() - t)
            got = answer(rows)
            assert set(got) == set(reference) and all(
                math.isclose(got[k], reference[k], rel_tol=1e-9) for k in got
            ), f"rank {rank} gives a different answer"
            print(f"  ran rank {rank}: {times[rank][-1]:.2f} s", flush=True)

    measured = {rank: statistics.median(ts) for rank, ts in times.items()}
    low_cost = min(plans[r].cost for r in plans)
    low_time = min(measured.values())
    print(f"\nTPC-H Q7, scale {args.scale}, {len(plans)} plans, median of {args.runs} run(s) each")
    print(f"{'rank':>6} {'est. cost':>10} {'measured':>10} {'seconds':>9}  plan")
    for rank, alt in plans.items():
        tag = "chosen" if rank == chosen.rank else ("as written" if rank == written.rank else "")
        print(f"{rank:>6} {alt.cost / low_cost:>10.2f} {measured[rank] / low_time:>10.2f} {measured[rank]:>9.2f}  {tag}")
    fastest = min(measured, key=measured.get)
    print(f"\nchosen / fastest measured: {measured[chosen.rank] / low_time:.2f} (fastest: rank {fastest}; target <= 1.10)")
    print(f"as written / chosen, measured: {measured[written.rank] / measured[chosen.rank]:.2f} (target > 1)")


if __name__ == "__main__":
    main()

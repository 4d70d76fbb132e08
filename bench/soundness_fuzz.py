"""The long soundness run of issues 16 and 28: random flows, every alternative against the plan as written.

    python -m bench.soundness_fuzz --flows 10000 [--seed 0] [--out bench/results/soundness.json]

Each flow comes from `tests/soundness_pool.py` (the function families behind the
shared repros, for either input, over sources with None, duplicates and
missing fields, and issue 28's in `tests/soundness_families.py`); every alternative `uf.optimize(flow, mode="full")` considers
valid runs on the reference interpreter and must return the plan as written's
bag, or raise where it raises. Prints progress, then the counts; exits 1 on
any difference. Not timed: this is a correctness run kept out of the test suite
for its length (about 0.05 s a flow). The counts include the alternatives the field-flow
check refused ("refused by the field-flow check").
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time

from tests import soundness_pool as pool


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    stats: collections.Counter = collections.Counter()
    problems = []
    started = time.perf_counter()
    for i in range(args.flows):
        seed = args.seed + i
        flow = _flow(seed, stats)
        if flow is not None:
            found = [(seed, *p) for p in pool.check_flow(flow, stats)]
            for p in found:
                print("DIFFERENCE", p, flush=True)
            problems += found
        if (i + 1) % 250 == 0:
            print(f"  {i + 1}/{args.flows} flows, {stats['alternatives']} alternatives, "
                  f"{len(problems)} differences, {time.perf_counter() - started:.0f} s", flush=True)
    report = {"stats": dict(stats), "differences": problems[:50], "seconds": round(time.perf_counter() - started)}
    print(json.dumps(report["stats"], sort_keys=True))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1, default=str)
    return 1 if problems else 0


def _flow(seed: int, stats):
    try:
        flow = pool.random_flow(random.Random(seed))
    except Exception:  # noqa: BLE001 - a draw the builder refuses (e.g. a field on both sides)
        stats["refused at construction"] += 1
        return None
    if len(flow.operators) < 2:
        stats["fewer than 2 operators"] += 1
        return None
    return flow


if __name__ == "__main__":
    sys.exit(main())

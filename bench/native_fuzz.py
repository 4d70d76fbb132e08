"""The long run of the native differential (issue 12, item 5): random batches of IR terms,
each run in Python and natively on Spark, from a seed of your choosing.

    python -m bench.native_fuzz --batches 50 [--seed 0] [--out bench/results/native_fuzz.json] [--bits]

The suite's `tests/test_native_differential.py` checks two derandomized batches of 120
terms (the same ones until its source changes); this draws new ones from `--seed`, with
the same terms, table and assertions: every term `NativeLowering` accepts returns on every
row what Python returns, or raises where Python raises, or fires a documented guard. Prints
progress and the counts; exits 1 at the first difference, whose assertion names the term
and the row (the batch is not shrunk: each step would be Spark jobs). Not timed: a
correctness run kept out of the suite for its length (10-25 s a batch on 2 cores).
`--bits` draws only the nests of bitwise operators, arithmetic and comparisons over ints
and bools (`bit_terms`: bools as 0 and 1, shifts past 64 bits).
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="")
    ap.add_argument("--bits", action="store_true", help="only bitwise/bool terms (issue 29, item 3)")
    args = ap.parse_args(argv)

    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st

    from tests import test_native_differential as differential
    from udflow.spark_backend import get_session

    table = get_session().createDataFrame(differential.ROWS, differential.SCHEMA)
    check = differential.test_native_terms_agree_with_python.hypothesis.inner_test
    started, done = time.perf_counter(), [0]

    drawn = differential.bit_terms if args.bits else st.one_of(
        differential.terms, differential.typed_terms, differential.table_terms, differential.bit_terms)

    @seed(args.seed)
    @settings(max_examples=args.batches, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate,))  # a batch of 120 Spark terms shrinks for hours: report it whole
    @given(batch=st.lists(drawn, min_size=120, max_size=120))
    def one_batch(batch):
        check(table, batch)
        done[0] += 1
        print(f"batch {done[0]}/{args.batches}: {dict(differential.STATS)} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)

    failed = None
    try:
        one_batch()
    except Exception as exc:  # the failing batch's assertion, or a raw Spark error (a difference too)
        failed = f"{type(exc).__name__}: {exc}"[:4000]
    summary = {"seed": args.seed, "batches": args.batches, "counts": dict(differential.STATS),
               "seconds": round(time.perf_counter() - started, 1), "failure": failed}
    print(json.dumps(summary, indent=1))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

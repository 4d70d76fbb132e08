"""What a record of the streamed side of a broadcast join costs (cost.PROBE_ROW).

    python -m bench.probe_cost [--data data/tpch-sf0.01] [--runs 5]

The broadcast calibration of `bench.cost_calibration` charges the records of the
broadcast side; the records of the other side, streamed through the hash table,
were free, so a filter moved below a broadcast join on that side was valued at
nothing (issue 15: it made the ratings pipeline 1.56x faster). Here: lineitem
joined with a broadcast of supplier (every lineitem finds one supplier), written
to Spark's no-op sink, minus the plain scan of lineitem, median of `--runs` after
a warm-up: seconds per streamed (and emitted) record.
"""

from __future__ import annotations

import argparse

from bench.cost_calibration import timed


def main(argv=None) -> None:
    from pyspark.sql import functions as F

    from examples.tpch_data import generate_tpch, tpch_source
    from udflow.spark_backend.lower import Lowering
    from udflow.spark_backend.session import get_session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/tpch-sf0.01")
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    generate_tpch(args.data, args.scale)
    spark = get_session()
    lineitem = Lowering(spark).lower(tpch_source(args.data, "lineitem").root).df
    supplier = Lowering(spark).lower(tpch_source(args.data, "supplier").root).df

    def noop(df):
        return lambda: df.write.format("noop").mode("overwrite").save()

    rows = lineitem.count()
    scan = timed(noop(lineitem), args.runs)
    joined = timed(noop(lineitem.join(F.broadcast(supplier), lineitem.l_suppkey == supplier.s_suppkey)), args.runs)
    print(f"lineitem {rows} records: scan {scan:.3f} s, broadcast join with supplier {joined:.3f} s")
    print(f"PROBE_ROW = {(joined - scan) / rows:.2e} s per streamed record")


if __name__ == "__main__":
    main()

"""TPC-H Query 15 (top supplier), as the paper implements it (section 7.2, Figure 3(a)).

The paper's variant removes the filter on `total_revenue` (the "= max" of the
subquery), so the answer is every supplier with revenue in the quarter:

    Reduce[s_suppkey](total_revenue)
      Match(l_suppkey=s_suppkey)
        Map(shipped_in_quarter)        start <= l_shipdate < start + 3 months
          Source(lineitem)
        Source(supplier)

Result rows carry `s_suppkey, s_name, s_address, s_phone, total_revenue` and,
besides, the other supplier fields and the lineitem fields of one record of
the group (see below).

Why the Reduce copies a group record instead of naming the supplier fields:
the paper's Match/Reduce exchange for this query (section 4.3.2, invariant
grouping: l_suppkey is a foreign key to supplier's key s_suppkey, so the
Reduce can run before the Match, on l_suppkey) needs a Reduce function that
reads nothing of the supplier but the key. `total_revenue` therefore reads
only `l_extendedprice` and `l_discount`, and the supplier fields reach the
output by *implicit copy* of the group's first record (`{**first, ...}`), as a
data engineer writes it. The lineitem fields copied along with them come from
an arbitrary record of the group, so compare results on the select list.
Revenue is a `Decimal` sum, as in SQL.

Run it:  python -m examples.tpch_q15 --data data/tpch-sf0.01 --scale 0.01
"""

from __future__ import annotations

from datetime import date

import udflow
from examples.tpch_data import generate_tpch, tpch_source
from examples.tpch_run import run_example


def generate_data(data_dir: str, scale: float) -> str:
    """TPC-H at `scale` as parquet in `data_dir` (skipped when already there)."""
    return generate_tpch(data_dir, scale)


def add_months(d: date, months: int) -> date:
    """`d` plus whole months (TPC-H's `date + interval 'n' month`, on a first of month)."""
    index = d.year * 12 + (d.month - 1) + months
    return d.replace(year=index // 12, month=index % 12 + 1)


def build_flow(data_dir: str, start: date = date(1996, 1, 1)) -> udflow.Flow:
    """The Q15 flow of Figure 3(a) over the parquet files in `data_dir`."""
    end = add_months(start, 3)

    def shipped_in_quarter(r):
        if start <= r["l_shipdate"] < end:
            yield r

    def total_revenue(rows):
        rows = list(rows)
        first = rows[0]
        total = sum(r["l_extendedprice"] * (1 - r["l_discount"]) for r in rows)
        yield {**first, "total_revenue": total}

    lineitem = tpch_source(data_dir, "lineitem")
    supplier = tpch_source(data_dir, "supplier")
    return (
        lineitem.map(shipped_in_quarter)
        .match(supplier, on=("l_suppkey", "s_suppkey"))
        .reduce(["s_suppkey"], total_revenue)
    )


SELECT_LIST = ("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")


def main(argv=None) -> None:
    run_example("TPC-H Q15 (paper's variant) on Spark via udflow", build_flow, generate_data, SELECT_LIST, argv)


if __name__ == "__main__":
    main()

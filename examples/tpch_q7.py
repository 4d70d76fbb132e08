"""TPC-H Query 7 (volume shipping), as the paper implements it (section 7.2, Figure 2(a)).

The paper's variant of Q7 removes the final sort; everything else is TPC-H's
query. The flow is written the way a data engineer writes it by hand, joins in
the order of the figure, the disjunctive nation predicate as one Map over the
fully joined record, grouping and sum in one Reduce:

    Reduce[supp_nation,cust_nation,l_year](revenue)
      Map(volume_between_nations)             n1=x and n2=y, or n1=y and n2=x
        Match(s_nationkey=supp_n_nationkey)   supplier's nation
          Match(c_nationkey=cust_n_nationkey) customer's nation
            Match(o_custkey=c_custkey)
              Match(l_orderkey=o_orderkey)
                Match(l_suppkey=s_suppkey)
                  Map(shipped_in_period)      start <= l_shipdate <= end
                    Source(lineitem)
                  Source(supplier)
                Source(orders)
              Source(customer)
            Source(cust_nation)
          Source(supp_nation)

Nation is used twice, as two sources with prefixes `cust_` and `supp_`
(`cust_n_name`, `supp_n_name`, ...). Result rows are exactly
`{supp_nation, cust_nation, l_year, revenue}`; revenue is a `Decimal` sum of
`l_extendedprice * (1 - l_discount)`, as in SQL.

Run it:  python -m examples.tpch_q7 --data data/tpch-sf0.01 --scale 0.01
"""

from __future__ import annotations

from datetime import date

import udflow
from examples.tpch_data import generate_tpch, tpch_source
from examples.tpch_run import run_example


def generate_data(data_dir: str, scale: float) -> str:
    """TPC-H at `scale` as parquet in `data_dir` (skipped when already there)."""
    return generate_tpch(data_dir, scale)


def build_flow(
    data_dir: str,
    nation1: str = "FRANCE",
    nation2: str = "GERMANY",
    start: date = date(1995, 1, 1),
    end: date = date(1996, 12, 31),
) -> udflow.Flow:
    """The Q7 flow of Figure 2(a) over the parquet files in `data_dir`."""

    def shipped_in_period(r):
        if start <= r["l_shipdate"] <= end:
            yield r

    def volume_between_nations(r):
        supp, cust = r["supp_n_name"], r["cust_n_name"]
        if (supp == nation1 and cust == nation2) or (supp == nation2 and cust == nation1):
            yield {
                **r,
                "supp_nation": supp,
                "cust_nation": cust,
                "l_year": r["l_shipdate"].year,
                "volume": r["l_extendedprice"] * (1 - r["l_discount"]),
            }

    def revenue(rows):
        rows = list(rows)
        first = rows[0]
        yield {
            "supp_nation": first["supp_nation"],
            "cust_nation": first["cust_nation"],
            "l_year": first["l_year"],
            "revenue": sum(r["volume"] for r in rows),
        }

    lineitem = tpch_source(data_dir, "lineitem")
    supplier = tpch_source(data_dir, "supplier")
    orders = tpch_source(data_dir, "orders")
    customer = tpch_source(data_dir, "customer")
    cust_nation = tpch_source(data_dir, "nation", prefix="cust_")
    supp_nation = tpch_source(data_dir, "nation", prefix="supp_")

    return (
        lineitem.map(shipped_in_period)
        .match(supplier, on=("l_suppkey", "s_suppkey"))
        .match(orders, on=("l_orderkey", "o_orderkey"))
        .match(customer, on=("o_custkey", "c_custkey"))
        .match(cust_nation, on=("c_nationkey", "cust_n_nationkey"))
        .match(supp_nation, on=("s_nationkey", "supp_n_nationkey"))
        .map(volume_between_nations)
        .reduce(["supp_nation", "cust_nation", "l_year"], revenue)
    )


SELECT_LIST = ("supp_nation", "cust_nation", "l_year", "revenue")


def main(argv=None) -> None:
    run_example("TPC-H Q7 (paper's variant) on Spark via udflow", build_flow, generate_data, SELECT_LIST, argv)


if __name__ == "__main__":
    main()

"""The optimizer on the paper's TPC-H flows (Figures 2(a), 3(a)) at scale 0.01.

- plan counts with `properties="manual"` (hand-written annotations, on a
  test-local copy of each flow) and `properties="analysis"` are equal (Table 1);
- the chosen plan, run on Spark, equals DuckDB's answer; so do alternatives
  at regular rank intervals: 20 for Q7 on the reference interpreter (a Q7
  run on local Spark with Python functions takes ~30 s here, 20 would take
  ten minutes), all of Q15's on the reference interpreter and its chosen
  and last-ranked plans on Spark.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
from collections import Counter
from datetime import date

import duckdb
import pytest

import udflow as uf
from examples import tpch_q7, tpch_q15
from udflow.engine.groups import GroupSearch
from udflow.rules import RuleBook
from udflow.flow import output_fields

Q7_SQL = """
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
    select n1.n_name as supp_nation, n2.n_name as cust_nation,
           extract(year from l_shipdate) as l_year,
           l_extendedprice * (1 - l_discount) as volume
    from supplier, lineitem, orders, customer, nation n1, nation n2
    where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
      and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
      and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')
        or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
      and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
"""

Q15_SQL = """
with revenue as (
    select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
    from lineitem
    where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-04-01'
    group by l_suppkey
)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue where s_suppkey = supplier_no
"""

Q7_KEY, Q7_SUM = ("supp_nation", "cust_nation", "l_year"), "revenue"
Q15_KEY, Q15_SUM = ("s_suppkey", "s_name", "s_address", "s_phone"), "total_revenue"


def duckdb_rows(data_dir: str, sql: str) -> list[dict]:
    con = duckdb.connect()
    try:
        for table in ("lineitem", "orders", "customer", "supplier", "nation"):
            con.execute(f"create view {table} as select * from read_parquet('{os.path.join(data_dir, table + '.parquet')}')")
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()


def assert_same_answer(actual: list[dict], expected: list[dict], key: tuple, summed: str, what: str) -> None:
    """Same bag on the select list; the sum within a relative 1e-9."""
    got = Counter(tuple(r[f] for f in key) for r in actual)
    assert all(n == 1 for n in got.values()), f"{what}: a group appears twice"
    want = {tuple(r[f] for f in key): r[summed] for r in expected}
    have = {tuple(r[f] for f in key): r[summed] for r in actual}
    assert set(have) == set(want), f"{what}: groups differ: {sorted(set(have) ^ set(want))[:4]}"
    bad = [k for k in want if not math.isclose(float(have[k]), float(want[k]), rel_tol=1e-9)]
    assert not bad, f"{what}: {summed} differs for {bad[:4]}"


def regular_picks(n: int, count: int) -> list[int]:
    """`count` indices spread evenly over range(n), first and last included."""
    if n <= count:
        return list(range(n))
    return sorted({round(i * (n - 1) / (count - 1)) for i in range(count)})


# -- manual annotations: a test-local copy of each flow whose functions carry @uf.annotate ----------


def annotated(flow: uf.Flow, declared: dict) -> uf.Flow:
    """The same flow with each function wrapped and annotated by hand (`declared[name](input fields)`)."""

    def wrap(fn, spec):
        if inspect.isgeneratorfunction(fn):
            def wrapper(*args):
                yield from fn(*args)
        else:
            def wrapper(*args):
                return fn(*args)
        wrapper.__name__ = fn.__name__
        return uf.annotate(**spec)(wrapper)

    def rebuild(node):
        if not node.inputs:
            return node
        copy = node.with_inputs(*(rebuild(c) for c in node.inputs))
        fn = getattr(node, "fn", None)
        if fn is None:
            return copy
        spec = declared[fn.__name__](output_fields(node.input) if node.arity == 1 else None)
        return dataclasses.replace(copy, fn=wrap(fn, spec))

    return uf.Flow(rebuild(flow.root))


Q7_ANNOTATIONS = {
    "shipped_in_period": lambda fields: dict(reads={"l_shipdate"}, writes=set(), emits=(0, 1), copy=True),
    "volume_between_nations": lambda fields: dict(
        reads={"supp_n_name", "cust_n_name", "l_shipdate", "l_extendedprice", "l_discount"},
        writes={"supp_nation", "cust_nation", "l_year", "volume"},
        emits=(0, 1), card_reads={"supp_n_name", "cust_n_name"}, copy=True,
    ),
    "revenue": lambda fields: dict(
        reads={"supp_nation", "cust_nation", "l_year", "volume"},
        writes=(fields - {"supp_nation", "cust_nation", "l_year"}) | {"revenue"},
        emits=(1, 1), card_reads=set(),
        output_fields={"supp_nation", "cust_nation", "l_year", "revenue"},
    ),
}

Q15_ANNOTATIONS = {
    "shipped_in_quarter": lambda fields: dict(reads={"l_shipdate"}, writes=set(), emits=(0, 1), copy=True),
    "total_revenue": lambda fields: dict(
        reads={"l_extendedprice", "l_discount"}, writes={"total_revenue"}, emits=(1, 1), card_reads=set(), copy=True,
    ),
}


@pytest.fixture(scope="module")
def q7(tpch_dir):
    return uf.optimize(tpch_q7.build_flow(tpch_dir))


@pytest.fixture(scope="module")
def q15(tpch_dir):
    # at scale 0.01 the paper's reordering is estimated 0.16 % cheaper: within the default
    # resolution (the estimates' error) it ties and the plan as written is kept
    # (tests/test_ties.py); the rules and the search are checked at one that absorbs rounding only
    return uf.optimize(tpch_q15.build_flow(tpch_dir), resolution=1e-6)


@pytest.mark.parametrize("name", ["q7", "q15"])
def test_plan_counts_manual_equal_analysis(tpch_dir, name, request):
    module, declared = {"q7": (tpch_q7, Q7_ANNOTATIONS), "q15": (tpch_q15, Q15_ANNOTATIONS)}[name]
    by_analysis = request.getfixturevalue(name)
    flow = module.build_flow(tpch_dir)
    manual = uf.optimize(annotated(flow, declared), properties="manual", profiles=by_analysis.profiles)
    assert manual.properties == "manual" and by_analysis.mode == manual.mode == "full"
    assert manual.model.estimate(manual.original.root).rows > 0
    print(f"{name}: {len(manual.alternatives)} alternatives (manual), {len(by_analysis.alternatives)} (analysis)")
    assert len(manual.alternatives) == len(by_analysis.alternatives)
    # the same plans, operator for operator (labels identify operators across the two flows)
    shapes = lambda opt: sorted(str(a.node) for a in opt.alternatives)  # noqa: E731
    assert shapes(manual) == shapes(by_analysis)


def test_q7_and_q15_plan_counts(q7, q15):
    """Table 1 of the paper: 2518 (Q7), 4 (Q15). Ours differ; docs/optimizer.md says why."""
    assert len(q15.alternatives) == 3
    assert len(q7.alternatives) >= 200
    intern = {str(a.node) for a in q7.alternatives}
    assert len(intern) == len(q7.alternatives)  # no duplicates
    assert any(a.node == q7.original.root for a in q7.alternatives)
    # the field-flow check (issue 28) refuses none of the rules' plans
    assert not q7.alternatives.refused and not q15.alternatives.refused
    assert all(a.field_flow.ok for a in (*q7.alternatives, *q15.alternatives))


def test_q7_chosen_plan_on_spark_equals_duckdb(tpch_dir, q7, spark):
    expected = duckdb_rows(tpch_dir, Q7_SQL)
    assert len(expected) == 4
    assert_same_answer(q7.best.collect(spark=spark), expected, Q7_KEY, Q7_SUM, "chosen plan on Spark")


def test_q7_eight_alternatives_at_regular_ranks_equal_duckdb(tpch_dir, q7):
    expected = duckdb_rows(tpch_dir, Q7_SQL)
    picks = regular_picks(len(q7.alternatives), 8)
    assert len(picks) == 8
    for i in picks:
        alt = q7.alternatives[i]
        assert_same_answer(alt.flow.collect(engine="reference"), expected, Q7_KEY, Q7_SUM, f"rank {alt.rank}")


def test_q15_alternatives_equal_duckdb(tpch_dir, q15, spark):
    expected = duckdb_rows(tpch_dir, Q15_SQL)
    assert len(expected) > 50
    assert_same_answer(q15.best.collect(spark=spark), expected, Q15_KEY, Q15_SUM, "chosen plan on Spark")
    worst = q15.alternatives[-1]
    assert_same_answer(worst.flow.collect(spark=spark), expected, Q15_KEY, Q15_SUM, "last rank on Spark")
    for alt in q15.alternatives:
        assert_same_answer(alt.flow.collect(engine="reference"), expected, Q15_KEY, Q15_SUM, f"rank {alt.rank}")


def test_q15_chosen_plan_pushes_the_aggregation_below_the_join(q15):
    """Section 7.3: Reduce before Match (invariant grouping under the l_suppkey -> s_suppkey key)."""
    best = q15.best.root
    assert best.kind == "match" and best.left.kind == "reduce"
    assert best.left.key == ("l_suppkey",) or best.left.key == ("s_suppkey",)
    assert [c.rule for c in q15.certificates] == ["invariant_grouping"]
    assert dict(q15.best.hints)  # the join strategy travels to Spark as a hint


@pytest.mark.parametrize("name", ["q7", "q15"])
def test_pruned_search_chooses_a_plan_as_cheap_as_full_enumeration(tpch_dir, name, request):
    """The pruned search (one member expanded per group, the best plans per interface kept)
    finds the full enumeration's cheapest cost, and its exploration reaches every plan."""
    full = request.getfixturevalue(name)
    flow = {"q7": tpch_q7, "q15": tpch_q15}[name].build_flow(tpch_dir)
    pruned = uf.optimize(flow, mode="pruned", profiles=full.profiles, resolution=full.alternatives.resolution)
    assert pruned.mode == "pruned" and len(pruned.alternatives) <= len(full.alternatives)
    if name == "q7":  # Q15's three plans have three different roots: all are kept
        assert len(pruned.alternatives) < len(full.alternatives)
    assert math.isclose(pruned.chosen.cost, full.chosen.cost, rel_tol=1e-12)
    with RuleBook(flow.root) as book:
        one = GroupSearch(book.exchanges, one_per_root=True, one_member=True)
        plans = one.plans(one.explore(flow.root))
    # the fixture's flow is another build (other function objects): compare plans as drawn
    assert sorted(str(p.node) for p in plans) == sorted(str(a.node) for a in full.alternatives)

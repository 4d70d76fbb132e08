"""The paper's TPC-H tasks (Q7, Q15 of section 7.2) against DuckDB, and the data generator.

The oracle is DuckDB running TPC-H's own SQL, as the paper modifies it, on the
same parquet files: Q7 without the final sort, Q15 without the filter on
`total_revenue`. Both udflow engines (Spark and the reference interpreter)
must return the same rows on the select list; sums are compared with a
relative tolerance of 1e-9.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import date

import duckdb
import pytest

from examples import tpch_q7, tpch_q15
from examples.tpch_data import TABLES, TpchDataError, find_tpchgen, generate_tpch, is_complete
from udflow.errors import UdflowError

Q7_SQL = """
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
    select n1.n_name as supp_nation,
           n2.n_name as cust_nation,
           extract(year from l_shipdate) as l_year,
           l_extendedprice * (1 - l_discount) as volume
    from supplier, lineitem, orders, customer, nation n1, nation n2
    where s_suppkey = l_suppkey
      and o_orderkey = l_orderkey
      and c_custkey = o_custkey
      and s_nationkey = n1.n_nationkey
      and c_nationkey = n2.n_nationkey
      and ((n1.n_name = $nation1 and n2.n_name = $nation2)
        or (n1.n_name = $nation2 and n2.n_name = $nation1))
      and l_shipdate between $start and $end
) as shipping
group by supp_nation, cust_nation, l_year
"""

Q15_SQL = """
with revenue as (
    select l_suppkey as supplier_no,
           sum(l_extendedprice * (1 - l_discount)) as total_revenue
    from lineitem
    where l_shipdate >= $start
      and l_shipdate < $start + interval '3' month
    group by l_suppkey
)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue
where s_suppkey = supplier_no
"""


def duckdb_rows(data_dir: str, sql: str, params: dict) -> list[dict]:
    con = duckdb.connect()
    try:
        for table in ("lineitem", "orders", "customer", "supplier", "nation"):
            path = os.path.join(data_dir, f"{table}.parquet").replace("'", "''")
            con.execute(f"create view {table} as select * from read_parquet('{path}')")
        cursor = con.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()


def assert_same_rows(actual: list[dict], expected: list[dict], exact: tuple[str, ...], summed: str) -> None:
    """Same bag on `exact + (summed,)`; `summed` within a relative 1e-9."""

    def index(rows, who):
        missing = [r for r in rows if any(f not in r for f in exact + (summed,))]
        assert not missing, f"{who} rows lack select-list fields: {missing[:2]}"
        counts = Counter(tuple(r[f] for f in exact) for r in rows)
        repeated = [k for k, n in counts.items() if n > 1]
        assert not repeated, f"{who} has several rows for {repeated[:3]}"
        return {tuple(r[f] for f in exact): r[summed] for r in rows}

    got, want = index(actual, "udflow"), index(expected, "DuckDB")
    assert set(got) == set(want), (
        f"only in udflow: {sorted(set(got) - set(want))[:5]}; "
        f"only in DuckDB: {sorted(set(want) - set(got))[:5]}"
    )
    wrong = [
        (k, got[k], want[k])
        for k in want
        if got[k] is None or not math.isclose(float(got[k]), float(want[k]), rel_tol=1e-9)
    ]
    assert not wrong, f"{summed} differs (key, udflow, DuckDB): {wrong[:5]}"


# -- Q7 ----------------------------------------------------------------------

Q7_DEFAULT = dict(nation1="FRANCE", nation2="GERMANY", start=date(1995, 1, 1), end=date(1996, 12, 31))
# Another parameter set, so that the flow's parameters are shown to matter.
Q7_OTHER = dict(nation1="UNITED STATES", nation2="CHINA", start=date(1993, 6, 1), end=date(1997, 5, 31))
Q7_KEY = ("supp_nation", "cust_nation", "l_year")


@pytest.fixture(scope="module")
def q7_expected(tpch_dir):
    return {
        name: duckdb_rows(tpch_dir, Q7_SQL, params)
        for name, params in (("default", Q7_DEFAULT), ("other", Q7_OTHER))
    }


def test_q7_oracle_is_not_trivial(q7_expected):
    # both nation orders and both years appear, so a wrong filter or key shows up
    assert {(r["supp_nation"], r["l_year"]) for r in q7_expected["default"]} == {
        ("FRANCE", 1995), ("FRANCE", 1996), ("GERMANY", 1995), ("GERMANY", 1996)
    }
    assert len(q7_expected["other"]) > 4


@pytest.mark.spark
def test_q7_on_spark_equals_duckdb(tpch_dir, spark, q7_expected):
    rows = tpch_q7.build_flow(tpch_dir, **Q7_DEFAULT).collect(spark=spark)
    assert_same_rows(rows, q7_expected["default"], Q7_KEY, "revenue")


@pytest.mark.parametrize("case", ["default", "other"])
def test_q7_on_reference_equals_duckdb(tpch_dir, q7_expected, case):
    params = Q7_DEFAULT if case == "default" else Q7_OTHER
    rows = tpch_q7.build_flow(tpch_dir, **params).collect(engine="reference")
    assert_same_rows(rows, q7_expected[case], Q7_KEY, "revenue")
    assert all(set(r) == set(tpch_q7.SELECT_LIST) for r in rows)  # exactly the select list


# -- Q15 ---------------------------------------------------------------------

Q15_KEY = ("s_suppkey", "s_name", "s_address", "s_phone")


@pytest.fixture(scope="module")
def q15_expected(tpch_dir):
    return duckdb_rows(tpch_dir, Q15_SQL, {"start": date(1996, 1, 1)})


@pytest.mark.spark
def test_q15_on_spark_equals_duckdb(tpch_dir, spark, q15_expected):
    rows = tpch_q15.build_flow(tpch_dir).collect(spark=spark)
    assert_same_rows(rows, q15_expected, Q15_KEY, "total_revenue")


def test_q15_on_reference_equals_duckdb(tpch_dir, q15_expected):
    assert len(q15_expected) > 10
    rows = tpch_q15.build_flow(tpch_dir).collect(engine="reference")
    assert_same_rows(rows, q15_expected, Q15_KEY, "total_revenue")


def test_q15_quarter_is_three_calendar_months():
    assert tpch_q15.add_months(date(1996, 1, 1), 3) == date(1996, 4, 1)
    assert tpch_q15.add_months(date(1996, 11, 1), 3) == date(1997, 2, 1)


# -- the generator -------------------------------------------------------------

TINY = 0.001


def _snapshot(folder):
    return {name: os.stat(os.path.join(folder, name)).st_ino for name in os.listdir(folder)}


def test_generator_is_idempotent(tmp_path):
    target = tmp_path / "tpch"
    assert generate_tpch(str(target), TINY) == str(target)
    assert sorted(os.listdir(target)) == sorted(f"{t}.parquet" for t in TABLES)
    before = _snapshot(target)
    generate_tpch(str(target), TINY)
    assert _snapshot(target) == before  # not one file rewritten
    assert os.listdir(tmp_path) == ["tpch"]  # no staging folder left beside it


def test_generator_completes_a_partial_data_set(tmp_path):
    target = tmp_path / "tpch"
    target.mkdir()
    (target / "nation.parquet").write_bytes(b"left over from an older attempt")
    assert not is_complete(str(target))
    generate_tpch(str(target), TINY)
    assert is_complete(str(target))
    count = duckdb.connect().execute(f"select count(*) from read_parquet('{target}/nation.parquet')").fetchone()
    assert count == (25,)


def test_interrupted_generation_leaves_no_data_set(tmp_path):
    """Kill a generation once it has written its first file: no half data set remains."""
    target = tmp_path / "tpch"
    code = f"from examples.tpch_data import generate_tpch; generate_tpch({str(target)!r}, 0.1)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        start_new_session=True,  # its own process group, so the tool dies with it
    )
    interrupted = False
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if any(p.is_file() for p in tmp_path.rglob("*")):  # some table is being written
                _kill_group(proc)
                interrupted = True
                break
            time.sleep(0.02)
    finally:
        _kill_group(proc)
        proc.wait()
    assert interrupted, "the generation finished before it could be interrupted"
    assert not target.exists() or is_complete(str(target))
    generate_tpch(str(target), TINY)  # a later run is not fooled by what the killed one left
    assert is_complete(str(target))


def _kill_group(proc):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def test_missing_tool_is_a_udflow_error(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TpchDataError, match="tpchgen-cli") as info:
        find_tpchgen()
    assert isinstance(info.value, UdflowError)
    with pytest.raises(UdflowError, match="pip install tpchgen-cli"):
        generate_tpch(str(tmp_path / "tpch"), TINY)
    assert not (tmp_path / "tpch").exists()

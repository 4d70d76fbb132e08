"""The three user pipelines of issue 12 (examples/ratings.py, taxi.py, documents.py) at a tiny
scale: udflow's result on Spark (native switch at its default, optimized plan) is the bag the
hand-written PySpark returns and the bag DuckDB returns for an independent SQL of the query."""

import duckdb
import pytest

import udflow
from examples import documents, ratings, taxi
from examples.user_data import bag_mismatch, rows_of

SCALE = 0.002  # ratings: 4,000 ratings; taxi: 4,000 trips; documents: 200 documents


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("user-pipelines")
    for module in (ratings, taxi, documents):
        module.generate_data(str(root / module.__name__.rsplit(".", 1)[1]), SCALE)
    return root


def duckdb_rows(sql: str, functions=()) -> list[dict]:
    con = duckdb.connect()
    try:
        for name, fn, types in functions:
            con.create_function(name, fn, *types)
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()


def check(flow, hand_df, oracle: list[dict], spark):
    chosen = udflow.optimize(flow).chosen
    ours = chosen.collect(spark=spark)
    fields = sorted(ours[0]) if ours else None
    assert ours, "the pipeline returned nothing: the data should give rows"
    hand = rows_of(hand_df.collect(), fields)
    assert sorted(hand_df.columns) == fields
    assert (why := bag_mismatch(ours, hand)) is None, f"udflow vs hand-written PySpark: {why}"
    assert (why := bag_mismatch(ours, rows_of(oracle, fields))) is None, f"udflow vs DuckDB: {why}"
    return chosen, ours


@pytest.mark.parametrize("by", ratings.BY)
def test_ratings(spark, data, by):
    d = str(data / "ratings")
    _, rows = check(ratings.build_flow(d, by), ratings.hand_pyspark(spark, d, by),
                    duckdb_rows(ratings.duckdb_sql(d, by)), spark)
    if by == "genre":
        assert ratings.NO_GENRES in {r["genre"] for r in rows} or len(rows) >= len(ratings.GENRES) - 2
    assert all(0.5 <= r["avg_rating"] <= 5.0 for r in rows)


def test_taxi(spark, data):
    d = str(data / "taxi")
    _, rows = check(taxi.build_flow(d), taxi.hand_pyspark(spark, d), duckdb_rows(taxi.duckdb_sql(d)), spark)
    assert all(r["avg_mph"] <= taxi.MAX_MPH for r in rows)
    assert any(r["avg_tip"] is not None for r in rows)


def test_documents(spark, data):
    d = str(data / "documents")
    oracle = duckdb_rows(documents.duckdb_sql(d), [("user_stem", documents.stem, ([str], str))])
    _, rows = check(documents.build_flow(d), documents.hand_pyspark(spark, d), oracle, spark)
    assert {r["label"] for r in rows} == {"positive", "negative", "neutral"}


def test_generators_are_deterministic(tmp_path):
    for module in (ratings, taxi, documents):
        a, b = tmp_path / f"{module.__name__}-a", tmp_path / f"{module.__name__}-b"
        module.generate_data(str(a), 0.0005, seed=3)
        module.generate_data(str(b), 0.0005, seed=3)
        for f in sorted(p.name for p in a.iterdir()):
            assert (a / f).read_bytes() == (b / f).read_bytes(), f"{module.__name__}: {f} differs"

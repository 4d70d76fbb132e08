"""A Python Map that emits many records runs over Arrow batches, its records pickled (they
keep Python's types for a Python operator above). Where a consumer needs columns and the
Map is pure, a sample of its output types its records, so that they come back as columns in
one pass rather than pickled, persisted and decoded (issue 12, item 3: the Python that
remains)."""

import pytest

import udflow as uf
from udflow.errors import UdfRuntimeError
from udflow.spark_backend.lower import Lowering

ROWS = [{"k": i, "text": " ".join(f"w{j}" for j in range(i % 4))} for i in range(300)]


def titled_words(r):
    for w in r["text"].split():
        yield {"k": r["k"], "word": w.title()}  # str.title: no model


def late_int(r):
    for w in r["text"].split():
        yield {"k": r["k"], "word": w.title() if r["k"] < 250 else 7}


def _bag(records):
    return sorted(tuple(sorted(r.items())) for r in records)


def test_a_pure_many_record_map_comes_back_as_columns(spark):
    flow = uf.source("t", rows=ROWS).map(titled_words)
    lowering = Lowering(spark, flow.physical())
    df = lowering.typed(flow.root)
    assert dict(df.dtypes) == {"k": "bigint", "word": "string"}
    assert not lowering.persisted  # run typed, not pickled, persisted and decoded
    assert _bag(flow.collect(spark=spark)) == _bag(flow.collect(engine="reference"))


def test_a_value_of_another_type_than_the_sample_gave_raises_naming_the_field(spark):
    """Only where columns are needed (a join): the records collected keep Python's types."""
    flow = uf.source("t", rows=ROWS).map(late_int)
    assert _bag(flow.collect(spark=spark)) == _bag(flow.collect(engine="reference"))
    other = uf.source("o", rows=[{"ok": i, "tag": str(i)} for i in range(300)])
    with pytest.raises(UdfRuntimeError, match="word"):
        flow.match(other, on=("k", "ok")).collect(spark=spark)


WIDE = [{"k": i % 7, "x": float(i), "pad": "p" * 40, "other": i} for i in range(400)]


def spread(rows):  # reads k and x only, builds its record from them
    xs = [r["x"] for r in rows]
    yield {"k": rows[0]["k"], "spread": hex(int(max(xs) - min(xs)))}  # hex: no model, so Python


def first_whole(rows):  # copies the first record whole: every field is needed
    rows = list(rows)
    yield {**rows[0], "n": hex(len(rows))}


@pytest.mark.parametrize("fn, shown", [(spread, {"k", "x"}), (first_whole, {"k", "x", "pad", "other"})])
def test_a_python_reduce_is_shuffled_with_only_the_fields_it_uses(spark, fn, shown):
    """A Python Reduce that builds its records from what it reads sees those fields only, so
    the shuffle and the Arrow batches carry no other column (`UdfProperties.group_projection`);
    one that copies a record whole sees every field."""
    flow = uf.source("t", rows=WIDE).reduce(["k"], fn)
    lowering = Lowering(spark, flow.physical())
    plan = lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
    grouped = next(line for line in plan.splitlines() if "FlatMapGroupsInArrow" in line)
    arguments = grouped.split("run(")[1].split(")")[0]
    assert {a.split("#")[0].strip() for a in arguments.split(",")} == shown
    assert _bag(flow.collect(spark=spark)) == _bag(flow.collect(engine="reference"))

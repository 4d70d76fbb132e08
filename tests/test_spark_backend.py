"""The Spark backend gives the reference interpreter's bag for every operator kind, and more.

Each case is a flow over small hand-made inputs (duplicates, None values and
None keys, a key group of one, empty inputs); the test runs it on both engines
and compares the bags.
"""

import csv
import datetime
import os
from collections import Counter
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import udflow as uf
from udflow import reference, spark_backend
from udflow.engine.steps import physical_plan
from udflow.spark_backend.forms import SPARK_FORMS
from udflow.errors import UdflowError, UdfRuntimeError
from udflow.plan import OperatorType


def bag(rows):
    return Counter(frozenset(r.items()) for r in rows)


A_ROWS = [
    {"k": 1, "v": 10},
    {"k": 1, "v": 10},
    {"k": 2, "v": 20},
    {"k": None, "v": 30},
    {"k": None, "v": None},
    {"k": 3, "v": 5},
]
B_ROWS = [{"bk": 1, "w": "x"}, {"bk": 1, "w": "y"}, {"bk": None, "w": "n"}, {"bk": 4, "w": "z"}]
MONEY_ROWS = [
    {"id": 1, "price": Decimal("10.25"), "rate": 0.5, "day": datetime.date(1995, 3, 1), "tag": "a"},
    {"id": 2, "price": Decimal("3.10"), "rate": None, "day": datetime.date(1996, 12, 31), "tag": None},
    {"id": 3, "price": None, "rate": 1.25, "day": None, "tag": "a"},
]


def a():
    return uf.source("a", rows=A_ROWS)


def b():
    return uf.source("b", rows=B_ROWS)


def empty():
    return uf.source("e", rows=[], fields=["ek", "ev"])


def money():
    return uf.source("m", rows=MONEY_ROWS)


# -- user functions -------------------------------------------------------------


def twice(r):
    return {"k": r["k"], "twice": (r["v"] or 0) * 2}


def repeat(r):
    for i in range(r["k"] or 0):
        yield {"k": r["k"], "i": i}


def big(r):
    return r["v"] is not None and r["v"] > 5


def summary(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "n": len(rows), "s": sum(r["v"] or 0 for r in rows)}


def pair(l, r):
    return {"v": l["v"], "w": r["w"]}


def two_each(l, r):
    yield {"v": l["v"], "w": r["w"]}
    yield {"v": l["v"], "w": r["w"] + "!"}


def sizes(ls, rs):
    key = ls[0]["k"] if ls else rs[0]["bk"]
    yield {"key": key, "nl": len(ls), "nr": len(rs)}


def pass_through(rows):
    yield from rows


def numeric_group(r):
    # one key value, three Python types: 1 == 1.0 == Decimal("1.00") must group together
    g = {1: 1, 2: 1.0, 3: Decimal("1.00")}.get(r["k"]) if r["k"] is not None else None
    return {"g": g, "v": r["v"]}


def count_group(rows):
    rows = list(rows)
    yield {"g": float(rows[0]["g"]) if rows[0]["g"] is not None else None, "n": len(rows)}


def priced(r):
    yield {
        **r,
        "net": r["price"] * Decimal("0.9") if r["price"] is not None else None,
        "year": r["day"].year if r["day"] else None,
        "next_day": r["day"] + datetime.timedelta(days=1) if r["day"] else None,
        "half": r["rate"] / 2 if r["rate"] is not None else None,
        "third": r["price"] / 3 if r["price"] is not None else None,  # 28 significant digits
    }


def by_tag(rows):
    rows = list(rows)
    yield {"tag": rows[0]["tag"], "total": sum((r["net"] or Decimal(0)) for r in rows), "n": len(rows)}


UNION = OperatorType(
    name="Union",
    arity=2,
    reference=lambda bags, params: bags[0] + bags[1],
    output_fields=lambda fields, params: fields[0] | fields[1],
    spark=lambda dfs, params: dfs[0].unionByName(dfs[1]),
    disjoint_inputs=False,
)
TAG = OperatorType(
    name="Tag",
    arity=1,
    reference=lambda bags, params: [{**r, params["field"]: params["value"]} for r in bags[0]],
    output_fields=lambda fields, params: fields[0] | {params["field"]},
    record_at_a_time=True,
)


CASES = {
    "map returning": lambda: a().map(twice),
    "map yielding 0/1/many": lambda: a().map(repeat),
    "filter": lambda: a().filter(big),
    "reduce, None keys together, a group of one": lambda: a().reduce("k", summary),
    "match concat, None never matches": lambda: a().match(b(), on=("k", "bk")),
    "match with fn returning": lambda: a().match(b(), on=("k", "bk"), f=pair),
    "match with fn yielding": lambda: a().match(b(), on=("k", "bk"), f=two_each),
    "cross concat": lambda: a().cross(b()),
    "cross with fn": lambda: a().cross(b(), f=pair),
    "cogroup, None keys together": lambda: a().cogroup(b(), on=("k", "bk"), f=sizes),
    "custom with a spark lowering": lambda: a().apply(UNION, uf.source("c", rows=[{"k": 9, "v": 9}, {"k": 1, "v": 10}])),
    "custom record at a time": lambda: a().apply(TAG, field="t", value="x"),
    "empty map": lambda: empty().map(lambda r: {"x": 1}),
    "empty reduce": lambda: empty().reduce("ek", pass_through),
    "empty match": lambda: a().match(empty(), on=("k", "ek")),
    "empty cogroup side": lambda: empty().cogroup(b(), on=("ek", "bk"), f=sizes_right),
    "python keys group by Python equality": lambda: a().map(numeric_group).reduce("g", count_group),
    "map -> reduce -> match (pickled, then typed for the join)": lambda: (
        a().map(twice).reduce("k", count_twice).match(b(), on=("k", "bk"))
    ),
    "decimal, date, float, None round trip": lambda: money().map(priced).reduce("tag", by_tag),
}


def kept_twice_when_big(r):
    if r["v"] is not None and r["v"] >= 10:
        yield r
        yield r


def money_known(r):
    return r["price"] is not None


def tagged_when_big(r):
    if r["v"] is not None and r["v"] >= 10:
        yield {**r, "big": True, "v": r["v"] // 10}
        yield {**r, "big": False}


def without_note(r):
    out = dict(r)
    del out["note"]  # deletes a field it never reads
    return {**out, "k2": r["k"]}


NOTED = [{"k": i % 3, "v": i, "note": f"n{i}", "w": None} for i in range(7)]

CASES.update({
    "map copying its records with fields written, 0/2 per record (shown read/written fields)": lambda: (
        a().map(tagged_when_big)),
    "map deleting a field it never reads": lambda: uf.source("n", rows=NOTED).map(without_note),
    "copying map then reduce on a projected field": lambda: (
        uf.source("n", rows=NOTED).map(without_note).reduce("k2", summary_k2)),
    "map forwarding its records, 0/1/2 of each (read columns only)": lambda: a().map(kept_twice_when_big),
    "filter on one column of many (read columns only)": lambda: money().filter(money_known),
    "filter reading nothing": lambda: a().filter(lambda r: True),
    "filter on a field nobody has": lambda: a().filter(lambda r: "missing" not in r),
})


def summary_k2(rows):
    rows = list(rows)
    yield {"k2": rows[0]["k2"], "n": len(rows), "ws": sorted(str(r["w"]) for r in rows)[0]}


def sizes_right(ls, rs):
    yield {"key": rs[0]["bk"], "nl": len(ls), "nr": len(rs)}


def count_twice(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "t": sum(r["twice"] for r in rows)}


@pytest.mark.parametrize("name", list(CASES))
def test_spark_gives_the_reference_bag(spark, name):
    flow = CASES[name]()
    expected = reference.run(flow.root)
    got = flow.collect(engine="spark", spark=spark)
    assert bag(got) == bag(expected)


def test_reference_bags_are_not_trivial():
    """Guard against a vacuous comparison: most cases produce records."""
    sizes_ = {name: len(reference.run(build().root)) for name, build in CASES.items()}
    assert sum(1 for n in sizes_.values() if n > 0) >= len(CASES) - 4


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("sources")
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int64()),
                "price": pa.array([Decimal("1.50"), None, Decimal("2.25")], pa.decimal128(15, 2)),
                "day": pa.array([datetime.date(1995, 1, 2), datetime.date(1996, 3, 4), None], pa.date32()),
                "name": pa.array(["x", None, "z"], pa.string()),
            }
        ),
        root / "t.parquet",
    )
    with open(root / "c.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([["cid", "label"], ["1", "one"], ["2", ""], ["3", "three"]])
    return root


def test_parquet_and_csv_sources_agree_with_the_reference(spark, files):
    t = uf.source("t", path=str(files / "t.parquet"), prefix="p_")
    c = uf.source("c", path=str(files / "c.csv"))
    joined = t.cross(c)
    expected = reference.run(joined.root)
    got = joined.collect(spark=spark)
    assert len(expected) == 9
    assert bag(got) == bag(expected)
    assert {"p_id", "p_price", "p_day", "p_name", "cid", "label"} == set(got[0])


def test_to_dataframe_types_carried_and_created_fields(spark):
    df = money().map(priced).to_spark(spark=spark)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["price"] == "decimal(4,2)"  # carried over: the source's type
    assert types["net"] == "decimal(38,18)"
    assert types["year"] == "bigint"
    assert types["next_day"] == "date"
    assert types["half"] == "double"
    assert types["third"] == "decimal(38,27)"  # Decimal("3.416666666666666666666666667") kept exactly
    rows = [r.asDict() for r in df.collect()]
    assert bag(rows) == bag(reference.run(money().map(priced).root))


def test_a_field_that_is_none_in_the_whole_sample_needs_a_declared_type(spark):
    """A function run in Python has its output types sampled; one run natively from its model
    needs no sample (its types are its terms')."""
    rows = [{"i": i} for i in range(1200)]

    def later_value(i):  # a helper with a try: not inlined, no model, the Map runs in Python
        try:
            return None if i < 1100 else 1.5
        except TypeError:
            return None

    def nothing_yet(r):
        return {"i": r["i"], "later": later_value(r["i"])}

    def modelled(r):
        return {"i": r["i"], "later": None if r["i"] < 1100 else 1.5}

    native = uf.source("many", rows=rows).map(modelled).to_spark(spark=spark)
    assert native.schema["later"].dataType.simpleString() == "double"
    assert native.where("later is not null").count() == 100

    with pytest.raises(UdflowError) as err:
        uf.source("many", rows=rows).map(nothing_yet).to_spark(spark=spark)
    message = str(err.value)
    assert "Map(nothing_yet)" in message and "'later'" in message and "output_types" in message

    declared = spark_backend.output_types(later="double")(nothing_yet)
    df = uf.source("many", rows=rows).map(declared).to_spark(spark=spark)
    assert df.schema["later"].dataType.simpleString() == "double"
    assert df.where("later is not null").count() == 100


def test_join_hints_keep_the_bag_and_unknown_hints_are_refused(spark):
    flow = a().match(b(), on=("k", "bk"))
    label = flow.root.label
    expected = bag(reference.run(flow.root))
    for hint in ("broadcast_left", "shuffle"):
        df = spark_backend.to_dataframe(flow.root, physical_plan(flow.root, {label: hint}, SPARK_FORMS), spark=spark)
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert ("Broadcast" in plan) == (hint == "broadcast_left")
    got = spark_backend.collect(flow.root, physical_plan(flow.root, {label: "broadcast_right"}, SPARK_FORMS), spark=spark)
    assert bag(got) == expected
    with pytest.raises(UdflowError, match=r"Match\(k=bk\): unknown join hint 'sideways'"):
        spark_backend.collect(flow.root, physical_plan(flow.root, {label: "sideways"}, SPARK_FORMS), spark=spark)


def test_write_round_trips_and_a_failed_write_leaves_nothing(spark, tmp_path):
    flow = money().map(priced)
    out = str(tmp_path / "out")
    flow.write(out, spark=spark)
    back = uf.source("back", path=out)
    assert bag(reference.run(back.root)) == bag(reference.run(flow.root))
    with pytest.raises(UdflowError, match="already there"):
        flow.write(out, spark=spark)

    def fails_on_two(r):
        if r["id"] == 2:
            raise ValueError("bad record")
        return r

    def rejects_two(r):
        if r["id"] == 2:
            raise ValueError("bad record")
        return True

    # a Map's output is sampled before the write starts; a filter fails inside the write job itself
    for failing, label in ((money().map(fails_on_two), "Map(fails_on_two)"), (money().filter(rejects_two), "Filter(rejects_two)")):
        target = str(tmp_path / "never")
        with pytest.raises(UdfRuntimeError) as err:
            failing.write(target, spark=spark)
        assert label in str(err.value) and "'id': 2" in str(err.value)
        assert not os.path.exists(target)


def test_default_session_is_the_active_one(spark):
    assert spark_backend.get_session() is spark


def test_a_custom_type_without_a_spark_lowering_is_refused(spark):
    window = OperatorType(
        name="Window",
        arity=1,
        reference=lambda bags, params: bags[0],
        output_fields=lambda fields, params: fields[0],
    )
    with pytest.raises(UdflowError, match=r"Window: operator type 'Window' has no Spark lowering"):
        a().apply(window).collect(spark=spark)


def test_python_filters_and_forwarding_maps_see_only_what_they_read():
    """The physical plan shows a Python function only the fields it reads (`Step.reads`), and
    runs a Map that emits its input records unchanged by forwarding rows."""
    flow = uf.source("t", rows=[{"k": 1, "v": 2, "w": 3}])
    filtered = flow.filter(big).physical(native=False).root
    assert (filtered.how, filtered.reads) == ("scalar", frozenset({"v"}))
    assert flow.map(kept_twice_when_big).physical(native=False).root.how == "forwarding"
    assert flow.map(twice).physical(native=False).root.how != "forwarding"

    def looks_at_everything(r):
        return len(r) > 2  # not analysable field by field: every column

    everything = flow.filter(looks_at_everything).physical(native=False).root
    assert (everything.how, everything.reads) == ("batches", None)


def test_a_failing_projected_filter_shows_the_fields_it_reads(spark):
    """The record in the error holds the fields the function reads: showing every column would
    keep Spark from pruning the others (docs/native.md)."""
    def ratio_positive(r):
        return r["v"] / r["k"] > 0

    rows = [{"k": 1, "v": 2, "note": "fine"}, {"k": 0, "v": 5, "note": "the culprit"}]
    flow = uf.source("t", rows=rows).filter(ratio_positive)
    with pytest.raises(UdfRuntimeError) as err:
        flow.collect(engine="spark", spark=spark)
    text = str(err.value)
    assert "ZeroDivisionError" in text and '"k":0' in text.replace(" ", "") and '"v":5' in text.replace(" ", "")

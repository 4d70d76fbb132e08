"""The reference interpreter against bags worked out by hand from section 2.3's definitions."""

import csv
import datetime
from collections import Counter
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import udflow as uf
from udflow import reference
from udflow.errors import UdfRuntimeError
from udflow.plan import OperatorType


def bag(rows):
    return Counter(frozenset(r.items()) for r in rows)


A_ROWS = [
    {"k": 1, "v": 10},
    {"k": 1, "v": 10},  # a duplicate record
    {"k": 2, "v": 20},
    {"k": None, "v": 30},
    {"k": None, "v": None},
    {"k": 3, "v": 5},  # a key group of one
]
B_ROWS = [{"bk": 1, "w": "x"}, {"bk": 1, "w": "y"}, {"bk": None, "w": "n"}, {"bk": 4, "w": "z"}]


def a():
    return uf.source("a", rows=A_ROWS)


def b():
    return uf.source("b", rows=B_ROWS)


def empty():
    return uf.source("e", rows=[], fields=["ek", "ev"])


def run(flow):
    return reference.run(flow.root)


def test_map_returning_a_dict_emits_exactly_that_record():
    got = run(a().map(lambda r: {"k": r["k"], "twice": (r["v"] or 0) * 2}))
    assert bag(got) == bag(
        [{"k": 1, "twice": 20}] * 2 + [{"k": 2, "twice": 40}, {"k": None, "twice": 60}, {"k": None, "twice": 0}, {"k": 3, "twice": 10}]
    )


def test_map_yielding_emits_zero_one_or_many():
    def repeat(r):
        for i in range(r["k"] or 0):
            yield {"k": r["k"], "i": i}

    got = run(a().map(repeat))
    expected = [{"k": 1, "i": 0}] * 2 + [{"k": 2, "i": 0}, {"k": 2, "i": 1}] + [{"k": 3, "i": i} for i in range(3)]
    assert bag(got) == bag(expected)


def test_filter_keeps_the_record_unchanged_iff_the_predicate_holds():
    def mutating_pred(r):
        r["v"] = -1  # changes its own copy only
        return r["k"] == 1

    assert bag(run(a().filter(mutating_pred))) == bag([{"k": 1, "v": 10}] * 2)


def test_reduce_calls_once_per_key_and_none_keys_group_together():
    def summary(rows):
        rows = list(rows)
        yield {"k": rows[0]["k"], "n": len(rows), "s": sum(r["v"] or 0 for r in rows)}

    got = run(a().reduce("k", summary))
    assert bag(got) == bag(
        [{"k": 1, "n": 2, "s": 20}, {"k": 2, "n": 1, "s": 20}, {"k": None, "n": 2, "s": 30}, {"k": 3, "n": 1, "s": 5}]
    )


def test_match_pairs_equal_keys_and_none_matches_nothing():
    got = run(a().match(b(), on=("k", "bk")))
    pairs = [{"k": 1, "v": 10, "bk": 1, "w": w} for w in ("x", "y")]
    assert bag(got) == bag(pairs * 2)


def test_match_with_a_function_yielding():
    def both(l, r):
        yield {"k": l["k"], "w": r["w"]}
        yield {"k": l["k"], "w": r["w"] + "!"}

    got = run(a().match(b(), on=("k", "bk"), f=both))
    assert bag(got) == bag([{"k": 1, "w": w} for w in ("x", "x!", "y", "y!")] * 2)


def test_cross_forms_every_pair():
    got = run(a().cross(b(), f=lambda l, r: {"v": l["v"], "w": r["w"]}))
    assert len(got) == len(A_ROWS) * len(B_ROWS)
    assert bag(got) == bag([{"v": l["v"], "w": r["w"]} for l in A_ROWS for r in B_ROWS])
    assert len(run(a().cross(b()))) == 24


def test_cogroup_calls_once_per_key_of_either_side():
    def sizes(ls, rs):
        key = ls[0]["k"] if ls else rs[0]["bk"]
        yield {"key": key, "nl": len(ls), "nr": len(rs)}

    got = run(a().cogroup(b(), on=("k", "bk"), f=sizes))
    assert bag(got) == bag(
        [
            {"key": 1, "nl": 2, "nr": 2},
            {"key": 2, "nl": 1, "nr": 0},
            {"key": None, "nl": 2, "nr": 1},  # None groups together, across the two sides
            {"key": 3, "nl": 1, "nr": 0},
            {"key": 4, "nl": 0, "nr": 1},
        ]
    )


def pass_through(rows):
    yield from rows


def right_size(ls, rs):
    yield {"n": len(rs)}


def test_empty_inputs_give_empty_bags_where_the_definitions_say_so():
    assert run(empty().map(lambda r: r)) == []
    assert run(empty().reduce("ek", pass_through)) == []
    assert run(a().match(empty(), on=("k", "ek"))) == []
    assert run(empty().cross(b())) == []
    got = run(empty().cogroup(b(), on=("ek", "bk"), f=right_size))
    assert bag(got) == bag([{"n": 2}, {"n": 1}, {"n": 1}])


def test_custom_operator_uses_its_types_reference():
    union = OperatorType(
        name="Union",
        arity=2,
        reference=lambda bags, params: bags[0] + bags[1],
        output_fields=lambda fields, params: fields[0] | fields[1],
        disjoint_inputs=False,
    )
    other = uf.source("c", rows=[{"k": 9, "v": 9}])
    assert bag(run(a().apply(union, other))) == bag(A_ROWS + [{"k": 9, "v": 9}])


def test_parquet_and_csv_sources_apply_the_prefix(tmp_path):
    path = tmp_path / "t.parquet"
    table = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "price": pa.array([Decimal("1.50"), None], pa.decimal128(15, 2)),
            "day": pa.array([datetime.date(1995, 1, 2), datetime.date(1996, 3, 4)], pa.date32()),
        }
    )
    pq.write_table(table, path)
    got = run(uf.source("t", path=str(path), prefix="x_"))
    assert got == [
        {"x_id": 1, "x_price": Decimal("1.50"), "x_day": datetime.date(1995, 1, 2)},
        {"x_id": 2, "x_price": None, "x_day": datetime.date(1996, 3, 4)},
    ]
    csv_path = tmp_path / "t.csv"
    with open(csv_path, "w", newline="") as fh:
        csv.writer(fh).writerows([["id", "name"], ["1", "ann"], ["2", ""]])
    assert run(uf.source("c", path=str(csv_path))) == [{"id": 1, "name": "ann"}, {"id": 2, "name": None}]  # id inferred bigint


def test_a_reduce_that_returns_is_refused_even_with_a_list_of_dicts():
    with pytest.raises(UdfRuntimeError, match="must yield"):
        run(a().reduce("k", lambda rows: list(rows)))

"""A Python function's values reach Spark unchanged, or the function's error says which did not.

pyarrow converts a value to its column's type even where that changes it (1.5 into an
int64 column is 1, a datetime into a date column loses its time): a Map whose sample of
output held ints and which returned 1.5 later once ran on as 1. `arrow_values.exact_array`
refuses such a value, and both Python paths (the scalar UDF and the batches of records)
report it as the function's error, naming the field.
"""

import datetime
import math
from decimal import Decimal

import pyarrow as pa
import pytest

import udflow as uf
from udflow.errors import UdfRuntimeError
from udflow.spark_backend.arrow_values import exact_array, holds_exactly
from udflow.spark_backend.udf import Encoder, MarkedFailure, Udf

CHANGED = [
    (1.5, pa.int64()), (Decimal("1.5"), pa.int64()), (Decimal("2"), pa.int64()), (True, pa.int64()),
    (datetime.datetime(2020, 1, 1, 5), pa.date32()), (1e300, pa.float32()), (0.1, pa.float32()),
    (True, pa.float64()), (b"x", pa.string()), ("x", pa.binary()), (1, pa.bool_()), (2**53 + 1, pa.float64()),
    (Decimal("1.234"), pa.decimal128(10, 2)), (1.5, pa.decimal128(10, 2)),
]
KEPT = [
    (1, pa.int64()), (1, pa.float64()), (2.5, pa.float64()), (math.inf, pa.float32()), (0.5, pa.float32()),
    (Decimal("1.50"), pa.decimal128(10, 2)), (3, pa.decimal128(10, 2)), (datetime.date(2020, 1, 1), pa.date32()),
    (datetime.datetime(2020, 1, 1, 5), pa.timestamp("us")), ("\u00df", pa.string()), (None, pa.int64()),
]


@pytest.mark.parametrize("value,arrow_type", CHANGED, ids=[f"{v!r}->{t}" for v, t in CHANGED])
def test_a_value_the_column_would_change_is_refused(value, arrow_type):
    assert not holds_exactly(value, arrow_type)
    with pytest.raises((ValueError, TypeError, OverflowError, pa.ArrowException)):
        exact_array([None, value], arrow_type)


@pytest.mark.parametrize("value,arrow_type", KEPT, ids=[f"{v!r}->{t}" for v, t in KEPT])
def test_a_value_the_column_holds_goes_in_unchanged(value, arrow_type):
    assert exact_array([value], arrow_type).to_pylist() == [value]


ROWS = [{"k": i} for i in range(300)]  # past the 200 records a sample of the output reads


def late_float(r):
    return {**r, "x": 1.5 if r["k"] == 250 else 1}  # no model: ints and floats in one field


def late_float_records(r):
    for i in range(2):
        yield {**r, "i": i, "x": 1.5 if r["k"] == 250 and i == 1 else 1}


def late_surrogate(r):
    return {**r, "x": "\ud800" if r["k"] == 250 else "ok"}  # a str Spark cannot hold (not UTF-8)


@pytest.mark.parametrize("fn", [late_float, late_surrogate], ids=lambda f: f.__name__)
def test_a_late_value_of_another_type_raises_naming_the_field(spark, fn):
    """The scalar UDF path: the written field's type is int64 (or string) from the sample."""
    flow = uf.source("t", rows=ROWS).map(fn)
    assert len(flow.collect(engine="reference")) == 300
    with pytest.raises(UdfRuntimeError, match="set field 'x'") as raised:
        flow.collect(spark=spark)
    assert fn.__name__ in str(raised.value)


def test_records_typed_by_a_sample_refuse_a_late_value_of_another_type():
    """The batch path, where records become typed columns (`Encoder` with a schema)."""
    encoder = Encoder(Udf("Map(late_float_records)", "here", late_float_records, "map"),
                      pa.schema([("k", pa.int64()), ("i", pa.int64()), ("x", pa.int64())]))
    assert encoder.table([{"k": 1, "i": 0, "x": 1}]).to_pylist() == [{"k": 1, "i": 0, "x": 1}]
    with pytest.raises(MarkedFailure) as raised:  # on an executor; the driver reports it as the function's
        encoder.table([{"k": 1, "i": 0, "x": 1}, {"k": 250, "i": 1, "x": 1.5}])
    assert "emitted x=1.5 (float), which does not fit the column type int64" in raised.value.message


def test_records_kept_as_python_objects_keep_their_values(spark):
    """Where nothing above needs columns, the batch path keeps Python's own records."""
    flow = uf.source("t", rows=ROWS).map(late_float_records)
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, flow.collect(engine="reference")))

"""The Python that remains, as Spark runs Python best: Arrow scalar UDFs inside Catalyst's plan.

    filter without a model      df.filter(pred(read columns))
    Map without a model that    df.withColumn(out, fn(read/written columns))   struct<emitted, written...>
    copies its record ({**r,     .filter(out.emitted)                          (always: see struct_map)
    ...}) and emits at most      .withColumns({f: out.f for f in written})
    one record
    the general side of a        df.select(*, explode(fn(read/written columns))) array<struct<written...>>
    native Map that copies its     .select(<input columns>, out.f for f in written)
    record (`exploded_map`)

Both are `F.arrow_udf`s marked nondeterministic, so that Spark evaluates them
where udflow put them, on the rows that reach them (never merged into an
earlier filter's condition). The function sees the fields it reads (and writes) as
a dict per row, exactly as the batch path shows them (`pyarrow` `to_pylist`),
and Spark keeps the rest of the row native, places the filter and prunes the
columns around it. The written fields' types come from the analysis where it knows
each one's family (a str, a float, a date), else from a sample of the
function's output on its input's first rows (`schema.output_schema`), or from
`@output_types(...)` (`udflow.spark_backend.output_types`); a value that does not fit its type raises naming the field.
A Map whose written fields cannot be typed from the sample (every value None,
or no input row), that removes a field, or that is impure keeps the batch path.
"""

from __future__ import annotations

from typing import Optional

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import ArrayType, BooleanType, DateType, DoubleType, StringType, StructField, StructType

from udflow.errors import UdflowError
from udflow.fields import properties_of
from udflow.plan import Map, function_location
from udflow.spark_backend.arrow_calls import EMITTED, exploded_on_arrays, map_on_arrays, predicate_on_arrays
from udflow.spark_backend.native import col
from udflow.spark_backend.schema import declared_types, output_schema
from udflow.spark_backend.udf import Encoder, Udf, translated

OUT = "__udflow_out"
SAMPLE_ROWS = 200


def predicate(node: Map, udf: Udf, columns: list[str]) -> Column:
    """A filter as a predicate column over `columns`, pinned (see `_pinned`)."""
    test = _pinned(F.arrow_udf(predicate_on_arrays(udf, columns), BooleanType()))
    return test(*[col(c) for c in columns])


def _pinned(udf_function):
    """Marked nondeterministic, so that Catalyst keeps it where udflow put it: a deterministic
    Python filter is merged with the filters below it into one condition, and Spark then runs
    every Python UDF of that condition on every row before filtering, so a function would see
    (and may raise on) records an earlier filter drops, and a selective filter placed first by
    the optimizer would no longer spare the costly one its rows."""
    return udf_function.asNondeterministic()


def struct_map(node: Map, udf: Udf, df: DataFrame, shown: frozenset, timezone: str,
               on_driver=None) -> Optional[DataFrame]:
    """The Map, whose physical step is `scalar` (it copies its record and emits at most one),
    as a struct-returning scalar UDF over the `shown` columns with the rest of the row native;
    None where its written fields cannot be typed. `on_driver`: what the Map emitted on the
    driver's sample (`udflow.samples`), which types its output without a Spark job."""
    props = properties_of(node)
    columns = [n for n in df.schema.names if n in shown]
    if not columns:  # a UDF of no column is called with no rows (Arrow batches carry none): the batch path
        return None
    analysed = None if declared_types(node.fn) else _analysed_schema(props)  # a declaration comes first
    written = analysed or _written_schema(node, udf, df, columns, props.writes, on_driver)
    if written is None:
        return None
    names = written.names
    arrow_types = [to_arrow_type(f.dataType, timezone=timezone) for f in written.fields]
    returned = StructType([StructField(EMITTED, BooleanType(), False), *written.fields])
    call = _pinned(F.arrow_udf(map_on_arrays(udf, columns, names, arrow_types), returned))
    out = df.withColumn(OUT, call(*[col(c) for c in columns]))
    # Filtered on `emitted` even where the function always emits: a filter reading the UDF's
    # column keeps Catalyst from dropping the call when nothing above reads what it wrote
    # (Python calls the function, and may raise, on every record all the same).
    out = out.filter(F.col(f"{OUT}.{EMITTED}"))
    return out.withColumns({n: F.col(OUT).getField(n) for n in names}).drop(OUT)


def exploded_map(props, udf: Udf, df: DataFrame, written: StructType, encoder: Encoder,
                 columns: list[str]) -> Optional[DataFrame]:
    """`df`'s rows through the Map as Python runs it, with `columns` (the native side's, which
    this side joins by name: `general_case`), for a pure Map that copies its record (`{**r, ...}`,
    any number of times; `props`, its function's properties): a scalar UDF over the fields it reads and writes returns, per
    row, the `written` fields (typed as the native side types them, `encoder` their Arrow
    schema) of every record it emits, and Spark explodes them, so that the fields the function
    only copies never cross to Python and back (documents' text, once per token). None
    where the Map is not such a Map."""
    shown_fields = props.read_projection()
    names = written.names
    if shown_fields is None or not names or not set(names) <= props.writes:
        return None
    shown = [n for n in df.schema.names if n in shown_fields]
    if not shown or not set(names) <= set(columns) <= set(df.columns) | set(names):
        return None
    call = _pinned(F.arrow_udf(exploded_on_arrays(udf, shown, encoder), ArrayType(written, False)))
    # `inline`: each struct's fields as columns, in one projection (the caller unions by name)
    copied = [col(c) for c in df.columns if c in columns and c not in names]
    return df.select(*copied, F.inline(call(*[col(c) for c in shown])))


# The analysis's type families that name one Spark type exactly (an "int" may hold a bool, a
# "decimal" has no precision yet: those are sampled).
ANALYSED_TYPES = {"str": StringType(), "float": DoubleType(), "date": DateType()}


def _analysed_schema(props) -> Optional[StructType]:
    """The written fields' types where the analysis knows each one's family (`" ".join(...)` is
    a str), so no Spark job samples the function's output; None otherwise."""
    found = dict(props.output_types)
    if not props.writes or any(found.get(n) not in ANALYSED_TYPES for n in props.writes):
        return None
    return StructType([StructField(n, ANALYSED_TYPES[found[n]], True) for n in sorted(props.writes)])


def _written_schema(node: Map, udf: Udf, df: DataFrame, columns: list[str], writes,
                    on_driver=None) -> Optional[StructType]:
    """The written fields' types from the function's output on a sample: the driver's
    (`udflow.samples`), else the input's first rows on Spark (one small job)."""
    schema = None
    if on_driver is not None:
        schema = _schema_of_written(node, df, [_only_written(r, writes) for r in on_driver.records], writes,
                                    on_driver.complete)
    if schema is None:
        with translated():  # the function fails on a sampled row: the run fails there too
            rows = df.select(*[col(c) for c in columns]).limit(SAMPLE_ROWS).toArrow().to_pylist()
            sample = [_only_written(r, writes) for row in rows for r in udf.on_row(row, row)]
        schema = _schema_of_written(node, df, sample, writes, False)
    return schema


def _only_written(record: dict, writes) -> dict:
    return {n: record[n] for n in record if n in writes}


def _schema_of_written(node: Map, df: DataFrame, sample: list[dict], writes, complete: bool) -> Optional[StructType]:
    order = {n: None for r in sample for n in r}
    sample = [{n: r.get(n) for n in order} for r in sample]
    schema, _ = output_schema(node.label, function_location(node.fn), sample, complete=complete,
                              input_schema=df.schema, known_fields=frozenset(writes),
                              declared=declared_types(node.fn))
    return schema


def sampled_output_schema(node: Map, udf: Udf, df: DataFrame, on_driver=None) -> Optional[StructType]:
    """The schema of a pure Python Map's records from its output on a sample (the driver's,
    `udflow.samples`, else the input's first rows on Spark), so that the batch path emits
    typed columns at once instead of pickled records that are persisted, sampled and decoded
    in a second pass. None where a field holds no value in the sample (and the input was not
    all sampled), or the function is not known pure (the driver calls it on the sample)."""
    try:
        props = properties_of(node)
    except Exception:  # noqa: BLE001 - no analysis: not known pure
        return None
    if not props.pure or props.origin != "analysis":
        return None
    if on_driver is not None:
        schema = _typed_by(node, df, list(on_driver.records), on_driver.complete, props)
        if schema is not None:
            return schema
    with translated():  # the function fails on a sampled row: the run fails there too
        rows = df.limit(SAMPLE_ROWS).toArrow().to_pylist()
        sample = [r for row in rows for r in udf.on_row(row)]
    return _typed_by(node, df, sample, len(rows) < SAMPLE_ROWS, props)


def _typed_by(node: Map, df: DataFrame, sample: list, complete: bool, props) -> Optional[StructType]:
    try:
        schema, _ = output_schema(node.label, function_location(node.fn), sample, complete=complete,
                                  input_schema=df.schema, known_fields=props.output_fields,
                                  declared=declared_types(node.fn))
    except UdflowError:  # values of several types: the decoding of the whole output says so, or not
        return None
    return schema



"""What a DataFrame source's files prove of its int and Decimal columns: Parquet footers, small CSV files' values.

A `dataframe=` source (`uf.from_spark`'s, or the user's own `spark.read.parquet(...)`)
carries no statistics of its own; Spark's plan does say where a column comes from. A
column of the DataFrame whose attribute is, unchanged, the attribute of a Parquet
relation at a leaf of the analysed plan (Catalyst gives a value a new attribute id
wherever an operator computes it) holds only values of that file column: its row groups'
minima and maxima bound it (`field_types.FieldType.magnitude`), as for a `path=` source.

    spark.read.parquet(p).filter("fare > 0").select("pickup_ts")   pickup_ts: the files' column
    spark.read.parquet(p).withColumn("pickup_ts", col("pickup_ts") * 1000)   computed: nothing

A CSV relation's files, where they hold at most 8 MiB, are read by pyarrow with the read's
options and Spark's types (`_magnitudes`), as a small `path=` CSV source's are.

A DataFrame that is exactly a Parquet read (`parquet_read`: a relation under projections
that keep or rename its columns) is read by pyarrow where udflow needs its first records
or the distinct values of a key: the files' own values, with no Spark job.

What the plan says about its files is read once per DataFrame (`frame_files`). Local files
only (a `file:` or plain path that pyarrow opens); a Spark Connect DataFrame, or any plan
the walk does not read, proves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from pyspark.sql.types import (BooleanType, ByteType, DateType, DecimalType, DoubleType, FloatType, IntegerType,
                               LongType, ShortType, StringType)

from udflow.field_types import (MAGNITUDES, FieldType, distinct_in_files, files_version, footer_rows,
                                 parquet_magnitudes, scanned_version, source_field_types)
from udflow.plan import Source
from udflow.spark_backend.frame_files import FileRelation, frame_files
from udflow.spark_backend.parquet_schema import file_schema

# the types whose values `collect()` gives exactly as Arrow's `to_pylist` does
AS_ARROW_GIVES = (BooleanType, ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, StringType,
                  DateType, DecimalType)


def source_types(source: Source) -> dict[str, FieldType]:
    """`field_types.source_field_types`, with the magnitudes a DataFrame source's Parquet files
    prove (`dataframe_magnitudes`)."""
    types = source_field_types(source)
    if not source.is_dataframe or source.dataframe is None:
        return types
    proven = dataframe_magnitudes(source.dataframe)
    for field, column in zip(source.fields, source.columns):
        t = types.get(field)
        if t is not None and t.family in MAGNITUDES and column in proven:
            types[field] = FieldType(t.family, t.nullable, proven[column])
    return types


def dataframe_magnitudes(df) -> dict[str, int]:
    """Column -> the largest magnitude the Parquet footers, or the values of a small CSV
    file (`_csv_read_magnitudes`), of the files it is read from prove."""
    found = frame_files(df)
    if found is None:
        return {}
    proven = {}  # attribute id -> its magnitude in the files
    for relation in found.relations:
        proven.update(_magnitudes(relation))
    return {name: proven[attribute] for name, attribute in found.output if proven.get(attribute) is not None}


# Spark's CSV options a read may set for its values to be read here as Spark reads them
# (their defaults otherwise); any other option, and the file is not read
CSV_OPTIONS = frozenset({"header", "sep", "delimiter", "quote", "escape", "nullvalue", "path", "paths",
                         "inferschema", "enforceschema"})


def _magnitudes(relation: FileRelation) -> dict:
    """Attribute id -> the largest magnitude the relation's files hold now, where they prove one.

    A Parquet relation's come from its footers' statistics. A CSV relation's files, where
    they hold at most `field_types.CSV_SCANNED` bytes, its options are all in CSV_OPTIONS and
    it has no partition columns, are read by pyarrow with the relation's options and Spark's
    types for its columns (by position, as Spark reads them with its schema), where pyarrow
    reads the values as those types. Like a Parquet column's statistics, a magnitude is the
    data's (`native_spans.DATA`): the guards stay written, so files changed since raise
    rather than give a wrong value."""
    files = relation.local_files()
    if files is None:
        found = {}
    elif relation.file_format == "Parquet":
        found = parquet_magnitudes(files)
    elif relation.file_format == "CSV" and csv_reads_alike(relation):
        version = scanned_version(files)
        found = dict(_csv_read_magnitudes(version, relation.options, relation.data_columns)) if version else {}
    else:
        found = {}
    return {attribute: found.get(column) for attribute, column in relation.attributes}


def csv_reads_alike(relation: FileRelation) -> bool:
    """A CSV read whose options pyarrow reads alike (CSV_OPTIONS), without partition columns."""
    return not set(dict(relation.options)) - CSV_OPTIONS and not relation.partitioned


@lru_cache(maxsize=64)
def _csv_read_magnitudes(version: tuple, options: tuple, columns: tuple) -> tuple:
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    given = dict(options)
    wanted = {name: _arrow_number(spark_type) for name, spark_type in columns}
    wanted = {name: t for name, t in wanted.items() if t is not None}
    if not wanted:
        return ()
    read = csv.ReadOptions(column_names=[name for name, _ in columns],
                           skip_rows=1 if given.get("header", "false").lower() == "true" else 0)
    parse = csv.ParseOptions(delimiter=given.get("sep", given.get("delimiter", ",")),
                             quote_char=given.get("quote", '"'), escape_char=given.get("escape", "\\"))
    convert = csv.ConvertOptions(column_types=wanted, include_columns=list(wanted),
                                 null_values=[given.get("nullvalue", "")], strings_can_be_null=True)
    try:
        tables = [csv.read_csv(path, read_options=read, parse_options=parse, convert_options=convert)
                  for path, _, _ in version]
    except (pa.ArrowInvalid, OSError, ValueError):  # a value Spark reads otherwise (or as null): not proven
        return ()
    out = []
    for name in wanted:  # |min| and |max| in Python: Arrow's abs of -2**63 wraps
        extremes = [v for t in tables if t.num_rows for v in pc.min_max(t.column(name)).values()]
        if extremes and all(v.is_valid for v in extremes):
            out.append((name, max(abs(v.as_py()) for v in extremes)))
    return tuple(out)


def _arrow_number(spark_type: str):
    """The Arrow type a CSV column of this Spark type is read as here, or None (not an int or Decimal)."""
    import pyarrow as pa

    ints = {"tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64()}
    if spark_type in ints:
        return ints[spark_type]
    if spark_type.startswith("decimal("):
        precision, scale = (int(x) for x in spark_type[len("decimal("):-1].split(","))
        return pa.decimal128(precision, scale)
    return None


@dataclass(frozen=True)
class ParquetRead:
    """A DataFrame that is exactly the rows of local Parquet files: a relation over them,
    under projections that keep or rename its columns (no filter, no computed column, no
    partition column), so its records are the files' records, in the files' values."""

    files: tuple  # local paths, in Spark's listing order
    columns: tuple  # (DataFrame column, file column), in the DataFrame's order

    def head(self, n: int, schema) -> Optional[tuple]:
        """The first `n` records, read by pyarrow from the footers' first row groups; None
        unless every column's Spark type is one whose values `collect()` gives exactly as
        Arrow's `to_pylist` does (AS_ARROW_GIVES) and is the type Spark maps the file's
        column to (`parquet_schema`)."""
        if not _same_plain_types(self, schema):
            return None
        try:
            return self._first(n)
        except (OSError, ValueError):  # not readable here after all (pyarrow's errors are ValueErrors)
            return None

    def _first(self, n: int) -> tuple:
        import pyarrow.parquet as pq

        wanted = [column for _, column in self.columns]
        as_named = [name for name, _ in self.columns] == wanted  # Arrow's records may be the DataFrame's
        rows: list = []
        for path in self.files:
            # read as a stream: the first pages only, not the first row group's whole column chunks
            # (taxi's 2,048 first trips: 3.7 ms, against 9 ms with the reader's defaults)
            opened = pq.ParquetFile(path, buffer_size=1 << 16, pre_buffer=False)
            for batch in opened.iter_batches(batch_size=max(1, min(n - len(rows), 65536)), columns=wanted):
                as_named = as_named and batch.schema.names == wanted
                rows.extend(batch.to_pylist()[: n - len(rows)])
                if len(rows) >= n:
                    break
            if len(rows) >= n:
                break
        if as_named:  # each record already has the DataFrame's columns, in its order
            return tuple(rows)
        return tuple({name: r[column] for name, column in self.columns} for r in rows)

    def rows(self) -> Optional[int]:
        """The records in the files, from their footers (kept per version of the files)."""
        return footer_rows(self.files)

    def distinct(self, name: str) -> Optional[int]:
        """The distinct non-None values of the DataFrame's column `name`, counted in the files."""
        column = dict(self.columns).get(name)
        if column is None:
            return None
        versions = files_version(self.files)
        if versions is None:
            return None
        try:
            return distinct_in_files(self.files, "parquet", column, versions)
        except (OSError, ValueError, NotImplementedError):  # pyarrow's errors: not countable here
            return None  # the caller estimates


def parquet_read(df) -> Optional[ParquetRead]:
    """`ParquetRead` of `df`, or None where its plan is anything else (or a Connect plan)."""
    found = frame_files(df)
    relation = found.plain_relation if found is not None else None
    if relation is None or relation.file_format != "Parquet" or relation.partitioned:
        return None
    files = relation.local_files()
    return ParquetRead(files, found.plain) if files else None


def _same_plain_types(read: ParquetRead, schema) -> bool:
    wanted = {f.name: f.dataType for f in schema.fields}
    if any(not isinstance(t, AS_ARROW_GIVES) for t in wanted.values()):
        return False
    try:
        in_files = [dict(file_schema(p) or ()) for p in read.files]
    except Exception:  # noqa: BLE001 - an unreadable footer: Spark reads it, in its own words
        return False
    return all(in_file.get(column) == wanted[name] for in_file in in_files for name, column in read.columns)

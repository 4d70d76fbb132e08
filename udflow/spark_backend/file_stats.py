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
options and Spark's types (`_csv_leaf`), as a small `path=` CSV source's are.

A DataFrame that is exactly a Parquet read (`parquet_read`: a relation under projections
that keep or rename its columns) is read by pyarrow where udflow needs its first records
or the distinct values of a key: the files' own values, with no Spark job.

Local files only (a `file:` or plain path that pyarrow opens); a Spark Connect DataFrame,
or any plan the walk does not read, proves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from pyspark.sql.types import (BooleanType, ByteType, DateType, DecimalType, DoubleType, FloatType, IntegerType,
                               LongType, ShortType, StringType)

from udflow.field_types import (MAGNITUDES, FieldType, distinct_in_files, files_version, parquet_magnitudes,
                                 scanned_version, source_field_types)
from udflow.plan import Source
from udflow.spark_backend import connect
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
    file (`csv_read_magnitudes`), of the files it is read from prove."""
    walked = None if connect.is_connect(df) else _files_under(df)
    if walked is None:
        return {}
    output, leaves = walked
    proven = {}  # attribute id -> its magnitude in the files
    for leaf in leaves:
        proven.update(leaf.magnitudes())
    return {name: proven[attribute] for name, attribute in output if proven.get(attribute) is not None}


# Spark's CSV options a read may set for its values to be read here as Spark reads them
# (their defaults otherwise); any other option, and the file is not read
CSV_OPTIONS = frozenset({"header", "sep", "delimiter", "quote", "escape", "nullvalue", "path", "paths",
                         "inferschema", "enforceschema"})


@dataclass(frozen=True)
class LeafFiles:
    """The local files a leaf of a DataFrame's plan reads, as the walk found them: a Parquet
    relation's, or a CSV relation's with its options and Spark's types for its columns."""

    file_format: str  # "Parquet" | "CSV"
    files: tuple
    attributes: tuple  # ((attribute id, file column), ...): the leaf's output
    options: tuple = ()  # a CSV read's options, sorted
    columns: tuple = ()  # a CSV read's ((column, Spark type), ...), by position

    def magnitudes(self) -> dict:
        """Attribute id -> the largest magnitude the files hold now, where they prove one."""
        if self.file_format == "Parquet":
            found = parquet_magnitudes(self.files)
        else:
            version = scanned_version(self.files)
            found = dict(_csv_read_magnitudes(version, self.options, self.columns)) if version else {}
        return {attribute: found.get(column) for attribute, column in self.attributes}


@lru_cache(maxsize=32)
def _files_under(df) -> Optional[tuple]:
    """(((column, attribute id), ...) of `df`'s output, (LeafFiles, ...) of the leaves of its plan
    that read local files), or None where the walk does not read the plan. The plan is
    immutable, so the walk (dozens of round trips to the JVM) is kept per DataFrame object;
    what the files hold is read again on each asking (`LeafFiles.magnitudes`)."""
    try:
        plan = df._jdf.queryExecution().analyzed()
        output = tuple((str(a.name()), int(a.exprId().id())) for a in _seq(plan.output()))
        leaves = tuple(found for leaf in _seq(plan.collectLeaves()) for found in (_leaf_files(leaf),) if found)
    except Exception:  # noqa: BLE001 - a plan this walk does not read proves nothing
        return None
    return output, leaves


def _leaf_files(leaf) -> Optional[LeafFiles]:
    files = _parquet_files(leaf)
    if files:
        return LeafFiles("Parquet", files, _attributes(leaf))
    return _csv_leaf(leaf)


def _attributes(leaf) -> tuple:
    return tuple((int(a.exprId().id()), str(a.name())) for a in _seq(leaf.output()))


def _csv_leaf(leaf) -> Optional[LeafFiles]:
    """A CSV relation over local files whose options are all in CSV_OPTIONS and without
    partition columns; None for any other leaf. Its magnitudes (`_csv_read_magnitudes`) are
    those of its files when they hold at most `field_types.CSV_SCANNED` bytes, read by pyarrow
    with the relation's options and Spark's types for its columns (by position, as Spark
    reads them with its schema), where pyarrow reads the values as those types. Like a Parquet
    column's statistics, a magnitude is the data's (`native_spans.DATA`): the guards stay
    written, so files changed since raise rather than give a wrong value."""
    files = local_files(leaf, "CSV")
    if not files:
        return None
    relation = leaf.relation()
    options = {str(k).lower(): str(v) for k, v in scala_map(relation.options()).items()}
    if set(options) - CSV_OPTIONS or not relation.partitionSchema().isEmpty():
        return None
    columns = tuple((f.name(), f.dataType().simpleString()) for f in relation.dataSchema().fields())
    return LeafFiles("CSV", files, _attributes(leaf), tuple(sorted(options.items())), columns)


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


def scala_map(jmap) -> dict:
    out, entries = {}, jmap.iterator()
    while entries.hasNext():
        entry = entries.next()
        out[entry._1()] = entry._2()
    return out


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
        version = files_version(self.files)
        try:
            return _footer_rows(version) if version is not None else None
        except (OSError, ValueError):  # not readable here after all: Catalyst estimates
            return None

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


@lru_cache(maxsize=256)
def _footer_rows(version: tuple) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(path).metadata.num_rows for path, _, _ in version)


@lru_cache(maxsize=32)
def parquet_read(df) -> Optional[ParquetRead]:
    """`ParquetRead` of `df`, or None where its plan is anything else (or a Connect plan);
    kept per DataFrame object, as `frames._head` is (statistics, sampling and the lowering
    each ask)."""
    found = plain_relation(df)
    if found is None:
        return None
    leaf, columns = found
    try:
        files = _parquet_files(leaf)
        if not files or not leaf.relation().partitionSchema().isEmpty():
            return None
    except Exception:  # noqa: BLE001 - a plan this walk does not read is read by Spark
        return None
    return ParquetRead(files, columns)


def plain_relation(df) -> Optional[tuple]:
    """(the relation at the leaf, ((DataFrame column, relation column), ...)) where `df` is
    exactly a relation's rows under projections that keep or rename its columns; None for
    any other plan (a filter, a computed column) or a Connect plan."""
    if connect.is_connect(df):
        return None
    try:
        plan = df._jdf.queryExecution().analyzed()
        output = [(a.name(), a.exprId().id()) for a in _seq(plan.output())]
        renamed = {}  # attribute id -> the id of the attribute it renames
        while plan.getClass().getSimpleName() == "Project":
            for e in _seq(plan.projectList()):
                kind = e.getClass().getSimpleName()
                if kind == "Alias" and e.child().getClass().getSimpleName() == "AttributeReference":
                    renamed[e.exprId().id()] = e.child().exprId().id()
                elif kind != "AttributeReference":
                    return None  # a computed column
            plan = plan.child()
        in_relation = {a.exprId().id(): a.name() for a in _seq(plan.output())}
    except Exception:  # noqa: BLE001 - a plan this walk does not read is read by Spark
        return None
    columns = tuple((name, in_relation.get(_followed(renamed, attribute))) for name, attribute in output)
    return (plan, columns) if all(c is not None for _, c in columns) else None


def _followed(renamed: dict, attribute: int) -> int:
    while attribute in renamed:
        attribute = renamed[attribute]
    return attribute


def _same_plain_types(read: ParquetRead, schema) -> bool:
    wanted = {f.name: f.dataType for f in schema.fields}
    if any(not isinstance(t, AS_ARROW_GIVES) for t in wanted.values()):
        return False
    try:
        in_files = [dict(file_schema(p) or ()) for p in read.files]
    except Exception:  # noqa: BLE001 - an unreadable footer: Spark reads it, in its own words
        return False
    return all(in_file.get(column) == wanted[name] for in_file in in_files for name, column in read.columns)


def _seq(scala_seq) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _parquet_files(leaf) -> Optional[tuple]:
    return local_files(leaf, "Parquet")


def local_files(leaf, file_format: str) -> Optional[tuple]:
    """The local files a relation of `file_format` ("Parquet", "CSV") reads, or None."""
    if leaf.getClass().getSimpleName() != "LogicalRelation":
        return None
    relation = leaf.relation()
    if relation.getClass().getSimpleName() != "HadoopFsRelation" or str(relation.fileFormat()) != file_format:
        return None
    paths = tuple(relation.location().inputFiles())
    local = tuple(p[len("file:"):] if p.startswith("file:") else p for p in paths)
    return local if local and all(p.startswith("/") for p in local) else None

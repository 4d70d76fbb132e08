"""A DataFrame that is exactly a small local CSV file's rows, read on the driver by pyarrow as Spark reads it.

    spark.read.option("header", "true").schema("zone_id bigint, borough string, ...").csv(p)

The optimizer asks a DataFrame source for its first records (statistics, sampling,
typing the user's helpers: `frames.head`); for such a read Spark would run a job. Where
the relation's files are local and small (`field_types.scanned_version`), its options
are among those pyarrow reads alike (`file_stats.CSV_OPTIONS`) and its columns are
strings and ints, pyarrow reads the files with Spark's types, by position, with Spark's
nulls (an empty field is None). Where the parsers may part ways, Spark reads the file,
as before: a file holding the escape character or two quote characters in a row
(Spark's reader keeps a doubled quote inside a quoted value as written, pyarrow's
reads one quote; a quoted empty value is Spark's null), or one pyarrow refuses (a malformed row Spark would read as nulls, an
int out of range).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from udflow.field_types import scanned_version
from udflow.spark_backend.file_stats import csv_reads_alike
from udflow.spark_backend.frame_files import frame_files

# Spark's simpleString of a column type -> pyarrow's name for it: the types whose text both read alike
READ_ALIKE = {"string": "string", "tinyint": "int8", "smallint": "int16", "int": "int32", "bigint": "int64"}


@dataclass(frozen=True)
class CsvRead:
    """The relation's files (`version`: path, size, mtime each), its options, its data
    columns with their Spark types, and the DataFrame's columns as (name, file column)."""

    version: tuple
    options: tuple
    data_columns: tuple  # ((file column, Spark type), ...) in the files' order
    columns: tuple  # ((DataFrame column, file column), ...)

    def rows(self) -> Optional[int]:
        """The records in the files (None where pyarrow would not read them as Spark does)."""
        rows = _read(self.version, self.options, self.data_columns)
        return len(rows) if rows is not None else None

    def head(self, n: int) -> Optional[tuple]:
        rows = _read(self.version, self.options, self.data_columns)
        if rows is None:
            return None
        return tuple({name: r[column] for name, column in self.columns} for r in rows[:n])


def csv_read(df) -> Optional[CsvRead]:
    """`CsvRead` of `df`, or None where it is anything else."""
    found = frame_files(df)
    relation = found.plain_relation if found is not None else None
    if relation is None or relation.file_format != "CSV" or not csv_reads_alike(relation):
        return None
    files = relation.local_files()
    version = scanned_version(files) if files else None
    if version is None or any(t not in READ_ALIKE for _, t in relation.data_columns):
        return None
    return CsvRead(version, relation.options, relation.data_columns, found.plain)


@lru_cache(maxsize=32)
def _read(version: tuple, options: tuple, data_columns: tuple) -> Optional[tuple]:
    """Every row of the files, in order, as dicts of the file columns; None where pyarrow
    refuses one of them."""
    import pyarrow as pa
    from pyarrow import csv

    given = dict(options)
    names = [name for name, _ in data_columns]
    read = csv.ReadOptions(column_names=names, skip_rows=1 if given.get("header", "false").lower() == "true" else 0)
    parse = csv.ParseOptions(delimiter=given.get("sep", given.get("delimiter", ",")),
                             quote_char=given.get("quote", '"'), escape_char=given.get("escape", "\\"))
    convert = csv.ConvertOptions(column_types={name: READ_ALIKE[t] for name, t in data_columns},
                                 null_values=[given.get("nullvalue", "")], strings_can_be_null=True)
    unlike = (given.get("escape", "\\").encode(), (2 * given.get("quote", '"')).encode())
    rows: list = []
    try:
        for path, _, _ in version:
            with open(path, "rb") as f:
                data = f.read()
            if any(text in data for text in unlike):
                return None
            table = csv.read_csv(pa.py_buffer(data), read_options=read, parse_options=parse, convert_options=convert)
            rows += table.to_pylist()
    except (pa.ArrowInvalid, OSError, ValueError):  # a file Spark reads otherwise (malformed rows as nulls)
        return None
    return tuple(rows)

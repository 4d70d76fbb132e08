"""The schema Spark infers for a local parquet dataset, read from its footers without Spark.

`spark.read.parquet(path)` infers the schema before it returns: it reads a footer on the
driver, which costs 100-200 ms per source on a laptop, every time a plan is lowered (TPC-H
Q7 reads six sources). Given the same schema up front (`spark.read.schema(s).parquet(path)`)
Spark skips that step and reads the files exactly as before. udflow reads the footers itself
(pyarrow, a few ms) and maps each column the way Spark's `ParquetToSparkSchemaConverter`
does, for the plain types below; anything else means "let Spark infer" (None):

    parquet physical, logical type       Spark type
    BOOLEAN                              boolean
    INT32; INT(8|16|32, signed)          int; tinyint | smallint | int
    INT64; INT(64, signed)               bigint
    INT32 DATE                           date
    FLOAT, DOUBLE                        float, double
    BYTE_ARRAY STRING                    string
    DECIMAL(p, s), p <= 38               decimal(p, s)

Every field is nullable, as Spark reads files (a REQUIRED column included). The mapping
is used only where Spark's choice of footer cannot matter: a plain file, or a folder of
at most `MAX_FILES` plain files (no sub-folders, which Spark reads as partition columns,
no `_metadata` summary, which it prefers) with identical columns; a local path without a
glob. Timestamps (their time zone semantics follow session settings), unsigned ints,
binary (`binaryAsString`), INT96 and nested columns are left to Spark.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from pyspark.sql.types import (BooleanType, ByteType, DataType, DateType, DecimalType, DoubleType, FloatType,
                               IntegerType, LongType, ShortType, StringType, StructField, StructType)

MAX_FILES = 64
GLOB_CHARACTERS = frozenset("*?[{")
PLAIN = {
    ("BOOLEAN", "None"): BooleanType(),
    ("INT32", "None"): IntegerType(),
    ("INT64", "None"): LongType(),
    ("INT32", "Date"): DateType(),
    ("FLOAT", "None"): FloatType(),
    ("DOUBLE", "None"): DoubleType(),
    ("BYTE_ARRAY", "String"): StringType(),
}
SIGNED_INTS = {("INT32", 8): ByteType(), ("INT32", 16): ShortType(), ("INT32", 32): IntegerType(),
               ("INT64", 64): LongType()}
MAX_DECIMAL_PRECISION = {"INT32": 9, "INT64": 18, "FIXED_LEN_BYTE_ARRAY": 38, "BYTE_ARRAY": 38}


def inferred_schema(path: str) -> Optional[StructType]:
    """The schema `spark.read.parquet(path)` would infer, or None where it is not certain."""
    files = _data_files(path)
    if not files:
        return None
    try:
        schemas = {file_schema(f) for f in files}
    except Exception:  # noqa: BLE001 - an unreadable footer: Spark reports it in its own words
        return None
    if len(schemas) != 1:
        return None
    (fields,) = schemas
    if fields is None or len({name.lower() for name, _ in fields}) != len(fields):
        return None
    return StructType([StructField(name, spark_type, True) for name, spark_type in fields])


def _data_files(path: str) -> list[str]:
    """The files Spark reads for `path`, when certain; [] otherwise."""
    if "://" in path or GLOB_CHARACTERS & set(path) or _hidden(os.path.basename(path.rstrip(os.sep))):
        return []
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    entries = sorted(os.scandir(path), key=lambda e: e.name)
    if any(e.is_dir() or e.name in ("_metadata", "_common_metadata") for e in entries):
        return []
    files = [e.path for e in entries if not _hidden(e.name)]
    return files if len(files) <= MAX_FILES else []


def _hidden(name: str) -> bool:
    """A name Spark's file listing skips (`InMemoryFileIndex.shouldFilterOutPathName`)."""
    return name.startswith(("_", ".")) or name.endswith("._COPYING_")


def file_schema(path: str) -> Optional[tuple]:
    """((name, Spark type), ...) of one file's columns, None if one is outside the mapping."""
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(path).schema
    if len(schema.to_arrow_schema()) != len(schema):  # a nested column spans several leaves
        return None
    fields = []
    for i in range(len(schema)):
        column = schema.column(i)
        spark_type = _spark_type(column) if column.max_repetition_level == 0 and column.path == column.name else None
        if spark_type is None:
            return None
        fields.append((column.name, spark_type))
    return tuple(fields)


def _spark_type(column) -> Optional[DataType]:
    logical = json.loads(column.logical_type.to_json())
    kind, physical = logical["Type"], column.physical_type
    if kind == "None" and column.converted_type != "NONE":  # a legacy annotation only
        return None
    if kind == "Int":
        return SIGNED_INTS.get((physical, logical["bitWidth"])) if logical["isSigned"] else None
    if kind == "Decimal":
        precision, scale = logical["precision"], logical["scale"]
        fits = precision <= MAX_DECIMAL_PRECISION.get(physical, 0) and 0 <= scale <= precision
        return DecimalType(precision, scale) if fits else None
    return PLAIN.get((physical, kind))

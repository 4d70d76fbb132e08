"""What a file source holds: its format, its columns, and their types.

A source path is read the same way by both engines, so everything that decides
how a value is read is settled here, once, when the source is built:

    format    from the file extension (`.parquet`, `.csv`, `.csv.gz`), or `format=`;
              JSON is refused with the way to read it (`dataframe=spark.read.json(...)`)
    columns   the parquet schema, or the CSV header line
    types     CSV only: declared (`schema={"rating": "double"}` or a Spark DDL string
              "rating DOUBLE, user_id BIGINT"), else inferred from the first
              INFER_ROWS records, as Spark's `inferSchema` does from a sample

Inferred CSV types, narrowest first (every non-empty sampled value must match):

    bigint    [+-]?digits, within 64 bits
    double    a decimal number with optional exponent, or NaN / Inf / -Inf / Infinity / -Infinity
    boolean   true / false (any case)
    date      YYYY-MM-DD
    string    anything else; also a column that is empty in the whole sample

The reference interpreter parses values with `parse_value`; the Spark backend
hands the same types to Spark's CSV reader in FAILFAST mode. A value the type
does not admit is an error on both engines, never a silent None.
"""

from __future__ import annotations

import csv
import datetime
import decimal
import math
import os
import re
import struct
from typing import Any, Iterator, Mapping, Optional, Union

from udflow.errors import FlowConstructionError, UdflowError

INFER_ROWS = 10_000
FORMATS = ("parquet", "csv")
_EXTENSIONS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv",
               ".json": "json", ".jsonl": "json", ".ndjson": "json", ".json.gz": "json"}

_INT = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SPECIAL_FLOATS = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf, "Infinity": math.inf,
                   "+Infinity": math.inf, "-Infinity": -math.inf}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")

# Spark's names for the types a CSV column may be declared as, by their aliases.
_TYPE_NAMES = {
    "string": "string", "varchar": "string", "text": "string",
    "bigint": "bigint", "long": "bigint", "int": "int", "integer": "int",
    "smallint": "smallint", "short": "smallint", "tinyint": "tinyint", "byte": "tinyint",
    "double": "double", "float": "float", "real": "float",
    "boolean": "boolean", "bool": "boolean", "date": "date",
}
_INT_BITS = {"bigint": 64, "int": 32, "smallint": 16, "tinyint": 8}


class SourceError(FlowConstructionError):
    """A source's path, format, schema or contents cannot be read as asked."""


class SourceValueError(UdflowError):
    """A value in a source file does not parse as its column's type (found while reading)."""


# ---------------------------------------------------------------------------
# Files and formats
# ---------------------------------------------------------------------------


def _extension_format(path: str) -> Optional[str]:
    lower = path.lower()
    for ext in sorted(_EXTENSIONS, key=len, reverse=True):
        if lower.endswith(ext):
            return _EXTENSIONS[ext]
    return None


def data_files(path: str) -> list[str]:
    """The files a source path names: itself, or a folder's files (not `_SUCCESS`, not hidden)."""
    if not os.path.isdir(path):
        return [path]
    return sorted(
        os.path.join(path, f) for f in os.listdir(path)
        if not f.startswith(("_", ".")) and os.path.isfile(os.path.join(path, f))
    )


MAX_LISTED = 10_000  # a larger tree is not listed: listing it would cost what reading it does


def listing(path: str) -> Optional[tuple]:
    """Every entry under `path` as it is now (name, size, modification time, inode), the
    version of the data a cached read or statistic of it is keyed by; None for a tree over
    MAX_LISTED entries, or one that cannot be listed."""
    entries = []
    try:
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files) + dirs:
                stat = os.stat(os.path.join(root, name))
                entries.append((os.path.relpath(os.path.join(root, name), path), stat.st_size,
                                stat.st_mtime_ns, stat.st_ino))
            if len(entries) > MAX_LISTED:
                return None
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino, tuple(entries))


def format_of(name: str, path: str, declared: Optional[str]) -> str:
    """The format of a source path, from `format=` or the files' extensions; refuses what
    neither engine reads, and a folder whose files disagree."""
    files = data_files(path)
    if not files:
        raise SourceError(f"source {name!r}: the folder {path!r} holds no data files")
    if declared is not None:
        fmt = declared.lower()
    else:
        found = {f: _extension_format(f) for f in files}
        kinds = sorted({str(k) for k in found.values()})
        if len(kinds) > 1:
            listing = ", ".join(f"{os.path.basename(f)} ({k or 'unknown'})" for f, k in list(found.items())[:6])
            raise SourceError(
                f"source {name!r}: the folder {path!r} mixes files of different formats: {listing}; "
                "a source reads one format: move the other files out, or point path= at one file"
            )
        fmt = next(iter(found.values()))
        if fmt is None:
            raise SourceError(
                f"source {name!r}: cannot tell the format of {files[0]!r} from its extension; "
                "name it .parquet or .csv, or pass format='parquet' or format='csv'"
            )
    if fmt == "json":
        raise SourceError(
            f"source {name!r}: JSON sources are not read by udflow itself; read them with Spark "
            f"and pass the DataFrame: source({name!r}, dataframe=spark.read.json({path!r}))"
        )
    if fmt not in FORMATS:
        raise SourceError(f"source {name!r}: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt


def parquet_columns(name: str, path: str) -> tuple[str, ...]:
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        return tuple(ds.dataset(path, format="parquet").schema.names)
    except (pa.ArrowInvalid, OSError) as exc:
        raise SourceError(f"source {name!r}: {path!r} is not a parquet file or folder ({exc})") from None


def csv_header(name: str, file: str) -> tuple[str, ...]:
    """The columns of a CSV file's header line; refuses an empty file and a binary one."""
    try:
        with _open_text(file) as fh:
            header = next(csv.reader(fh), None)
    except UnicodeDecodeError:
        raise SourceError(
            f"source {name!r}: {file!r} is not a CSV text file (it is not UTF-8); "
            "if it is parquet, name it .parquet or pass format='parquet'"
        ) from None
    if not header:
        raise SourceError(f"source {name!r}: the CSV file {file!r} is empty; it needs a header line")
    return tuple(header)


def _open_text(file: str):
    if file.lower().endswith(".gz"):
        import gzip

        return gzip.open(file, "rt", newline="", encoding="utf-8")
    return open(file, newline="", encoding="utf-8")


def csv_records(name: str, path: str, columns: tuple[str, ...], limit: Optional[int] = None) -> Iterator[tuple[str, int, list]]:
    """(file, line, values) of every record of a CSV source, the header lines skipped.
    A record with another number of fields than the header is an error (Spark's FAILFAST)."""
    seen = 0
    for file in data_files(path):
        with _open_text(file) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is not None and tuple(header) != columns:
                raise SourceValueError(
                    f"source {name!r}: {file!r} has the header {tuple(header)}, "
                    f"the source's first file {columns}; every file of a source has the same columns"
                )
            for values in reader:
                if limit is not None and seen >= limit:
                    return
                if values == []:
                    continue  # a blank line, as Spark skips it
                if len(values) != len(columns):
                    raise SourceValueError(
                        f"source {name!r}: {file}:{reader.line_num} has {len(values)} field(s), "
                        f"the header {len(columns)}"
                    )
                seen += 1
                yield file, reader.line_num, values


# ---------------------------------------------------------------------------
# Types: declared, inferred, and how a text value becomes a Python value
# ---------------------------------------------------------------------------


def normalize_type(name: str, column: str, text: str) -> str:
    """Spark's name for a declared type, or an error naming the column."""
    t = text.strip().lower()
    found = _DECIMAL.fullmatch(t)
    if found:
        precision, scale = int(found.group(1)), int(found.group(2))
        if not 0 < precision <= 38 or scale > precision:
            raise SourceError(f"source {name!r}: column {column!r}: {text!r} is not a valid decimal(p, s)")
        return f"decimal({precision},{scale})"
    if t not in _TYPE_NAMES:
        known = ", ".join(sorted(set(_TYPE_NAMES.values()))) + ", decimal(p,s)"
        raise SourceError(
            f"source {name!r}: column {column!r} is declared {text!r}; a CSV column can be {known} "
            "(read a timestamp as string and parse it in a map)"
        )
    return _TYPE_NAMES[t]


def parse_ddl(name: str, ddl: str) -> dict[str, str]:
    """"a BIGINT, b DECIMAL(10, 2), `c d` STRING" -> {"a": "bigint", "b": "decimal(10,2)", "c d": "string"}."""
    out: dict[str, str] = {}
    for part in _split_top_level(ddl):
        found = re.fullmatch(r"\s*(`(?:[^`]|``)+`|[^\s:]+)\s*:?\s*(.+?)\s*", part)
        if not found:
            raise SourceError(f"source {name!r}: cannot read {part.strip()!r} of the schema as 'name type'")
        column = found.group(1)
        if column.startswith("`"):
            column = column[1:-1].replace("``", "`")
        out[column] = normalize_type(name, column, found.group(2))
    return out


def _split_top_level(ddl: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in ddl:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p for p in parts + [current] if p.strip()]


def declared_types(name: str, schema: Union[None, str, Mapping[str, str]], columns: tuple[str, ...]) -> dict[str, str]:
    """The declared types by column; every declared column must exist."""
    if schema is None:
        return {}
    if isinstance(schema, str):
        types = parse_ddl(name, schema)
    elif isinstance(schema, Mapping):
        types = {c: normalize_type(name, c, t) for c, t in schema.items()}
    else:
        raise SourceError(f"source {name!r}: schema= must be a dict of column types or a Spark DDL string")
    unknown = [c for c in types if c not in columns]
    if unknown:
        raise SourceError(f"source {name!r}: schema= names {unknown[0]!r}, which is not a column ({', '.join(columns)})")
    return types


def infer_type(values: list[str]) -> str:
    """The narrowest type admitting every sampled non-empty value (module docstring)."""
    present = [v for v in values if v != ""]
    if not present:
        return "string"
    for dtype in ("bigint", "double", "boolean", "date"):
        try:
            for v in present:
                parse_text(v, dtype)
            return dtype
        except ValueError:
            continue
    return "string"


def csv_types(name: str, path: str, columns: tuple[str, ...], schema: Union[None, str, Mapping[str, str]]) -> tuple[tuple[str, str], ...]:
    """(column, type) for every column of a CSV source: declared, else inferred from a sample."""
    declared = declared_types(name, schema, columns)
    undeclared = [i for i, c in enumerate(columns) if c not in declared]
    samples: list[list[str]] = [[] for _ in columns]
    if undeclared:
        records = 0
        for _, _, values in csv_records(name, path, columns, limit=INFER_ROWS):
            records += 1
            for i in undeclared:
                samples[i].append(values[i])
        if not records:
            raise SourceError(
                f"source {name!r}: {path!r} has a header but no records, so the types of its columns "
                f"cannot be inferred; declare them, e.g. schema={{{columns[0]!r}: 'string', ...}}"
            )
    return tuple((c, declared.get(c) or infer_type(samples[i])) for i, c in enumerate(columns))


def parse_text(text: str, dtype: str) -> Any:
    """A CSV field as a value of `dtype`; raises ValueError when the type does not admit it."""
    if dtype == "string":
        return text
    if dtype in _INT_BITS:
        if not _INT.fullmatch(text):
            raise ValueError(text)
        value, bits = int(text), _INT_BITS[dtype]
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise ValueError(text)
        return value
    if dtype in ("double", "float"):
        if text in _SPECIAL_FLOATS:
            value = _SPECIAL_FLOATS[text]
        elif _NUMBER.fullmatch(text):
            value = float(text)
        else:
            raise ValueError(text)
        return struct.unpack("f", struct.pack("f", value))[0] if dtype == "float" else value
    if dtype == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    if dtype == "date":
        if not _DATE.fullmatch(text):
            raise ValueError(text)
        return datetime.date.fromisoformat(text)
    found = _DECIMAL.fullmatch(dtype)
    if found:
        return _parse_decimal(text, int(found.group(1)), int(found.group(2)))
    raise ValueError(f"unknown type {dtype}")


def _parse_decimal(text: str, precision: int, scale: int) -> decimal.Decimal:
    if not _NUMBER.fullmatch(text):
        raise ValueError(text)
    value = decimal.Decimal(text).quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    if len(value.as_tuple().digits) - scale > precision - scale and value != 0:
        raise ValueError(text)
    return value


def csv_rows(name: str, path: str, types: tuple[tuple[str, str], ...], limit: Optional[int] = None) -> list[dict]:
    """A CSV source's records with typed values (an empty field is None, as in Spark)."""
    columns = tuple(c for c, _ in types)
    out = []
    for file, line, values in csv_records(name, path, columns, limit):
        record = {}
        for (column, dtype), text in zip(types, values):
            if text == "":
                record[column] = None
                continue
            try:
                record[column] = parse_text(text, dtype)
            except ValueError:
                raise SourceValueError(_not_a(name, file, line, column, text, dtype)) from None
        out.append(record)
    return out


def first_bad_value(name: str, path: str, types: tuple[tuple[str, str], ...]) -> Optional[str]:
    """The message `csv_rows` raises for the source's first value its column's type does not
    admit, or None: what Spark's FAILFAST read, which names neither, is reported as."""
    columns = tuple(c for c, _ in types)
    for file, line, values in csv_records(name, path, columns):
        for (column, dtype), text in zip(types, values):
            if text != "":
                try:
                    parse_text(text, dtype)
                except ValueError:
                    return _not_a(name, file, line, column, text, dtype)
    return None


def _not_a(name: str, file: str, line: int, column: str, text: str, dtype: str) -> str:
    return (f"source {name!r}: {file}:{line}: column {column!r} holds {text!r}, which is not a "
            f"{dtype}; declare the column's type, e.g. schema={{{column!r}: 'string'}}")


def ddl(types: tuple[tuple[str, str], ...]) -> str:
    """The types as a Spark DDL schema string."""
    return ", ".join(f"`{c.replace('`', '``')}` {t}" for c, t in types)


"""What Python values a source's fields hold: a type family and whether None may occur.

The rules use it to prove that an operation of a function cannot raise where a
reordering would put it (`udflow.rules.guards`, `RaiseSite`): `r["price"] * 2`
cannot raise on a parquet column of non-null decimals, it can on a CSV column
(strings, empty cells read as None).

    family     Python values           from
    --------   ---------------------   ----------------------------------------
    none       None only               a `rows=` column without any other value
    int        int, bool               integer and boolean columns
    float      float                   floating point columns
    decimal    decimal.Decimal         decimal columns
    str        str                     string columns
    date       datetime.date           date columns
    datetime   datetime.datetime       timestamp columns
    None       anything else, or mixed (unknown)

`cannot_raise(site, types)` decides, from these types, whether an operation a
function may raise on (a `udflow.analysis.properties.RaiseSite`) is safe.

A field is non-null only when the data says so: a parquet column declared
`not null`, or one whose row-group statistics count no null; an in-memory
`rows=` source whose every record has a value for it. A CSV's and a
DataFrame's columns have the family of their Spark type and may be None.
"""

from __future__ import annotations

import datetime
import decimal
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from udflow.plan import Source


@dataclass(frozen=True)
class FieldType:
    family: Optional[str]  # see the module docstring; None: unknown
    nullable: bool = True
    # an int or Decimal field's largest magnitude, where the data proves one (a `rows=` source's
    # values, a parquet column's row-group statistics, a small CSV's values): the native normal
    # case needs no bound on it
    magnitude: Optional[int | decimal.Decimal] = None

    @property
    def known(self) -> bool:
        return self.family is not None and not self.nullable


UNKNOWN = FieldType(None, True)
ONLY_NONE = FieldType("none", True)  # a column that holds None and nothing else

NUMERIC_GROUPS = ({"int", "float"}, {"int", "decimal"})  # float and Decimal do not mix
ORDERED_GROUPS = ({"int", "float", "decimal"}, {"str"}, {"date"}, {"datetime"})
CONST_FAMILIES = {"int": "int", "bool": "int", "float": "float", "Decimal": "decimal", "str": "str",
                  "date": "date", "datetime": "datetime"}
SAFE_STR_METHODS = frozenset(
    "lower upper strip lstrip rstrip startswith endswith replace title capitalize casefold "
    "isdigit isalpha isalnum isspace isupper islower count find rfind zfill split rsplit splitlines "
    "partition rpartition join swapcase isascii isdecimal isnumeric removeprefix removesuffix".split())

_PY_FAMILIES = ((bool, "int"), (int, "int"), (float, "float"), (decimal.Decimal, "decimal"), (str, "str"),
                (datetime.datetime, "datetime"), (datetime.date, "date"))


def python_family(value) -> Optional[str]:
    """The family of one Python value (None for None and anything unlisted)."""
    for cls, family in _PY_FAMILIES:
        if isinstance(value, cls):
            return family
    return None


def attribute_types(root, changes, source_types=None) -> dict[str, FieldType]:
    """Attribute -> FieldType for a flow. `changes`: per operator, the attributes it may give
    a value (creates or modifies) and the families it is known to give them (a dict). A
    source field nobody changes keeps its source's type (`source_types(source)`, by default
    `source_field_types`); a field one operator creates with a known family has it; anything
    else is UNKNOWN."""
    types: dict[str, FieldType] = {}
    for node in root.walk():
        if isinstance(node, Source):
            types.update((source_types or source_field_types)(node))
    givers: dict[str, list] = {}
    for changed, families in changes:
        for a in changed:
            givers.setdefault(a, []).append(families.get(a))
    for a, given in givers.items():
        known = len(given) == 1 and given[0] is not None and a not in types
        types[a] = FieldType(given[0], False) if known else UNKNOWN
    return types


def source_field_types(source: Source) -> dict[str, FieldType]:
    """Field -> FieldType for every field of `source` (UNKNOWN where nothing can be proven)."""
    try:
        if source.in_memory:
            by_column = _rows_types(source.rows, source.columns)
        elif source.format == "parquet":
            by_column = _parquet_types(source.path)
        else:  # a CSV (declared or inferred types) or a DataFrame: Spark's types, None possible
            by_column = {c: FieldType(_spark_family(t), True) for c, t in source.types}
        if source.format == "csv" and not source.is_dataframe:
            magnitudes = csv_magnitudes(source.table, source.path, tuple(source.types))
            by_column = {c: FieldType(t.family, True, magnitudes.get(c)) for c, t in by_column.items()}
    except Exception:  # noqa: BLE001 - unreadable metadata proves nothing
        by_column = {}
    return {f: by_column.get(c, UNKNOWN) for f, c in zip(source.fields, source.columns)}


_SPARK_FAMILIES = {"bigint": "int", "int": "int", "smallint": "int", "tinyint": "int", "boolean": "int",
                   "double": "float", "float": "float", "string": "str", "date": "date"}


def _spark_family(spark_type: str) -> Optional[str]:
    return "decimal" if spark_type.startswith("decimal(") else _SPARK_FAMILIES.get(spark_type)


def _rows_types(rows, columns) -> dict[str, FieldType]:
    out = {}
    for c in columns:
        values = [r.get(c) for r in rows]
        if all(v is None for v in values):
            out[c] = ONLY_NONE
            continue
        families = {python_family(v) for v in values if v is not None}
        if families == {"int", "float"}:
            families = {"float"}  # ints and floats mix in arithmetic and comparisons alike
        family = families.pop() if len(families) == 1 else None
        magnitude = max(abs(v) for v in values if v is not None) if family in MAGNITUDES else None
        magnitude = int(magnitude) if family == "int" and magnitude is not None else magnitude  # True is 1
        out[c] = FieldType(family, family is None or any(v is None for v in values), magnitude)
    return out


def _parquet_types(path: str) -> dict[str, FieldType]:
    """Each column's FieldType from the files' schema and footers; read once per version of
    the files (`sources.listing`): each lowering of a plan asks again."""
    from udflow import sources

    version = sources.listing(path)
    if version is None:  # a tree too large to list: read afresh, never cached
        return dict(_parquet_types_read.__wrapped__(path, None))
    return dict(_parquet_types_read(path, version))


@lru_cache(maxsize=256)
def _parquet_types_read(path: str, version: Optional[tuple]) -> tuple:
    import pyarrow.dataset as ds

    dataset = ds.dataset(path, format="parquet")
    nulls, magnitudes = _statistics([fragment.path for fragment in dataset.get_fragments()])
    out = {}
    for f in dataset.schema:
        nullable = f.nullable and nulls.get(f.name, 1) > 0
        family = _arrow_family(f.type)
        magnitude = magnitudes.get(f.name) if family in MAGNITUDES else None
        out[f.name] = FieldType(family, nullable, magnitude)
    return tuple(out.items())


MAGNITUDES = ("int", "decimal")  # the families whose largest magnitude the data may prove


CSV_SCANNED = 8 * 1024 * 1024  # a larger CSV is not read for its magnitudes: each lowering would wait for it


def csv_magnitudes(name: str, path: str, types: tuple) -> dict:
    """Each int or Decimal column's largest magnitude in a CSV source of at most CSV_SCANNED
    bytes, its values read as the reference interpreter reads them (`sources.csv_rows`);
    {} for a larger one, or one that does not read."""
    from udflow import sources

    version = scanned_version(sources.data_files(path))
    return {} if version is None else dict(_csv_magnitudes(name, path, types, version))


def files_version(files) -> Optional[tuple]:
    """(path, size, modification time) of each of `files`, the key a cached read of them is
    kept by; None where one cannot be read."""
    try:
        return tuple((f, stat.st_size, stat.st_mtime_ns) for f in files for stat in (os.stat(f),))
    except OSError:
        return None


def footer_rows(files) -> Optional[int]:
    """The records in these Parquet files, from their footers (kept per version of the
    files); None where one cannot be read here."""
    version = files_version(files)
    try:
        return _footer_rows(version) if version is not None else None
    except (OSError, ValueError):  # not a Parquet file pyarrow reads (its errors are ValueErrors)
        return None


@lru_cache(maxsize=256)
def _footer_rows(version: tuple) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(path).metadata.num_rows for path, _, _ in version)


def scanned_version(files) -> Optional[tuple]:
    """`files_version`, or None where the files hold more than CSV_SCANNED bytes."""
    version = files_version(files)
    return version if version is not None and sum(size for _, size, _ in version) <= CSV_SCANNED else None


@lru_cache(maxsize=64)
def _csv_magnitudes(name: str, path: str, types: tuple, version: tuple) -> tuple:
    from udflow import sources

    wanted = [c for c, t in types if _spark_family(t) in MAGNITUDES]
    try:
        rows = sources.csv_rows(name, path, types)
    except Exception:  # noqa: BLE001 - a CSV that does not read proves nothing (Spark says why)
        return ()
    out = []
    for c in wanted:
        values = [abs(r[c]) for r in rows if r.get(c) is not None]
        if values:
            out.append((c, int(max(values)) if _spark_family(dict(types)[c]) == "int" else max(values)))
    return tuple(out)


@lru_cache(maxsize=1024)
def distinct_in_files(files_read, fmt: str, column: str, version) -> int:
    """The distinct non-None values of `column` in a file source (a path, or a tuple of
    files), counted by pyarrow; `version` (the files' modification times) keys the cache."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    source = list(files_read) if isinstance(files_read, tuple) else files_read
    values = ds.dataset(source, format=fmt).to_table(columns=[column]).column(column)
    if pa.types.is_string_view(values.type) or pa.types.is_binary_view(values.type):
        values = values.cast(pa.large_binary())  # count_distinct has no kernel for views
    return int(pc.count_distinct(values, mode="only_valid").as_py())


def parquet_magnitudes(paths) -> dict[str, int | decimal.Decimal]:
    """Each int or Decimal column's largest magnitude in these Parquet files' row-group
    statistics (a column some row group has no minimum and maximum for: absent)."""
    return {c: m for c, m in _statistics(paths)[1].items() if m is not None}


def _statistics(paths) -> tuple[dict[str, int], dict[str, Optional[int | decimal.Decimal]]]:
    """Nulls per column from the files' row-group statistics (a column without statistics
    counts as having nulls), and each int or Decimal column's largest magnitude (None where a
    row group has no minimum and maximum). Kept per version of the files (path, size,
    modification time): one optimization and its lowering ask several times."""
    version = files_version(paths)
    if version is None:
        return _footer_statistics(tuple(paths))
    counts, magnitudes = _kept_statistics(version)
    return dict(counts), dict(magnitudes)


@lru_cache(maxsize=256)
def _kept_statistics(version: tuple) -> tuple:
    counts, magnitudes = _footer_statistics(tuple(p for p, _, _ in version))
    return tuple(counts.items()), tuple(magnitudes.items())


def _footer_statistics(paths: tuple) -> tuple[dict[str, int], dict[str, Optional[int | decimal.Decimal]]]:
    import pyarrow.parquet as pq

    counts: dict[str, int] = {}
    magnitudes: dict[str, Optional[int | decimal.Decimal]] = {}
    for path in paths:
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for i in range(group.num_columns):
                col = group.column(i)
                stats = col.statistics
                n = stats.null_count if stats is not None and stats.has_null_count else 1
                name = col.path_in_schema
                counts[name] = counts.get(name, 0) + n
                magnitudes[name] = _larger(magnitudes.get(name, 0), _magnitude(stats))
    return counts, magnitudes


def _magnitude(stats) -> Optional[int | decimal.Decimal]:
    numbers = (int, decimal.Decimal)
    if stats is None or not stats.has_min_max or not isinstance(stats.min, numbers) \
            or not isinstance(stats.max, numbers):
        return None
    return max(abs(stats.min), abs(stats.max))


def _larger(a, b):
    return None if a is None or b is None else max(a, b)


def _arrow_family(t) -> Optional[str]:
    import pyarrow.types as pt

    if pt.is_timestamp(t):  # aware and naive datetimes do not compare: only naive ones are typed
        return "datetime" if t.tz is None else None
    checks = ((pt.is_boolean, "int"), (pt.is_integer, "int"), (pt.is_floating, "float"),
              (pt.is_decimal, "decimal"), (pt.is_date, "date"))
    for check, family in checks:
        if check(t):
            return family
    if pt.is_string(t) or pt.is_large_string(t) or str(t) == "string_view":
        return "str"
    return None


def cannot_raise(site, types: dict[str, FieldType], removed_below: frozenset = frozenset()) -> bool:
    """True when no value the fields can hold makes the operation raise. `removed_below`: the
    fields some operator below the function (where the plan puts it) may remove."""
    # a field proven not None where the operation runs, but only ever None: it never gets there
    fields = [f for f in site.fields if not (f in site.nonnull and types.get(f) == ONLY_NONE)]
    if not site.fields:
        return False  # a None return, or nothing known about the operands
    if site.op == "key":  # r["f"], del r["f"], r.pop("f"): KeyError where f is absent
        return not site.fields & removed_below
    field_types = [_narrowed(types.get(f), f in site.nonnull) for f in fields]
    if any(t is None or not t.known for t in field_types):
        return False
    families = {t.family for t in field_types}
    for c in site.consts:
        if c not in CONST_FAMILIES:
            return False
        families.add(CONST_FAMILIES[c])
    return _safe(site, families)


def _narrowed(t: Optional[FieldType], nonnull: bool) -> Optional[FieldType]:
    return FieldType(t.family, False) if t is not None and nonnull else t


def _safe(site, families: set) -> bool:
    op, name = site.op, site.name
    if op == "arith":
        return any(families <= g for g in NUMERIC_GROUPS)
    if op == "bits":  # & | ^ ~ and shifts by a constant count: ints and bools only
        return families <= {"int"}
    if op == "order":
        return any(families <= g for g in ORDERED_GROUPS)
    if op == "attribute":
        return (name in ("year", "month", "day") and families <= {"date", "datetime"}) \
            or (name in ("hour", "minute", "second") and families == {"datetime"})
    if op == "method":
        return name in SAFE_STR_METHODS and families == {"str"}
    if op == "slice":
        return "str" in families and families <= {"str", "int"}
    if op == "call":
        if name in ("abs", "min", "max", "sum", "float"):
            return any(families <= g for g in NUMERIC_GROUPS)
        if name in ("int", "round"):  # int(nan), round(inf) raise
            return families <= {"int", "decimal"}
        return name == "len" and families == {"str"}
    return False  # division by a value that may be 0, a shift by one that may be negative, indexing, ...

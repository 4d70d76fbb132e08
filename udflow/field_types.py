"""What Python values a source's fields hold: a type family and whether None may occur.

The rules use it to prove that an operation of a function cannot raise where a
reordering would put it (`udflow.rules.guards`, `RaiseSite`): `r["price"] * 2`
cannot raise on a parquet column of non-null decimals, it can on a CSV column
(strings, empty cells read as None).

    family     Python values           from
    --------   ---------------------   ----------------------------------------
    int        int, bool               integer and boolean columns
    float      float                   floating point columns
    decimal    decimal.Decimal         decimal columns
    str        str                     string columns; every CSV column
    date       datetime.date           date columns
    datetime   datetime.datetime       timestamp columns
    None       anything else, or mixed (unknown)

A field is non-null only when the data says so: a parquet column declared
`not null`, or one whose row-group statistics count no null; an in-memory
`rows=` source whose every record has a value for it. Nothing else is trusted.
"""

from __future__ import annotations

import datetime
import decimal
import os
from dataclasses import dataclass
from typing import Optional

from udflow.plan import Source


@dataclass(frozen=True)
class FieldType:
    family: Optional[str]  # see the module docstring; None: unknown
    nullable: bool = True

    @property
    def known(self) -> bool:
        return self.family is not None and not self.nullable


UNKNOWN = FieldType(None, True)

_PY_FAMILIES = ((bool, "int"), (int, "int"), (float, "float"), (decimal.Decimal, "decimal"), (str, "str"),
                (datetime.datetime, "datetime"), (datetime.date, "date"))


def python_family(value) -> Optional[str]:
    """The family of one Python value (None for None and anything unlisted)."""
    for cls, family in _PY_FAMILIES:
        if isinstance(value, cls):
            return family
    return None


def source_field_types(source: Source) -> dict[str, FieldType]:
    """Field -> FieldType for every field of `source` (UNKNOWN where nothing can be proven)."""
    try:
        if source.path is None:
            by_column = _rows_types(source.rows, source.columns)
        elif (source.format or _extension(source.path)) == "parquet":
            by_column = _parquet_types(source.path)
        else:
            by_column = {c: FieldType("str", True) for c in source.columns}
    except Exception:  # noqa: BLE001 - unreadable metadata proves nothing
        by_column = {}
    return {f: by_column.get(c, UNKNOWN) for f, c in zip(source.fields, source.columns)}


def _extension(path: str) -> str:
    return os.path.splitext(path.rstrip("/"))[1].lstrip(".").lower() or "parquet"


def _rows_types(rows, columns) -> dict[str, FieldType]:
    out = {}
    for c in columns:
        values = [r.get(c) for r in rows]
        families = {python_family(v) for v in values if v is not None}
        if families == {"int", "float"}:
            families = {"float"}  # ints and floats mix in arithmetic and comparisons alike
        family = families.pop() if len(families) == 1 else None
        out[c] = FieldType(family, family is None or any(v is None for v in values))
    return out


def _parquet_types(path: str) -> dict[str, FieldType]:
    import pyarrow.dataset as ds

    dataset = ds.dataset(path, format="parquet")
    nulls = _null_counts(dataset)
    out = {}
    for f in dataset.schema:
        nullable = f.nullable and nulls.get(f.name, 1) > 0
        out[f.name] = FieldType(_arrow_family(f.type), nullable)
    return out


def _null_counts(dataset) -> dict[str, int]:
    """Nulls per column from the files' row-group statistics (a column without statistics
    counts as having nulls)."""
    import pyarrow.parquet as pq

    counts: dict[str, int] = {}
    for fragment in dataset.get_fragments():
        meta = pq.ParquetFile(fragment.path).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for i in range(group.num_columns):
                col = group.column(i)
                stats = col.statistics
                n = stats.null_count if stats is not None and stats.has_null_count else 1
                counts[col.path_in_schema] = counts.get(col.path_in_schema, 0) + n
    return counts


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

"""A CSV source's rows and its key fields' distinct counts, read by pyarrow's CSV reader.

The cost model needs, of a CSV source, how many records it holds and how many distinct
values its key fields take (`statistics.source_statistics`). Both are estimates: nothing
but a plan's cost is decided by them. Reading the file through udflow's own reader
(`sources.csv_rows`, the reference interpreter's, which types every value as Spark does)
costs some 3 us per value in Python: 5 s for 800,000 orders. pyarrow's reader counts the
records and the key columns' distinct texts in C++:

    rows            the records of every file of the source, each file's header skipped
    distinct(c)     the distinct non-empty texts of column c ("5" and "05" are two texts,
                    one int: an estimate a little high, as any sample's)

Quoted newlines are read as Python's `csv` reads them. Where pyarrow refuses a file (a
row with another number of fields), the caller counts with udflow's reader, which says
what is wrong with the file as a read would. Counted once per version of the files
(`sources.listing`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional


def csv_counts(path: str, columns: tuple, wanted: tuple, version: Optional[tuple]) -> Optional[tuple]:
    """(rows, ((column, distinct texts), ...)) of the CSV files at `path` whose header is
    `columns`, for the `wanted` columns; None where pyarrow does not read them."""
    if version is None:  # a tree too large to list: no version to key a remembered count by
        return _count(path, columns, wanted)
    return _remembered(path, columns, wanted, version)


@lru_cache(maxsize=64)
def _remembered(path: str, columns: tuple, wanted: tuple, version: tuple) -> Optional[tuple]:
    return _count(path, columns, wanted)


def _count(path: str, columns: tuple, wanted: tuple) -> Optional[tuple]:
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    from udflow.sources import data_files

    read = csv.ReadOptions(column_names=list(columns), skip_rows=1)
    parse = csv.ParseOptions(newlines_in_values=True)
    # no column wanted: the first one, read to count the records (an empty list reads them all)
    convert = csv.ConvertOptions(column_types={c: pa.string() for c in columns},
                                 include_columns=list(wanted) or list(columns[:1]),
                                 null_values=[""], strings_can_be_null=True)
    rows, seen = 0, {c: [] for c in wanted}
    try:
        for file in data_files(path):
            table = csv.read_csv(file, read_options=read, parse_options=parse, convert_options=convert)
            rows += table.num_rows
            for c in wanted:
                seen[c].append(pc.unique(table.column(c).combine_chunks()))
    except (pa.ArrowInvalid, OSError, ValueError):
        return None
    distinct = tuple((c, _distinct(seen[c])) for c in wanted)
    return rows, distinct


def _distinct(parts: list) -> int:
    """Distinct non-null values over the files' unique values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not parts:
        return 0
    return pc.count_distinct(pa.chunked_array(parts), mode="only_valid").as_py()

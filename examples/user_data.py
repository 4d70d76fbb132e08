"""Helpers shared by the user pipelines (`ratings`, `taxi`, `documents`) and their benchmark.

- `zipf_picker`: skewed draws (a few movies, zones or words get most of the rows),
- `write_csv`: one table as a CSV with a header line, written atomically (an empty
  field is None, as udflow, Spark and DuckDB all read it),
- `write_parquet` (from `paper_tasks`): the same for parquet,
- `rows_of` and `same_bag`: a result as a bag of records, floats compared with a
  tolerance (sums of floats depend on the order Spark adds them in).
"""

from __future__ import annotations

import bisect
import math
import os
import random
import tempfile
from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Sequence

from examples.paper_tasks import write_parquet

__all__ = ["zipf_picker", "write_csv", "write_parquet", "rows_of", "same_bag", "bag_mismatch"]


def zipf_picker(rng: random.Random, n: int, s: float = 1.0) -> Callable[[], int]:
    """Draw from 0..n-1 with probability proportional to 1/(rank+1)^s."""
    cumulative, total = [], 0.0
    for k in range(n):
        total += 1.0 / (k + 1) ** s
        cumulative.append(total)
    return lambda: min(n - 1, bisect.bisect_left(cumulative, rng.random() * total))


def write_csv(path: str, columns: Mapping[str, list], schema) -> str:
    """Write `columns` with the pyarrow `schema` as a CSV with a header line, atomically."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    table = pa.table({name: pa.array(columns[name], type=schema.field(name).type) for name in schema.names},
                     schema=schema)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".csv")
    os.close(fd)
    try:
        pcsv.write_csv(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def rows_of(rows: Iterable[Any], fields: Sequence[str] | None = None) -> list[dict]:
    """Records as plain dicts (Spark Rows included), restricted to `fields` when given."""
    out = []
    for r in rows:
        d = r.asDict() if hasattr(r, "asDict") else dict(r)
        out.append({f: d[f] for f in fields} if fields else d)
    return out


def _exact_part(record: Mapping[str, Any]) -> tuple:
    """What must be equal exactly: every field but the floats (and which fields are floats)."""
    return tuple(sorted((k, "<float>" if isinstance(v, float) else v) for k, v in record.items()))


def bag_mismatch(a: Iterable[Mapping], b: Iterable[Mapping], rel_tol: float = 1e-9) -> str | None:
    """None when `a` and `b` are the same bag of records, floats within `rel_tol` of each other
    (ints, strings, Decimals and None exactly); else a short account of the first difference."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} records"
    groups_a, groups_b = _grouped(a), _grouped(b)
    if Counter({k: len(v) for k, v in groups_a.items()}) != Counter({k: len(v) for k, v in groups_b.items()}):
        only = [dict(k) for k in groups_a if len(groups_a[k]) != len(groups_b.get(k, []))][:2]
        return f"the non-float fields differ, e.g. {only}"
    for key, ra in groups_a.items():
        rb = groups_b[key]
        floats = lambda rs: sorted(tuple(r[k] for k in sorted(r) if isinstance(r[k], float)) for r in rs)  # noqa: E731
        for x, y in zip(floats(ra), floats(rb)):
            for u, v in zip(x, y):
                if not (math.isclose(u, v, rel_tol=rel_tol, abs_tol=1e-12) or (math.isnan(u) and math.isnan(v))):
                    return f"record {dict(key)}: float {u!r} vs {v!r}"
    return None


def same_bag(a: Iterable[Mapping], b: Iterable[Mapping], rel_tol: float = 1e-9) -> bool:
    return bag_mismatch(a, b, rel_tol) is None


def _grouped(rows: list[Mapping]) -> dict[tuple, list[Mapping]]:
    groups: dict[tuple, list[Mapping]] = {}
    for r in rows:
        groups.setdefault(_exact_part(r), []).append(r)
    return groups

"""Helpers shared by the paper's non-relational tasks (text mining, clickstream) and their benchmark.

- `annotate`: `udflow.annotate` when it exists, else a decorator that leaves
  the function alone, so the examples import before the annotation API lands.
- `write_parquet`: one table, written atomically and byte-for-byte
  deterministically (same rows, same schema, same bytes).
- `bag`: a flow's result as a multiset of canonical records, the thing two
  plans must agree on (bag semantics: order is arbitrary, duplicates count).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from decimal import Decimal
from typing import Any, Iterable, Mapping

import udflow

annotate = getattr(udflow, "annotate", lambda **kw: (lambda f: f))


def write_parquet(path: str, columns: Mapping[str, list], schema) -> str:
    """Write `columns` (name -> values, all of one length) with `schema` to `path`, atomically.

    The file is written beside its target and renamed into place, so a crash
    never leaves a half-written file that a later run would take for data.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({name: pa.array(columns[name], type=schema.field(name).type) for name in schema.names},
                     schema=schema)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".parquet")
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="snappy", row_group_size=256 * 1024)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def canonical(value: Any) -> Any:
    """A hashable, engine-independent form of a field value.

    Spark hands back arrays as lists and the reference interpreter keeps
    whatever the function built (lists or tuples); integral Decimals and ints
    compare equal already, floats are kept exact (the tasks never sum floats).
    """
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((k, canonical(v)) for k, v in value.items()))
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def bag(rows: Iterable[Mapping[str, Any]]) -> Counter:
    """The multiset of records, each as a sorted tuple of (field, canonical value)."""
    return Counter(tuple(sorted((k, canonical(v)) for k, v in r.items())) for r in rows)


def bag_difference(a: Counter, b: Counter, limit: int = 3) -> str:
    """A short human-readable account of how two bags differ (for failure messages)."""
    only_a, only_b = a - b, b - a
    lines = [f"{sum(a.values())} vs {sum(b.values())} records; "
             f"{sum(only_a.values())} only in the first, {sum(only_b.values())} only in the second"]
    for name, extra in (("first", only_a), ("second", only_b)):
        for record in list(extra)[:limit]:
            lines.append(f"  only in {name}: {dict(record)}")
    return "\n".join(lines)


def run_task(description: str, default_data: str, generate_data, build_flow, show, argv=None) -> None:
    """The command-line driver of a paper task: generate data, run the flow, `show(rows, seconds)`."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", default=default_data)
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--engine", default="spark", choices=("spark", "reference"))
    args = parser.parse_args(argv)
    generate_data(args.data, args.scale)
    flow = build_flow(args.data)
    print(flow, "\n")
    t0 = time.perf_counter()
    rows = flow.collect(engine=args.engine)
    show(rows, time.perf_counter() - t0)

"""A plan run on the first records of its sources, on the driver, and what each operator emitted.

    output_samples(plan)  ->  (("Map(priced)", OutputSample(1000 records, complete=False)), ...)

Spark needs a schema before it runs anything, and the types of the fields a Python
function creates are known only from values it produced. `uf.optimize` runs the chosen
plan on the first records of each source with the reference interpreter (as it runs
the plan as written to profile the functions, `engine.statistics`) and keeps what every
operator emitted, in `Flow.samples`. The Spark backend types a Python operator's output
from it, so that building a DataFrame (`Flow.to_spark`) runs no Spark job. Where an
operator has no sample, or a field it creates is None throughout its sample, the
backend samples the operator's output on Spark instead (one small job).

The run (`run_every_subtree`) is bottom-up, each operator once, over its inputs'
outputs held as in-memory sources, so every function is called exactly once per input
record or group. An operator hands at most HELD_FACTOR times the sample size of its
records to the operator above it: an explosion's 60,000 words of 2,000 documents say no
more about the join and the groups above it than their first 8,000 do, and running
those operators over all of them was most of an optimization's time (the operators
above a cut have no complete sample). A file source's first records are read on the driver (pyarrow, or
udflow's CSV reader); a DataFrame source's take a Spark job.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from itertools import chain
from functools import lru_cache
from typing import Any, Callable, Optional

from udflow.errors import FieldCollisionError, UdflowError
from udflow.plan import Node, Source

SOURCE_RECORDS = 1000  # records read from each source for the output samples
SAMPLE_RECORDS = 1000  # records kept per operator: the Spark backend's own sample size
HELD_FACTOR = 4  # an operator's records handed above it, at most, per sample record of a source


@dataclass(frozen=True)
class OutputSample:
    records: tuple  # the first records the operator emitted (dicts), at most SAMPLE_RECORDS
    complete: bool  # the operator's whole output: no source was cut short

    def __repr__(self) -> str:
        return f"OutputSample({len(self.records)} records, complete={self.complete})"


def output_samples(plan: Node, source_records: int = SOURCE_RECORDS) -> tuple[tuple[str, OutputSample], ...]:
    """Per operator of `plan` (sources too: the input of the operators above them): what it
    emitted on the sample. Empty where a
    function raises on the sample: the run on Spark raises there too, and says so."""
    from udflow import reference

    sampled, complete = sampled_plan(plan, source_records)
    handed: dict = {}
    try:
        outputs = run_every_subtree(sampled, reference.run, HELD_FACTOR * source_records, handed)
    except UdflowError:
        return ()
    cut = above_cuts(plan, set(handed))
    return tuple(
        (node.label, OutputSample(tuple(outputs[node.label][:SAMPLE_RECORDS]), complete[node.label]
                                  and node.label not in cut))
        for node in plan.walk()
    )


def samples_from(plan: Node, outputs: dict) -> tuple[tuple[str, OutputSample], ...]:
    """`output_samples` of `plan` from a run already made on its sample (label -> (records,
    complete), `engine.statistics.profile_functions`' of the plan as written)."""
    return tuple((node.label, OutputSample(tuple(outputs[node.label][0][:SAMPLE_RECORDS]), outputs[node.label][1]))
                 for node in plan.walk())


def sampled_plan(
    root: Node, sample_size: int, wrap: Optional[Callable[[Node, Any], Any]] = None
) -> tuple[Node, dict[str, bool]]:
    """The plan over the first `sample_size` records of each source (each function replaced
    by `wrap(node, fn)` when given), and per label whether that subtree's sample is its
    whole output (no source cut short)."""
    complete: dict[str, bool] = {}

    def rebuild(node: Node) -> Node:
        if isinstance(node, Source):
            rows = head(node, sample_size + 1)
            complete[node.label] = len(rows) <= sample_size
            return dataclasses.replace(node, path=None, format=None, rows=tuple(rows[:sample_size]))
        inputs = tuple(rebuild(c) for c in node.inputs)
        complete[node.label] = all(complete[c.label] for c in node.inputs)
        copy = node.with_inputs(*inputs)
        fn = getattr(node, "fn", None)
        if fn is not None and wrap is not None:
            copy = dataclasses.replace(copy, fn=wrap(node, fn))
        return copy

    return rebuild(root), complete


def run_every_subtree(plan: Node, run: Callable[[Node], list], held: Optional[int] = None,
                      handed: Optional[dict] = None) -> dict[str, list]:
    """Per label: the records the operator emitted, each operator run once (see above).
    `held`: at most this many of an operator's records are handed to the operator above
    it; `handed` receives, per label of an operator that ran on fewer than its inputs'
    records, the records each of its inputs handed it."""
    outputs: dict[str, list] = {}

    def visit(node: Node) -> list:
        if isinstance(node, Source):
            rows = run(node)
        else:
            given = [visit(child) for child in node.inputs]
            if held is not None and any(len(rows) > held for rows in given):
                given = [rows[:held] for rows in given]
                if handed is not None:
                    handed[node.label] = tuple(given)
            inputs = tuple(_held(child, rows) for child, rows in zip(node.inputs, given))
            try:
                rows = run(node.with_inputs(*inputs))
            except FieldCollisionError:  # raised when the plan runs; for samples, the pairs kept apart
                rows = run(node.with_inputs(inputs[0], _apart(inputs[1], inputs[0].fields, node)))
        outputs[node.label] = rows
        return rows

    visit(plan)
    return outputs


def above_cuts(plan: Node, cut: set) -> set:
    """The labels of `plan`'s operators at or above one whose label is in `cut`."""
    out: set = set()

    def visit(node: Node) -> bool:
        below = [visit(child) for child in node.inputs]  # every child: each may hold a cut
        if node.label in cut or any(below):
            out.add(node.label)
            return True
        return False

    visit(plan)
    return out


def _apart(right: Source, left_fields: tuple, node: Node) -> Source:
    """The right input's sample without the fields the left one carries (keys aside)."""
    dropped = set(left_fields) - set(getattr(node, "right_key", ()))
    rows = [{f: v for f, v in r.items() if f not in dropped} for r in right.rows]
    return _held(right, rows)


def _held(node: Node, rows: list) -> Source:
    """The records a subtree produced, as an in-memory source that stands in for it."""
    fields = tuple(dict.fromkeys(chain.from_iterable(rows)))  # every record's fields, at C speed
    return Source(f"{node.label}@sample", table=node.label, fields=fields, columns=fields, rows=tuple(rows))


# ---------------------------------------------------------------------------
# The first records of a source
# ---------------------------------------------------------------------------


def head(src: Source, n: int) -> list[dict]:
    """The first `n` records of a source, with the flow's (prefixed) field names."""
    if src.in_memory:
        return [dict(r) for r in src.rows[:n]]
    if src.is_dataframe:
        from udflow.spark_backend import frames

        raw = frames.head(src.dataframe, n)  # fresh records: those with the source's fields are kept
        if not src.prefix and all(tuple(r) == src.columns for r in raw):
            return raw
    elif src.format == "csv":
        from udflow import sources

        raw = sources.csv_rows(src.table, src.path, src.types, limit=n)
    else:
        return list(head_of_file(src.path, src.format or "parquet", src.columns, src.fields, n, mtime(src.path)))
    return [{src.prefix + c: r.get(c) for c in src.columns} for r in raw]


@lru_cache(maxsize=64)
def head_of_file(path: str, fmt: str, columns: tuple, fields: tuple, n: int, mtime: float) -> tuple:
    """The first `n` records of a file source (cached per file version: `mtime`)."""
    import pyarrow.dataset as ds

    table = ds.dataset(path, format=fmt).head(n, columns=list(columns))
    return tuple({f: v for f, v in zip(fields, row.values())} for row in table.to_pylist())


def files(path: str) -> list[str]:
    """The data files of a path: itself, or a folder's files (not `_SUCCESS`, not hidden)."""
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if not f.startswith(("_", ".")))
    return [path]


def mtime(path: str) -> float:
    return max(os.path.getmtime(f) for f in files(path))

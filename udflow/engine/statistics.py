"""Statistics the cost model starts from: source sizes and distinct counts, and function profiles.

Sources (`source_statistics`): the row count comes from parquet metadata (for
CSV (`csv_counts`) and in-memory rows the records are counted; for a DataFrame or table, from
Catalyst's estimate of its plan, never a scan); the bytes per record are Spark
row bytes (`record_bytes`) averaged over the first records, the same records
sampling reads. Distinct counts are computed only for the fields the flow uses as keys
(Match, CoGroup and Reduce keys, a source's primary key is distinct by
definition); a DataFrame's are scaled up from its first records (`scaled_distinct`),
or counted in its files where it is exactly a Parquet read.

Functions (`profile_functions`): every function is *run* on a sample of its
real input, as the paper's "runtime profiling" (section 7.1): the first
`sample_size` records of every source are propagated through the plan as
written, on the reference interpreter, with each function wrapped to count its
calls and emitted records and to time it. A `uf.hint(selectivity=, cost=)` on
the function takes precedence over what was measured.
"""

from __future__ import annotations

import functools
import inspect
import time
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, Iterable, Optional

from udflow.engine.csv_counts import csv_counts
from udflow.engine.hints import hint_of
from udflow.engine.keysample import key_figures
from udflow.errors import OptimizationError
from udflow.field_types import distinct_in_files, footer_rows
from udflow.plan import CoGroup, Match, Node, Reduce, Source
from udflow.samples import HELD_FACTOR, above_cuts, files, head, head_of_file, mtime, sampled_plan
from udflow.samples import run_every_subtree as outputs_of_every_subtree

DEFAULT_SAMPLE_SIZE = 2000


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceStatistics:
    rows: int
    width: float  # bytes per record
    distinct: tuple[tuple[str, int], ...] = ()  # (field, distinct values) for key fields

    def distinct_of(self, field: str) -> Optional[int]:
        return dict(self.distinct).get(field)


def record_bytes(record: dict) -> float:
    """The size of a record as Spark holds it (an UnsafeRow): what a shuffle or a broadcast moves.

    A null bit per field (in 8-byte words), an 8-byte slot per field, and the bytes of
    every string or binary value rounded up to a word. Spark's size is what decides the
    cost of moving a record, not its size in a compressed column file: a TPC-H lineitem
    row is 55 bytes in parquet and about 200 bytes in an UnsafeRow.
    """
    n = len(record)
    variable = 0
    for value in record.values():  # a loop, not a sum over a generator: it runs per sampled field
        if value is None or type(value) in FIXED_WIDTH:
            continue
        variable += _variable_bytes(value)
    return float(8 * ((n + 63) // 64) + 8 * n + variable)


FIXED_WIDTH = (int, float, bool)  # held in the record's 8-byte slot


def _variable_bytes(value: Any) -> int:
    if isinstance(value, str):
        size = len(value) if value.isascii() else len(value.encode())  # UTF-8 bytes
        return (size + 7) // 8 * 8
    if isinstance(value, (bytes, bytearray)):
        return (len(value) + 7) // 8 * 8
    if isinstance(value, Decimal) and len(value.as_tuple().digits) > 18:
        return 16  # a wide decimal is stored out of line
    return 0


def _footer_rows(src: Source) -> int:
    rows = footer_rows(files(src.path))
    if rows is None:
        raise OptimizationError(f"source {src.label!r}: the Parquet footers of {src.path!r} cannot be read")
    return rows


@lru_cache(maxsize=256)
def _parquet_width(path: str, columns: tuple, fields: tuple, mtime: float) -> float:
    """Mean Spark row bytes over the first records of a parquet source (the sample's records)."""
    return _mean_width(head_of_file(path, "parquet", columns, fields, DEFAULT_SAMPLE_SIZE, mtime))


WIDTH_SAMPLE = 250  # records whose mean size stands for a sample's


def _mean_width(records) -> float:
    """Mean `record_bytes` over WIDTH_SAMPLE records evenly spread over the first
    DEFAULT_SAMPLE_SIZE: an explosion's sample output (documents' 60,000 tokens of 2,000
    texts) says no more about the mean than its start, and every operator's output on the
    sample is measured (taxi's 16,000 records took a tenth of `optimize`)."""
    records = records[:DEFAULT_SAMPLE_SIZE]
    spread = records[::-(-len(records) // WIDTH_SAMPLE)] if records else records
    return sum(record_bytes(r) for r in spread) / len(spread) if spread else 0.0


def _csv_statistics(src: Source, wanted: list[str]) -> SourceStatistics:
    """A CSV source's rows and distinct counts, counted by pyarrow (`csv_counts`), or by
    udflow's own reader where pyarrow does not read the files (which then says what is
    wrong with them)."""
    from udflow import sources

    width = _mean_width(head(src, DEFAULT_SAMPLE_SIZE))
    columns = tuple(c for c, _ in src.types)
    counted = csv_counts(src.path, columns, tuple(src.column_of(f) for f in wanted), sources.listing(src.path))
    if counted is not None:
        rows, distinct = counted
        return SourceStatistics(rows, width, tuple((f, n) for f, (_, n) in zip(wanted, distinct)))
    typed = head(src, sum(1 for _ in sources.csv_records(src.table, src.path, columns)))
    distinct = tuple((f, len({_hashable(r.get(f)) for r in typed} - {None})) for f in wanted)
    return SourceStatistics(len(typed), width, distinct)


def source_statistics(src: Source, key_fields: Iterable[str] = ()) -> SourceStatistics:
    """Rows, bytes per record and the distinct counts of `key_fields` of one source."""
    wanted = [f for f in dict.fromkeys(key_fields) if f in src.fields]
    if src.in_memory:
        rows = len(src.rows)
        width = _mean_width(src.rows)
        distinct = tuple(
            (f, len({_hashable(r.get(f)) for r in src.rows} - {None})) for f in wanted
        )
        return SourceStatistics(rows, width, distinct)
    if src.is_dataframe:
        return _dataframe_statistics(src, wanted)
    version = mtime(src.path)
    # Bytes per record as Spark holds them, on the first records (the sample's records):
    # a column file's compressed or encoded size says little about what a shuffle moves.
    if src.format == "csv":
        return _csv_statistics(src, wanted)
    rows, width = _footer_rows(src), _parquet_width(src.path, src.columns, src.fields, version)
    primary = set(src.key or ()) if src.key and len(src.key) == 1 else set()
    distinct = tuple(
        (f, rows if f in primary else distinct_in_files(src.path, src.format or "parquet", src.column_of(f), version))
        for f in wanted
    )
    return SourceStatistics(rows, width, distinct)


def _dataframe_statistics(src: Source, wanted: list[str]) -> SourceStatistics:
    """A DataFrame's statistics without a Spark job: rows from Catalyst's plan estimate (from
    the footers, for a DataFrame that is exactly a Parquet read), bytes per record from its
    first DEFAULT_SAMPLE_SIZE records, distinct counts scaled up from them, or counted in the
    files of a DataFrame that is exactly a Parquet read (as for a parquet source)."""
    from udflow.spark_backend import file_stats, frames
    from udflow.spark_backend.csv_read import csv_read

    read = file_stats.parquet_read(src.dataframe)
    rows = read.rows() if read is not None else None  # exactly the files' records: their footers say
    if rows is None and (text := csv_read(src.dataframe)) is not None:
        rows = text.rows()  # exactly a small CSV file's records, read by pyarrow as Spark reads them
    if rows is None:
        rows, _ = frames.size_estimate(src.dataframe)
    sample = head(src, DEFAULT_SAMPLE_SIZE)
    rows = max(rows, len(sample))
    primary = set(src.key or ()) if src.key and len(src.key) == 1 else set()
    columns = dict(zip(src.fields, src.columns))

    def distinct_of(f: str) -> int:
        counted = read.distinct(columns[f]) if read is not None else None
        return counted if counted is not None else scaled_distinct([r.get(f) for r in sample], rows)

    distinct = tuple((f, rows if f in primary else distinct_of(f)) for f in wanted)
    return SourceStatistics(rows, _mean_width(sample), distinct)


def scaled_distinct(values: list, rows: int) -> int:
    """Distinct values among `rows` records, from a sample of them: the GEE estimator
    (Charikar et al., PODS 2000), sqrt(rows / n) * (values seen once) + (values seen more)."""
    from collections import Counter

    counts = Counter(_hashable(v) for v in values if v is not None)
    n = len(values)
    if not n or rows <= n:
        return len(counts)
    once = sum(1 for c in counts.values() if c == 1)
    estimate = (rows / n) ** 0.5 * once + (len(counts) - once)
    return max(1, min(rows, round(estimate)))


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def key_fields_of(root: Node) -> set[str]:
    """Every field the flow uses as a key (where distinct counts decide sizes)."""
    fields: set[str] = set()
    for node in root.walk():
        if isinstance(node, (Match, CoGroup)):
            fields |= set(node.left_key) | set(node.right_key)
        elif isinstance(node, Reduce):
            fields |= set(node.key)
    return fields


# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionProfile:
    """What one operator's function did on the sample, and what the cost model takes from it.

    `selectivity`: records emitted per call (per record for Map, per group for
    Reduce/CoGroup, per pair for Match/Cross); `cost`: seconds per call;
    `width_ratio`: bytes per output record over bytes per input record; `width_delta`: bytes
    an output record has beyond an input record (a unary operator; what the cost model uses
    for a Map, since a sum, unlike a ratio, does not depend on where the Map stands);
    `groups_per_row`: for a Reduce, groups over input records in the sample.
    `source` says where the figures come from ("sample", "hint", "default").
    `fields_read`: for a filter or a map that copies its records (`{**r, ...}`), how many
    fields the backend shows it per call (those it reads or writes); None: every field.
    `created`, `retention`, `join_selectivity`: what the sample says about key fields
    (`engine.keysample`). A Match without a function has a profile for these alone.
    """

    label: str
    calls: int
    selectivity: float
    cost: float
    width_ratio: float = 1.0
    width_delta: Optional[float] = None
    groups_per_row: Optional[float] = None
    sample_groups: Optional[int] = None
    half_groups: Optional[int] = None  # a Reduce: groups among the first half of its sampled input
    source: str = "sample"
    fields_read: Optional[int] = None
    forwards_records: bool = False  # a projected Map that writes nothing: rows kept as they are
    created: tuple = ()  # key fields it creates: (field, distinct, records, seen once) on the sample
    retention: tuple = ()  # key fields it carries: (field, distinct out / distinct in) on the sample
    join_selectivity: Optional[float] = None  # a Match: pairs / (left x right), see engine.keysample


DEFAULT_SELECTIVITY = {"map": 1.0, "filter": 0.5, "reduce": 1.0, "match": 1.0, "cross": 1.0, "cogroup": 1.0}
DEFAULT_COST = 2e-6


class _Counter:
    """Calls, emitted records and the time of each call of one function, over the sample run."""

    def __init__(self) -> None:
        self.calls = 0
        self.emitted = 0
        self.durations: list[float] = []

    @property
    def seconds(self) -> float:
        return sum(self.durations)

    def cost_per_call(self) -> float:
        """Mean time per call, without the outliers a garbage collection or a page fault adds."""
        if not self.durations:
            return 0.0
        ordered = sorted(self.durations)
        median = ordered[len(ordered) // 2]
        kept = [d for d in ordered if d <= 20 * median] or ordered
        return sum(kept) / len(kept)


def _wrap(fn: Any, counter: _Counter, is_filter: bool) -> Any:
    """A function with the same observable behaviour as `fn` that also counts and times it.

    It carries `fn`'s name and `__wrapped__` (functools.wraps), so that an error raised by
    `fn` on the sample names the user's function and line, not this wrapper."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def counted_generator(*args):
            start = time.perf_counter()
            out = list(fn(*args))
            counter.durations.append(time.perf_counter() - start)
            counter.calls += 1
            counter.emitted += len(out)
            yield from out

        return counted_generator

    @functools.wraps(fn)
    def counted(*args):
        start = time.perf_counter()
        out = fn(*args)
        counter.durations.append(time.perf_counter() - start)
        counter.calls += 1
        counter.emitted += (1 if out else 0) if is_filter else (0 if out is None else 1)
        return out

    return counted


def sample_plan(root: Node, sample_size: int) -> tuple[Node, dict[str, _Counter], dict[str, bool]]:
    """The plan over the first `sample_size` records of each source, with counting functions,
    and per label whether that subtree's sample is its whole output (no source cut short)."""
    counters: dict[str, _Counter] = {}

    def counting(node: Node, fn: Any) -> Any:
        counters[node.label] = _Counter()
        return _wrap(fn, counters[node.label], getattr(node, "is_filter", False))

    plan, complete = sampled_plan(root, sample_size, counting)
    return plan, counters, complete


MIN_EMITTED = 10  # records a function must emit on the sample for its selectivity to be trusted
RESAMPLE_FACTOR = 4  # a larger sample, once, when a function emitted fewer


def profile_functions(root: Node, sample_size: int = DEFAULT_SAMPLE_SIZE,
                      outputs: Optional[dict] = None) -> dict[str, FunctionProfile]:
    """Per operator label: its function's selectivity and cost, measured on a sample of its real input.

    A function that emitted fewer than MIN_EMITTED records while some source was cut
    short (Q7's nation filter: 0 of the 595 joined records of the first 2,000 lineitems,
    where 46 of 17,973 pass on the whole data) has a selectivity the sample cannot tell
    from zero; the sample is taken again, RESAMPLE_FACTOR times larger, once. `outputs`,
    when given, receives per label what the operator emitted on the sample and whether
    that is its whole output (`samples.samples_from`: the plan as written needs no second run)."""
    profiles, starved = _profile_sample(root, sample_size, outputs)
    if starved:
        profiles, _ = _profile_sample(root, sample_size * RESAMPLE_FACTOR, outputs)
    return profiles


def _profile_sample(root: Node, sample_size: int, outputs: Optional[dict] = None
                    ) -> tuple[dict[str, FunctionProfile], bool]:
    from udflow import reference

    plan, counters, complete = sample_plan(root, sample_size)
    handed: dict = {}
    sizes = run_every_subtree(plan, reference.run, HELD_FACTOR * sample_size, handed)
    cut = above_cuts(plan, set(handed))
    complete = {label: whole and label not in cut for label, whole in complete.items()}
    if outputs is not None:
        outputs.update({label: (rows, complete[label]) for label, (_, _, rows) in sizes.items()})
    keys = key_fields_of(root)
    profiles: dict[str, FunctionProfile] = {}
    starved = False
    for node in root.walk():
        if isinstance(node, Source) or (getattr(node, "fn", None) is None and not isinstance(node, Match)):
            continue  # sources, and Cross/Custom without a function: nothing sampled to profile
        counter = counters.get(node.label)
        seen, whole = _as_handed(node, sizes, complete, handed.get(node.label))
        profiles[node.label] = _profile(node, counter, seen, key_figures(node, keys, seen, whole))
        if counter and counter.calls and counter.emitted < MIN_EMITTED and not complete[node.label]:
            starved = True
    return profiles, starved


def _as_handed(node: Node, sizes: dict, complete: dict, handed: Optional[tuple]) -> tuple[dict, dict]:
    """`sizes` and `complete`, their entries for `node`'s inputs the records they handed it
    where they were cut short (`samples.run_every_subtree`): what the operator ran on, and
    an input cut short is not whole (a join's pairs with it have not all been seen)."""
    if handed is None:
        return sizes, complete
    seen, whole = dict(sizes), dict(complete)
    for child, rows in zip(node.inputs, handed):
        if len(rows) < sizes[child.label][0]:
            seen[child.label] = (len(rows), sizes[child.label][1], rows)
            whole[child.label] = False
    return seen, whole


def run_every_subtree(plan: Node, run, held: Optional[int] = None, handed: Optional[dict] = None
                      ) -> dict[str, tuple[int, float, list]]:
    """Per label: records out, mean bytes per record out, and the records (`samples.run_every_subtree`)."""
    return {
        label: (len(rows), _mean_width(rows), rows)
        for label, rows in outputs_of_every_subtree(plan, run, held, handed).items()
    }


def _profile(node: Node, counter: Optional[_Counter], sizes: dict, keyed: dict) -> FunctionProfile:
    kind = "filter" if getattr(node, "is_filter", False) else node.kind
    hinted = hint_of(getattr(node, "fn", None))
    rows_in = sum(sizes[c.label][0] for c in node.inputs)
    width_in = sum(sizes[c.label][1] for c in node.inputs)
    rows_out, width_out, _ = sizes[node.label]
    calls = counter.calls if counter else 0
    if calls:
        # Laplace-style smoothing: a rare emit that the sample missed is not "never".
        selectivity = counter.emitted / calls if counter.emitted else 0.5 / (calls + 1)
        cost, origin = counter.cost_per_call(), "sample"
    else:
        selectivity, cost, origin = DEFAULT_SELECTIVITY.get(kind, 1.0), DEFAULT_COST, "default"
    if hinted.selectivity is not None or hinted.cost is not None:
        origin = "hint"
    groups_per_row = sample_groups = half_groups = None
    if isinstance(node, Reduce):
        input_rows = sizes[node.input.label][2]
        sample_groups = len({tuple(_hashable(r.get(k)) for k in node.key) for r in input_rows})
        groups_per_row = sample_groups / len(input_rows) if input_rows else None
        half = input_rows[: len(input_rows) // 2]
        half_groups = len({tuple(_hashable(r.get(k)) for k in node.key) for r in half})
    return FunctionProfile(
        label=node.label,
        calls=calls,
        selectivity=hinted.selectivity if hinted.selectivity is not None else selectivity,
        cost=hinted.cost if hinted.cost is not None else cost,
        width_ratio=(width_out / width_in) if width_in and rows_out and node.arity == 1 else 1.0,
        width_delta=(width_out - width_in) if width_in and rows_out and node.arity == 1 else None,
        groups_per_row=groups_per_row,
        sample_groups=sample_groups,
        half_groups=half_groups,
        source=origin,
        **keyed,
        **_projection(node),
    )


def _projection(node: Node) -> dict:
    """`fields_read` and `forwards_records` of a Map: how many fields the Spark backend shows
    its function per record when it projects the record (`flow.read_projection`), and
    whether it then keeps the rows as they are (nothing written)."""
    from udflow.flow import properties_of, read_projection

    shown = read_projection(node)
    if shown is None:
        return {}
    return {"fields_read": len(shown), "forwards_records": not properties_of(node).writes}

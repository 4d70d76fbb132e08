"""The physical side of the cost model: its constants, what one subtree's estimate holds, and
what moving records between partitions costs (`udflow.engine.cost` uses these).

    shuffle  = STAGE + records repartitioned * SHUFFLE_ROW + their bytes * SHUFFLE_BYTE
    bcast    = STAGE + (records broadcast * BROADCAST_ROW + their bytes * BROADCAST_BYTE) * WORKERS

Every exchange is a query stage of its own, which Spark schedules as a job whatever it
moves (`STAGE`): on small inputs that, not the records, is what separates two plans.

A Reduce's records reach their groups (`grouping`):

    in Python                every record, shuffled on the key
    a native aggregate       partial aggregation first: one record per group and input
                             split is shuffled (at most every record)
    a native group filter    the kept groups' keys: a distinct over the records the
                             predicate holds for (partial first), then a semi join that
                             broadcasts the kept keys where they fit (the input is not
                             moved: hint "broadcast_kept"), else shuffles the input on the key;
                             the input is computed twice, once for each (no exchange is shared)

and input already partitioned on the key moves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# Constants of the model, in wall-clock seconds on local[2] (2 cores), measured by
# `python -m bench.cost_calibration` (TPC-H 0.1 lineitem and orders; see docs/optimizer.md).
PY_CALL = 0.0  # per call beyond its fields: the fit's intercept is unstable across runs (-0.7..+0.9 us); the function's own time is sampled
PY_FIELD = 4.6e-7  # one value Arrow -> Python object -> Arrow: 0.44 us (lineitem, 16 fields), 0.48 us (orders, 9)
SHUFFLE_ROW = 9.2e-7  # a record of an input of a shuffled (sort-merge) join: exchange, sort, merge
SHUFFLE_BYTE = 2.0e-9  # ... and each of its bytes (the record count dominates: 2 wide vs 2 narrow fields)
# A native operator (docs/native.md): its function's model evaluated by generated code per
# record, well below a Python call; an order of magnitude, not a measured fit.
NATIVE_ROW = 2.0e-8
BROADCAST_ROW = 6.5e-7  # a record of the broadcast side: collected, hashed into a relation, sent, probed
BROADCAST_BYTE = 7.1e-9  # ... and each of its bytes
WORKERS = 1  # executor JVMs receiving a broadcast copy: one in local mode; the executors of a cluster
# A query stage whatever it moves: scheduling its job and tasks, and, for a broadcast,
# collecting to the driver. Tiny inputs on local[2] (`bench.cost_calibration`): 70-100 ms a
# broadcast, 60-85 ms a shuffle, from run to run; one constant for both.
STAGE = 0.07
MAX_BROADCAST_BYTES = 10 * 1024 * 1024  # Spark's own autoBroadcastJoinThreshold; a larger side can exhaust the driver (seen at TPC-H 0.1)

SPLITS = 4  # partitions of an input (2 x cores on local[2]); see `splits`
SPLIT_BYTES = 128 * 1024 * 1024  # spark.sql.files.maxPartitionBytes

Partitioning = frozenset  # of frozensets of fields: the data is hash-partitioned on any one of them


@dataclass(frozen=True)
class Estimate:
    """The estimate of one subtree: its output and the cost of computing it (cumulative)."""

    rows: float
    width: float  # bytes per record (Spark row bytes)
    cost: float  # seconds, the whole subtree
    python_calls: float
    shuffled: float  # bytes, the whole subtree
    broadcast: float  # bytes, the whole subtree
    partitioning: Partitioning = frozenset()
    strategy: Optional[str] = None  # this operator's physical choice (Match, Cross; "broadcast_kept": a Reduce)
    # whether the choice goes to Spark as a hint: a shuffle chosen only because no side fits a
    # broadcast by the model's full-record widths is left to Spark, which knows the columns
    # that reach the join (a native plan prunes the rest) and may broadcast after all
    hinted: bool = True
    fields: float = 1.0  # fields per record: the values each record carries into Python

    @property
    def bytes(self) -> float:
        return self.rows * self.width


@dataclass(frozen=True)
class Grouping:
    """What bringing a Reduce's records to their groups costs (`grouping`)."""

    cost: float
    shuffled: float  # bytes
    broadcast: float  # bytes
    partitioning: Partitioning
    strategy: Optional[str] = None  # "broadcast_kept": a group filter's kept keys, a Spark hint


def shuffle(est: Estimate) -> float:
    """Repartitioning an input on a key."""
    return shuffled(est.rows, est.width)


def shuffled(records: float, width: float) -> float:
    """Repartitioning `records` of `width` bytes: one stage."""
    return STAGE + records * SHUFFLE_ROW + records * width * SHUFFLE_BYTE


def broadcast(est: Estimate) -> float:
    """Sending an input whole to every worker (a broadcast join's build side)."""
    return broadcasted(est.rows, est.width)


def broadcasted(records: float, width: float) -> float:
    """Sending `records` of `width` bytes to every worker: one stage."""
    return STAGE + (records * BROADCAST_ROW + records * width * BROADCAST_BYTE) * WORKERS


def splits(est: Estimate) -> float:
    """Input splits a group's records may be spread over: the embedded session's shuffle
    partitions (`session.get_session`: 2 per core), or one per 128 MB of a larger input."""
    return max(SPLITS, est.bytes / SPLIT_BYTES)


def partitioned_on(partitioning: Partitioning, key) -> bool:
    """Hash-partitioned on a subset of `key`: equal keys are already in one partition."""
    wanted = frozenset(key)
    return any(p and p <= wanted for p in partitioning)


def grouping(kind: str, key: tuple, child: Estimate, groups: float, width: float, share: float) -> Grouping:
    """What bringing `child`'s records to their `groups` costs, for a Reduce that runs as `kind`
    ("python", "aggregate" or "group filter") and emits records of `width` bytes; `share`: the
    share of records a group filter keeps, taken for the share of groups it keeps."""
    on_key = frozenset({frozenset(key)})
    if partitioned_on(child.partitioning, key):
        return Grouping(0.0, 0.0, 0.0, on_key)
    if kind == "aggregate":
        records = min(child.rows, groups * splits(child))
        return Grouping(shuffled(records, width), records * width, 0.0, on_key)
    if kind == "group filter":
        return _kept_groups(key, child, groups * share, share, on_key)
    return Grouping(shuffle(child), child.bytes, 0.0, on_key)


def _kept_groups(key: tuple, child: Estimate, kept: float, share: float, on_key: Partitioning) -> Grouping:
    """A native group filter (`native_groups.run_group_filter`); a key's bytes are taken to be
    its share of the record's fields. Spark computes the input once for the kept keys and
    again for the semi join: the input's own cost is charged a second time."""
    key_width = child.width * min(1.0, len(key) / max(child.fields, 1.0))
    keys = min(child.rows * share, kept * splits(child))
    cost = child.cost + shuffled(keys, key_width)
    if kept * key_width <= MAX_BROADCAST_BYTES:
        sent = kept * key_width * WORKERS
        cost += broadcasted(kept, key_width)
        return Grouping(cost, keys * key_width, sent, child.partitioning, "broadcast_kept")
    return Grouping(cost + shuffle(child), keys * key_width + child.bytes, 0.0, on_key)

"""What lowering one node gives (`lower.Lowering`): its DataFrame and what is proven of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType


@dataclass(frozen=True)
class Lowered:
    """A node's DataFrame; `pickled` when it is one blob column (plus KEY when keyed)."""

    df: DataFrame
    pickled: bool
    input_schema: Optional[StructType] = None  # pickled: the schema its fields may inherit
    nonnull: frozenset = frozenset()  # fields a native operator (or a join's key) proves never None
    magnitudes: dict = field(default_factory=dict)  # field -> its largest magnitude, proven natively below
    nonzero: frozenset = frozenset()  # fields a native operator below proves never 0 (a group's count)
    # pickled: the node run again with typed output, for a consumer that needs columns: one
    # pass, not pickled records persisted, sampled and decoded (None: no such way)
    run_typed: Optional[Callable[[], Optional[DataFrame]]] = None

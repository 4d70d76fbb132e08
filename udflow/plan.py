"""Plan nodes: the operator tree of a data flow, as frozen dataclasses.

A plan is a tree whose leaves are `Source`s and whose inner nodes are the five
PACTs of the paper (section 2.3): `Map` (and its special case, the filter),
`Reduce`, `Match`, `Cross` and `CoGroup`. Nodes are immutable and compare by
structure (functions by identity), so rewrites build new trees and two plans
that reach the same shape are equal.

Every node carries a `label`, unique within a tree: it is how operators are
named in errors, in `explain` and in the optimizer's facts.

    Reduce[s_nationkey](volume)
      Match(l_suppkey=s_suppkey)
        Map(shipped_in_95_96)
          Source(lineitem)
        Source(supplier)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

Fields = tuple[str, ...]


@dataclass(frozen=True)
class ForeignKey:
    """`fields` of a source reference the primary key `target_fields` of table `target`."""

    fields: Fields
    target: str
    target_fields: Fields


@dataclass(frozen=True)
class Node:
    label: str

    kind = "node"
    arity = 0

    @property
    def inputs(self) -> tuple["Node", ...]:
        return ()

    def with_inputs(self, *inputs: "Node") -> "Node":
        """The same operator over other inputs (a rewrite's building block)."""
        names = [f.name for f in dataclasses.fields(self) if f.name in ("input", "left", "right")]
        if len(names) != len(inputs):
            raise ValueError(f"{self.label} takes {len(names)} inputs, got {len(inputs)}")
        return dataclasses.replace(self, **dict(zip(names, inputs)))

    def walk(self) -> Iterator["Node"]:
        """Every node of the tree, parents before children."""
        yield self
        for child in self.inputs:
            yield from child.walk()

    @property
    def function(self) -> Optional[Callable]:
        return getattr(self, "fn", None)

    def describe(self) -> str:
        return self.label

    def __str__(self) -> str:
        return draw(self)


@dataclass(frozen=True)
class Source(Node):
    """A base data set. `fields` are its (prefixed) column names in order.

    Where its records come from is told by `format`:

        None          in-memory `rows` (already prefixed)
        "parquet"     the file or folder at `path`
        "csv"         the file or folder at `path`, its columns typed by `types`
        "dataframe"   a Spark DataFrame (`catalog_table` when it is a table of the catalog)

    `types` are (column, Spark type) pairs where udflow knows them: a CSV's (declared or
    inferred) and a DataFrame's, for all its columns (`columns` may keep fewer: `fields=`).
    A DataFrame compares by identity, as Spark's do.
    """

    table: str
    fields: Fields
    columns: Fields
    key: Optional[Fields] = None
    foreign_keys: tuple[ForeignKey, ...] = ()
    prefix: str = ""
    path: Optional[str] = None
    format: Optional[str] = None
    rows: tuple[dict, ...] = field(default=(), compare=False, repr=False)
    types: tuple[tuple[str, str], ...] = ()
    dataframe: Any = field(default=None, repr=False)
    catalog_table: Optional[str] = None

    kind = "source"

    @property
    def in_memory(self) -> bool:
        return self.format is None

    @property
    def is_dataframe(self) -> bool:
        return self.format == "dataframe"

    def column_of(self, field_name: str) -> str:
        """The table's own column name behind a (prefixed) field."""
        return self.columns[self.fields.index(field_name)]


@dataclass(frozen=True)
class Map(Node):
    """Map PACT: `fn(record)` per record. A filter is a Map whose `fn` is a predicate."""

    input: Node
    fn: Callable
    is_filter: bool = False

    kind = "map"
    arity = 1

    @property
    def inputs(self):
        return (self.input,)


@dataclass(frozen=True)
class Reduce(Node):
    """Reduce PACT: `fn(rows)` once per group of records equal on `key`."""

    input: Node
    key: Fields
    fn: Callable

    kind = "reduce"
    arity = 1

    @property
    def inputs(self):
        return (self.input,)


@dataclass(frozen=True)
class Match(Node):
    """Match PACT (equi-join): `fn(left, right)` for every pair with left_key == right_key.

    `fn=None` is the concatenation `{**left, **right}`. None never equals
    anything (SQL semantics), so records with a None key find no partner.
    """

    left: Node
    right: Node
    left_key: Fields
    right_key: Fields
    fn: Optional[Callable] = None

    kind = "match"
    arity = 2

    @property
    def inputs(self):
        return (self.left, self.right)


@dataclass(frozen=True)
class Cross(Node):
    """Cross PACT (Cartesian product): `fn(left, right)` for every pair."""

    left: Node
    right: Node
    fn: Optional[Callable] = None

    kind = "cross"
    arity = 2

    @property
    def inputs(self):
        return (self.left, self.right)


@dataclass(frozen=True)
class CoGroup(Node):
    """CoGroup PACT: `fn(left_rows, right_rows)` once per key value of either input."""

    left: Node
    right: Node
    left_key: Fields
    right_key: Fields
    fn: Callable

    kind = "cogroup"
    arity = 2

    @property
    def inputs(self):
        return (self.left, self.right)


def function_name(fn: Any) -> str:
    """A short readable name for a user function (lambdas get their line)."""
    if fn is None:
        return "concat"
    inner = getattr(fn, "func", None)  # functools.partial
    if inner is not None and not hasattr(fn, "__code__"):
        return f"partial({function_name(inner)})"
    name = getattr(fn, "__name__", None) or type(fn).__name__
    if name == "<lambda>":
        code = getattr(fn, "__code__", None)
        return f"lambda@{code.co_firstlineno}" if code else "lambda"
    return name


def function_location(fn: Any) -> str:
    """`qualified.name (file.py:12)` for messages; best effort for callables without code."""
    if fn is None:
        return "concat"
    target = getattr(fn, "func", fn)
    qualname = getattr(target, "__qualname__", None) or repr(target)
    module = getattr(target, "__module__", None)
    code = getattr(target, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code else ""
    full = f"{module}.{qualname}" if module and module != "__main__" else qualname
    return f"{full}{where}"


def draw(node: Node, annotate: Callable[[Node], str] | None = None) -> str:
    """The plan as an indented tree, root first; `annotate` adds text after each node."""
    lines: list[str] = []

    def visit(n: Node, depth: int) -> None:
        extra = annotate(n) if annotate else ""
        lines.append("  " * depth + n.describe() + (f"  {extra}" if extra else ""))
        for child in n.inputs:
            visit(child, depth + 1)

    visit(node, 0)
    return "\n".join(lines)


@dataclass(frozen=True)
class OperatorType:
    """A user-registered operator type (see udflow.rules registry and docs/writing-rules.md).

    - `reference(bags, params)`: its bag semantics for the reference interpreter,
      given one list of dicts per input; returns a list of dicts.
    - `spark(dataframes, params)`: optional lowering to PySpark DataFrames; when
      None the backend runs `reference` per partition only if `arity == 1` and
      the type declares `record_at_a_time=True`, else it refuses.
    - `properties(input_fields, params)`: its UdfProperties (reads, writes, ...).
    - `output_fields(input_fields, params)`: the fields its records may carry.
    """

    name: str
    arity: int
    reference: Callable[[list, dict], list]
    output_fields: Callable[[tuple, dict], Optional[frozenset]]
    properties: Optional[Callable[[tuple, dict], Any]] = None
    spark: Optional[Callable[[list, dict], Any]] = None
    record_at_a_time: bool = False
    disjoint_inputs: bool = True  # False for e.g. a union, whose inputs share their fields


@dataclass(frozen=True)
class Custom(Node):
    """An operator of a registered `OperatorType` over `args` (its inputs)."""

    op_type: OperatorType
    args: tuple[Node, ...]
    params: tuple[tuple[str, Any], ...] = ()

    kind = "custom"

    @property
    def arity(self) -> int:  # type: ignore[override]
        return self.op_type.arity

    @property
    def inputs(self):
        return self.args

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    def with_inputs(self, *inputs: Node) -> Node:
        if len(inputs) != self.op_type.arity:
            raise ValueError(f"{self.label} takes {self.op_type.arity} inputs, got {len(inputs)}")
        return dataclasses.replace(self, args=tuple(inputs))

"""The physical plan: how each operator of a logical plan runs on Spark.

A logical plan (`udflow.plan`) says what is computed; its physical plan says,
for every operator, how: which engine runs its function, which of its terms run
as Python inside a native plan, the columns a Python function is shown, whether
its records leave it as columns or pickled, and the join or grouping strategy.
It is decided once per plan, from the function models (`udflow.engine.steps`),
and read by the cost model, by `explain` and by the Spark lowering, so the three
cannot disagree about what they plan, estimate and run.

    >>> print(flow.physical())
    Reduce[k](revenue)  native
    Map(parse)          Python (batches): calls re.match, which has no exact native form (line 12)
    Source(orders)      native scan

How an operator runs (`Step.how`):

    scan         a source read by Spark
    join         a Match or Cross without a function: Spark's equi-join or cross join
    native       the function's model as Spark columns (`docs/native.md`); the terms that
                 have no exact native form run as Arrow UDFs inside it (`python_terms`)
    scalar       an Arrow scalar UDF over the columns the function reads, inside Catalyst's
                 plan: a filter's predicate, or a `{**r, ...}` Map's struct of written fields
    forwarding   the function per record over Arrow batches, each input row kept as often
                 as the function emits it unchanged
    projected    the function per record, shown only `reads`, each emitted record completed
                 from its input row
    batches      the function per record, per pair or per group over Arrow batches
    operator     a custom operator type's own Spark lowering

A native step still names the Python step it would take (`fallback`): the model
is exact for some input types only (a float mixed with a Decimal has no exact
native form), so the lowering, which sees the types, may take the fallback and
records why (`Lowering.python_reasons`). Likewise a scalar Map whose written
fields cannot be typed from the driver's sample runs as `projected`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

HOWS = ("scan", "join", "native", "scalar", "forwarding", "projected", "batches", "operator")
PYTHON_HOWS = ("scalar", "forwarding", "projected", "batches")


@dataclass(frozen=True)
class Step:
    """How one operator runs. `reason`: for a Python step, the construct that kept its
    function out of the native form, with its line; `python_terms`: for a native step, the
    calls that run as Python inside it; `reads`: the fields a Python function is shown, or
    a Reduce's groups carry (None: all of them); `pickled`: its records leave it as one
    pickled column rather than typed columns (Spark needs a schema before a function that
    creates fields has run)."""

    label: str
    how: str
    reason: str = ""
    python_terms: tuple[str, ...] = ()
    fallback: Optional["Step"] = None  # a native step: the Python step taken where its input's types need it
    reads: Optional[frozenset[str]] = None
    columns: Optional[frozenset[str]] = None  # the fields of its records, where the analysis knows them
    pickled: bool = False
    strategy: str = ""  # a join's or grouping's physical strategy, given to Spark as a hint
    model: Any = field(default=None, compare=False, repr=False)  # the model a native step runs

    def __post_init__(self) -> None:
        if self.how not in HOWS:
            raise ValueError(f"{self.label}: unknown way to run {self.how!r}; one of {HOWS}")

    @property
    def native(self) -> bool:
        return self.how == "native"

    @property
    def in_python(self) -> bool:
        return self.how in PYTHON_HOWS

    @property
    def as_python(self) -> "Step":
        """The step as it runs in Python: its fallback where it is native."""
        return self.fallback if self.fallback is not None else self

    def describe(self) -> str:
        """One phrase for people: `native`, `native, with Python for str.lower (line 3)`,
        `Python (batches): calls re.match, which has no model (line 12)`."""
        if self.how == "scan":
            return "native scan"
        if self.how == "join":
            return f"native join ({self.strategy})" if self.strategy else "native join"
        if self.how == "operator":
            return "its operator type's own lowering"
        if self.native:
            text = "native" if not self.python_terms else f"native, with Python for {'; '.join(self.python_terms)}"
            return f"{text} ({self.strategy})" if self.strategy else text
        word = {"scalar": "scalar UDF"}.get(self.how, self.how)
        return f"Python ({word}): {self.reason}" if self.reason else f"Python ({word})"


@dataclass(frozen=True)
class PhysicalPlan:
    """The steps of a plan's operators, parents before children (as `Node.walk`); `native`:
    whether functions with an exact native form run natively (False: every one in Python)."""

    steps: tuple[Step, ...]
    native: bool = True

    @property
    def root(self) -> Step:
        """The step of the plan's root operator."""
        return self.steps[0]

    def __getitem__(self, label: str) -> Step:
        for step in self.steps:
            if step.label == label:
                return step
        raise KeyError(f"the physical plan has no operator {label!r}")

    def get(self, label: str) -> Optional[Step]:
        return next((s for s in self.steps if s.label == label), None)

    def lines(self) -> list[str]:
        """One line per operator: its label and how it runs."""
        width = max((len(s.label) for s in self.steps), default=0)
        return [f"{s.label:<{width}}  {s.describe()}" for s in self.steps]

    def __str__(self) -> str:
        return "\n".join(self.lines())

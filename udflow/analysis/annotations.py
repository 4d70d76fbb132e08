"""Manual annotations (the paper's alternative to code analysis): the user
states the properties, `optimize(..., properties="manual")` trusts them.

    @uf.annotate(reads={"l_shipdate"}, writes=set(), emits=(0, 1))
    def shipped_in_95(r): ...

A wrong annotation gives wrong results. So with `properties="analysis"`,
`analyze` compares an annotation against what the analysis found and warns
(`AnnotationWarning`) when the annotation claims fewer reads or writes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Iterable, Optional

from udflow.analysis.properties import Evidence, UdfProperties
from udflow.errors import AnalysisError
from udflow.plan import function_location

ATTRIBUTE = "__udflow_annotation__"


class AnnotationWarning(UserWarning):
    """An annotation claims fewer reads or writes than the analysis found."""


@dataclass(frozen=True)
class Annotation:
    reads: frozenset
    writes: frozenset
    emits: tuple
    card_reads: Optional[frozenset] = None
    output_fields: Optional[frozenset] = None
    copy: bool = False


def _fields(value, what: str) -> frozenset:
    if isinstance(value, str):
        return frozenset({value})
    try:
        out = frozenset(value)
    except TypeError:
        raise AnalysisError(f"annotate: {what}= must be a set of field names, got {value!r}") from None
    if not all(isinstance(v, str) for v in out):
        raise AnalysisError(f"annotate: {what}= must contain field names (str), got {sorted(map(repr, out))}")
    return out


def _emits(value) -> tuple:
    if isinstance(value, int):
        value = (value, value)
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise AnalysisError(f"annotate: emits= must be (lower, upper) or an int, got {value!r}") from None
    if not isinstance(lo, int) or lo < 0 or (hi is not None and (not isinstance(hi, int) or hi < lo)):
        raise AnalysisError(f"annotate: emits= must be 0 <= lower <= upper (upper None = unbounded), got {value!r}")
    return (lo, hi)


def annotate(reads: Iterable[str] = (), writes: Iterable[str] = (), emits=(0, None), *,
             card_reads: Optional[Iterable[str]] = None, output_fields: Optional[Iterable[str]] = None,
             copy: bool = False):
    """Decorator: declare a function's properties by hand.

    `reads`/`writes`: field names; `emits`: (lower, upper) records per call
    (upper None = unbounded) or an int; `card_reads`: the fields deciding how
    many records are emitted (default: `reads`); `output_fields`: the fields an
    output record carries (default: input fields plus `writes`); `copy`: the
    function copies its input record(s) implicitly.
    """
    ann = Annotation(
        reads=_fields(reads, "reads"),
        writes=_fields(writes, "writes"),
        emits=_emits(emits),
        card_reads=None if card_reads is None else _fields(card_reads, "card_reads"),
        output_fields=None if output_fields is None else _fields(output_fields, "output_fields"),
        copy=bool(copy),
    )

    def mark(f):
        try:
            setattr(f, ATTRIBUTE, ann)
        except (AttributeError, TypeError):
            raise AnalysisError(f"annotate: cannot annotate {f!r} (it does not take attributes); wrap it in a def") from None
        return f

    return mark


def annotation_of(f) -> Optional[Annotation]:
    ann = getattr(f, ATTRIBUTE, None)
    if ann is None:
        ann = getattr(getattr(f, "func", None), ATTRIBUTE, None)  # functools.partial of an annotated function
    return ann if isinstance(ann, Annotation) else None


def from_annotation(f, ann: Annotation, sides: tuple, kind: str) -> UdfProperties:
    inputs = frozenset().union(*sides) if sides else frozenset()
    writes = frozenset() if kind == "filter" else ann.writes
    if ann.output_fields is not None:
        output = ann.output_fields
    elif kind == "filter":
        output = inputs or None
    else:
        output = (inputs | writes) if inputs else None
    side_reads = []
    for s in sides:
        mine = ann.reads & s
        unplaced = ann.reads - inputs
        side_reads.append(frozenset(mine | unplaced))
    where = function_location(f)
    return UdfProperties(
        kind=kind,
        reads=ann.reads,
        writes=writes,
        emits=(0, 1) if kind == "filter" else ann.emits,
        card_reads=ann.reads if ann.card_reads is None else ann.card_reads,
        copy=True if kind == "filter" else ann.copy,
        pure=True,
        output_fields=output,
        new_fields=(writes - inputs) if inputs else frozenset(),
        side_reads=tuple(side_reads),
        evidence=(Evidence("annotation", None, 0, "", "", f"declared with @annotate on {where}"),),
        origin="annotation",
        location=where,
    )


def check(f, ann: Annotation, found: UdfProperties) -> None:
    """Warn when the annotation claims fewer reads or writes than the analysis found.

    Only a pure analysis result is compared: an impure one did not find
    fields, it gave up (and is then used as "reads and writes everything").
    """
    if not found.pure:
        return
    problems = []
    for prop, claimed, actual in (("reads", ann.reads, found.reads), ("writes", ann.writes, found.writes)):
        missing = sorted(actual - claimed)
        if missing:
            lines = ", ".join(
                f"{m} (line {found.lines_for(prop, m)[0]})" if found.lines_for(prop, m) else m for m in missing
            )
            problems.append(f"{prop} {lines}")
    if problems:
        warnings.warn(
            f"the annotation of {found.location or function_location(f)} claims fewer reads/writes than the "
            f"analysis found; missing: {'; '.join(problems)}. A wrong annotation gives wrong results "
            f'with properties="manual"',
            AnnotationWarning,
            stacklevel=3,
        )

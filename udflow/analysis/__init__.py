"""Static analysis of Python UDFs: open the black boxes (paper, section 5).

    analyze(f, input_fields, kind)          -> UdfProperties (cached)
    manual_properties(f, input_fields, kind) -> from @annotate, else analyze
    annotate(reads=..., writes=..., emits=...)

`input_fields` is the set of fields of the input records, or for the binary
kinds (match, cross, cogroup) a pair (left_fields, right_fields). It may be
empty when the caller does not know the schema; the answer is then
conservative where it needs the schema. Every set in the answer is a superset
of the truth for every input (safety through conservatism); see
docs/analysis.md for what is analysed and what makes a function impure.
"""

from __future__ import annotations

from functools import lru_cache

from udflow.analysis.analyzer import run as _run
from udflow.analysis.annotations import AnnotationWarning, annotate, annotation_of, check, from_annotation
from udflow.analysis.outside import snapshot
from udflow.analysis.properties import BINARY_KINDS, KINDS, Evidence, UdfProperties
from udflow.errors import AnalysisError


def _sides(input_fields, kind: str) -> tuple:
    if kind not in KINDS:
        raise AnalysisError(f"unknown function kind {kind!r}; use one of {', '.join(KINDS)}")
    if kind in BINARY_KINDS:
        if not input_fields:
            return (frozenset(), frozenset())
        try:
            left, right = input_fields
        except (TypeError, ValueError):
            raise AnalysisError(
                f"a {kind} function takes two inputs: pass input_fields as (left_fields, right_fields)"
            ) from None
        return (frozenset(left or ()), frozenset(right or ()))
    if isinstance(input_fields, str):
        return (frozenset({input_fields}),)
    return (frozenset(input_fields or ()),)


@lru_cache(maxsize=8192)
def _cached(f, sides: tuple, kind: str, outside: tuple) -> UdfProperties:
    """`outside`: the values `f` reads from outside its code (`outside.snapshot`), so that a
    global or closure value rebound since the last call means a new analysis."""
    return _run(f, sides, kind)


def analyze(f, input_fields=(), kind: str = "map") -> UdfProperties:
    """The properties of `f` as an operator function of `kind` over `input_fields`."""
    sides = _sides(input_fields, kind)
    try:
        result = _cached(f, sides, kind, snapshot(f))
    except TypeError:  # an unhashable callable: analyse without caching
        result = _run(f, sides, kind)
    ann = annotation_of(f)
    if ann is not None:
        check(f, ann, result)
    return result


def manual_properties(f, input_fields=(), kind: str = "map") -> UdfProperties:
    """For `properties="manual"`: the annotation when there is one, else the analysis."""
    ann = annotation_of(f)
    if ann is None:
        sides = _sides(input_fields, kind)
        try:
            return _cached(f, sides, kind, snapshot(f))
        except TypeError:
            return _run(f, sides, kind)
    return from_annotation(f, ann, _sides(input_fields, kind), kind)


def clear_cache() -> None:
    """Forget every cached result (benchmarks measure a cold cache)."""
    from udflow.analysis.source import _index

    _cached.cache_clear()
    _index.cache_clear()


__all__ = [
    "analyze",
    "manual_properties",
    "annotate",
    "clear_cache",
    "UdfProperties",
    "Evidence",
    "AnnotationWarning",
    "KINDS",
    "BINARY_KINDS",
]

"""Static analysis of Python UDFs (paper, section 5).

PLACEHOLDER until the analysis issue lands: every function is opaque (impure),
which is the conservative answer, except filters, whose output carries exactly
the input fields.
"""

from __future__ import annotations

from typing import Optional

from udflow.analysis.properties import Evidence, UdfProperties, KINDS, BINARY_KINDS
from udflow.plan import function_location


def analyze(f, input_fields, kind: str = "map") -> UdfProperties:
    if kind in BINARY_KINDS:
        sides = tuple(frozenset(s) for s in input_fields)
    else:
        sides = (frozenset(input_fields),)
    every = frozenset().union(*sides)
    is_filter = kind == "filter"
    return UdfProperties(
        kind=kind,
        reads=every,
        writes=frozenset() if is_filter else every,
        emits=(0, 1) if is_filter else (0, None),
        card_reads=every,
        copy=is_filter,
        pure=False,
        output_fields=every if is_filter else None,
        side_reads=sides,
        origin="opaque",
        location=function_location(f),
    )


__all__ = ["analyze", "UdfProperties", "Evidence", "KINDS", "BINARY_KINDS"]

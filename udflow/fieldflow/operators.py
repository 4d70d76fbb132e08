"""One operator at one place of a plan: the slots of its output records, given its inputs'.

The function is analysed for the fields its inputs carry *there* (`analysis.analyze` over
the input states' field names), so a binary function's outputs follow its position: an
outer CoGroup emitting `{**l, "b_k": None}` carries whatever its left input carries where
the plan puts it. How each output field follows from the inputs is read off the
analysis' `EmitShape`s; where the analysis cannot say (an impure or opaque function, an
internal error) the operator is opaque (`state.opaque_state`). Functions without emit
shapes (annotations, custom operator types) get the coarse reading of their properties:
every field they write may hold their own value or the input's, and may be missing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from udflow.analysis.properties import EmitShape
from udflow.fieldflow.state import RecordState, emit, join, opaque_state, source_state
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Reduce, Source


@dataclass(frozen=True)
class Step:
    """One operator at one place: its input states, what its function reads from each input
    (None: anything, an opaque function), its keys per input, its output and collisions."""

    label: str
    inputs: tuple
    reads: Optional[tuple]
    keys: tuple
    output: RecordState
    collisions: frozenset

    @functools.cached_property
    def lowered(self) -> frozenset:
        """The fields an input surely carries that a record leaving the operator may lack."""
        sure = {n for state in self.inputs for n, slot in state.slots.items() if slot.sure}
        out = self.output.slots
        return frozenset(n for n in sure if n not in out or not out[n].sure)


def step(node: Node, inputs: tuple, manual: bool = False) -> Step:
    """`node` over input records in `inputs` (one `RecordState` per input)."""
    keys = _keys(node)
    if isinstance(node, (Match, Cross)) and node.fn is None:
        out, collisions = emit(_concatenation(inputs), node.label, inputs)
        return Step(node.label, inputs, tuple(frozenset() for _ in inputs), keys, out, collisions)
    props = _properties(node, inputs, manual)
    if props is None or not props.pure or props.origin in ("opaque", "internal"):
        return Step(node.label, inputs, None, keys, opaque_state(node.label, inputs), frozenset())
    reads = tuple(props.side_reads) if len(props.side_reads) == len(inputs) else None
    if isinstance(node, Map) and node.is_filter:
        return Step(node.label, inputs, reads, keys, inputs[0], frozenset())
    shapes = props.emitted if props.emitted is not None else _coarse_shapes(node, props, inputs)
    made = [emit(shape, node.label, inputs) for shape in shapes]
    collisions = frozenset().union(*(c for _, c in made)) if not isinstance(node, Custom) else frozenset()
    return Step(node.label, inputs, reads, keys, join([s for s, _ in made]), collisions)


def source(node: Source) -> RecordState:
    return source_state(node.label, node.fields)


def _keys(node: Node) -> tuple:
    if isinstance(node, Reduce):
        return (tuple(node.key),)
    if isinstance(node, (Match, CoGroup)):
        return (tuple(node.left_key), tuple(node.right_key))
    return tuple(() for _ in node.inputs)


def _concatenation(inputs: tuple) -> EmitShape:
    """`{**left, **right}`: every field of both; the right one's value where both have it."""
    left, right = inputs
    carried = [(n, 0) for n in left.names() - right.names()] + [(n, 1) for n in right.names()]
    return EmitShape(carried=tuple(sorted(carried)), copied=frozenset({0, 1}), maybe_copied=frozenset({0, 1}))


def _properties(node: Node, inputs: tuple, manual: bool):
    from udflow import analysis

    names = tuple(state.names() for state in inputs)
    if isinstance(node, Custom):
        make = node.op_type.properties
        return None if make is None else make(names, node.param_dict)
    kind = "filter" if isinstance(node, Map) and node.is_filter else node.kind
    spec = names if len(names) == 2 else names[0]
    reader = analysis.manual_properties if manual else analysis.analyze
    try:
        return reader(node.fn, spec, kind=kind)
    except Exception:  # noqa: BLE001 - an annotation that does not fit: nothing is known
        return None


def _coarse_shapes(node: Node, props, inputs: tuple) -> tuple:
    """Properties without emit shapes (annotations, custom operator types), read
    conservatively: a written field may hold the operator's value or its input's, and may be
    missing; an implicit copy copies its inputs. A custom operator whose inputs may share
    fields (a union: `OperatorType.disjoint_inputs` False) emits records of one input each."""
    if isinstance(node, Custom) and not node.op_type.disjoint_inputs:
        return tuple(_coarse(props, inputs, (i,)) for i in range(len(inputs)))
    return (_coarse(props, inputs, tuple(range(len(inputs)))),)


def _coarse(props, inputs: tuple, sides: tuple) -> EmitShape:
    changed = props.values_changed()
    outputs = props.output_fields
    carried = [(n, i) for i in sides for n in inputs[i].names()
               if n not in changed and (props.copy or outputs is None or n in outputs)]
    computed = frozenset(changed if outputs is None else changed & outputs)
    copied = frozenset(sides) if props.copy else frozenset()
    return EmitShape(carried=tuple(carried), computed=computed, blended=computed,
                     maybe_missing=frozenset(props.writes), copied=copied, maybe_copied=copied)

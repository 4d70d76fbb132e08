"""What a record may carry at one place of a plan: for each field, whether it is surely
there and which operators may have given it its value.

A `Slot` is one field's abstract value. `origins` are the labels of the sources and
operators whose value the field may hold; `sure` says the field is there whenever the
records it came from had it (a source's own fields are sure: a source row without one is
the same row in every plan). A `RecordState` is a record's slots plus `wild`: the
operators that may have added fields nobody knows (an opaque function). A field not among
the slots is absent, or, where `wild` is not empty, maybe there with a value from one of
those operators.

    Source(a) {a_k, a_v}     ->  a_k: sure {Source(a)}   a_v: sure {Source(a)}
    Map(add_x)  {**r, "x": 1} ->  ... and x: sure {Map(add_x)}
    Map(opaque)              ->  every slot maybe, origins + {Map(opaque)}; wild {Map(opaque)}

The shape of an emitted record (`udflow.analysis.EmitShape`) says field by field how an
operator's output slots follow from its input slots (`emit`); several shapes (several
emit sites) join (`join`): a field is sure only where every shape surely emits it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

WILD = "*"  # the collision of two inputs that may both carry unknown fields


@dataclass(frozen=True)
class Slot:
    sure: bool
    origins: frozenset

    def join(self, other: "Slot") -> "Slot":
        return Slot(self.sure and other.sure, self.origins | other.origins)

    def maybe(self) -> "Slot":
        return Slot(False, self.origins)

    def __str__(self) -> str:
        return f"{'surely' if self.sure else 'maybe'} from {', '.join(sorted(self.origins)) or 'nowhere'}"


@dataclass(frozen=True, eq=False)
class RecordState:
    """The slots of a record leaving one place of a plan (see the module docstring)."""

    slots: Mapping[str, Slot] = field(default_factory=dict)
    wild: frozenset = frozenset()

    def slot(self, name: str) -> Optional[Slot]:
        """`name`'s slot; None where the field is surely absent."""
        found = self.slots.get(name)
        if found is not None:
            return found
        return Slot(False, self.wild) if self.wild else None

    def names(self) -> frozenset:
        return frozenset(self.slots)

    def may_carry(self, name: str) -> bool:
        return name in self.slots or bool(self.wild)


def source_state(label: str, fields: Iterable[str]) -> RecordState:
    return RecordState({f: Slot(True, frozenset({label})) for f in fields})


def opaque_state(label: str, inputs: tuple) -> RecordState:
    """What an operator the analysis cannot read emits: any of its inputs' fields, with any
    value, and fields nobody knows."""
    slots: dict = {}
    for state in inputs:
        for name, s in state.slots.items():
            slots[name] = Slot(False, (slots[name].origins if name in slots else frozenset()) | s.origins | {label})
    return RecordState(slots, frozenset({label}).union(*(s.wild for s in inputs)))


def emit(shape, label: str, inputs: tuple) -> tuple[RecordState, frozenset]:
    """The state of the records one emit site makes, and the fields two copied inputs may
    both carry there (a collision: which value wins depends on the order of the copies)."""
    slots: dict = {}
    for name, side in shape.carried:
        carried = inputs[side].slot(name)
        if carried is not None:
            slots[name] = carried
    for name in shape.computed:
        own = Slot(True, frozenset({label}))
        if name in shape.blended:  # `setdefault`: the input's own value may stay
            for state in inputs:
                old = state.slot(name)
                if old is not None:
                    own = Slot(True, own.origins | old.origins)
        slots[name] = own
    for name in shape.maybe_missing & slots.keys():
        slots[name] = slots[name].maybe()
    for name in shape.removed:
        slots.pop(name, None)
    wild = frozenset().union(*(inputs[i].wild for i in shape.maybe_copied))
    return RecordState(slots, wild), _collisions(shape, inputs)


def _collisions(shape, inputs: tuple) -> frozenset:
    copied = sorted(shape.maybe_copied)
    if len(copied) < 2:
        return frozenset()
    left, right = (inputs[i] for i in copied[:2])
    shared = {n for n in left.names() | right.names() if left.may_carry(n) and right.may_carry(n)}
    if left.wild and right.wild:
        shared.add(WILD)
    overridden = shape.computed - shape.blended  # set after the copies: the copies' values are gone
    return frozenset(shared - overridden - shape.removed)


def join(states: list) -> RecordState:
    """Records that come from any of several emit sites (none: the operator emits nothing)."""
    if not states:
        return RecordState()
    names = frozenset().union(*(s.names() for s in states))
    slots = {}
    for name in names:
        found = [s.slot(name) for s in states]
        present = [s for s in found if s is not None]
        slot = present[0]
        for s in present[1:]:
            slot = slot.join(s)
        slots[name] = slot if len(present) == len(found) else slot.maybe()
    return RecordState(slots, frozenset().union(*(s.wild for s in states)))

"""The field-flow check of a whole alternative against the plan as written.

Law: two plans made of the same operators compute the same records only if every operator
reads, in both, the same fields from the same operators (with the same certainty that they
are there), no concatenation meets a field on both inputs that it did not meet as written,
and the records leaving the plan carry the same fields from the same operators. The rules
prove each exchange locally; this re-derives the field flow of the whole plan, bottom up,
with no code shared with them, and refuses what slipped between two local proofs.

    as written                         alternative                       refused:
      Match(concat)                      Match(concat)                   both inputs of
        Map(add_x)                         Map(add_x)                    Match(concat) may
          Source(a)                          Source(a)                   carry x
        Map(opaque)     may write any      Map(opaque)
          Source(b)       field              Source(b)
    (Map(add_x) on top of the Match, as written, overwrote whatever x the opaque Map wrote)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from udflow.fieldflow.operators import Step, source, step
from udflow.fieldflow.state import WILD, RecordState, join
from udflow.plan import Node, Source


@dataclass(frozen=True)
class Problem:
    """Why an alternative is refused: what differs, on which field, at which operators."""

    what: str  # "read", "collision", "output"
    field: str
    operators: tuple
    detail: str

    def __str__(self) -> str:
        name = "unknown fields" if self.field == WILD else self.field
        return f"{' / '.join(self.operators)}: {self.what} of {name}: {self.detail}"


@dataclass(frozen=True)
class FieldFlowVerdict:
    """The check's answer for one plan: `problems` (empty: it passes) and `relied_on`, the
    fields it compared: (operator, field, where its value comes from in both plans)."""

    problems: tuple = ()
    relied_on: tuple = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.ok:
            return f"field flow: the same as written ({len(self.relied_on)} reads compared)"
        return "field flow differs from the plan as written:\n" + "\n".join(f"  - {p}" for p in self.problems)


class FieldFlow:
    """The plan as written's field flow, against which alternatives are checked.

        flow_check = FieldFlow(flow.root)
        flow_check.check(alternative_root)   # -> FieldFlowVerdict
    """

    def __init__(self, written: Node, properties: str = "analysis"):
        self.manual = properties == "manual"
        self._steps: dict[int, tuple[Node, object]] = {}  # id -> (node, Step or RecordState)
        self.written_root = self.state(written)
        self.written = _by_label(self._walk(written))

    def state(self, node: Node) -> RecordState:
        """The records leaving `node`."""
        found = self._at(node)
        return found if isinstance(found, RecordState) else found.output

    def check(self, root: Node) -> FieldFlowVerdict:
        steps = _by_label(self._walk(root))
        problems, relied = [], []
        for label, here in steps.items():
            there = self.written.get(label)
            if there is None:
                problems.append(Problem("read", WILD, (label,), "the operator is not in the plan as written"))
                continue
            problems += _reads(here, there, relied)
            problems += _collisions(here, there)
            problems += _certainty(here, there)
        problems += _outputs(self.written_root, self.state(root))
        return FieldFlowVerdict(tuple(problems), tuple(relied))

    def _at(self, node: Node):
        hit = self._steps.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        if isinstance(node, Source):
            found = source(node)
        else:
            found = step(node, tuple(self.state(c) for c in node.inputs), self.manual)
        self._steps[id(node)] = (node, found)  # the node is kept alive: its id is not reused
        return found

    def _walk(self, root: Node) -> list:
        return [self._at(n) for n in root.walk() if not isinstance(n, Source)]


def _by_label(steps: list) -> dict:
    """Per operator label, its steps merged: an operator a rewrite copied into both inputs of
    a union (the copy labelled with a `'`) reads, over its copies, what it read once as written."""
    merged: dict = {}
    for s in steps:
        label = s.label.rstrip("'")
        before = merged.get(label)
        if before is None:
            merged[label] = s
            continue
        reads = None if before.reads is None or s.reads is None else \
            tuple(a | b for a, b in zip(before.reads, s.reads))
        merged[label] = Step(label, tuple(join([a, b]) for a, b in zip(before.inputs, s.inputs)), reads,
                               s.keys if s.keys == before.keys else (), join([before.output, s.output]),
                               before.collisions | s.collisions)
    return merged


def _read_fields(here: Step, there: Step, side: int) -> Optional[frozenset]:
    """The fields the operator's function and keys read from input `side` in either plan;
    None: anything. A key the rules rewrote (a Reduce's key across a foreign key) is the key
    rules' concern (Z3's proof), not compared here."""
    if here.reads is None or there.reads is None:
        return None
    fields = here.reads[side] | there.reads[side]
    if here.keys == there.keys and side < len(here.keys):
        fields |= frozenset(here.keys[side])
    return fields


def _reads(here: Step, there: Step, relied: list) -> list:
    problems = []
    for side, (now, before) in enumerate(zip(here.inputs, there.inputs)):
        fields = _read_fields(here, there, side)
        everything = fields is None
        if everything:
            fields = now.names() | before.names()
            if now.wild != before.wild:
                problems.append(Problem("read", WILD, (here.label,),
                                        f"it reads every field; unknown fields may come from "
                                        f"{_labels(now.wild)} here, {_labels(before.wild)} as written"))
        for name in sorted(fields):
            a, b = now.slot(name), before.slot(name)
            if a == b:
                relied.append((here.label, name, str(a) if a else "absent"))
                continue
            problems.append(Problem("read", name, (here.label,),
                                    f"{'it reads every field; ' if everything else ''}"
                                    f"as written {b or 'absent'}, here {a or 'absent'}"))
    return problems


def _collisions(here: Step, there: Step) -> list:
    """A concatenation (or a function copying both inputs) meets a field on both inputs
    exactly where it met the same field, from the same operators, as written: a collision
    the alternative adds changes which value is kept, and one it removes skips the error
    (`FieldCollisionError`) the plan as written raises, or changes the value its function kept."""
    problems = []
    for name in sorted(here.collisions | there.collisions):
        same = name in there.collisions and name in here.collisions and all(
            now.slot(name) == before.slot(name) for now, before in zip(here.inputs, there.inputs)) \
            and (name != WILD or all(n.wild == b.wild for n, b in zip(here.inputs, there.inputs)))
        if same:
            continue
        if name in here.collisions:
            origins = " and ".join(_origins(state, name) for state in here.inputs)
            detail = f"both inputs may carry it here ({origins}), not so as written"
        else:
            origins = " and ".join(_origins(state, name) for state in there.inputs)
            detail = f"as written both inputs may carry it ({origins}), not here"
        problems.append(Problem("collision", name, (here.label,), detail))
    return problems


def _certainty(here: Step, there: Step) -> list:
    """An operator makes the same fields less certain in both plans, of those it meets in both.

    A slot says "maybe" without saying when, so two "maybe"s may differ: a field an outer
    CoGroup copies from the input it always copies is as sure as that input has it; moved
    to the input it copies only where groups meet, it becomes a "maybe" that an operator
    above (`r if c else {}`) may blur with its own. Whether an operator lowers a field's
    certainty is its own decision, so it is compared where both plans show it the field."""
    common = frozenset().union(*(s.names() for s in here.inputs)) & \
        frozenset().union(*(s.names() for s in there.inputs))
    problems = []
    for name in sorted((here.lowered ^ there.lowered) & common):
        says, was = ("may lose it" if name in step.lowered else "keeps it as sure as its input has it"
                     for step in (here, there))
        problems.append(Problem("certainty", name, (here.label,), f"as written it {was}, here it {says}"))
    return problems


def _outputs(before: RecordState, now: RecordState) -> list:
    problems = []
    for name in sorted(before.names() | now.names()):
        a, b = now.slot(name), before.slot(name)
        if a != b:
            problems.append(Problem("output", name, ("the plan's output",),
                                    f"as written {b or 'absent'}, here {a or 'absent'}"))
    if before.wild != now.wild:
        problems.append(Problem("output", WILD, ("the plan's output",),
                                f"unknown fields from {_labels(before.wild)} as written, {_labels(now.wild)} here"))
    return problems


def _origins(state: RecordState, name: str) -> str:
    slot = state.slot(name) if name != WILD else None
    if slot is not None:
        return _labels(slot.origins)
    return f"any field from {_labels(state.wild)}"


def _labels(labels) -> str:
    return ", ".join(sorted(labels)) or "nowhere"

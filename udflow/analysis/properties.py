"""The properties of a user function that reordering needs (paper, sections 4.1 and 5).

`UdfProperties` is what `udflow.analysis.analyze` returns and what the rules
consume. Every set is a *superset* of the truth for every possible input: a
field the analysis is unsure about is read, written, or both. A function the
analysis cannot see through is `pure=False`, and then reads and writes every
input field and may create fields nobody knows (`output_fields=None`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

Fields = frozenset[str]

KINDS = ("map", "filter", "reduce", "match", "cross", "cogroup")
BINARY_KINDS = ("match", "cross", "cogroup")


@dataclass(frozen=True)
class Evidence:
    """Why a property holds: which property, which field (or None), where in the source."""

    prop: str  # "reads", "writes", "card_reads", "emits", "copy", "impure", "forwards_groups"
    field: Optional[str]
    line: int  # absolute line number in `file`; 0 when unknown
    file: str = ""
    text: str = ""  # the source line, stripped
    note: str = ""  # e.g. "r['a'] used in a branch condition"

    def __str__(self) -> str:
        what = f"{self.prop} {self.field}" if self.field else self.prop
        where = f" (line {self.line})" if self.line else ""
        return f"{what}{where}" + (f": {self.note}" if self.note else "")


@dataclass(frozen=True)
class RaiseSite:
    """An operation that may raise on some values of the fields it uses (section "Errors" of
    docs/analysis.md): `1 / r["x"]`, `r["d"] < START`, `int(r["s"])`, a Map's `return None`.

    - `op`: "arith" (+ - * ** and unary -), "divide" (/ // % by a value that may be 0),
      "bits" (& | ^ ~, and shifts by a constant count: TypeError unless ints or bools),
      "shift" (<< >> by a count that may be negative: ValueError),
      "order" (< <= > >=), "attribute" (`.year`), "method" (`.lower()`), "call" (`int(x)`),
      "index" (`s[0]`, `TABLE[k]`), "none" (a Map returning None, an error in both engines);
    - `fields`: the input fields whose values decide whether it raises;
    - `consts`: the Python type names of the constants among its operands;
    - `name`: the attribute, method or callable, where there is one;
    - `nonnull`: the fields an enclosing condition proved not None (`x is not None and x > 0`).
    """

    op: str
    fields: frozenset
    line: int
    consts: frozenset = frozenset()
    name: str = ""
    nonnull: frozenset = frozenset()  # fields a condition around it proved not None

    def __str__(self) -> str:
        says = _RAISE_WORDS.get(self.op, "{op} {name}").format(op=self.op, name=self.name).replace("  ", " ")
        on = f"fields {', '.join(sorted(self.fields))}; " if self.fields and self.op not in ("key", "none") else ""
        return f"{says.strip()} ({on}line {self.line})"


# What each kind of raise site is, in the user's terms (`RaiseSite.__str__`, shown by explain)
_RAISE_WORDS = {
    "key": "r[{name!r}]: KeyError where the record has no field {name!r}",
    "none": "returns None, an error for a Map",
    "arith": "arithmetic that raises on None or a mix of types",
    "divide": "a division by what may be 0",
    "bits": "a bitwise operation that raises on None or a non-int",
    "shift": "a shift by what may be negative",
    "order": "an ordering that raises on None or a mix of types",
    "contains": "an `in` that raises on None or a non-container",
    "attribute": ".{name}, which None and some types lack",
    "method": ".{name}(), which raises on None and some values",
    "call": "{name}(), which raises on some values",
    "index": "an index or look-up that may miss",
    "slice": "a slice of what may not be sliceable",
}


@dataclass(frozen=True)
class EmitShape:
    """One record a function emits, field by field, relative to its inputs (for the
    field-flow check, `udflow.fieldflow`): which fields keep an input's value, which get a
    value of the function's own, which are surely gone, and which inputs it copies whole.

    - `carried`: (field, side): the field holds input `side`'s value of the same field;
    - `computed`: fields given a value the function computes; `blended` those of them whose
      value may also be the input's own value of the field (`r.setdefault("x", 0)`);
    - `maybe_missing`: fields of the two above that some path leaves out;
    - `removed`: fields surely absent (deleted, popped);
    - `copied` / `maybe_copied`: inputs copied whole on every path / on some path, with
      fields the analysis was not told of (an input whose fields are unknown);
    - `line`: where the record is emitted.

        def f(r):                          carried  ((a, 0), (b, 0))   computed {x}
            out = {**r, "x": r["a"] + 1}   removed  {c}                copied   {0}
            del out["c"]
            return out
    """

    carried: tuple = ()
    computed: frozenset = frozenset()
    blended: frozenset = frozenset()
    maybe_missing: frozenset = frozenset()
    removed: frozenset = frozenset()
    copied: frozenset = frozenset()
    maybe_copied: frozenset = frozenset()
    line: int = 0


@dataclass(frozen=True)
class UdfProperties:
    """Read set, write set, emit bounds and the rest, for one function on one input schema.

    - `reads`: fields that may influence the output (values or number of records),
      over all inputs; `side_reads` splits them per input (one entry per input).
    - `writes`: fields whose value may differ in some output record from the input
      record: modified fields, new fields, fields projected away.
    - `emits`: (lower, upper) records emitted per call; upper None means unbounded.
    - `card_reads`: fields on which the number of emitted records depends.
    - `copy`: True iff every emit site implicitly copies its input record(s).
    - `pure`: False when the function may do anything the analysis cannot prove harmless.
    - `output_fields`: the fields an output record may carry; None when unknown.
    - `new_fields`: fields the function creates (they enter the global record).
    - `evidence`: the source lines behind each property.
    - `origin`: "analysis", "annotation", "opaque" (no source), or "internal" (the analysis
      failed: a bug in udflow, never trusted; see `analyzer.INTERNAL_ERROR`).
    - `group_copied`: (reduce, cogroup) fields copied from the group's first record.
    - `forwards_groups`: (reduce) each call emits its whole group unchanged, or nothing.
    - `forwards_sides`: (cogroup) the inputs i for which each call emits one record per
      record of its i-th group (that record, possibly extended with new fields), or nothing.
    - `state_reads`: mutable module globals / closure values the function reads.
    - `raises`: the operations that may raise on some input values (`RaiseSite`).
    - `emitted`: what each emitted record carries (`EmitShape`); None where not known
      (opaque functions, annotations).
    """

    kind: str
    reads: Fields
    writes: Fields
    emits: tuple[int, Optional[int]]
    card_reads: Fields
    copy: bool
    pure: bool
    output_fields: Optional[Fields]
    new_fields: Fields = frozenset()
    side_reads: tuple[Fields, ...] = ()
    evidence: tuple[Evidence, ...] = field(default=(), compare=False)
    origin: str = "analysis"
    location: str = ""  # "module.qualname (file.py:12)"
    # Reduce/CoGroup: fields emitted unchanged from the group's *first* record
    # (`{**rows[0], ...}`); neither read nor written, which is exact when they are
    # constant within the group (the key, or fields the key determines). See docs/analysis.md.
    group_copied: Fields = frozenset()
    # Reduce: every call emits its whole group unchanged, or nothing (f(G) = G or
    # f(G) = []). Such a Reduce keeps or drops whole key groups of any key that
    # contains its own: KGP for Reduce-Reduce reordering. See udflow/analysis/groups.py.
    forwards_groups: bool = False
    # CoGroup: the inputs i whose group G_i every call forwards record for record,
    # f(G_0, G_1) = [r | e(r) for r in G_i] or [] (e: new fields, in `writes`), hence
    # nothing when G_i is empty. Lets a group-forwarding Reduce on input i cross the
    # CoGroup (tagged union, section 4.3.2). See udflow/analysis/groups.py.
    forwards_sides: frozenset = frozenset()
    # Module globals and closure values holding mutable objects (dict, list, set) that the
    # function reads: another function of the flow may change them while the flow runs, so
    # the function is not moved across an impure operator (rules: `state_barrier`).
    state_reads: frozenset = frozenset()
    # Operations that may raise on some values of the record (see `RaiseSite`): the function
    # is not moved below an operator that may drop the records it raises on (`raise_guard`).
    raises: tuple = ()
    # The fields of `writes` the function gives a new value (not only removes or projects
    # away); None: not known apart, every write may change a value (annotations, opaque).
    changed: Optional[frozenset] = None
    # (field, family) for the fields in `changed` whose every value is never None and of one
    # type family (`udflow.field_types`): `" ".join(...)` gives "str".
    output_types: tuple = ()
    # What the function computes (`udflow.analysis.model`), where the expression IR says it
    # exactly; None with `model_reason` (the construct, its line) otherwise.
    model: Any = field(default=None, compare=False)
    model_reason: str = ""
    emitted: Optional[tuple] = None

    def values_changed(self) -> frozenset:
        """The fields whose values (hence types) may differ in an output record."""
        return self.writes if self.changed is None else self.changed

    def read_projection(self) -> Optional[Fields]:
        """The fields a record-at-a-time function must be shown, when every record it emits
        is its input record with at most the fields in `writes` changed (a filter; a map
        that is pure and copies, `{**r, ...}`): the fields it reads or writes. Every other
        field of an output record is its input record's, unchanged. None: show the whole
        record. Only the analysis' own answer is trusted, never an annotation."""
        if not (self.pure and self.origin == "analysis"):
            return None
        if self.kind == "filter":
            return self.reads
        if self.kind == "map" and self.copy:
            return self.reads | self.writes
        return None

    def group_projection(self) -> Optional[Fields]:
        """(reduce) The fields a group's records must carry for the function besides the key:
        those it reads or copies from the first record (`rows[0]["k"]`), when every record it
        emits is built from those (no input record copied whole, as `{**rows[0], ...}` does).
        None: the whole records. Only the analysis' own answer is trusted, never an annotation."""
        if self.kind != "reduce" or not (self.pure and self.origin == "analysis") or not self.emitted:
            return None
        if self.forwards_groups or any(s.copied or s.maybe_copied for s in self.emitted):
            return None
        return self.reads | self.group_copied

    def evidence_for(self, prop: str, field_name: Optional[str] = None) -> tuple[Evidence, ...]:
        return tuple(
            e for e in self.evidence if e.prop == prop and (field_name is None or e.field == field_name)
        )

    def lines_for(self, prop: str, field_name: Optional[str] = None) -> tuple[int, ...]:
        return tuple(sorted({e.line for e in self.evidence_for(prop, field_name) if e.line}))

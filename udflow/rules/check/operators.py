"""The operators' facts, recomputed from the analysis.

`op` reads an operator's `UdfProperties` (or, for a Match or Cross without a
function, the concatenation of its inputs) into an `Op`; `fact_text` writes an
`Op` as the facts a certificate must list, `effective_writes` is W of ROC, and
`attribute_origins` says where each attribute enters the plan. Nothing here is
shared with the Datalog program, which derives the same facts on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from udflow.plan import Cross, Match, Node, Source


def properties(node: Node, manual: bool):
    from udflow.analysis.properties import UdfProperties
    from udflow.flow import output_fields, properties_of

    if isinstance(node, (Match, Cross)) and node.fn is None:
        left, right = (output_fields(c) or frozenset() for c in node.inputs)
        return UdfProperties(node.kind, frozenset(), frozenset(), (1, 1), frozenset(), True, True,
                             left | right)
    return properties_of(node, manual=manual)


@dataclass(frozen=True)
class Op:
    label: str
    kind: str
    pure: bool
    copy: bool
    reads: frozenset
    body_reads: frozenset
    writes: frozenset
    outputs: Optional[frozenset]
    emits: tuple
    card_reads: frozenset
    keys: tuple
    new: frozenset
    forwards_groups: bool = False
    forwards_sides: frozenset = frozenset()


def op(node: Node, manual: bool) -> Op:
    from udflow.flow import output_fields

    p = properties(node, manual)
    keys = ()
    if hasattr(node, "key") and not isinstance(node, Source):
        keys = (tuple(node.key),)
    if hasattr(node, "left_key"):
        keys = (tuple(node.left_key), tuple(node.right_key))
    seen = frozenset().union(*(output_fields(c) or frozenset() for c in node.inputs))
    new = frozenset(p.new_fields) | (frozenset(p.output_fields) - seen if p.output_fields is not None else frozenset())
    kind = node.op_type.name if hasattr(node, "op_type") else node.kind
    return Op(node.label, kind, bool(p.pure), bool(p.copy),
              frozenset(p.reads) | frozenset(a for k in keys for a in k), frozenset(p.reads),
              frozenset(p.writes) | new, None if p.output_fields is None else frozenset(p.output_fields),
              tuple(p.emits), frozenset(p.card_reads), keys, new,
              bool(getattr(p, "forwards_groups", False)),
              frozenset(getattr(p, "forwards_sides", ())) if kind == "cogroup" else frozenset())


def fact_text(o: Op) -> set[str]:
    out = {f"kind({o.label}, {o.kind})", f"emits({o.label}, {o.emits[0]}, {o.emits[1]})",
           f"pure({o.label})" if o.pure else f"impure({o.label})",
           f"copies({o.label})" if o.copy else f"projects({o.label})"}
    if not o.copy and o.outputs is not None:
        out |= {f"outputs({o.label}, {a})" for a in o.outputs}
    out |= {f"reads({o.label}, {a})" for a in o.reads}
    out |= {f"writes({o.label}, {a})" for a in o.writes}
    out |= {f"card_reads({o.label}, {a})" for a in o.card_reads}
    for i, key in enumerate(o.keys):
        out |= {f"key({o.label}, {i}, {a})" for a in key}
    if o.kind == "reduce" and o.forwards_groups:
        out.add(f"preserves_groups({o.label})")
    out |= {f"forwards_side({o.label}, {side})" for side in o.forwards_sides}
    return out


_OP_PREDICATES = ("kind", "emits", "pure", "impure", "copies", "projects", "outputs", "reads",
                  "writes", "card_reads", "key", "preserves_groups", "forwards_side")


def about(fact: str, label: str) -> bool:
    name, _, rest = fact.partition("(")
    return name in _OP_PREDICATES and (rest.startswith(label + ", ") or rest == label + ")")


def effective_writes(o: Op, everything: frozenset) -> frozenset:
    if o.copy:
        return o.writes
    return o.writes | (everything - (o.outputs or frozenset()))


def attribute_origins(root: Node, manual: bool) -> dict[str, set]:
    """Where each attribute enters the plan; an impure operator with unknown outputs may
    create any attribute, so every attribute may enter there too (issue 28: an `x` another
    operator writes may also be the one an opaque operator made)."""
    out: dict[str, set] = {}
    mentioned: set = set()
    unknown_outputs: set = set()
    for n in root.walk():
        if isinstance(n, Source):
            for a in n.fields:
                out.setdefault(a, set()).add(n.label)
            continue
        o = op(n, manual)
        for a in o.new:
            out.setdefault(a, set()).add(n.label)
        mentioned |= o.reads | o.writes
        if o.outputs is None and not o.pure:
            unknown_outputs.add(n.label)
    for a in mentioned | set(out):
        if unknown_outputs:
            out[a] = out.get(a, set()) | unknown_outputs
    return out

"""Each built-in rule's conditions, transcribed from the paper, and the guards.

`rule_conditions` checks purity, ROC (Def. 4), KGP (Def. 5) and "does not touch
S" (Theorem 3 / Lemma 1) for the rule a certificate names, the key conditions
of Theorem 4 and invariant grouping through `keys`, and calls a user rule's own
`verify` for any other rule. `guards` checks again, written anew, what every
exchange must also meet.
"""

from __future__ import annotations

from udflow.plan import CoGroup, Match, Node, Source
from udflow.rules.check.keys import invariant, reduce_shape, theorem4
from udflow.rules.check.operators import Op, effective_writes, op, properties
from udflow.rules.check.tree import Tree, crossed_labels, find, rebuild


def _roc(a: Op, b: Op, everything: frozenset) -> list[str]:
    wa, wb = effective_writes(a, everything), effective_writes(b, everything)
    out = []
    for name, both in (("R1 ∩ W2", a.reads & wb), ("W1 ∩ R2", wa & b.reads), ("W1 ∩ W2", wa & wb)):
        if both:
            out.append(f"ROC fails between {a.label} and {b.label}: {name} = {sorted(both)}")
    return out


def _kgp(f: Op, key: tuple) -> list[str]:
    if f.emits == (1, 1):
        return []
    if f.emits[1] is None or f.emits[1] > 1:
        return [f"KGP fails: {f.label} may emit more than one record per call"]
    outside = f.card_reads - set(key)
    return [f"KGP fails: whether {f.label} emits depends on {sorted(outside)}, not in key {list(key)}"] \
        if outside else []


def _touches_crossed(o: Op, other: str, before, after, origins, everything, body_only=False) -> list[str]:
    crossed = crossed_labels(o.label, other, before, after)
    touched = (o.body_reads if body_only else o.reads) | effective_writes(o, everything)
    out = []
    for a in sorted(touched):
        where = origins.get(a, set()) & crossed
        if where:
            out.append(f"{o.label} touches {a}, which comes from {sorted(where)[0]} on the input it moves across")
    return out


def rule_conditions(cert, u: Op, l: Op, before, after, origins, everything, nodes, manual) -> list[str]:
    rule = cert.rule
    kinds = {u.kind, l.kind}
    out: list[str] = []
    for o in (u, l):
        if not o.pure:
            out.append(f"{o.label} is not pure")
    out += _roc(u, l, everything)
    product = {"match", "cross"}
    if rule == "theorem1_map_map":
        if kinds != {"map"}:
            out.append("Theorem 1 needs two Maps")
    elif rule == "theorem2_map_reduce":
        if kinds != {"map", "reduce"}:
            return out + ["Theorem 2 needs a Map and a Reduce"]
        f, g = (u, l) if u.kind == "map" else (l, u)
        out += _kgp(f, g.keys[0])
    elif rule == "theorem2_reduce_reduce":
        if kinds != {"reduce"}:
            return out + ["the remark after Theorem 2 needs two Reduces"]
        # KGP for a Reduce f and key K of g: f emits each K-group whole or not at all,
        # which holds when f forwards its own groups whole and its key lies within K.
        for f, g in ((u, l), (l, u)):
            if not f.forwards_groups:
                out.append(f"KGP fails: {f.label} does not forward its key groups whole")
            elif not set(f.keys[0]) <= set(g.keys[0]):
                outside = sorted(set(f.keys[0]) - set(g.keys[0]))[0]
                out.append(f"KGP fails: key field {outside} of {f.label} is outside the key of {g.label}")
    elif rule in ("theorem3_product", "lemma1_join_join", "cogroup_map"):
        allowed = {"theorem3_product": ({"map"}, product), "lemma1_join_join": (product, product),
                   "cogroup_map": ({"map"}, {"cogroup"})}[rule]
        if not ({u.kind, l.kind} <= allowed[0] | allowed[1]) or \
                not ((u.kind in allowed[0] and l.kind in allowed[1]) or (l.kind in allowed[0] and u.kind in allowed[1])):
            out.append(f"{rule} does not apply to a {u.kind} and a {l.kind}")
        if rule == "cogroup_map":
            f = u if u.kind == "map" else l
            if f.emits != (1, 1):
                out.append(f"KGP fails on the tagged union: {f.label} may drop records of one input")
        for o, other in ((u, l.label), (l, u.label)):
            out += _touches_crossed(o, other, before, after, origins, everything)
    elif rule == "cogroup_reduce":
        if kinds != {"reduce", "cogroup"}:
            return out + ["cogroup_reduce needs a Reduce and a CoGroup"]
        out += _cogroup_reduce(u, l, before, after, origins, everything)
    elif rule in ("theorem4_reduce_cross", "invariant_grouping"):
        g, b = (u, l) if u.kind == "reduce" else (l, u)
        want = "cross" if rule == "theorem4_reduce_cross" else "match"
        if g.kind != "reduce" or b.kind != want:
            return out + [f"{rule} needs a Reduce and a {want}"]
        if b.emits != (1, 1) or not b.copy:
            out.append(f"{b.label} does not concatenate its inputs")
        out += _touches_crossed(g, b.label, before, after, origins, everything, body_only=True)
        shape = reduce_shape(cert, before, after, nodes, manual)
        if shape is None:
            return out + [f"the plans do not show {g.label} moved into one input of {b.label}"]
        out += (theorem4 if rule == "theorem4_reduce_cross" else invariant)(cert, shape, nodes, manual)
    else:
        from udflow.rules import registry

        custom = [r for r in registry.rules() if r.name == rule]
        if not custom:
            return out + [f"unknown rule {rule!r}"]
        out = custom[0].verify(cert, {"upper": u, "lower": l, "nodes": nodes, "before": before,
                                      "after": after, "everything": everything})
    return out


def _cogroup_reduce(u: Op, l: Op, before, after, origins, everything) -> list[str]:
    """Reduce[K](h)(CoGroup(g)(R, S)) == CoGroup(g)(Reduce[K](h)(R), S) when h forwards its
    groups, g forwards R record for record, and K is g's key on R (ROC is checked apart)."""
    h, g = (u, l) if u.kind == "reduce" else (l, u)
    below = before if before.label == g.label else after
    sides = [i for i, c in enumerate(below.children) if h.label in c.labels()]
    if len(sides) != 1 or below.children[sides[0]].label != h.label:
        return [f"the plans do not show {h.label} directly on one input of {g.label}"]
    side = sides[0]
    out = []
    if not h.forwards_groups:
        out.append(f"KGP fails: {h.label} does not forward its key groups whole")
    if side not in g.forwards_sides:
        out.append(f"KGP fails: {g.label} does not forward input {side} record for record")
    if set(h.keys[0]) != set(g.keys[side]):
        out.append(f"the key of {h.label} {list(h.keys[0])} is not the key of {g.label} on input {side} "
                   f"{list(g.keys[side])}")
    return out + _touches_crossed(h, g.label, before, after, origins, everything)


# -- the guards every exchange must also meet (udflow/rules/guards.py, written again) ----------


def guards(u: Op, l: Op, before: Tree, after: Tree, root: Node, nodes: dict, manual: bool) -> list[str]:
    """Same output fields before and after; no reader of mutable module state crosses an impure
    operator; no function that may raise loses a record-dropping operator that, in the flow as
    written, ran before it."""
    from udflow.flow import output_fields

    out = []
    known = before.labels() | after.labels() <= set(nodes)  # a rule may make copies (a union's filter')
    if not (u.copy and l.copy) and known:
        fields = [output_fields(rebuild(t, nodes)) for t in (before, after)]
        if None not in fields and fields[0] != fields[1]:
            out.append(f"the move changes the output fields: {sorted(fields[0] ^ fields[1])}")
    props = {x.label: properties(nodes[x.label], manual) for x in (u, l)}
    for x in (u, l):
        for y in crossed_labels(x.label, "", before, after) | ({l.label} if x is u else set()):
            if y not in nodes or isinstance(nodes[y], Source):
                continue
            other = properties(nodes[y], manual)
            if props[x.label].state_reads and not other.pure:
                out.append(f"{x.label} reads module state that {y}, impure, may change")
            if other.state_reads and not props[x.label].pure:
                out.append(f"{y} reads module state that {x.label}, impure, may change")
    out += _raise_guard(u, l, before, after, root, nodes, props, manual)
    out += _key_type_guard(u, l, before, after, root, nodes, manual)
    return out


def _key_type_guard(u, l, before, after, root, nodes, manual) -> list[str]:
    """A Match or CoGroup on a key field an operator gives a value keeps, below it, every
    record-dropping operator that ran before it as written (it may meet keys of two types)."""
    def given_by_an_operator(name, below):
        for label in below:
            n = nodes.get(label)
            if n is None or isinstance(n, Source):
                continue
            p = properties(n, manual)
            if name in (p.values_changed() if p.pure else p.writes):
                return True
            if (p.output_fields is None and not p.pure) or name in p.new_fields:
                return True  # made by an operator: a new field, or any field an opaque one may make
        return False

    as_written = {n.label: {m.label for m in n.walk()} - {n.label} for n in root.walk()}
    out = []
    for x in (u, l):
        node = nodes.get(x.label)
        if not isinstance(node, (Match, CoGroup)) or find(after, x.label) is None:
            continue
        below = as_written[x.label] | (find(after, x.label).labels() - {x.label})
        computed = [k for k in (*node.left_key, *node.right_key) if given_by_an_operator(k, below)]
        lost = (find(before, x.label).labels() - find(after, x.label).labels()) & as_written[x.label]
        for g in sorted(lost):
            o = None if isinstance(nodes[g], Source) else op(nodes[g], manual)
            if computed and o is not None and (o.kind != "map" or o.emits[0] < 1):
                out.append(f"{x.label} joins on {computed[0]}, which an operator computes, and moves above {g}, "
                           "which ran before it and may drop the records whose key has another type")
    return out


def _raise_guard(u, l, before, after, root, nodes, props, manual) -> list[str]:
    from udflow.field_types import attribute_types, cannot_raise

    raising = [x for x in (u, l) if props[x.label].raises]
    if not raising:
        return []
    def changes_of(label):
        p = properties(nodes[label], manual)
        changed = set(p.values_changed() if p.pure else p.writes) | op(nodes[label], manual).new
        return changed, dict(p.output_types) if p.pure else {}

    as_written = {n.label: {m.label for m in n.walk()} - {n.label} for n in root.walk()}
    out = []
    for x in raising:
        found_after = find(after, x.label)
        if found_after is None:
            continue
        removed_below = set()
        below = [b for b in found_after.labels() - {x.label} if b in nodes and not isinstance(nodes[b], Source)]
        for label in below:
            p = properties(nodes[label], manual)
            removed_below |= set(p.writes) - set(p.values_changed()) if p.pure else set(p.writes)
        types = attribute_types(root, [changes_of(b) for b in below])
        if all(cannot_raise(site, types, frozenset(removed_below)) for site in props[x.label].raises):
            continue
        lost = (find(before, x.label).labels() - found_after.labels()) & as_written[x.label]
        for g in sorted(lost):
            o = None if isinstance(nodes[g], Source) else op(nodes[g], manual)
            if o is not None and (o.kind != "map" or o.emits[0] < 1):
                out.append(f"{x.label} may raise and moves below {g}, which ran before it and may drop records")
    return out

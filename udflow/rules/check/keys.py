"""The key conditions of Theorem 4 and invariant grouping.

`reduce_shape` reads from the two plans the Reduce's key above and below the
product and the input R it leaves aside; `key_facts` are the key facts such an
exchange needs; `theorem4` and `invariant` check its key conditions, with
`_unique` deciding from the declared primary keys whether attributes are a key
of a subtree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from udflow.plan import Cross, Match, Node, Source
from udflow.rules.check.operators import properties
from udflow.rules.check.tree import Tree, rebuild


@dataclass(frozen=True)
class _ReduceShape:
    """A Reduce g moved across a binary operator b: its keys above and below b, the side
    of b it sits on below (S), and the other input R (as a rebuilt plan node)."""

    g: str
    b: str
    above: tuple
    below: tuple
    side: int
    r_node: Node
    r_fields: frozenset
    s_node: Node


def reduce_shape(cert, before: Tree, after: Tree, nodes: dict, manual: bool) -> Optional[_ReduceShape]:
    from udflow.flow import output_fields

    upper, lower = cert.operators
    pushed = nodes[upper].kind == "reduce"  # Reduce on top before: it goes down
    g, b = (upper, lower) if pushed else (lower, upper)
    top, down = (before, after) if pushed else (after, before)  # Reduce above b in `top`
    if len(top.children) != 1 or top.children[0].label != b or len(down.children) != 2:
        return None
    sides = [c.label for c in down.children]
    if g not in sides:
        return None
    side = sides.index(g)

    def key_of(t: Tree) -> tuple:
        return t.key if t.key is not None else tuple(nodes[g].key)

    r_node = rebuild(down.children[1 - side], nodes)
    s_node = rebuild(down.children[side].children[0], nodes) if down.children[side].children else None
    return _ReduceShape(g, b, key_of(top), key_of(down.children[side]), side, r_node,
                        output_fields(r_node) or frozenset(), s_node)


def _join_keys(shape: _ReduceShape, nodes: dict) -> tuple[tuple, tuple]:
    """(R's join key K, S's join key F) of the Match."""
    m = nodes[shape.b]
    keys = (tuple(m.left_key), tuple(m.right_key))
    return keys[1 - shape.side], keys[shape.side]


def key_facts(cert, shape: _ReduceShape, nodes: dict) -> set[str]:
    out = {f"reduce_key_after({shape.g}, {','.join(shape.below if cert.operators[0] == shape.g else shape.above)})"}
    if cert.rule == "theorem4_reduce_cross":
        out |= {f"fields({shape.r_node.label}, {a})" for a in shape.r_fields}
        out.add(f"unique_key({shape.r_node.label}, {','.join(sorted(shape.r_fields))})")
        return out
    r_key, s_key = _join_keys(shape, nodes)
    out.add(f"unique_key({shape.r_node.label}, {','.join(r_key)})")
    if any(f.startswith(("foreign_key(", "source_key(")) for f in cert.facts):
        out |= _foreign_key_facts(shape, r_key, s_key)  # optional evidence, all or nothing
    return out


def _foreign_key_facts(shape: _ReduceShape, r_key: tuple, s_key: tuple) -> set[str]:
    """A declared FK on S's side from F to the primary key K of a source on R's side."""
    r_sources = [n for n in shape.r_node.walk() if isinstance(n, Source) and n.key]
    s_sources = [n for n in shape.s_node.walk() if isinstance(n, Source)] if shape.s_node else []
    for src in s_sources:
        for fk in src.foreign_keys:
            if set(fk.fields) != set(s_key):
                continue
            target = dict(zip(fk.fields, fk.target_fields))
            for r_src in r_sources:
                if r_src.table != fk.target or not set(r_key) <= set(r_src.fields):
                    continue
                columns = [r_src.column_of(k) for k in r_key]
                if columns == [target[f] for f in s_key] and \
                        set(columns) == {r_src.column_of(k) for k in r_src.key}:
                    out = {f"foreign_key({src.label}, {f}, {fk.target}, {t})" for f, t in target.items()}
                    return out | {f"source_key({r_src.label}, {k})" for k in r_src.key}
    return {"foreign_key(-)"}  # names a foreign key that does not exist: every FK fact is extra


# -- keys, from the declared primary keys ---------------------------------------------------------


def _unique(node: Node, key: frozenset, manual: bool) -> bool:
    """Is `key` a key of the records leaving `node` (no two distinct records agree on it)?
    Conservative: from declared primary keys, through operators that emit at most one
    record per call and keep the key, Reduces emitting at most one record per group,
    and concatenating products whose two halves are each keyed - or, for a Match, one
    half keyed and the other met at most once (its join key is a key of it)."""
    from udflow.flow import output_fields

    key = frozenset(key)
    if isinstance(node, Source):
        return bool(node.key) and set(node.key) <= key
    p = properties(node, manual)
    if not p.pure:
        return False
    at_most_one = p.emits[1] is not None and p.emits[1] <= 1

    def kept(attrs) -> bool:
        return not (set(attrs) & set(p.writes)) and (
            p.copy or (p.output_fields is not None and set(attrs) <= set(p.output_fields)))

    if isinstance(node, (Match, Cross)):
        if node.fn is not None:
            return False
        if isinstance(node, Match):  # the join equality: K on one side is F on the other
            for lk, rk in zip(node.left_key, node.right_key):
                key |= {rk} if lk in key else set()
                key |= {lk} if rk in key else set()
        left, right = (output_fields(c) or frozenset() for c in node.inputs)
        (lnode, rnode), parts = node.inputs, (key & left, key & right)
        if not isinstance(node, Match):
            return _unique(lnode, parts[0], manual) and _unique(rnode, parts[1], manual)
        # a pair is determined by one half when the other half's join key is a key of it
        meets_one = (_unique(lnode, frozenset(node.left_key), manual),
                     _unique(rnode, frozenset(node.right_key), manual))
        lk, rk = _unique(lnode, parts[0], manual), _unique(rnode, parts[1], manual)
        return (lk and (rk or meets_one[1])) or (rk and meets_one[0])
    if node.kind == "reduce":
        return at_most_one and set(node.key) <= key and kept(node.key)
    if node.arity == 1 and node.kind in ("map", "filter") and at_most_one:
        # a part of the key that the Map keeps and that is a key of its input is one of
        # its output (at most one record out per record in), and so is every superset
        return _unique(node.inputs[0], frozenset(a for a in key if kept((a,))), manual)
    return False


def theorem4(cert, shape: _ReduceShape, nodes, manual) -> list[str]:
    """Reduce[K ∪ R](R x S) == R x Reduce[K](S): the key above holds every attribute of R,
    the key below is the key above without them, and R is a set."""
    out = []
    r = shape.r_fields
    if not r or not r <= set(shape.above):
        out.append(f"the key of {shape.g} above the Cross does not hold every attribute of "
                   f"{shape.r_node.label}: {sorted(r - set(shape.above))}")
    if set(shape.below) != set(shape.above) - r or not shape.below:
        out.append(f"the key of {shape.g} below the Cross is not its key above without R's attributes")
    if not _unique(shape.r_node, r, manual):
        out.append(f"{shape.r_node.label} may hold duplicate records (no declared key makes it a set)")
    if not cert.smt:
        out.append("theorem4_reduce_cross needs Z3 to prove its key conditions; the certificate has no query")
    return out


def invariant(cert, shape: _ReduceShape, nodes, manual) -> list[str]:
    """Reduce[G](Match[K=F](R, S)) == Match(R, Reduce[G'](S)) when K is a key of R (each S
    record meets at most one R record), G' ⊇ F, and G' is G with K rewritten to F and R's
    other attributes dropped; Z3 shows G' determines G and R's attributes above the Match."""
    out = []
    r_key, s_key = _join_keys(shape, nodes)
    if not set(s_key) <= set(shape.below):
        out.append(f"the key of {shape.g} below the Match does not contain the join key "
                   f"{sorted(set(s_key) - set(shape.below))}")
    partner = dict(zip(r_key, s_key))
    rewritten = {partner.get(k, k) for k in shape.above if k in partner or k not in shape.r_fields}
    if rewritten != set(shape.below):
        out.append(f"the key of {shape.g} below the Match ({','.join(shape.below)}) is not its key "
                   f"above ({','.join(shape.above)}) rewritten across the join equality")
    if not _unique(shape.r_node, frozenset(r_key), manual):
        out.append(f"({', '.join(r_key)}) is not a key of {shape.r_node.label}: an S record may meet "
                   f"several R records")
    with_fk = any(f.startswith("foreign_key(") for f in cert.facts)
    wanted = 2 + with_fk + (set(shape.above) != set(shape.below))
    if len(cert.smt) != wanted:
        out.append(f"invariant grouping needs {wanted} Z3 queries here (key of R, "
                   f"{'foreign key, ' if with_fk else ''}key determines), the certificate has {len(cert.smt)}")
    return out

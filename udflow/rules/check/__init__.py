"""The independent certificate checker (issue 4, item 4).

`check(certificate, flow)` re-derives a permission from the flow and the
analysis alone. It shares no code with the Datalog program or the rule
modules: the facts are recomputed here from `UdfProperties`, and each
condition is a direct transcription of the paper's definition:

  - ROC (Def. 4): R1 ∩ W2 = W1 ∩ R2 = W1 ∩ W2 = ∅, with W the effective write
    set (a function that does not copy its input projects away every attribute
    it does not output);
  - KGP (Def. 5): emits exactly one record, or at most one with card_reads ⊆ K;
  - Theorem 3 / Lemma 1 / Theorem 4 ("does not touch S"): an operator that
    gains or loses a subtree in the move reads and writes no attribute that
    originates in that subtree;
  - the key and foreign-key conditions: the declared keys are re-read from the
    sources and every SMT-LIB query is re-run on a fresh Z3 context; every
    query must be `unsat` and match the recorded answer;
  - Theorem 4 / invariant grouping: the Reduce key above and below the product
    (read from the plans), R's attributes (resp. K -> F) rewritten away, and R's
    attributes (resp. R's join key K) a key of R's subtree, re-derived here from
    the declared primary keys (`_unique`); invariant grouping needs no foreign
    key: every S record meeting at most one R record is what the proof uses.

For a built-in rule the complete set of facts the exchange needs is recomputed
(the operators' facts, the position facts of each operator that gains or loses
a subtree, the key facts); a certificate missing any of them, or listing any
other, is rejected with a message naming the fact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import z3

from udflow.plan import Cross, Match, Node, Source


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    problems: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "certificate ok" if self.ok else "certificate rejected:\n  " + "\n  ".join(self.problems)


# -- the plan text ----------------------------------------------------------------


@dataclass
class _Tree:
    label: str
    children: list
    key: Optional[tuple] = None  # a Reduce key rewritten by a move: `  [key a,b]`

    def labels(self) -> set:
        out = {self.label}
        for c in self.children:
            out |= c.labels()
        return out

    def all_labels(self) -> list:
        out = [self.label]
        for c in self.children:
            out += c.all_labels()
        return out


def _parse(text: str) -> _Tree:
    """Invert `udflow.plan.draw`: two spaces of indentation per level."""
    stack: list[tuple[int, _Tree]] = []
    root = None
    for line in text.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        label, _, annotation = line.strip().partition("  [key ")
        key = tuple(annotation.rstrip("]").split(",")) if annotation else None
        node = _Tree(label, [], key)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        else:
            root = node
        stack.append((depth, node))
    return root


def _first(tree: _Tree, wanted) -> Optional[_Tree]:
    """The first subtree, parents before children, for which `wanted(subtree)` holds."""
    if wanted(tree):
        return tree
    for c in tree.children:
        hit = _first(c, wanted)
        if hit is not None:
            return hit
    return None


def _find(tree: _Tree, label: str) -> Optional[_Tree]:
    return _first(tree, lambda t: t.label == label)


# -- facts, recomputed from the analysis -----------------------------------------------


def _props(node: Node, manual: bool):
    from udflow.analysis.properties import UdfProperties
    from udflow.flow import output_fields, properties_of

    if isinstance(node, (Match, Cross)) and node.fn is None:
        left, right = (output_fields(c) or frozenset() for c in node.inputs)
        return UdfProperties(node.kind, frozenset(), frozenset(), (1, 1), frozenset(), True, True,
                             left | right)
    return properties_of(node, manual=manual)


@dataclass(frozen=True)
class _Op:
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


def _op(node: Node, manual: bool) -> _Op:
    from udflow.flow import output_fields

    p = _props(node, manual)
    keys = ()
    if hasattr(node, "key") and not isinstance(node, Source):
        keys = (tuple(node.key),)
    if hasattr(node, "left_key"):
        keys = (tuple(node.left_key), tuple(node.right_key))
    seen = frozenset().union(*(output_fields(c) or frozenset() for c in node.inputs))
    new = frozenset(p.new_fields) | (frozenset(p.output_fields) - seen if p.output_fields is not None else frozenset())
    kind = node.op_type.name if hasattr(node, "op_type") else node.kind
    return _Op(node.label, kind, bool(p.pure), bool(p.copy),
               frozenset(p.reads) | frozenset(a for k in keys for a in k), frozenset(p.reads),
               frozenset(p.writes) | new, None if p.output_fields is None else frozenset(p.output_fields),
               tuple(p.emits), frozenset(p.card_reads), keys, new,
               bool(getattr(p, "forwards_groups", False)),
               frozenset(getattr(p, "forwards_sides", ())) if kind == "cogroup" else frozenset())


def _fact_text(o: _Op) -> set[str]:
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


def _about(fact: str, label: str) -> bool:
    name, _, rest = fact.partition("(")
    return name in _OP_PREDICATES and (rest.startswith(label + ", ") or rest == label + ")")


# -- the conditions, from the paper -----------------------------------------------------


def _effective_writes(o: _Op, everything: frozenset) -> frozenset:
    if o.copy:
        return o.writes
    return o.writes | (everything - (o.outputs or frozenset()))


def _roc(a: _Op, b: _Op, everything: frozenset) -> list[str]:
    wa, wb = _effective_writes(a, everything), _effective_writes(b, everything)
    out = []
    for name, both in (("R1 ∩ W2", a.reads & wb), ("W1 ∩ R2", wa & b.reads), ("W1 ∩ W2", wa & wb)):
        if both:
            out.append(f"ROC fails between {a.label} and {b.label}: {name} = {sorted(both)}")
    return out


def _kgp(f: _Op, key: tuple) -> list[str]:
    if f.emits == (1, 1):
        return []
    if f.emits[1] is None or f.emits[1] > 1:
        return [f"KGP fails: {f.label} may emit more than one record per call"]
    outside = f.card_reads - set(key)
    return [f"KGP fails: whether {f.label} emits depends on {sorted(outside)}, not in key {list(key)}"] \
        if outside else []


def _origins(root: Node, manual: bool) -> dict[str, set]:
    """Where each attribute enters the plan; an impure operator with unknown outputs may
    create any attribute, so it is where every attribute that enters nowhere else may enter."""
    out: dict[str, set] = {}
    mentioned: set = set()
    unknown_outputs: set = set()
    for n in root.walk():
        if isinstance(n, Source):
            for a in n.fields:
                out.setdefault(a, set()).add(n.label)
            continue
        o = _op(n, manual)
        for a in o.new:
            out.setdefault(a, set()).add(n.label)
        mentioned |= o.reads | o.writes
        if o.outputs is None and not o.pure:
            unknown_outputs.add(n.label)
    for a in mentioned - set(out):
        if unknown_outputs:
            out[a] = set(unknown_outputs)
    return out


def _smt(certificate) -> list[str]:
    problems = []
    for text, answer in certificate.smt:
        solver = z3.Solver(ctx=z3.Context())
        solver.set("timeout", 5000)
        try:
            solver.from_string(text)
            again = str(solver.check())
        except z3.Z3Exception as exc:
            again = f"error: {exc}"
        if again != answer:
            problems.append(f"SMT query answered {again}, certificate says {answer}: {text[:120]!r}")
        elif again != "unsat":
            problems.append(f"SMT query not proved (answer {again}): {text[:120]!r}")
    return problems


def check(certificate, flow, *, manual: Optional[bool] = None) -> CheckResult:
    """Re-check `certificate` against `flow` (a Flow or its root Node)."""
    from udflow.flow import global_record

    if isinstance(certificate, dict):
        from udflow.rules.certificate import Certificate

        certificate = Certificate.from_dict(certificate)
    root: Node = getattr(flow, "root", flow)
    manual = certificate.properties == "manual" if manual is None else manual
    nodes = {n.label: n for n in root.walk()}
    problems: list[str] = []
    upper, lower = certificate.operators
    for label in (upper, lower):
        if label not in nodes:
            return CheckResult(False, (f"operator {label} is not in the flow",))
    before, after = _parse(certificate.before), _parse(certificate.after)
    if before is None or after is None or before.label != upper or after.label != lower:
        problems.append(f"the plans do not show {upper} on top before and {lower} on top after")
        return CheckResult(False, tuple(problems))
    from udflow.rules.registry import builtin_rules

    builtin = certificate.rule in {r.name for r in builtin_rules()}
    if builtin and sorted(before.all_labels()) != sorted(after.all_labels()):
        problems.append("the plan after does not hold the same operators as the plan before")
        return CheckResult(False, tuple(problems))
    if any(label not in nodes for label in before.labels()):
        problems.append("the plan before names operators that are not in the flow")
        return CheckResult(False, tuple(problems))

    ops = {label: _op(nodes[label], manual) for label in (upper, lower)}
    everything = frozenset(global_record(root))
    origins = _origins(root, manual)
    claimed = set(certificate.facts)
    # 1. the key facts the certificate names must be declared in the flow
    problems += _declared(claimed, nodes)
    # 2. every fact the rule needs for this exchange, recomputed; none may be missing or extra
    if builtin:
        needed = _needed_facts(certificate, ops, before, after, origins, everything, nodes, manual)
        for fact in sorted(needed - claimed):
            problems.append(f"missing fact {fact}")
        for fact in sorted(claimed - needed):
            problems.append(f"fact {fact} does not hold")
    else:
        problems += _operator_facts_only(claimed, ops, before, origins)

    # 3. the rule's conditions
    u, l = ops[upper], ops[lower]
    problems += _conditions(certificate, u, l, before, after, origins, everything, nodes, manual)
    problems += _guards(u, l, before, after, root, nodes, manual)
    problems += _smt(certificate)
    return CheckResult(not problems, tuple(dict.fromkeys(problems)))


def _declared(claimed: set, nodes: dict) -> list[str]:
    out = []
    for fact in sorted(claimed):
        if fact.startswith("foreign_key("):
            src, f, table, col = (fact[len("foreign_key("):-1].split(", ") + ["", "", "", ""])[:4]
            node = nodes.get(src)
            if not isinstance(node, Source) or not any(
                    fk.target == table and (f, col) in set(zip(fk.fields, fk.target_fields))
                    for fk in node.foreign_keys):
                out.append(f"fact {fact} does not hold: no such foreign key is declared")
        elif fact.startswith("source_key("):
            src, _, k = fact[len("source_key("):-1].partition(", ")
            node = nodes.get(src)
            if not isinstance(node, Source) or k not in (node.key or ()):
                out.append(f"fact {fact} does not hold: no such primary key is declared")
    return out


def _operator_facts_only(claimed: set, ops: dict, before: _Tree, origins: dict) -> list[str]:
    """For user-registered rules: the operators' own facts, and the position facts named."""
    out = []
    for label, o in ops.items():
        truth = _fact_text(o)
        out += [f"missing fact {fact}" for fact in sorted(truth - claimed)]
        out += [f"fact {fact} does not hold" for fact in sorted(f for f in claimed
                                                                 if _about(f, label) and f not in truth)]
    for fact in sorted(claimed):
        if fact.startswith("origin("):
            attr, _, origin = fact[len("origin("):-1].partition(", ")
            if origin not in origins.get(attr, set()):
                out.append(f"fact {fact} does not hold")
        elif fact.startswith("contains("):
            sub, _, member = fact[len("contains("):-1].partition(", ")
            tree = _find(before, sub)
            if tree is None or member not in tree.labels():
                out.append(f"fact {fact} does not hold")
    return out


# -- the facts a built-in rule needs for one exchange ------------------------------------------------


def _needed_facts(cert, ops, before, after, origins, everything, nodes, manual) -> set[str]:
    """The complete fact set of the exchange: both operators' facts, for each operator that
    gains or loses a subtree the subtree and the origins of what it touches, and the key
    facts of Theorem 4 / invariant grouping."""
    needed: set[str] = set()
    for o in ops.values():
        needed |= _fact_text(o)
    upper, lower = cert.operators
    for label, other in ((upper, lower), (lower, upper)):
        crossed = _crossed(label, other, before, after)
        if not crossed:
            continue
        subtree = _subtree_with(before, crossed) or _subtree_with(after, crossed)
        if subtree is None:
            continue  # not one subtree: _conditions reports the malformed move
        o = ops[label]
        needed.add(f"clear_of({label}, {subtree.label})")
        needed |= {f"contains({subtree.label}, {n})" for n in crossed}
        touched = o.reads | _effective_writes(o, everything)
        needed |= {f"origin({a}, {origin})" for a in touched for origin in origins.get(a, ())}
    if cert.rule in ("theorem4_reduce_cross", "invariant_grouping"):
        shape = _reduce_shape(cert, before, after, nodes, manual)
        if shape is not None:
            needed |= _key_facts(cert, shape, nodes)
    return needed


def _subtree_with(tree: _Tree, labels: set) -> Optional[_Tree]:
    return _first(tree, lambda t: t.labels() == labels)


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


def _rebuild(tree: _Tree, nodes: dict) -> Node:
    import dataclasses

    node = nodes[tree.label]
    if tree.key is not None:
        node = dataclasses.replace(node, key=tree.key)
    if not tree.children:
        return node
    return node.with_inputs(*[_rebuild(c, nodes) for c in tree.children])


def _reduce_shape(cert, before: _Tree, after: _Tree, nodes: dict, manual: bool) -> Optional[_ReduceShape]:
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

    def key_of(t: _Tree) -> tuple:
        return t.key if t.key is not None else tuple(nodes[g].key)

    r_node = _rebuild(down.children[1 - side], nodes)
    s_node = _rebuild(down.children[side].children[0], nodes) if down.children[side].children else None
    return _ReduceShape(g, b, key_of(top), key_of(down.children[side]), side, r_node,
                        output_fields(r_node) or frozenset(), s_node)


def _join_keys(shape: _ReduceShape, nodes: dict) -> tuple[tuple, tuple]:
    """(R's join key K, S's join key F) of the Match."""
    m = nodes[shape.b]
    keys = (tuple(m.left_key), tuple(m.right_key))
    return keys[1 - shape.side], keys[shape.side]


def _key_facts(cert, shape: _ReduceShape, nodes: dict) -> set[str]:
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
    p = _props(node, manual)
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


def _crossed(op_label: str, other: str, before: _Tree, after: _Tree) -> set:
    """Labels that are below `op` on one side of the move and not on the other."""
    below_before = _find(before, op_label).labels() - {op_label}
    below_after = _find(after, op_label).labels() - {op_label}
    return (below_before ^ below_after) - {other}


def _touches_crossed(o: _Op, other: str, before, after, origins, everything, body_only=False) -> list[str]:
    crossed = _crossed(o.label, other, before, after)
    touched = (o.body_reads if body_only else o.reads) | _effective_writes(o, everything)
    out = []
    for a in sorted(touched):
        where = origins.get(a, set()) & crossed
        if where:
            out.append(f"{o.label} touches {a}, which comes from {sorted(where)[0]} on the input it moves across")
    return out


def _conditions(cert, u: _Op, l: _Op, before, after, origins, everything, nodes, manual) -> list[str]:
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
        shape = _reduce_shape(cert, before, after, nodes, manual)
        if shape is None:
            return out + [f"the plans do not show {g.label} moved into one input of {b.label}"]
        out += (_theorem4 if rule == "theorem4_reduce_cross" else _invariant)(cert, shape, nodes, manual)
    else:
        from udflow.rules import registry

        custom = [r for r in registry.rules() if r.name == rule]
        if not custom:
            return out + [f"unknown rule {rule!r}"]
        out = custom[0].verify(cert, {"upper": u, "lower": l, "nodes": nodes, "before": before,
                                      "after": after, "everything": everything})
    return out


def _cogroup_reduce(u: _Op, l: _Op, before, after, origins, everything) -> list[str]:
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


def _theorem4(cert, shape: _ReduceShape, nodes, manual) -> list[str]:
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


def _invariant(cert, shape: _ReduceShape, nodes, manual) -> list[str]:
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


# -- the guards every exchange must also meet (udflow/rules/guards.py, written again) ----------


def _guards(u: _Op, l: _Op, before: _Tree, after: _Tree, root: Node, nodes: dict, manual: bool) -> list[str]:
    """Same output fields before and after; no reader of mutable module state crosses an impure
    operator; no function that may raise loses a record-dropping operator that, in the flow as
    written, ran before it."""
    from udflow.flow import output_fields

    out = []
    known = before.labels() | after.labels() <= set(nodes)  # a rule may make copies (a union's filter')
    if not (u.copy and l.copy) and known:
        fields = [output_fields(_rebuild(t, nodes)) for t in (before, after)]
        if None not in fields and fields[0] != fields[1]:
            out.append(f"the move changes the output fields: {sorted(fields[0] ^ fields[1])}")
    props = {x.label: _props(nodes[x.label], manual) for x in (u, l)}
    for x in (u, l):
        for y in _crossed(x.label, "", before, after) | ({l.label} if x is u else set()):
            if y not in nodes or isinstance(nodes[y], Source):
                continue
            other = _props(nodes[y], manual)
            if props[x.label].state_reads and not other.pure:
                out.append(f"{x.label} reads module state that {y}, impure, may change")
            if other.state_reads and not props[x.label].pure:
                out.append(f"{y} reads module state that {x.label}, impure, may change")
    out += _raise_guard(u, l, before, after, root, nodes, props, manual)
    return out


def _raise_guard(u, l, before, after, root, nodes, props, manual) -> list[str]:
    from udflow.field_types import attribute_types, cannot_raise

    raising = [x for x in (u, l) if props[x.label].raises]
    if not raising:
        return []
    def changes_of(label):
        p = _props(nodes[label], manual)
        changed = set(p.values_changed() if p.pure else p.writes) | _op(nodes[label], manual).new
        return changed, dict(p.output_types) if p.pure else {}

    as_written = {n.label: {m.label for m in n.walk()} - {n.label} for n in root.walk()}
    out = []
    for x in raising:
        found_after = _find(after, x.label)
        if found_after is None:
            continue
        removed_below = set()
        below = [b for b in found_after.labels() - {x.label} if b in nodes and not isinstance(nodes[b], Source)]
        for label in below:
            p = _props(nodes[label], manual)
            removed_below |= set(p.writes) - set(p.values_changed()) if p.pure else set(p.writes)
        types = attribute_types(root, [changes_of(b) for b in below])
        if all(cannot_raise(site, types, frozenset(removed_below)) for site in props[x.label].raises):
            continue
        lost = (_find(before, x.label).labels() - found_after.labels()) & as_written[x.label]
        for g in sorted(lost):
            o = None if isinstance(nodes[g], Source) else _op(nodes[g], manual)
            if o is not None and (o.kind != "map" or o.emits[0] < 1):
                out.append(f"{x.label} may raise and moves below {g}, which ran before it and may drop records")
    return out

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
    query must be `unsat` and match the recorded answer.

A certificate whose facts differ from the recomputed ones is rejected with a
message naming the fact.
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
        node = _Tree(line.strip().split("  [key ")[0], [])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        else:
            root = node
        stack.append((depth, node))
    return root


def _find(tree: _Tree, label: str) -> Optional[_Tree]:
    if tree.label == label:
        return tree
    for c in tree.children:
        hit = _find(c, label)
        if hit is not None:
            return hit
    return None


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
               tuple(p.emits), frozenset(p.card_reads), keys, new)


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
    return out


_OP_PREDICATES = ("kind", "emits", "pure", "impure", "copies", "projects", "outputs", "reads",
                  "writes", "card_reads", "key")


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
    out: dict[str, set] = {}
    for n in root.walk():
        if isinstance(n, Source):
            for a in n.fields:
                out.setdefault(a, set()).add(n.label)
        else:
            for a in _op(n, manual).new:
                out.setdefault(a, set()).add(n.label)
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
    if any(label not in nodes for label in before.labels()):
        problems.append("the plan before names operators that are not in the flow")
        return CheckResult(False, tuple(problems))

    ops = {label: _op(nodes[label], manual) for label in (upper, lower)}
    # 1. every fact about the two operators, recomputed
    claimed = set(certificate.facts)
    for label, o in ops.items():
        truth = _fact_text(o)
        for fact in sorted(truth - claimed):
            problems.append(f"missing fact {fact}")
        for fact in sorted(f for f in claimed if _about(f, label) and f not in truth):
            problems.append(f"fact {fact} does not hold")
    origins = _origins(root, manual)
    for fact in claimed:
        if fact.startswith("origin("):
            attr, _, origin = fact[len("origin("):-1].partition(", ")
            if origin not in origins.get(attr, set()):
                problems.append(f"fact {fact} does not hold")
        elif fact.startswith("contains("):
            sub, _, member = fact[len("contains("):-1].partition(", ")
            tree = _find(before, sub)
            if tree is None or member not in tree.labels():
                problems.append(f"fact {fact} does not hold")
        elif fact.startswith("foreign_key("):
            src, f, table, col = fact[len("foreign_key("):-1].split(", ")
            node = nodes.get(src)
            if not isinstance(node, Source) or not any(
                    fk.target == table and (f, col) in set(zip(fk.fields, fk.target_fields))
                    for fk in node.foreign_keys):
                problems.append(f"fact {fact} does not hold: no such foreign key is declared")
        elif fact.startswith("source_key("):
            src, k = fact[len("source_key("):-1].split(", ")
            node = nodes.get(src)
            if not isinstance(node, Source) or k not in (node.key or ()):
                problems.append(f"fact {fact} does not hold: no such primary key is declared")

    # 2. the rule's conditions
    everything = frozenset(global_record(root))
    u, l = ops[upper], ops[lower]
    problems += _conditions(certificate, u, l, before, after, origins, everything, nodes)
    problems += _smt(certificate)
    return CheckResult(not problems, tuple(dict.fromkeys(problems)))


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


def _conditions(cert, u: _Op, l: _Op, before, after, origins, everything, nodes) -> list[str]:
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
        out.append("KGP for a Reduce needs its groups passed through record by record, "
                   "which no property establishes")
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
    elif rule in ("theorem4_reduce_cross", "invariant_grouping"):
        g, b = (u, l) if u.kind == "reduce" else (l, u)
        want = "cross" if rule == "theorem4_reduce_cross" else "match"
        if g.kind != "reduce" or b.kind != want:
            return out + [f"{rule} needs a Reduce and a {want}"]
        if b.emits != (1, 1) or not b.copy:
            out.append(f"{b.label} does not concatenate its inputs")
        out += _touches_crossed(g, b.label, before, after, origins, everything, body_only=True)
        if not cert.smt:
            out.append(f"{rule} needs Z3 to prove its key conditions; the certificate has no query")
        if rule == "invariant_grouping" and not any(f.startswith("foreign_key(") for f in cert.facts):
            out.append("invariant grouping needs a declared foreign key; the certificate names none")
    else:
        from udflow.rules import registry

        custom = [r for r in registry.rules() if r.name == rule]
        if not custom:
            return out + [f"unknown rule {rule!r}"]
        out = custom[0].verify(cert, {"upper": u, "lower": l, "nodes": nodes, "before": before,
                                      "after": after, "everything": everything})
    return out

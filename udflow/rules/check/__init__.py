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

The package: `tree` reads the plan texts, `operators` recomputes the operators'
facts, `conditions` holds each rule's conditions and the guards, and `keys` the
key conditions of Theorem 4 and invariant grouping; `check`, here, puts them
together with the declared keys, the complete fact set and the SMT queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import z3

from udflow.plan import Node, Source
from udflow.rules.check.conditions import guards, rule_conditions
from udflow.rules.check.keys import key_facts, reduce_shape
from udflow.rules.check.operators import about, attribute_origins, effective_writes, fact_text, op
from udflow.rules.check.tree import Tree, crossed_labels, find, parse, subtree_with


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    problems: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "certificate ok" if self.ok else "certificate rejected:\n  " + "\n  ".join(self.problems)


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
    before, after = parse(certificate.before), parse(certificate.after)
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

    ops = {label: op(nodes[label], manual) for label in (upper, lower)}
    everything = frozenset(global_record(root))
    origins = attribute_origins(root, manual)
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
    problems += rule_conditions(certificate, u, l, before, after, origins, everything, nodes, manual)
    problems += guards(u, l, before, after, root, nodes, manual)
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


def _operator_facts_only(claimed: set, ops: dict, before: Tree, origins: dict) -> list[str]:
    """For user-registered rules: the operators' own facts, and the position facts named."""
    out = []
    for label, o in ops.items():
        truth = fact_text(o)
        out += [f"missing fact {fact}" for fact in sorted(truth - claimed)]
        out += [f"fact {fact} does not hold" for fact in sorted(f for f in claimed
                                                                 if about(f, label) and f not in truth)]
    for fact in sorted(claimed):
        if fact.startswith("origin("):
            attr, _, origin = fact[len("origin("):-1].partition(", ")
            if origin not in origins.get(attr, set()):
                out.append(f"fact {fact} does not hold")
        elif fact.startswith("contains("):
            sub, _, member = fact[len("contains("):-1].partition(", ")
            tree = find(before, sub)
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
        needed |= fact_text(o)
    upper, lower = cert.operators
    for label, other in ((upper, lower), (lower, upper)):
        crossed = crossed_labels(label, other, before, after)
        if not crossed:
            continue
        subtree = subtree_with(before, crossed) or subtree_with(after, crossed)
        if subtree is None:
            continue  # not one subtree: rule_conditions reports the malformed move
        o = ops[label]
        needed.add(f"clear_of({label}, {subtree.label})")
        needed |= {f"contains({subtree.label}, {n})" for n in crossed}
        touched = o.reads | effective_writes(o, everything)
        needed |= {f"origin({a}, {origin})" for a in touched for origin in origins.get(a, ())}
    if cert.rule in ("theorem4_reduce_cross", "invariant_grouping"):
        shape = reduce_shape(cert, before, after, nodes, manual)
        if shape is not None:
            needed |= key_facts(cert, shape, nodes)
    return needed

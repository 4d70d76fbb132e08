"""One pipeline's result as plain JSON data: what the reports show and the cache stores.

An outcome is a dict (it crosses process boundaries and lands in JSON files):

    name, file, attr      "dir/q7.py::q7", the absolute file, the attribute
    status                "ok" or "failed"
    stage, reason         for failures: "import" | "build" | "optimize" | "worker", and why
    operators             number of operators (sources excluded)
    alternatives          number of alternative plans considered
    original_cost, best_cost, speedup    estimated costs and their ratio
    rewrites              [{rule, operators}] applied on the way to the chosen plan
    certificates          [Certificate.to_dict()] of those rewrites, in order
    original_plan, best_plan              plan trees (see `plan_tree`)
    original_text, best_text, explain, dot  text forms
    seconds, cached, key  time the optimization took, whether this run reused it, cache key
    rule_set              hash of the optimizer's source the result was computed with

`plan_tree` and `rebuild` make the chosen plan data that can be turned back into
a Flow over the pipeline's own operators: operators keep their labels when the
optimizer moves them, so the tree of labels (with the keys, which a rewrite
may change) is the whole plan.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Optional

from udflow.flow import Flow
from udflow.plan import Node, Source, draw

_KEY_FIELDS = ("key", "left_key", "right_key")


def plan_tree(node: Node, rows: Optional[Callable[[Node], Optional[float]]] = None,
              original: Optional[Node] = None) -> dict:
    """`{label, kind, [key, left_key, right_key], [copy_of], [rows], children}` per node, root first.

    `rows`, when given, estimates the number of records leaving a node. A rewrite
    may copy an operator (a filter pushed into both inputs of a union becomes
    `Filter(f)` and `Filter(f)'`): with `original` given, a node whose label the
    original plan does not have records `copy_of`, the original operator it copies.
    """
    tree: dict[str, Any] = {"label": node.label, "kind": _kind(node)}
    if original is not None and node.label not in {n.label for n in original.walk()}:
        source = _copied_from(node, original)
        if source is not None:
            tree["copy_of"] = source
    for name in _KEY_FIELDS:
        value = getattr(node, name, None)
        if value is not None and not isinstance(node, Source):
            tree[name] = list(value)
    estimate = rows(node) if rows else None
    if estimate is not None:
        tree["rows"] = estimate
    tree["children"] = [plan_tree(child, rows, original) for child in node.inputs]
    return tree


def _own(node: Node) -> tuple:
    """What makes an operator the operator it is, its inputs and label aside."""
    return tuple(getattr(node, f.name) for f in dataclasses.fields(node)
                 if f.name not in ("label", "input", "left", "right", "args", "key", "left_key", "right_key"))


def _copied_from(node: Node, original: Node) -> Optional[str]:
    for candidate in original.walk():
        if type(candidate) is type(node) and _own(candidate) == _own(node):
            return candidate.label
    return None


def _kind(node: Node) -> str:
    if getattr(node, "is_filter", False):
        return "filter"
    if node.kind == "custom":
        return node.op_type.name
    return node.kind


def rebuild(original: Node, tree: dict) -> Node:
    """The plan `tree` made of the operators of `original` (matched by label, copies by `copy_of`)."""
    by_label = {n.label: n for n in original.walk()}

    def build(t: dict) -> Node:
        node = by_label.get(t["label"]) or by_label.get(t.get("copy_of", ""))
        if node is None:
            raise ValueError(f"the plan names operator {t['label']!r}, which the pipeline does not have")
        if node.label != t["label"]:  # a copy made by a rewrite
            node = dataclasses.replace(node, label=t["label"])
        changes = {k: tuple(t[k]) for k in _KEY_FIELDS if k in t and hasattr(node, k)}
        if changes:
            node = dataclasses.replace(node, **changes)
        children = [build(c) for c in t["children"]]
        if len(children) != len(node.inputs):
            raise ValueError(f"{node.label} has {len(node.inputs)} inputs, the plan gives it {len(children)}")
        return node.with_inputs(*children) if children else node

    return build(tree)


def count_operators(tree: dict) -> int:
    return (tree["kind"] != "source") + sum(count_operators(c) for c in tree["children"])


# ---------------------------------------------------------------------------
# From the engine's Optimized
# ---------------------------------------------------------------------------


def _finite(x: Any) -> Optional[float]:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def from_optimized(opt: Any) -> dict:
    """The result fields of an outcome (name, timing and status are added by the runner)."""
    certificates = list(opt.certificates)

    def rows(node: Node) -> Optional[float]:
        return _finite(opt.model.estimate(node).rows)

    return {
        "status": "ok",
        "operators": len(opt.original.operators),
        "alternatives": len(opt.alternatives),
        "search": opt.mode,
        "search_reason": opt.alternatives.reason,
        "plans": opt.alternatives.count,
        "complete": opt.alternatives.complete,
        "original_cost": _finite(opt.original_alternative.cost),
        "best_cost": _finite(opt.chosen.cost),
        "speedup": _finite(opt.speedup),
        "rewrites": [{"rule": c.rule, "operators": list(c.operators)} for c in certificates],
        "certificates": [c.to_dict() for c in certificates],
        "original_plan": plan_tree(opt.original.root, rows),
        "best_plan": plan_tree(opt.best.root, rows, opt.original.root),
        "best_hints": [list(h) for h in opt.best.hints],
        "original_text": draw(opt.original.root),
        "best_text": draw(opt.best.root),
        "explain": opt.explain(),
        "explain_verbose": opt.explain(verbose=True),
        "dot": opt.to_dot(),
    }


def best_flow(original: Node, outcome: dict) -> Flow:
    """The chosen plan of `outcome` as a Flow over `original`'s operators, with its Spark hints."""
    hints = tuple(tuple(h) for h in outcome.get("best_hints", ()))
    return Flow(rebuild(original, outcome["best_plan"]), hints=hints)


def failed(name: str, file: str, attr: Optional[str], stage: str, reason: str, seconds: float = 0.0) -> dict:
    return {"name": name, "file": file, "attr": attr, "status": "failed", "stage": stage,
            "reason": reason, "seconds": seconds, "cached": False}

"""The registry of operator types and rule modules (issue 4, item 5).

Built-in rule modules are registered here; users add theirs with
`register_rules(...)` and their operator types with `register_operator_type(...)`
(see docs/writing-rules.md), without editing udflow's modules. A RuleBook
takes the rules registered when it is built, or an explicit list
(`RuleBook(root, rules=...)`), which is how tests inject weakened rules.
"""

from __future__ import annotations

import threading
from typing import Iterable

from udflow.plan import OperatorType
from udflow.rules.base import Rule

_lock = threading.Lock()
_user_rules: list[Rule] = []
_operator_types: dict[str, OperatorType] = {}


def builtin_rules() -> tuple[Rule, ...]:
    """udflow's own rule modules, in the order they are tried."""
    from udflow.rules import (
        cogroup_tagged_union,
        lemma1_join_join,
        roc_kgp,
        theorem1_map_map,
        theorem2_map_reduce,
        theorem3_product,
        theorem4_invariant_grouping,
    )

    return (
        roc_kgp.RULE,
        theorem1_map_map.RULE,
        *theorem2_map_reduce.RULES,
        theorem3_product.RULE,
        lemma1_join_join.RULE,
        *theorem4_invariant_grouping.RULES,
        *cogroup_tagged_union.RULES,
    )


def register_rules(*rules: Rule) -> None:
    """Add rule modules to every RuleBook built from now on."""
    with _lock:
        for rule in rules:
            if any(r.name == rule.name for r in (*builtin_rules(), *_user_rules)):
                from udflow.errors import OptimizationError

                raise OptimizationError(f"a rule named {rule.name!r} is already registered")
            _user_rules.append(rule)


def unregister_rules(*names: str) -> None:
    with _lock:
        _user_rules[:] = [r for r in _user_rules if r.name not in names]


def register_operator_type(op_type: OperatorType) -> OperatorType:
    """Make an operator type known by name; returns it for `Flow.apply(op_type, ...)`."""
    with _lock:
        existing = _operator_types.get(op_type.name)
        if existing is not None and existing is not op_type:
            from udflow.errors import OptimizationError

            raise OptimizationError(f"an operator type named {op_type.name!r} is already registered")
        _operator_types[op_type.name] = op_type
    return op_type


def operator_type(name: str) -> OperatorType:
    return _operator_types[name]


def operator_types() -> dict[str, OperatorType]:
    return dict(_operator_types)


def rules(extra: Iterable[Rule] = ()) -> tuple[Rule, ...]:
    with _lock:
        return (*builtin_rules(), *_user_rules, *extra)

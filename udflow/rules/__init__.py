"""udflow.rules: the reorder conditions of section 4 as Datalog rules, Z3 for keys,
checkable certificates, and a registry for user operator types and rules.

    from udflow.rules import RuleBook, check
    with RuleBook(flow.root) as book:
        for ex in book.exchanges(flow.root):
            assert check(ex.certificate, flow).ok

Only this package imports pyDatalog and z3; it knows nothing of the search.
"""

from udflow.rules.base import Decision, Move, PairRule, Rule, SHAPES
from udflow.rules.certificate import Certificate, Exchange, Reason, Verdict
from udflow.rules.check import CheckResult, check
from udflow.rules.registry import (
    builtin_rules,
    operator_type,
    operator_types,
    register_operator_type,
    register_rules,
    rules,
    unregister_rules,
)
from udflow.rules.rulebook import RuleBook

__all__ = [
    "RuleBook",
    "Exchange",
    "Certificate",
    "Verdict",
    "Reason",
    "check",
    "CheckResult",
    "Rule",
    "PairRule",
    "Move",
    "Decision",
    "SHAPES",
    "register_rules",
    "unregister_rules",
    "register_operator_type",
    "operator_type",
    "operator_types",
    "builtin_rules",
    "rules",
]

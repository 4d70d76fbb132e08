"""The shared soundness repros (issues 16 and 28) as regression tests.

Each case in tests/soundness_cases/ is a flow on which, before the fixes, an
alternative that `uf.optimize(flow, mode="full")` considered valid returned
another bag than the plan as written, or raised where it did not. Every
alternative must now return the plan as written's bag on the reference
interpreter, or raise where it raises. Each case also names the exchange that
used to be allowed, and asserts it is now refused for the right reason.
"""

import collections
import importlib
import math

import pytest

import udflow as uf
from udflow import UdfRuntimeError
from udflow.rules import RuleBook

CASES = [f"s{n:03d}" for n in range(1, 21)]  # 021 is an analysis crash: tests/test_analysis_no_internal_error.py

# the reason each case's wrong exchange is refused now (a substring of a Reason's condition)
REFUSED_BECAUSE = {
    "s001": "may raise",                    # a Map returning None is an error: not below a Match
    "s002": "touches the other input",      # an impure Map (writes a module dict) may make any field (issue 28)
    "s003": "",                             # outer CoGroup: its output may lack any field
    "s004": "",                             # `del` of a field whose input fields are unknown
    "s005": "",                             # outer CoGroup: b_k may be absent
    "s006": "output fields change",         # CoGroup keeps only its left input's fields
    "s007": "",                             # strict read of a_k: a_k comes from the other input
    "s008": "touches the other input",      # strict read of a_k is a read
    "s009": "",                             # `del` below an impure filter
    "s010": "may raise",                    # 12 // c_v guarded by a Match
    "s011": "may raise",                    # 12 // c_v guarded by a Match
    "s012": "",                             # `r if c else {}` is not a copy
    "s013": "",                             # pop with a default is a write
    "s014": "touches the other input",      # x may come from the impure Map on the other input
    "s015": "",                             # `del` in a Match function whose right fields are unknown
    # issue 28: refused by the field-flow check (tests/test_field_flow.py), not by a rule
    "s016": "",                             # a concatenation meets x from a function of unknown writes
    "s017": "",                             # the alternative removes the plan as written's collision
    "s018": "",                             # a Map writing x pushed below a Match whose other input has x
    "s019": "",                             # an update-copy Cross reassociated with a concatenation
    "s020": "",                             # setdefault moved to the side an outer CoGroup may fill
}


def canon(v):
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, float):
        return ("f", float(f"{v:.9g}") + 0.0)
    if isinstance(v, dict):
        return ("d", tuple(sorted((repr(k), canon(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("l", tuple(canon(x) for x in v))
    return (type(v).__name__, repr(v))


def outcome(case, flow):
    case.reset()
    try:
        records = flow.collect(engine="reference")
    except UdfRuntimeError:
        return "raises"
    return collections.Counter(tuple(sorted((repr(k), canon(v)) for k, v in r.items())) for r in records)


def optimized(case):
    case.reset()
    try:
        return uf.optimize(case.build(), mode="full")
    except UdfRuntimeError:  # the plan as written fails while sampling: profile empty inputs
        case.reset()
        profiles = uf.optimize(case.build(empty=True), mode="full").profiles
        case.reset()
        return uf.optimize(case.build(), mode="full", profiles=profiles)


@pytest.mark.parametrize("name", CASES)
def test_every_alternative_agrees_with_the_plan_as_written(name):
    case = importlib.import_module(f"tests.soundness_cases.{name}")
    flow = case.build()
    expected = outcome(case, flow)
    opt = optimized(case)
    for alt in opt.alternatives:
        assert outcome(case, alt.flow) == expected, (name, alt.rank, str(alt.flow))


@pytest.mark.parametrize("name", [n for n, why in REFUSED_BECAUSE.items() if why])
def test_the_wrong_exchange_is_refused_for_its_reason(name):
    case = importlib.import_module(f"tests.soundness_cases.{name}")
    flow = case.build()
    opt = optimized(case)
    book = RuleBook(flow.root)
    reasons = [str(r) for alt in opt.alternatives for node in alt.flow.root.walk()
               for _, decision, _ in book.decisions(node) for r in decision.reasons]
    assert any(REFUSED_BECAUSE[name] in r for r in reasons), (name, reasons)


GUARDS = ("output fields change", "reads state", "may raise")


# s002's move is now refused by the rule itself (the impure writer is an origin of every field)
@pytest.mark.parametrize("name", ["s006", "s010", "s011"])
def test_the_checker_rejects_a_certificate_for_a_guarded_move(name):
    """The independent checker re-checks the guards: a certificate built for a move only a
    guard refused (the rule itself allowed it) is rejected."""
    case = importlib.import_module(f"tests.soundness_cases.{name}")
    flow = case.build()
    book = RuleBook(flow.root)
    rules = {r.name: r for r in book.rules}
    trees = {alt.flow.root for alt in optimized(case).alternatives}
    checked = 0
    for node in {n for tree in trees for n in tree.walk()}:
        for exchange, decision, move in book.decisions(node):
            if exchange is None and all(any(g in r.condition for g in GUARDS) for r in decision.reasons):
                rule = rules[decision.reasons[0].rule]
                certificate = book._certificate(rule, move, rule.decide(book, move))
                assert not uf.rules.check(certificate, flow).ok
                checked += 1
    assert checked

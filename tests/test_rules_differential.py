"""Differential property test: every exchange a certificate allows keeps the bag.

Random flows of 3-6 operators from tests/rules_library.py, random bags with
duplicates and None values; for every subtree of the flow and every exchange
the RuleBook allows there, the subtree before and after gives the same bag on
the reference interpreter, and the certificate passes the independent checker.
"""

import dataclasses
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from udflow.errors import FieldCollisionError
from udflow.reference import run
from udflow.rules import RuleBook, check

from tests import rules_library as L

STATS = Counter()
SAMPLES = {}  # rule -> (certificate, flow): the first certificate of each family in the corpus

value = st.one_of(st.none(), st.integers(-2, 3))
key = st.one_of(st.none(), st.integers(0, 3))


def rows(k, v):
    return st.lists(st.fixed_dictionaries({k: key, v: value}), min_size=0, max_size=6).map(
        lambda rs: rs + rs[:2])  # duplicates on purpose


bags = st.tuples(rows("a_k", "a_v"), rows("b_k", "b_v"), rows("c_k", "c_v"))
names = st.sampled_from(sorted(L.UNARY))
specs = st.tuples(
    st.sampled_from(["linear", "join", "three"]),
    st.lists(names, max_size=2),
    st.lists(names, max_size=1),
    st.lists(names, max_size=1),
    st.lists(st.one_of(names, st.sampled_from(["total_a[b_k]", "count_a[a_k]", "inc_a_v", "flag_a",
                                                "a_groups_with_pos[a_k]"])),
             min_size=1, max_size=3),
    st.tuples(st.sampled_from(["match", "cross"]), st.sampled_from(["match", "cross", "cogroup", "cogroup_fwd"])),
    st.booleans(),
)


def bag(records):
    return Counter(tuple(sorted(r.items(), key=lambda kv: kv[0])) for r in records)


def outcome(node):
    """The bag, or the error a concatenation raises where its inputs share a field. A plan
    may skip an error the plan as written raises on records a later operator drops (a
    collision below a join that an empty input makes empty); it may never add one."""
    try:
        return bag(run(node))
    except FieldCollisionError as e:
        return str(e)


def exchanges_keep_the_bag(flow, more_bags, rules=None):
    """Check every allowed single exchange of every subtree; return the failures."""
    book = RuleBook(flow.root, rules=rules)
    failures = []
    for node in flow.root.walk():
        for ex in book.exchanges(node):
            STATS["exchanges"] += 1
            STATS[ex.rule] += 1
            SAMPLES.setdefault(ex.rule, (ex.certificate, flow))
            verdict = check(ex.certificate, flow)
            if not verdict.ok:
                failures.append(("checker", ex, verdict.problems))
                continue
            for b in more_bags:
                STATS["bag comparisons"] += 1
                before = outcome(L.build_subtree(flow, ex.before, b))
                after = outcome(L.build_subtree(flow, ex.after, b))
                if before != after and not isinstance(before, str):  # skipping an error is allowed
                    failures.append(("bag", ex, b))
                    break
    book.close()
    return failures


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spec=specs, data=st.lists(bags, min_size=2, max_size=3))
def test_every_certified_exchange_keeps_the_bag(spec, data):
    check_spec(spec, data)


# Flows with a CoGroup that forwards its left input under group filters and other Reduces
# on its key: the exchanges of section 4.3.2 that random flows rarely assemble.
cogroup_specs = st.tuples(
    st.just("three"),
    st.lists(st.sampled_from(["a_v_pos", "inc_a_v", "a_groups_with_pos[a_k]"]), max_size=1),
    st.lists(names, max_size=1),
    st.just([]),
    st.lists(st.sampled_from(["a_groups_with_pos[a_k]"] * 3 + ["count_a[a_k]", "total_a[a_k]", "a_k_even"]),
             min_size=1, max_size=2),
    st.tuples(st.sampled_from(["match", "cross"]), st.sampled_from(["cogroup_fwd"] * 3 + ["cogroup"])),
    st.booleans(),
)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spec=cogroup_specs, data=st.lists(bags, min_size=2, max_size=3))
def test_certified_exchanges_across_a_cogroup_keep_the_bag(spec, data):
    check_spec(spec, data)


# Issue 28's families: functions with unknown writes, a `setdefault`, a `yield from` a helper
# on both inputs of concatenations, and an outer CoGroup whose output depends on its position.
family_names = st.sampled_from(sorted(L.FAMILIES) * 2 + ["a_v_pos", "inc_a_v", "b_v_pos", "sum_ab"])
family_specs = st.tuples(
    st.sampled_from(["join", "three"]),
    st.lists(family_names, max_size=2),
    st.lists(family_names, max_size=1),
    st.lists(family_names, max_size=1),
    st.lists(family_names, min_size=1, max_size=2),
    st.tuples(st.sampled_from(["match", "cross"]), st.sampled_from(["match", "cross", "cogroup_outer"])),
    st.booleans(),
)


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spec=family_specs, data=st.lists(bags, min_size=2, max_size=3))
def test_certified_exchanges_of_unknown_and_position_dependent_writes_keep_the_bag(spec, data):
    check_spec(spec, data)


def check_spec(spec, data):
    flow = L.build(spec, data[0])
    ops = len(flow.operators)
    if not 3 <= ops <= 6:
        STATS["skipped (size)"] += 1
        return
    STATS["flows"] += 1
    STATS["bags"] += len(data)
    failures = exchanges_keep_the_bag(flow, data)
    assert not failures, failures[0]


def test_removing_any_single_fact_is_rejected():
    """Task of the checker: every fact the rule needs is recomputed, so a certificate with
    any one fact removed is rejected, naming that fact - for every family in the corpus."""
    if not SAMPLES:  # run alone: build the corpus first
        test_every_certified_exchange_keeps_the_bag()
        test_certified_exchanges_across_a_cogroup_keep_the_bag()
    families = set(SAMPLES)
    assert {"theorem1_map_map", "theorem2_map_reduce", "theorem3_product", "lemma1_join_join",
            "theorem4_reduce_cross", "invariant_grouping", "cogroup_reduce"} <= families, families
    for rule, (cert, flow) in sorted(SAMPLES.items()):
        assert check(cert, flow).ok
        kinds = {f.partition("(")[0] for f in cert.facts}
        STATS[f"fact kinds {rule}"] = len(kinds)
        for fact in cert.facts:
            tampered = dataclasses.replace(cert, facts=tuple(f for f in cert.facts if f != fact))
            result = check(tampered, flow)
            assert not result.ok, f"{rule}: removing {fact} was accepted"
            assert any(f"missing fact {fact}" in p for p in result.problems), (rule, fact, result.problems)


def test_a_false_fact_is_rejected():
    if not SAMPLES:
        test_every_certified_exchange_keeps_the_bag()
        test_certified_exchanges_across_a_cogroup_keep_the_bag()
    for rule, (cert, flow) in sorted(SAMPLES.items()):
        upper = cert.operators[0]
        for false in (f"reads({upper}, no_such_field)", "unique_key(Source(c), c_v)",
                      f"clear_of({upper}, Source(nowhere))"):
            result = check(dataclasses.replace(cert, facts=cert.facts + (false,)), flow)
            assert not result.ok and any(f"fact {false} does not hold" in p for p in result.problems), \
                (rule, false, result.problems)


def teardown_module(module):
    print("\ndifferential rules test:", dict(STATS))
    assert STATS["flows"] >= 25, STATS
    assert STATS["exchanges"] >= 50, STATS
    assert STATS["cogroup_reduce"] >= 5, STATS

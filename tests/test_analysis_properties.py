"""Property-based checks of the analysis against the functions themselves (Definitions 2 and 3).

For every corpus function the analysis finds pure, hypothesis generates input
records and runs the function:

- changing a field outside `reads` never changes the output, the changed
  field itself aside (Definition 3);
- changing a field outside `card_reads` never changes how many records come out;
- a field outside `writes` keeps its input value in every output record, and
  is never missing (Definition 2); for Reduce, the value of the group's first
  record when the field is `group_copied`, else the value of some record;
- the number of records emitted is within `emits`, the fields within `output_fields`.
"""

from __future__ import annotations

import copy
import types

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.analysis_corpus import entries
from udflow.analysis import analyze

VALUES = st.integers(min_value=-3, max_value=5)
GROUP_KINDS = ("reduce", "cogroup")
BINARY = ("match", "cross", "cogroup")


def _pure_entries():
    out = []
    for e in entries():
        p = analyze(e.fn, e.spec.input_fields(), e.spec.kind)
        if p.pure:
            out.append(pytest.param(e, id=e.id))
    return out


PURE = _pure_entries()
WITH_UNREAD = [
    p for p in PURE
    if p.values[0].spec.all_fields() - analyze(p.values[0].fn, p.values[0].spec.input_fields(), p.values[0].spec.kind).reads
]


def run(fn, kind, inputs) -> list:
    """The records `fn` emits for `inputs` under the semantics of its operator kind."""
    inputs = copy.deepcopy(inputs)
    if kind == "filter":
        (record,) = inputs
        return [record] if fn(copy.deepcopy(record)) else []
    out = fn(*inputs)
    if isinstance(out, types.GeneratorType):
        return list(out)
    if out is None:
        return []
    if isinstance(out, dict):
        return [out]
    return list(out)


def canonical(records, drop=None) -> list:
    return sorted(repr(sorted((k, v) for k, v in r.items() if k != drop)) for r in records)


def records(fields):
    return st.fixed_dictionaries({f: VALUES for f in sorted(fields)})


def inputs_for(spec):
    """A strategy for one call's arguments: records, or groups (lists) of records."""
    sides = spec.input_fields() if spec.kind in BINARY else (spec.input_fields(),)
    if spec.kind in GROUP_KINDS:
        return st.tuples(*(st.lists(records(s), min_size=1, max_size=4) for s in sides))
    return st.tuples(*(records(s) for s in sides))


def _perturb(data, spec, inputs, field):
    """Inputs with `field` changed (in one record, for groups)."""
    new = copy.deepcopy(list(inputs))
    for side, arg in enumerate(new):
        rows = arg if spec.kind in GROUP_KINDS else [arg]
        holders = [r for r in rows if field in r]
        if holders:
            target = data.draw(st.sampled_from(holders)) if len(holders) > 1 else holders[0]
            target[field] = data.draw(VALUES.filter(lambda v, old=target[field]: v != old))
    return tuple(new)


def _call(fn, kind, inputs):
    try:
        return run(fn, kind, inputs)
    except (ZeroDivisionError, ValueError, TypeError, OverflowError):
        assume(False)


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("entry", WITH_UNREAD)
@SETTINGS
@given(data=st.data())
def test_fields_outside_reads_do_not_change_the_output(entry, data):
    spec = entry.spec
    props = analyze(entry.fn, spec.input_fields(), spec.kind)
    unread = sorted(spec.all_fields() - props.reads)
    field = data.draw(st.sampled_from(unread))
    inputs = data.draw(inputs_for(spec))
    before = _call(entry.fn, spec.kind, inputs)
    after = _call(entry.fn, spec.kind, _perturb(data, spec, inputs, field))
    assert canonical(before, drop=field) == canonical(after, drop=field), (
        f"{entry.id}: changing {field!r}, which is not in reads {sorted(props.reads)}, changed the output"
    )
    if field not in props.card_reads:
        assert len(before) == len(after), f"{entry.id}: {field!r} decides the number of records emitted"


@pytest.mark.parametrize("entry", PURE)
@SETTINGS
@given(data=st.data())
def test_fields_outside_writes_keep_their_values(entry, data):
    spec = entry.spec
    props = analyze(entry.fn, spec.input_fields(), spec.kind)
    inputs = data.draw(inputs_for(spec))
    out = _call(entry.fn, spec.kind, inputs)
    lo, hi = props.emits
    assert lo <= len(out) and (hi is None or len(out) <= hi), f"{entry.id}: emitted {len(out)}, bounds {props.emits}"
    groups = [arg if spec.kind in GROUP_KINDS else [arg] for arg in inputs]
    for record in out:
        if props.output_fields is not None:
            assert set(record) <= props.output_fields, f"{entry.id}: {set(record) - props.output_fields} not declared"
        for field in spec.all_fields() - props.writes:
            assert field in record, f"{entry.id}: {field!r} is not in writes but is missing from an output"
            rows = next(g for g in groups if field in g[0])
            if field in props.group_copied:
                assert record[field] == rows[0][field], f"{entry.id}: {field!r} is not the first record's"
            else:
                assert record[field] in [r[field] for r in rows], f"{entry.id}: {field!r} changed"


def test_most_of_the_corpus_is_checked_by_running_it():
    assert len(PURE) >= 50
    assert len(WITH_UNREAD) >= 40


def test_the_checks_refute_a_wrong_claim():
    """The comparisons above can fail: a read set without B is refuted by running f3."""
    from tests.analysis_corpus import paper

    before = run(paper.f3, "map", ({"A": 1, "B": 2},))
    after = run(paper.f3, "map", ({"A": 1, "B": 3},))
    assert canonical(before, drop="B") != canonical(after, drop="B")  # B is read: A := A + B
    (out,) = before
    assert out["A"] != 1  # A is written


FORWARDING = [p for p in PURE if analyze(p.values[0].fn, p.values[0].spec.input_fields(), p.values[0].spec.kind).forwards_groups]


@pytest.mark.parametrize("entry", FORWARDING)
@SETTINGS
@given(data=st.data())
def test_a_group_forwarding_reduce_emits_its_group_or_nothing(entry, data):
    spec = entry.spec
    (group,) = inputs = data.draw(inputs_for(spec))
    out = _call(entry.fn, spec.kind, inputs)
    assert canonical(out) in (canonical(group), []), f"{entry.id}: emitted {out} for the group {group}"


def test_the_forwarding_check_runs_on_several_functions():
    assert len(FORWARDING) >= 3


def test_a_raise_site_is_said_in_the_users_terms():
    """issue 31, item 4: `may raise: key status on status` puzzled a newcomer"""
    def completed(r):
        return r["status"].strip() == "completed"

    from udflow import analyze

    said = [str(s) for s in analyze(completed, ["status"], kind="filter").raises]
    assert any(s.startswith("r['status']: KeyError where the record has no field 'status'") for s in said), said
    assert any(s.startswith(".strip(), which raises on None") and "fields status" in s for s in said), said

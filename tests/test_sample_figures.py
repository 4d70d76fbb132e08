"""What the optimizer takes from its samples, computed at C speed where it can
(`keysample.frequencies`, `samples._held`, the reference interpreter's copy of an
in-memory source), equals the plain definitions on records of every kind: None, absent
fields, strings, bytes, Decimals, bools, int subclasses, NaN, unhashable values."""

from __future__ import annotations

import enum
from collections import Counter
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from udflow import reference
from udflow.engine.keysample import frequencies, hashable
from udflow.plan import Source
from udflow.samples import _held


class Level(enum.IntEnum):
    LOW = 1


VALUES = st.one_of(
    st.none(), st.integers(), st.floats(allow_nan=True), st.booleans(), st.text(max_size=20),
    st.text(alphabet="abc", max_size=20), st.binary(max_size=20), st.just(Level.LOW),
    st.decimals(allow_nan=False, allow_infinity=False, places=2),
    st.just(Decimal("1234567890123456789012.5")), st.lists(st.integers(), max_size=3),
)
FIELDS = ("a", "b", "c", "d")
RECORDS = st.lists(st.dictionaries(st.sampled_from(FIELDS), VALUES), max_size=40)


@settings(max_examples=300, deadline=None)
@given(RECORDS, st.sampled_from(FIELDS))
def test_frequencies_count_each_non_none_value(records, field):
    expected = Counter(hashable(r.get(field)) for r in records if r.get(field) is not None)
    assert frequencies(records, field) == expected
    assert frequencies(iter(records), field) == expected


@settings(max_examples=200, deadline=None)
@given(RECORDS)
def test_a_held_sample_and_its_reference_read_keep_every_field_of_every_record(records):
    held = _held(Source("s", table="s", fields=("x",), columns=("x",), rows=()), records)
    assert held.fields == tuple(dict.fromkeys(f for r in records for f in r))
    read = reference.read_source(held)
    assert read == [{f: r.get(f) for f in held.fields} for r in records]
    assert [list(r) for r in read] == [list(held.fields)] * len(records)  # fields in the source's order
    assert all(a is not b for a, b in zip(read, records))  # copies: a function may change its record


@settings(max_examples=300, deadline=None)
@given(RECORDS, RECORDS, st.sampled_from(FIELDS), st.sampled_from(FIELDS))
def test_the_sampled_pairs_of_a_one_field_key_are_counted_as_for_many_fields(left, right, lk, rk):
    from udflow.engine.keysample import _pairs
    from udflow.plan import Match

    def pairs_by_tuples():
        counts = Counter((hashable(r.get(rk)),) for r in right)
        return sum(counts.get((hashable(r.get(lk)),), 0) for r in left if r.get(lk) is not None)

    node = Match("m", left=Source("l", table="l", fields=("x",), columns=("x",), rows=()),
                 right=Source("r", table="r", fields=("y",), columns=("y",), rows=()), left_key=(lk,), right_key=(rk,))
    assert _pairs(node, {"l": (len(left), 0.0, left), "r": (len(right), 0.0, right)}) == pairs_by_tuples()


VALUES_WITH_TIMES = st.one_of(VALUES, st.datetimes(), st.datetimes(timezones=st.timezones()), st.dates())


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES_WITH_TIMES, max_size=30))
def test_the_key_families_of_values_are_each_values_family(values):
    from udflow import keytypes

    expected = frozenset(keytypes.of_value(v) or type(v).__name__ for v in values if v is not None)
    assert keytypes.of_values(values) == expected
    assert keytypes.of_values(iter(values)) == expected


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), VALUES), st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3))
def test_a_records_key_is_its_values_with_nan_as_one_value(record, key):
    key = tuple(key)
    expected = tuple(reference.NAN_KEY if isinstance(v, float) and v != v else v for v in (record.get(f) for f in key))
    got = reference.key_of(record, key)
    assert len(got) == len(expected) and all(a is b or a == b for a, b in zip(got, expected))

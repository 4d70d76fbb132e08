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

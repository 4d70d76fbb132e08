"""`forwards_groups`: a Reduce whose every call emits its whole group unchanged, or nothing.

Positive cases live in the corpus (tests/analysis_corpus/ordinary_group.py); here are
the near misses, each one a function whose output is *not* always the group or empty,
shown by running it on a group."""

import pytest

from udflow.analysis import analyze

FIELDS = {"session", "action", "amount"}
GROUP = [
    {"session": 1, "action": "view", "amount": 2},
    {"session": 1, "action": "buy", "amount": 5},
    {"session": 1, "action": "view", "amount": 4},
]


def buy_session(rows):
    """The positive reference: the whole session if it has a buy."""
    rows = list(rows)
    if any(r["action"] == "buy" for r in rows):
        yield from rows


def threshold(rows):
    if len(rows) >= 3:
        yield from rows


def per_record_filter(rows):
    for r in rows:
        if r["action"] == "buy":
            yield r


def filter_inside_forwarding_loop(rows):
    rows = list(rows)
    if len(rows) > 1:
        for r in rows:
            if r["amount"] > 2:
                yield r


def rows_twice(rows):
    rows = list(rows)
    yield from rows
    if len(rows) > 2:
        yield from rows


def modified_records(rows):
    rows = list(rows)
    if len(rows) > 1:
        for r in rows:
            r["amount"] = r["amount"] * 2
            yield r


def first_row(rows):
    rows = list(rows)
    yield rows[0]


def break_in_loop(rows):
    rows = list(rows)
    for r in rows:
        yield r
        if r["action"] == "buy":
            break


def continue_in_loop(rows):
    rows = list(rows)
    for r in rows:
        if r["action"] == "buy":
            continue
        yield r


def a_slice(rows):
    rows = list(rows)
    yield from rows[1:]


def popped_first(rows):
    rows = list(rows)
    rows.pop()
    yield from rows


def iterator_consumed_then_forwarded(rows):
    if any(r["action"] == "buy" for r in rows):  # on a one-shot iterator, eats records
        yield from rows


def two_loops_on_one_path(rows):
    rows = list(rows)
    for r in rows:
        yield r
    for r in rows:
        yield r


def forwards(f) -> bool:
    return analyze(f, FIELDS, "reduce").forwards_groups


def emits_group_or_nothing(f, group) -> bool:
    out = list(f([dict(r) for r in group]))
    return out == [] or sorted(map(repr, out)) == sorted(map(repr, group))


@pytest.mark.parametrize("f", [buy_session, threshold])
def test_whole_group_filters_forward_groups_with_evidence(f):
    props = analyze(f, FIELDS, "reduce")
    assert props.forwards_groups
    [ev] = props.evidence_for("forwards_groups")
    assert ev.text in ("yield from rows", "for r in rows:") and ev.line > 0
    assert emits_group_or_nothing(f, GROUP) and emits_group_or_nothing(f, GROUP[:1])


@pytest.mark.parametrize("f", [per_record_filter, filter_inside_forwarding_loop, rows_twice, modified_records,
                               first_row, break_in_loop, continue_in_loop, a_slice, popped_first,
                               two_loops_on_one_path])
def test_near_misses_do_not_forward_groups(f):
    assert not forwards(f)
    assert not emits_group_or_nothing(f, GROUP)  # and rightly so


def test_a_one_shot_iterator_consumed_before_forwarding_is_not_trusted():
    assert not forwards(iterator_consumed_then_forwarded)
    assert list(iterator_consumed_then_forwarded(iter(GROUP))) == GROUP[2:]


def test_only_reduce_functions_forward_groups():
    assert not analyze(buy_session, (FIELDS, FIELDS), "cogroup").forwards_groups
    assert not analyze(lambda r: r, FIELDS, "map").forwards_groups


# -- CoGroup: forwarding one input record for record (`forwards_sides`) ------------------------------

ORDERS = {"o_part", "o_qty"}
PARTS = {"p_id", "p_price"}
LEFT = [{"o_part": 1, "o_qty": 3}, {"o_part": 1, "o_qty": 1}]
RIGHT = [{"p_id": 1, "p_price": 7}]


def priced_orders(left, right):
    right = list(right)
    if right:
        for o in left:
            yield {**o, "o_price": right[0]["p_price"], "n_parts": len(right)}


def orders_of_known_parts(left, right):
    right = list(right)
    if len(right) > 0:
        yield from left


def parts_with_orders(left, right):
    left = list(left)
    if left:
        for p in right:
            yield p


def every_pair(left, right):
    right = list(right)
    for o in left:
        for p in right:
            yield {**o, **p}


def orders_one_by_one(left, right):
    right = list(right)
    for o in left:
        if o["o_qty"] > 2 and right:
            yield {**o, "o_price": right[0]["p_price"]}


def both_inputs(left, right):
    yield from left
    yield from right


def computed_field_name(left, right):
    name = "o_" + "price"
    for o in left:
        yield {**o, name: 1}


def overwrites_then_forwards(left, right):
    for o in left:
        yield {"o_part": 0, **o}


def cogroup_forwards(f) -> frozenset:
    return analyze(f, (ORDERS, PARTS), "cogroup").forwards_sides


def one_per_record_or_nothing(f, left, right, side) -> bool:
    group = (left, right)[side]
    out = list(f([dict(r) for r in left], [dict(r) for r in right]))
    if not out:
        return True
    return len(out) == len(group) and all({**g, **o} == o for g, o in zip(group, out))


@pytest.mark.parametrize("f, side", [(priced_orders, 0), (orders_of_known_parts, 0), (parts_with_orders, 1)])
def test_cogroups_forwarding_one_input_are_found_with_evidence(f, side):
    props = analyze(f, (ORDERS, PARTS), "cogroup")
    assert props.forwards_sides == {side}
    assert all(e.field == str(side) and e.line > 0 for e in props.evidence_for("forwards_sides"))
    for left, right in ((LEFT, RIGHT), (LEFT, []), ([], RIGHT), (LEFT[:1], RIGHT)):
        assert one_per_record_or_nothing(f, left, right, side)


@pytest.mark.parametrize("f", [every_pair, orders_one_by_one, both_inputs, computed_field_name,
                               overwrites_then_forwards])
def test_cogroup_near_misses_forward_no_input(f):
    assert cogroup_forwards(f) == frozenset()


def test_near_misses_do_break_record_for_record_forwarding():
    assert not one_per_record_or_nothing(every_pair, LEFT, RIGHT + [{"p_id": 1, "p_price": 8}], 0)
    assert not one_per_record_or_nothing(orders_one_by_one, LEFT, RIGHT, 0)
    assert not one_per_record_or_nothing(both_inputs, LEFT, RIGHT, 0)

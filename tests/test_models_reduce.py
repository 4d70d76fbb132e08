"""Group-level models compute what the Reduce computes (no Spark).

Each function here gets a model, and `apply_group` of the model and the function
itself are run on generated groups (one record or a few, None among the values,
filters that leave no record, values that make Python raise): the same records
come out, or both raise the same exception type. Functions whose construct has
no exact term get no model, with the reason and its line.
"""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis.model import ReduceModel, apply_group

FIELDS = ("k", "t", "x", "s")
values = {
    "k": st.sampled_from(["a", "b"]),
    "t": st.one_of(st.none(), st.integers(-2, 2), st.sampled_from([0.0, 2.5, float("nan")])),
    "x": st.one_of(st.none(), st.integers(-2, 2)),
    "s": st.sampled_from([None, "", "buy", "view", "a|b", "x y"]),
}
groups = st.lists(st.fixed_dictionaries(values), min_size=1, max_size=5)


def outcome(call):
    try:
        return list(call())
    except Exception as err:  # noqa: BLE001 - any error, compared by type
        return ("raises", type(err).__name__)


def same(a, b) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    return len(a) == len(b) and all(list(x) == list(y) and all(_same(x[f], y[f]) for f in x) for x, y in zip(a, b))


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def agrees(fn, model, examples=200):
    @settings(max_examples=examples, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(group=groups)
    def check(group):
        expected = outcome(lambda: fn([dict(r) for r in group]))
        got = outcome(lambda: apply_group(model, [dict(r) for r in group]))
        assert same(expected, got), (fn.__name__, group, expected, got)

    check()


def model_of(fn, fields=FIELDS):
    return uf.analyze(fn, set(fields), kind="reduce")


# -- the truthiness of a list over the group --------------------------------------------


def mean_t_or_none(rows):
    rows = list(rows)
    known = [r for r in rows if r["t"] is not None]
    yield {"k": rows[0]["k"], "mean": sum(r["t"] for r in known) / len(known) if known else None}


def min_t_if_any(rows):
    rows = list(rows)
    known = [r for r in rows if r["t"] is not None]
    yield {"k": rows[0]["k"], "low": min(r["t"] for r in known) if known else None}  # min([]) never runs


def skip_unknown(rows):
    rows = list(rows)
    known = [r["t"] for r in rows if r["t"] is not None]
    if not known:
        return
    yield {**rows[0], "n": len(known)}


def truth_as_value(rows):
    rows = list(rows)
    positive = [r for r in rows if r["x"] is not None and r["x"] > 0]
    yield {"k": rows[0]["k"], "any": bool(positive), "none": not positive}


def raising_filter(rows):
    rows = list(rows)
    positive = [r for r in rows if r["x"] > 0]  # TypeError on None, where the list is built
    yield {"k": rows[0]["k"], "n": len(positive) if positive else -1}


def both_lists(rows):
    rows = list(rows)
    low = [r for r in rows if r["x"] == 0]
    if rows and low:
        yield {"k": rows[0]["k"], "n": len(low)}
    elif low or len(rows) > 2:
        yield {"k": rows[0]["k"], "n": -1}


TRUTH = [mean_t_or_none, min_t_if_any, skip_unknown, truth_as_value, raising_filter, both_lists]


@pytest.mark.parametrize("fn", TRUTH, ids=[f.__name__ for f in TRUTH])
def test_the_truthiness_of_a_group_list_is_modelled_exactly(fn):
    props = model_of(fn)
    assert isinstance(props.model, ReduceModel), props.model_reason
    agrees(fn, props.model)


def test_an_aggregate_in_an_untaken_branch_is_not_eager():
    model = model_of(min_t_if_any).model
    assert not any(a.fn == "min" for a in model.eager), model.eager
    assert "(len([r for r in rows if (r['t'] is not None)]) > 0)" in str(model)


def a_generator_is_always_truthy(rows):
    rows = list(rows)
    known = (r for r in rows if r["t"] is not None)
    yield {"k": rows[0]["k"], "some": 1 if known else 0}


def the_parameter_may_be_an_iterator(rows):
    yield {"n": 1 if rows else 0}


@pytest.mark.parametrize("fn", [a_generator_is_always_truthy, the_parameter_may_be_an_iterator])
def test_no_truthiness_term_for_what_may_not_be_a_list(fn):
    props = model_of(fn)
    assert props.model is None and "line" in props.model_reason, props.model_reason


# -- the examples ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_dirs(tmp_path_factory):
    from examples import taxi

    from examples import clickstream

    base = tmp_path_factory.mktemp("examples")
    return {"taxi": taxi.generate_data(str(base / "taxi"), 0.0001),
            "clickstream": clickstream.generate_data(str(base / "clickstream"), 0.0005)}


def _functions(flow):
    return {n.fn.__name__: n for n in flow.root.walk() if getattr(n, "fn", None) is not None}


def test_taxi_zone_averages_has_a_model_that_computes_what_it_computes(example_dirs):
    from examples import taxi
    from udflow.fields import properties_of

    node = _functions(taxi.build_flow(example_dirs["taxi"]))["zone_averages"]
    props = properties_of(node)
    assert isinstance(props.model, ReduceModel), props.model_reason
    fields = {"zone_id": st.sampled_from([1, 2]), "borough": st.just("Queens"), "zone": st.just("z"),
              "minutes": values["t"], "mph": values["t"], "fare_per_mile": values["t"], "tip": values["t"]}

    @settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(group=st.lists(st.fixed_dictionaries(fields), min_size=1, max_size=4))
    def check(group):
        expected = outcome(lambda: node.fn([dict(r) for r in group]))
        assert same(expected, outcome(lambda: apply_group(props.model, [dict(r) for r in group]))), group

    check()


# -- any/all over the group, and whole groups kept or dropped --------------------------------


def flags(rows):
    rows = list(rows)
    zeros = [r for r in rows if r["x"] == 0]
    yield {"k": rows[0]["k"], "buy": any(r["s"] == "buy" for r in rows),
           "complete": all(r["x"] is not None for r in rows),
           "t_among_zeros": any(r["t"] for r in zeros),  # no zeros: False
           "all_zeros_blank": all(not r["s"] for r in rows if r["x"] == 0),  # no zeros: True
           "listed": any([r["s"] in ("a|b", "x y") for r in rows])}


def buy_sessions(rows):
    rows = list(rows)
    if any(r["s"] == "buy" for r in rows):
        yield from rows


def complete_big_groups(rows):
    rows = list(rows)
    if len(rows) < 2:
        return
    if all(r["x"] is not None for r in rows) or not [r for r in rows if r["t"] is not None]:
        yield from rows


def no_blank_unless_zero(rows):
    rows = list(rows)
    zeros = [r for r in rows if r["x"] == 0]
    if zeros and all(r["s"] for r in rows):
        return
    yield from rows


def sum_decides(rows):
    rows = list(rows)
    total = sum(r["x"] for r in rows)  # TypeError on None, before any branch
    if total > 1:
        yield from rows


GROUP_LEVEL = [flags, buy_sessions, complete_big_groups, no_blank_unless_zero, sum_decides]


@pytest.mark.parametrize("fn", GROUP_LEVEL, ids=[f.__name__ for f in GROUP_LEVEL])
def test_any_all_and_group_filters_compute_what_the_function_computes(fn):
    props = model_of(fn)
    assert props.model is not None, props.model_reason
    agrees(fn, props.model)


def test_a_forwarding_reduce_is_a_group_filter():
    from udflow.analysis.model import GroupFilterModel

    model = model_of(buy_sessions).model
    assert isinstance(model, GroupFilterModel)
    assert str(model) == "keep group if any([(r['s'] == 'buy') for r in rows])"
    assert model_of(sum_decides).model.aggregates()[0].fn == "sum"


def any_may_raise(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "pos": any(r["x"] > 0 for r in rows)}  # stops before a later None


def forwards_a_filtered_list(rows):
    rows = list(rows)
    known = [r for r in rows if r["x"] is not None]
    if any(r["s"] == "buy" for r in rows):
        yield from known


def raises_after_forwarding(rows):
    rows = list(rows)
    if any(r["s"] == "buy" for r in rows):
        yield from rows
    if 1 // (len(rows) - 1) > 0:
        return


@pytest.mark.parametrize("fn", [any_may_raise, forwards_a_filtered_list, raises_after_forwarding])
def test_no_group_model_where_python_would_stop_early_or_emit_other_records(fn):
    props = model_of(fn)
    assert props.model is None and "line" in props.model_reason, props.model_reason


def test_clickstream_filter_buy_sessions_is_a_group_filter(example_dirs):
    from examples import clickstream
    from udflow.analysis.model import GroupFilterModel
    from udflow.fields import properties_of

    node = _functions(clickstream.build_flow(example_dirs["clickstream"]))["filter_buy_sessions"]
    props = properties_of(node)
    assert isinstance(props.model, GroupFilterModel), props.model_reason
    assert str(props.model) == "keep group if any([(r['action'] == 'buy') for r in rows])"
    actions = st.sampled_from([None, "", "buy", "view", "Buy"])
    click = st.fixed_dictionaries({"session_id": st.just("s"), "action": actions, "url": st.just("/")})

    @settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(group=st.lists(click, min_size=1, max_size=4))
    def check(group):
        expected = outcome(lambda: node.fn([dict(r) for r in group]))
        assert same(expected, outcome(lambda: apply_group(props.model, [dict(r) for r in group]))), group

    check()


# -- a Map that emits one record per piece of a string (ExplodeModel) ------------------------

from udflow.analysis.model import ExplodeModel, apply  # noqa: E402

strings = st.one_of(
    st.none(), st.integers(-1, 1),
    st.sampled_from(["", "|", "a", "a|b", "a||b", "|a|", " a  b ", "\t\n", "x\x1cy", "p\u2028q", "\u00a0", "Ab|cD"]),
    st.text(alphabet="ab| \t\x1c", max_size=6),
)
records = st.fixed_dictionaries({"k": values["k"], "s": strings, "x": values["x"]})


def per_piece(r):
    for piece in r["s"].split("|"):
        yield {**r, "piece": piece}


def per_word(r):
    """Whitespace split: empty runs dropped, and a field that may raise only where a word is."""
    for w in r["s"].split():
        yield {"k": r["k"], "w": w.lower(), "is_a": w == "a", "next": r["x"] + 1}


def per_piece_with_conditional(r):
    for p in r["s"].split("|"):
        yield {**r, "p": p if p else None, "starts": p.startswith("a")}


EXPLODES = [per_piece, per_word, per_piece_with_conditional]


def map_outcome(call):
    try:
        return list(call())
    except Exception as err:  # noqa: BLE001
        return ("raises", type(err).__name__)


@pytest.mark.parametrize("fn", EXPLODES, ids=[f.__name__ for f in EXPLODES])
def test_an_explosion_computes_what_the_function_computes(fn):
    props = uf.analyze(fn, {"k", "s", "x"})
    assert isinstance(props.model, ExplodeModel), props.model_reason

    @settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(record=records)
    def check(record):
        expected = map_outcome(lambda: fn(dict(record)))
        got = map_outcome(lambda: apply(props.model, dict(record)))
        assert same(expected, got), (record, expected, got)

    check()


def test_split_semantics_kept():
    model = uf.analyze(per_piece, {"k", "s", "x"}).model
    assert [r["piece"] for r in apply(model, {"k": "a", "s": "", "x": 1})] == [""]
    assert [r["piece"] for r in apply(model, {"k": "a", "s": "a||b", "x": 1})] == ["a", "", "b"]
    with pytest.raises(AttributeError):
        apply(model, {"k": "a", "s": None, "x": 1})
    words = uf.analyze(per_word, {"k", "s", "x"}).model
    assert apply(words, {"k": "a", "s": " \u2028 ", "x": None}) == []  # no word: no record, no error
    assert str(model) == "for x in r['s'].split('|'): {**r, 'piece': x}"


def split_with_maxsplit(r):
    for p in r["s"].split("|", 1):
        yield {**r, "p": p}


def split_by_a_variable(r):
    sep = "|" if r["x"] else ","
    for p in r["s"].split(sep):
        yield {**r, "p": p}


def yields_under_a_condition(r):
    for p in r["s"].split("|"):
        if p:
            yield {**r, "p": p}


def two_yields(r):
    for p in r["s"].split("|"):
        yield {**r, "p": p}
        yield {**r, "p": p + "!"}


def rsplit_is_not_split(r):
    for p in r["s"].rsplit("|"):
        yield {**r, "p": p}


def loop_over_a_field(r):
    for p in r["s"]:
        yield {**r, "p": p}


NOT_EXPLODES = [split_with_maxsplit, split_by_a_variable, two_yields, rsplit_is_not_split]


def test_a_loop_over_any_other_value_is_an_explosion_of_its_items():
    """`for p in r["s"]`: the pieces are the value's items as Python's `for` takes them (a
    str's characters here), any type, None included; None itself is not iterable."""
    model = uf.analyze(loop_over_a_field, {"k", "s", "x"}).model
    assert model is not None and not model.split and str(model) == "for x in r['s']: {**r, 'p': x}"
    for s in ("abc", "", ["a", None, 3], ("x",)):
        record = {"k": 1, "s": s, "x": 2}
        assert apply(model, record) == list(loop_over_a_field(record))
    with pytest.raises(TypeError, match="'NoneType' object is not iterable"):
        apply(model, {"k": 1, "s": None, "x": 2})


def bound_then_under_a_condition(r):
    for p in r["s"].split("|"):
        n = len(p)
        if n > 1 and p != "xx":
            yield {**r, "p": p, "n": n}


@pytest.mark.parametrize("fn", [yields_under_a_condition, bound_then_under_a_condition],
                         ids=lambda f: f.__name__)
def test_a_loop_yielding_under_a_condition_is_an_explosion_with_a_guard(fn):
    model = uf.analyze(fn, {"k", "s", "x"}).model
    assert model is not None and model.guard is not None and ": if " in str(model)
    for s in ("a||bb|xx|ccc", "", "|", "xx"):
        record = {"k": "a", "s": s, "x": 1}
        assert apply(model, record) == list(fn(record))


@pytest.mark.parametrize("fn", NOT_EXPLODES, ids=[f.__name__ for f in NOT_EXPLODES])
def test_other_loops_have_no_model(fn):
    props = uf.analyze(fn, {"k", "s", "x"})
    assert props.model is None and "line" in props.model_reason, props.model_reason


def test_ratings_one_record_per_genre_is_an_explosion(tmp_path):
    from examples import ratings
    from udflow.fields import properties_of

    flow = ratings.build_flow(ratings.generate_data(str(tmp_path / "ratings"), 0.0005), by="genre")
    node = _functions(flow)["one_record_per_genre"]
    props = properties_of(node)
    assert isinstance(props.model, ExplodeModel), props.model_reason
    assert str(props.model) == "for x in r['m_genres'].split('|'): {**r, 'genre': x}"
    genres = st.one_of(st.none(), st.sampled_from(["", "Drama", "Drama|Comedy", "|Drama", "A||B"]))

    @settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(record=st.fixed_dictionaries({"movie_id": st.integers(1, 3), "m_genres": genres}))
    def check(record):
        assert same(map_outcome(lambda: node.fn(dict(record))), map_outcome(lambda: apply(props.model, dict(record))))

    check()

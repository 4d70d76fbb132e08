"""udflow.analysis: the API contract, source lookup, name resolution, annotations, the Flow wiring."""

from __future__ import annotations

import functools
import operator
import time
import warnings

import pytest

import udflow as uf
from udflow.analysis import AnnotationWarning, analyze, clear_cache, manual_properties
from udflow.errors import AnalysisError
from udflow.flow import properties_of

KEY = "b"
NAMES = ("a", "c")

# several lambdas on one line: told apart by their code positions
lo, hi, both = (lambda r: r["a"] < 0), (lambda r: {**r, "c": r["b"]}), (lambda r: r["a"] + r["b"] > 0)
outer = lambda r: (lambda x: x + r["a"])(r["b"]) > 0  # noqa: E731  (a lambda inside a lambda)


def test_several_lambdas_on_one_line_are_told_apart():
    line = lo.__code__.co_firstlineno
    p_lo, p_hi, p_both = analyze(lo, "abc", "filter"), analyze(hi, "abc"), analyze(both, "abc", "filter")
    assert p_lo.reads == {"a"} and p_lo.pure
    assert p_hi.reads == {"b"} and p_hi.writes == {"c"} and p_hi.emits == (1, 1)
    assert p_both.reads == {"a", "b"}
    assert p_hi.lines_for("reads", "b") == (line,)  # absolute line number in this file
    assert p_hi.evidence_for("reads", "b")[0].file == __file__


def test_lambda_inside_a_lambda():
    p = analyze(outer, "abc", "filter")
    assert p.pure and p.reads == {"a", "b"}


def test_module_and_closure_constants_name_fields():
    def make(field):
        def f(r):
            return {**r, "x": r[field] + r[KEY]}

        return f

    p = analyze(make("a"), "abc")
    assert p.reads == {"a", "b"} and p.writes == {"x"}


def test_iterating_a_constant_tuple_of_names():
    def f(r):
        return {**r, "s": sum(r[n] for n in NAMES)}

    assert analyze(f, "abc").reads == {"a", "c"}


def test_partial_binds_constants_and_nested_partials_flatten():
    def g(field, scale, r):
        return {**r, field + "_scaled": r[field] * scale}

    p = analyze(functools.partial(functools.partial(g, "a"), 3), "abc")
    assert p.pure and p.reads == {"a"} and p.writes == {"a_scaled"}


def test_helpers_are_followed_up_to_the_depth_bound():
    def level3(x):
        return x["a"]

    def level2(x):
        return level3(x) + 1

    def level1(x):
        return level2(x) * 2

    def f(r):
        return {**r, "y": level1(r)}

    p = analyze(f, "abc")
    assert p.pure and p.reads == {"a"} and p.writes == {"y"}
    # `a` is read where its value is first used: `level3(x) + 1` in level2
    assert p.lines_for("reads", "a") == (level2.__code__.co_firstlineno + 1,)


@pytest.mark.parametrize(
    "fn, why",
    [
        (len, "no Python source"),
        (operator.itemgetter("a"), "no Python source"),
        (time.time, "no Python source"),
    ],
)
def test_functions_without_source_are_opaque(fn, why):
    p = analyze(fn, {"a", "b"})
    assert not p.pure and p.origin == "opaque"
    assert p.reads == p.writes == p.card_reads == {"a", "b"} and p.emits == (0, None)
    assert p.output_fields is None
    assert why in p.evidence_for("impure")[0].note


def test_function_made_by_exec_is_opaque():
    ns: dict = {}
    exec("def f(r):\n    return {**r, 'x': 1}\n", ns)
    p = analyze(ns["f"], {"a"})
    assert not p.pure and "exec" in p.evidence[0].note


def test_results_are_cached_per_function_schema_and_kind():
    def f(r):
        return {**r, "x": r["a"]}

    assert analyze(f, {"a", "b"}) is analyze(f, frozenset({"b", "a"}))
    assert analyze(f, {"a", "b"}) is not analyze(f, {"a", "b", "c"})
    assert analyze(f, {"a", "b"}).output_fields == {"a", "b", "x"}
    assert analyze(f, {"a", "b", "c"}).output_fields == {"a", "b", "c", "x"}


def test_unknown_schema_is_conservative():
    def copy_and_add(r):
        return {**r, "x": r["a"] + 1}

    def project(r):
        return {"x": r["a"]}

    p = analyze(copy_and_add, ())
    assert p.pure and p.reads == {"a"} and p.writes == {"x"} and p.output_fields is None
    q = analyze(project, ())
    assert not q.pure  # which fields it projects away cannot be named


def test_binary_functions_report_reads_per_side_and_projected_fields():
    def f(left, right):
        if left["a"] > right["c"]:
            yield {"a": left["a"], "k": right["d"]}

    p = analyze(f, ({"a", "b"}, {"c", "d"}), "match")
    assert p.side_reads == ({"a"}, {"c", "d"})
    assert p.writes == {"b", "c", "d", "k"}  # b and c are projected away, d renamed to k
    assert p.card_reads == {"a", "c"} and p.emits == (0, 1)
    assert p.output_fields == {"a", "k"} and not p.copy


def test_unary_side_reads_has_one_entry():
    assert analyze(lo, "abc", "filter").side_reads == ({"a"},)


def test_filter_convention():
    def pred(r):
        return r["a"] > 1 and r["b"] != 0

    p = analyze(pred, {"a", "b", "c"}, "filter")
    assert p.writes == set() and p.emits == (0, 1) and p.copy
    assert p.reads == p.card_reads == {"a", "b"} and p.output_fields == {"a", "b", "c"}


def test_bad_kind_and_bad_binary_input_are_user_errors():
    with pytest.raises(AnalysisError):
        analyze(lo, "abc", "join")
    with pytest.raises(AnalysisError):
        analyze(hi, {"a", "b", "c"}, "match")


# -- reduce: first record, order ------------------------------------------------


def test_first_record_copy_is_reported_as_group_copy():
    def total(rows):
        rows = list(rows)
        yield {**rows[0], "total": sum(r["p"] * (1 - r["d"]) for r in rows)}

    def via_next(rows):
        first = next(iter(rows))
        yield {"k": first["k"], "n": 1}

    p = analyze(total, {"k", "p", "d", "s_name"}, "reduce")
    assert p.pure and p.copy and p.reads == {"p", "d"} and p.writes == {"total"}
    assert p.group_copied == {"k", "p", "d", "s_name"}
    assert p.evidence_for("copy", "s_name")
    q = analyze(via_next, {"k", "v"}, "reduce")
    assert q.pure and q.group_copied == {"k"} and q.writes == {"v", "n"}


@pytest.mark.parametrize(
    "src",
    [
        "def f(rows):\n    rows = list(rows)\n    yield {**rows[-1]}\n",
        "def f(rows):\n    rows = list(rows)\n    yield {'k': rows[1]['k']}\n",
        "def f(rows):\n    for i, r in enumerate(rows):\n        yield {**r, 'i': i}\n",
        "def f(rows):\n    yield sorted(rows, key=lambda r: r['v'])[0]\n",
    ],
)
def test_order_dependent_reduce_is_impure(tmp_path, src, monkeypatch):
    path = tmp_path / "order_mod.py"
    path.write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    mod = importlib.import_module("order_mod")
    try:
        p = analyze(mod.f, {"k", "v"}, "reduce")
        note = p.evidence_for("impure")[0].note
        assert not p.pure and ("order" in note or "position" in note), note
    finally:
        import sys

        sys.modules.pop("order_mod", None)


# -- annotations ------------------------------------------------------------------


def test_manual_properties_use_the_annotation():
    @uf.annotate(reads={"a"}, writes={"x"}, emits=(1, 1))
    def f(r):
        return {**r, "x": r["a"] * 2}

    p = manual_properties(f, {"a", "b"}, "map")
    assert p.origin == "annotation" and p.pure
    assert p.reads == {"a"} and p.writes == {"x"} and p.emits == (1, 1)
    assert p.output_fields == {"a", "b", "x"} and p.side_reads == ({"a"},)


def test_manual_properties_without_annotation_fall_back_to_analysis():
    def f(r):
        return {**r, "x": r["a"]}

    assert manual_properties(f, {"a"}, "map") == analyze(f, {"a"})


def test_annotation_claiming_fewer_fields_warns_with_the_missing_ones():
    @uf.annotate(reads={"a"}, writes=set())
    def f(r):
        return {**r, "x": r["a"] + r["b"]}

    with pytest.warns(AnnotationWarning) as caught:
        analyze(f, {"a", "b"})
    message = str(caught[0].message)
    assert "reads b" in message and "writes x" in message and "f" in message
    assert f"line {f.__code__.co_firstlineno + 2}" in message
    assert issubclass(AnnotationWarning, UserWarning)


def test_correct_annotation_does_not_warn():
    @uf.annotate(reads={"a", "b"}, writes={"x"}, emits=1)
    def f(r):
        return {**r, "x": r["a"] + r["b"]}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        analyze(f, {"a", "b"})


def test_bad_annotation_is_a_user_error():
    with pytest.raises(AnalysisError):
        uf.annotate(reads=[1, 2])
    with pytest.raises(AnalysisError):
        uf.annotate(emits=(2, 1))


# -- wiring into the Flow ----------------------------------------------------------


def test_flow_fields_and_properties_come_from_the_analysis():
    def enrich(r):
        return {**r, "total": r["price"] * r["qty"]}

    def cheap(r):
        return r["total"] < 10

    flow = uf.source("t", rows=[{"id": 1, "price": 2, "qty": 3}]).map(enrich).filter(cheap)
    assert flow.fields == {"id", "price", "qty", "total"}
    enrich_node = flow.operator("Map(enrich)")
    p = properties_of(enrich_node)
    assert p.reads == {"price", "qty"} and p.writes == {"total"}
    assert properties_of(flow.operator("Filter(cheap)")).reads == {"total"}


def test_flow_manual_properties_use_annotations():
    @uf.annotate(reads={"price"}, writes={"flag"}, emits=(1, 1))
    def flag(r):
        return {**r, "flag": r["price"] > 1}

    flow = uf.source("t", rows=[{"id": 1, "price": 2}]).map(flag)
    node = flow.operator("Map(flag)")
    assert properties_of(node, manual=True).origin == "annotation"
    assert properties_of(node).origin == "analysis"


def test_tpch_q15_reduce_reads_only_price_and_discount(tpch_dir):
    from examples import tpch_q15

    flow = tpch_q15.build_flow(tpch_dir)
    reduce_node = flow.root
    p = properties_of(reduce_node)
    assert p.pure and p.copy
    assert p.reads == {"l_extendedprice", "l_discount"}
    assert p.writes == {"total_revenue"}
    assert {"s_name", "s_address", "s_phone"} <= p.group_copied
    assert p.emits == (1, 1)
    shipped = properties_of(reduce_node.inputs[0].inputs[0])
    assert shipped.reads == shipped.card_reads == {"l_shipdate"} and shipped.writes == set()


def test_analysis_is_fast_on_average_over_the_corpus():
    from bench.analysis_speed import measure

    m = measure(rounds=2)
    assert m["mean_ms"] < 5.0, m
    clear_cache()

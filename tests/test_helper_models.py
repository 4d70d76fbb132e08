"""A call of the user's helper as the term of what it returns (`analysis.helper_models`).

The helper's text, edited into a record function, is analysed like a Map; its cases are a
conditional over the call's arguments. The term gives what the call gives and raises what
it raises, first error first: an argument that may raise is computed before the body.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis import analyze
from udflow.analysis.model import apply
from udflow.helper_calls import HelperCall

SUFFIXES = ("ingly", "edly", "ing", "ed", "ly", "es", "s")
WORDS = ["jumpingly", "walked", "sing", "ed", "quickly", "boxes", "cats", "s", "", "naïvely"]


def stem(word):
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def size_label(n, small):
    if n is None:
        return None
    if n < small:
        return "small"
    return "large" if n > 10 * small else "medium"


def ignores_its_argument(x):
    return 7


def nothing_back(x):
    if x > 0:
        return x


def with_a_try(x):
    try:
        return int(x)
    except ValueError as exc:  # noqa: F841 - the error bound: no value model (`caught_form`)
        return None


def countdown(n):
    return 0 if n <= 0 else countdown(n - 1)


def stemmed(r):
    return {**r, "t": stem(r["w"])}


def labelled(r):
    return {**r, "t": size_label(r["n"], 3)}


def divided_first(r):
    return {**r, "t": ignores_its_argument(1 // r["n"])}


def maybe_nothing(r):
    return {**r, "t": nothing_back(r["n"])}


def parsed(r):
    return {**r, "t": with_a_try(r["w"])}


def counted_down(r):
    return {**r, "t": countdown(r["n"])}


ROWS = [{"w": w, "n": n} for w, n in zip(WORDS, [0, 1, 2, 5, 40, None, -3, 3, 31, 100])]


def _helper_calls(model) -> list:
    from udflow.analysis.model import case_terms

    return [t for _, term in case_terms(model) for t in term.walk() if isinstance(t, HelperCall)]


@pytest.mark.parametrize("fn", [stemmed, labelled, maybe_nothing])
def test_an_inlined_helper_gives_what_the_call_gives(fn):
    props = analyze(fn)
    assert props.model is not None and not _helper_calls(props.model), props.model_reason
    for r in ROWS:
        try:
            expected = [fn(dict(r))]
        except TypeError:  # None > 0: the model raises too
            with pytest.raises(TypeError):
                apply(props.model, dict(r))
            continue
        assert apply(props.model, dict(r)) == expected, r


def test_an_argument_that_may_raise_is_computed_before_the_body():
    props = analyze(divided_first)
    assert not _helper_calls(props.model)
    assert apply(props.model, {"w": "", "n": 2}) == [{"w": "", "n": 2, "t": 7}]
    with pytest.raises(ZeroDivisionError):  # the helper never reads it; Python computed it first
        apply(props.model, {"w": "", "n": 0})


def test_a_helper_with_no_value_model_stays_a_call():
    props = analyze(parsed)
    assert props.model is not None and _helper_calls(props.model), props.model_reason


def test_a_recursive_helper_is_refused_as_before_not_inlined_forever():
    props = analyze(counted_down)
    assert props.model is None and "recursively" in props.model_reason


@pytest.mark.spark
@pytest.mark.parametrize("fn", [stemmed, labelled])
def test_an_inlined_helper_runs_natively_with_pythons_records(spark, fn):
    rows = [r for r in ROWS if r["n"] is not None or fn is stemmed]
    flow = uf.source("t", rows=rows).map(fn)
    assert flow.physical().root.describe() == "native"
    got = flow.collect(spark=spark)
    assert sorted(map(repr, got)) == sorted(map(repr, flow.collect(engine="reference")))


STOP = frozenset({"the", "a"})


def tokens(r):
    for raw in r["text"].split():
        word = raw.strip(".,!").lower()
        if word and word not in STOP:
            yield {"doc": r["doc"], "token": stem(word)}


@pytest.mark.spark
def test_a_tokenizer_with_its_stemmer_inlined_runs_natively_computing_each_part_once(spark):
    """documents' shape: the piece's word computed once per piece (a hidden column the
    condition and the inlined stem read, `native_shared.shared_piece`), the stem once (Spark
    knows the token is never null: no inferred filter computes it again), the texts that
    are not ASCII in Python (their case mapping)."""
    texts = ["The cats walked, quickly!", "a naïve boxes singing", "", "Jumpingly ed s", "ÉCOLES the"]
    docs = uf.source("docs", rows=[{"doc": i, "text": t} for i, t in enumerate(texts)])
    lexicon = uf.source("lexicon", rows=[{"word": w, "score": i} for i, w in enumerate(["cat", "walk", "box", "ecol"])])
    flow = docs.map(tokens).match(lexicon, on=("token", "word"))
    assert flow.physical()["Map(tokens)"].describe() == "native"
    got = flow.collect(spark=spark)
    assert sorted(map(repr, got)) == sorted(map(repr, flow.collect(engine="reference"))) and got
    plan = flow.to_spark(spark=spark)._jdf.queryExecution().optimizedPlan().toString()
    assert plan.count("EndsWith(") == len(SUFFIXES), plan  # per branch of the stem, in one place
    # the word in one projection (pinned: no filter takes its term over and computes it again)
    words = [line for line in plan.splitlines() if "lower(" in line]
    assert len(words) == 1 and "Project [" in words[0] and "__udflow_let" in words[0], plan


def guarded_stem(r):
    w = r["w"]
    if w is None:
        return {**r, "t": None}
    return {**r, "t": stem(w.strip(".,").lower()) + size_label(len(w), 4)}


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(w=st.one_of(st.none(), st.text(max_size=12), st.sampled_from(WORDS + ["INGLY", "Ed.", "éd", "naïvely,"])))
def test_inlined_helpers_and_unrolled_loops_agree_with_python_on_any_text(w):
    """The model of a function calling inlined helpers (one with a loop over a constant tuple)
    against the function itself: the same record, or the same exception type."""
    for fn in (stemmed, guarded_stem):
        model = analyze(fn).model
        assert model is not None, fn.__name__
        try:
            expected = ("value", [fn({"w": w, "n": 1})])
        except Exception as exc:  # noqa: BLE001 - Python's error is the expected outcome
            expected = ("raises", type(exc))
        try:
            got = ("value", apply(model, {"w": w, "n": 1}))
        except Exception as exc:  # noqa: BLE001
            got = ("raises", type(exc))
        assert got == expected, (fn.__name__, w)

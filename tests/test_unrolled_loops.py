"""A loop over a constant tuple is modelled as its body once per item (`statements._unrolled_items`).

    for suffix in SUFFIXES:                        case w.endswith("ingly") and len(w) - 5 >= 3: w[:-5]
        if w.endswith(suffix) and ...:       ->    case w.endswith("edly") and ...: w[:-4]
            return {**r, "t": w[: -len(suffix)]}   ...
    return {**r, "t": w}                           case True: w

Python's semantics exactly: the tuple never changes, the body runs once per item in order
with the name bound to it. A loop whose body could leave it early (`break`, `continue`), has
an `else`, keeps the name in a function for later, or runs over anything but a tuple of
literals (a list may change) is not unrolled: the function stays in Python, as before.
"""

from __future__ import annotations

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.analysis.model import apply
from tests.both_engines import raised_on_both_engines

SUFFIXES = ("ingly", "edly", "ing", "ed", "ly", "es", "s")
SUFFIX_LIST = ["ing", "ed"]
WORDS = ["jumpingly", "walked", "sing", "ed", "quickly", "boxes", "cats", "s", "", "naïvely", "İng", "x" * 40]


def stemmed(r):
    w = r["w"]
    for suffix in SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return {**r, "t": w[: -len(suffix)]}
    return {**r, "t": w}


def tagged(r):
    tags = ""
    for name, limit in (("short", 3), ("long", 8)):  # a tuple target: not unrolled
        if len(r["w"]) > limit:
            tags = name
    return {**r, "t": tags}


def first_vowel(r):
    for v in ("a", "e", "i", "o", "u"):
        if v in r["w"]:
            return {**r, "t": v}
    return {**r, "t": None}


def broken(r):
    out = r["w"]
    for suffix in ("ing", "ed"):
        if out.endswith(suffix):
            out = out[:-2]
            break
    return {**r, "t": out}


def over_a_list(r):
    for suffix in SUFFIX_LIST:
        if r["w"].endswith(suffix):
            return {**r, "t": suffix}
    return {**r, "t": ""}


def with_else(r):
    for suffix in ("ing", "ed"):
        if r["w"].endswith(suffix):
            return {**r, "t": suffix}
    else:
        return {**r, "t": ""}


def kept_in_a_lambda(r):
    check = None
    for suffix in ("ing", "ed"):
        check = lambda w: w.endswith(suffix)  # noqa: E731 - late binding: it reads the last suffix
    return {**r, "t": check(r["w"])}


@pytest.mark.parametrize("fn", [stemmed, first_vowel])
def test_the_unrolled_model_gives_what_the_loop_gives(fn):
    props = analyze(fn)
    assert props.model is not None, props.model_reason
    assert props.reads == {"w"} and props.writes == {"t"}
    for w in WORDS:
        assert apply(props.model, {"w": w}) == [fn({"w": w})], w


@pytest.mark.parametrize("fn, why", [(tagged, "a loop"), (broken, "a loop"), (over_a_list, "a loop"),
                                     (with_else, "a loop"), (kept_in_a_lambda, "cannot resolve")])
def test_a_loop_python_could_leave_or_change_is_not_unrolled(fn, why):
    props = analyze(fn)
    assert props.model is None and why in props.model_reason, props.model_reason


@pytest.mark.spark
def test_an_unrolled_loop_runs_natively_on_spark_with_pythons_records(spark):
    flow = uf.source("t", rows=[{"w": w} for w in WORDS]).map(stemmed)
    assert flow.physical().root.describe() == "native"
    got = flow.collect(spark=spark)
    assert sorted(got, key=lambda r: r["w"]) == sorted((stemmed({"w": w}) for w in WORDS), key=lambda r: r["w"])


@pytest.mark.spark
def test_a_none_word_raises_pythons_error_at_the_first_item(spark):
    flow = uf.source("t", rows=[{"w": "cats"}, {"w": None}]).map(stemmed)
    said = raised_on_both_engines(flow)
    assert said[0] == said[1] and said[0].startswith("AttributeError: 'NoneType' object has no attribute 'endswith'")

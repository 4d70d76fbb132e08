"""Ordinary Map and Filter functions: filters, projections, renames, enrichments, flat-maps."""

import functools
import math
from decimal import Decimal

from tests.analysis_corpus import Spec

THRESHOLD = 3
FIELD = "c"
PREFIX = "b"


def keep_positive(r):
    if r["a"] > 0:
        yield r


def drop_small(r):
    if r["b"] < THRESHOLD:
        return None
    return r


def is_even(r):
    return r["a"] % 2 == 0


a_above_b = lambda r: r["a"] > r["b"]  # noqa: E731


def project_ab(r):
    return {"a": r["a"], "b": r["b"]}


def rename_c(r):
    return {"a": r["a"], "b": r["b"], "x": r["c"]}


def add_sum(r):
    return {**r, "s": r["a"] + r["b"]}


def add_sum_in_place(r):
    r["s"] = r["a"] + r["b"]
    return r


def scale_b(r):
    out = dict(r)
    out["b"] = r["b"] * 10
    return out


def drop_c(r):
    out = dict(r)
    del out["c"]
    return out


def pop_c_into_x(r):
    out = r.copy()
    out["x"] = out.pop("c") + 1
    return out


def classify(r):
    label = "big" if r["a"] > THRESHOLD else "small"
    return {**r, "label": label}


def explode(r):
    for i in range(r["a"]):
        yield {**r, "i": i}


def duplicate(r):
    yield r
    yield {**r, "b": -r["b"]}


def make_threshold_filter(limit):
    def over(r):
        if r["a"] > limit:
            yield r

    return over


over_two = make_threshold_filter(2)


def by_field_constant(r):
    return {**r, "y": r[FIELD] * 2}


def by_prefix_constant(r):
    return {**r, "z": r[PREFIX + ""] + 1}


def _double(x):
    return 2 * x


def with_helper(r):
    return {**r, "d2": _double(r["a"])}


def _get_b(rec):
    return rec["b"]


def with_record_helper(r):
    if _get_b(r) > 1:
        yield {**r, "flag": True}


def log_a(r):
    return {**r, "la": math.log1p(abs(r["a"]))}


def add_amount(amount, r):
    return {**r, "b": r["b"] + amount}


add_five = functools.partial(add_amount, 5)


def copy_field(name, r):
    return {**r, "copy_of_" + name: r[name]}


copy_c = functools.partial(copy_field, "c")


def conditional_update(r):
    out = dict(r)
    if r["a"] > 0:
        out["b"] = 0
    return out


def tuple_unpack(r):
    a, b = r["a"], r["b"]
    return {"a": a, "b": b, "c": r["c"], "ab": a * b}


def get_with_default(r):
    return {**r, "e": r.get("d", 0) + 1}


low_a, high_b = (lambda r: r["a"] < 2), (lambda r: r["b"] > 2)  # two lambdas on one line


def sum_of_named(r):
    return {**r, "total": sum(r[f] for f in ("a", "b"))}


def nested_def(r):
    def bonus(x):
        return x + 1

    return {**r, "a": bonus(r["a"])}


def halvings(r):
    n = abs(r["a"])
    steps = 0
    while n > 1:
        n = n // 2
        steps += 1
    return {**r, "steps": steps}


def parse_or_zero(r):
    try:
        v = int(r["b"])
    except ValueError:
        v = 0
    return {**r, "bi": v}


def positive_lambda_map(r):
    return {"a": r["a"], "pos": r["a"] > 0}


def nested_output(r):
    return {**r, "meta": {"twice_a": 2 * r["a"], "source": "corpus"}}


def decimal_fee(r):
    return {**r, "fee": r["a"] * Decimal("0.20") + Decimal(1)}


def hypot_ab(r):
    return {**r, "h": math.hypot(r["a"], r["b"]) * math.pi - math.gcd(3, 12)}


def formatted(r):
    return {**r, "f": f"{r['a']:03d}|{r['b']!r}|{r['c']:.1f}"}


# A field copied unchanged as r["f"] is read: KeyError where it is absent (docs/analysis.md, "Errors").
EXPECTED = {
    "nested_output": Spec("map", "a b c", reads="a", writes="meta", copy=True, output="a b c meta"),
    "keep_positive": Spec("map", "a b c", reads="a", emits=(0, 1), card_reads="a", copy=True, output="a b c"),
    "drop_small": Spec("map", "a b c", reads="b", emits=(0, 1), card_reads="b", copy=True, output="a b c"),
    "is_even": Spec("filter", "a b c", reads="a", emits=(0, 1), card_reads="a", copy=True, output="a b c"),
    "a_above_b": Spec("filter", "a b c", reads="a b", emits=(0, 1), card_reads="a b", copy=True),
    "project_ab": Spec("map", "a b c", reads="a b", writes="c", copy=False, output="a b", card_reads=""),
    "rename_c": Spec("map", "a b c", reads="a b c", writes="c x", copy=False, output="a b x"),
    "add_sum": Spec("map", "a b c", reads="a b", writes="s", copy=True, output="a b c s", card_reads=""),
    "add_sum_in_place": Spec("map", "a b c", reads="a b", writes="s", copy=True, output="a b c s"),
    "scale_b": Spec("map", "a b c", reads="b", writes="b", copy=True, output="a b c"),
    "drop_c": Spec("map", "a b c", reads="c", writes="c", copy=True, output="a b"),
    "pop_c_into_x": Spec("map", "a b c", reads="c", writes="c x", copy=True, output="a b x"),
    "classify": Spec("map", "a b c", reads="a", writes="label", copy=True, card_reads=""),
    "explode": Spec("map", "a b c", reads="a", writes="i", emits=(0, None), card_reads="a", copy=True),
    "duplicate": Spec("map", "a b c", reads="b", writes="b", emits=(2, 2), card_reads="", copy=True),
    "over_two": Spec("map", "a b c", reads="a", emits=(0, 1), card_reads="a", copy=True),
    "by_field_constant": Spec("map", "a b c", reads="c", writes="y"),
    "by_prefix_constant": Spec("map", "a b c", reads="b", writes="z"),
    "with_helper": Spec("map", "a b c", reads="a", writes="d2"),
    "with_record_helper": Spec("map", "a b c", reads="b", writes="flag", emits=(0, 1), card_reads="b"),
    "log_a": Spec("map", "a b c", reads="a", writes="la"),
    "add_five": Spec("map", "a b c", reads="b", writes="b", copy=True),
    "copy_c": Spec("map", "a b c", reads="c", writes="copy_of_c", output="a b c copy_of_c"),
    "conditional_update": Spec("map", "a b c", reads="a", writes="b", copy=True),
    "tuple_unpack": Spec("map", "a b c", reads="a b c", writes="ab", copy=False, output="a b c ab"),
    "get_with_default": Spec("map", "a b c d", reads="d", writes="e"),
    "low_a": Spec("filter", "a b c", reads="a", emits=(0, 1), card_reads="a"),
    "high_b": Spec("filter", "a b c", reads="b", emits=(0, 1), card_reads="b"),
    "sum_of_named": Spec("map", "a b c", reads="a b", writes="total"),
    "nested_def": Spec("map", "a b c", reads="a", writes="a"),
    "halvings": Spec("map", "a b c", reads="a", writes="steps"),
    "parse_or_zero": Spec("map", "a b c", reads="b", writes="bi"),
    "decimal_fee": Spec("map", "a b c", reads="a", writes="fee"),
    "formatted": Spec("map", "a b c", reads="a b c", writes="f"),
    "hypot_ab": Spec("map", "a b c", reads="a b", writes="h"),
    "positive_lambda_map": Spec("map", "a b c", reads="a", writes="b c pos", copy=False, output="a pos"),
}

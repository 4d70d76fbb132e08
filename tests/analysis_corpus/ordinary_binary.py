"""Ordinary join functions: Match, Cross and CoGroup."""

from tests.analysis_corpus import Spec


def join_concat(left, right):
    return {**left, **right}


def join_project(left, right):
    return {"a": left["a"], "d": right["d"]}


def join_ratio(left, right):
    return {**left, **right, "ratio": left["a"] / right["c"] if right["c"] else None}


def join_if_before(left, right):
    if left["b"] < right["d"]:
        yield {**left, **right}


def cross_product(left, right):
    return {"a": left["a"], "c": right["c"], "prod": left["a"] * right["c"]}


def cogroup_sizes(lefts, rights):
    lefts, rights = list(lefts), list(rights)
    yield {"n_left": len(lefts), "n_right": len(rights)}


def cogroup_semijoin(lefts, rights):
    rights = list(rights)
    if rights:
        for left in lefts:
            yield left


# A field copied unchanged as r["f"] is read: KeyError where it is absent (docs/analysis.md, "Errors").
EXPECTED = {
    "join_concat": Spec("match", "a b | c d", copy=True, output="a b c d", card_reads=""),
    "join_project": Spec("match", "a b | c d", reads="a d", writes="b c", copy=False, output="a d"),
    "join_ratio": Spec("match", "a b | c d", reads="a c", writes="ratio", copy=True),
    "join_if_before": Spec("match", "a b | c d", reads="b d", emits=(0, 1), card_reads="b d", copy=True),
    "cross_product": Spec("cross", "a b | c d", reads="a c", writes="b d prod", copy=False, output="a c prod"),
    "cogroup_sizes": Spec("cogroup", "a b | c d", writes="a b c d n_left n_right", copy=False),
    "cogroup_semijoin": Spec("cogroup", "a b | c d", writes="c d", emits=(0, None), copy=False, output="a b"),
}

"""Ordinary Reduce functions: aggregate, condense, filter whole groups, enrich per record."""

from tests.analysis_corpus import Spec


def group_sum(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "sum_a": sum(r["a"] for r in rows)}


def group_count(rows):
    n = 0
    for _ in rows:
        n += 1
    yield {"n": n}


def first_with_total(rows):
    rows = list(rows)
    first = rows[0]
    yield {**first, "total": sum(r["a"] * r["b"] for r in rows)}


def keep_big_groups(rows):
    rows = list(rows)
    if len(rows) >= 2:
        yield from rows


def keep_groups_with_positive(rows):
    rows = list(rows)
    if any(r["a"] > 0 for r in rows):
        for r in rows:
            yield r


def extremes(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "max_a": max(r["a"] for r in rows), "min_b": min(r["b"] for r in rows)}


def share_of_group(rows):
    rows = list(rows)
    total = sum(r["a"] for r in rows)
    for r in rows:
        yield {**r, "share": r["a"] / total if total else 0}


def distinct_a(rows):
    seen = set()
    rows = list(rows)
    for r in rows:
        seen.add(r["a"])
    yield {"k": rows[0]["k"], "distinct": len(seen)}


def flag_max(rows):
    rows = list(rows)
    best = max(r["a"] for r in rows)
    for r in rows:
        yield {**r, "is_max": r["a"] == best}


def _mean(xs):
    return sum(xs) / len(xs)


def mean_with_helper(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "avg": _mean([r["a"] for r in rows])}


def positives_only(rows):
    for r in rows:
        if r["b"] > 0:
            yield r


def count_by_fold(rows):
    n = 0
    for r in rows:
        n = n + 1
    yield {"n": n}


def keep_then_emit(rows):
    kept = []
    for r in rows:
        if r["a"] > 0:
            kept.append(r)
    for r in kept:
        yield r


def sessions_with_a_buy(rows):
    rows = list(rows)
    if any(r["action"] == "buy" for r in rows):
        yield from rows


def drop_small_groups_early(rows):
    rows = list(rows)
    if len(rows) < 3:
        return
    for r in rows:
        yield r


# A field copied unchanged as r["f"] is read: KeyError where it is absent (docs/analysis.md, "Errors").
EXPECTED = {
    "group_sum": Spec("reduce", "k a b", reads="a k", writes="a b sum_a", copy=False, output="k sum_a",
                      group_copied="k", card_reads=""),
    "count_by_fold": Spec("reduce", "k a b", writes="k a b n", copy=False, output="n", card_reads=""),
    "keep_then_emit": Spec("reduce", "k a b", reads="a", emits=(0, None), card_reads="a", copy=True,
                           forwards_groups=False),
    "group_count": Spec("reduce", "k a b", writes="k a b n", copy=False, output="n"),
    "first_with_total": Spec("reduce", "k a b", reads="a b", writes="total", copy=True, output="k a b total",
                             group_copied="k a b"),
    "keep_big_groups": Spec("reduce", "k a b", emits=(0, None), copy=True, card_reads="",
                            forwards_groups=True),
    "keep_groups_with_positive": Spec("reduce", "k a b", reads="a", emits=(0, None), card_reads="a", copy=True,
                                      forwards_groups=True),
    "extremes": Spec("reduce", "k a b", reads="a b k", writes="a b max_a min_b", copy=False),
    "share_of_group": Spec("reduce", "k a b", reads="a", writes="share", emits=(0, None), copy=True,
                           forwards_groups=False),
    "distinct_a": Spec("reduce", "k a b", reads="a k", writes="a b distinct", copy=False),
    "flag_max": Spec("reduce", "k a b", reads="a", writes="is_max", emits=(0, None), copy=True),
    "mean_with_helper": Spec("reduce", "k a b", reads="a k", writes="a b avg", copy=False),
    "sessions_with_a_buy": Spec("reduce", "session action amount", reads="action", emits=(0, None),
                                card_reads="action", copy=True, forwards_groups=True),
    "drop_small_groups_early": Spec("reduce", "k a b", emits=(0, None), card_reads="", copy=True,
                                    forwards_groups=True),
    "positives_only": Spec("reduce", "k a b", reads="b", emits=(0, None), card_reads="b", copy=True,
                           forwards_groups=False),
}

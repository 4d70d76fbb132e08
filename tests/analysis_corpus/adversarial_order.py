"""Adversarial: Reduce functions whose output depends on the order of the records
within a group (beyond values constant in the group). See docs/analysis.md."""

from tests.analysis_corpus import Spec


def last_row(rows):
    rows = list(rows)
    yield rows[-1]


def rank_in_group(rows):
    for i, r in enumerate(rows):
        yield {**r, "rank": i}


def running_sum(rows):
    t = 0
    for r in rows:
        t += r["a"]
        yield {**r, "running": t}


def joined_names(rows):
    rows = list(rows)
    names = [str(r["a"]) for r in rows]
    yield {"k": rows[0]["k"], "names": ",".join(names)}


def argmax_row(rows):
    yield max(rows, key=lambda r: r["a"])


def first_after_sort(rows):
    yield sorted(rows, key=lambda r: r["a"])[0]


def pairwise_steps(rows):
    rows = list(rows)
    for prev, cur in zip(rows, rows[1:]):
        yield {**cur, "step": cur["a"] - prev["a"]}


def loop_variable_after_loop(rows):
    total = 0
    for r in rows:
        total += r["a"]
    yield {**r, "total": total}


def last_value_wins(rows):
    last = None
    for r in rows:
        last = r["a"]
    yield {"last_a": last}


def append_then_first(rows):
    values = []
    for r in rows:
        values.append(r["b"])
    yield {"first_b": values[0]}


def string_accumulator(rows):
    text = ""
    for r in rows:
        text += str(r["a"])
    yield {"text": text}


def concat_in_dict(rows):
    out = {"text": ""}
    for r in rows:
        out["text"] += str(r["a"])
    yield out


EXPECTED = {
    "last_row": Spec("reduce", "k a b", category="order-dependent-reduce", impure=True),
    "rank_in_group": Spec("reduce", "k a b", writes="rank", emits=(0, None), category="order-dependent-reduce",
                          impure=True),
    "running_sum": Spec("reduce", "k a b", reads="a", writes="running", emits=(0, None),
                        category="order-dependent-reduce", impure=True),
    "joined_names": Spec("reduce", "k a b", reads="a", writes="a b names", category="order-dependent-reduce",
                         impure=True),
    "argmax_row": Spec("reduce", "k a b", reads="a", category="order-dependent-reduce", impure=True),
    "first_after_sort": Spec("reduce", "k a b", reads="a", category="order-dependent-reduce", impure=True),
    "pairwise_steps": Spec("reduce", "k a b", reads="a", writes="step", emits=(0, None),
                           category="order-dependent-reduce", impure=True),
    "loop_variable_after_loop": Spec("reduce", "k a b", reads="a", writes="total",
                                     category="order-dependent-reduce", impure=True),
    "last_value_wins": Spec("reduce", "k a b", reads="a", writes="k a b last_a", category="order-dependent-reduce",
                            impure=True),
    "string_accumulator": Spec("reduce", "k a b", reads="a", writes="k a b text", category="order-dependent-reduce",
                               impure=True),
    "concat_in_dict": Spec("reduce", "k a b", reads="a", writes="k a b text", category="order-dependent-reduce",
                           impure=True),
    "append_then_first": Spec("reduce", "k a b", reads="b", writes="k a b first_b",
                              category="order-dependent-reduce", impure=True),
}

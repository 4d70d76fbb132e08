"""The paper's example of section 3: three Maps over records <A, B>."""

from tests.analysis_corpus import Spec


def f1(r):
    """Replaces B with |B|."""
    out = dict(r)
    if r["B"] < 0:
        out["B"] = -r["B"]
    return out


def f2(r):
    """Emits the records with A >= 0, filters the rest."""
    if r["A"] >= 0:
        yield r


def f3(r):
    """Replaces A with A + B."""
    return {**r, "A": r["A"] + r["B"]}


EXPECTED = {
    "f1": Spec("map", "A B", reads="B", writes="B", emits=(1, 1), card_reads="", copy=True, output="A B"),
    "f2": Spec("map", "A B", reads="A", writes="", emits=(0, 1), card_reads="A", copy=True, output="A B"),
    "f3": Spec("map", "A B", reads="A B", writes="A", emits=(1, 1), card_reads="", copy=True, output="A B"),
}

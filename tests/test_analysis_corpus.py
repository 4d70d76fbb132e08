"""The analysis corpus: every function against the properties declared next to it."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.analysis_corpus import CATEGORIES, entries, fs
from udflow.analysis import analyze

ENTRIES = entries()
ORDINARY = [pytest.param(e, id=e.id) for e in ENTRIES if e.spec.category is None]
ADVERSARIAL = [pytest.param(e, id=e.id) for e in ENTRIES if e.spec.category is not None]


def test_corpus_is_large_and_covers_every_category():
    assert len(ENTRIES) >= 80
    assert len(ORDINARY) >= 30
    assert len(ADVERSARIAL) >= 40
    per_category = Counter(e.spec.category for e in ENTRIES if e.spec.category)
    assert set(per_category) == set(CATEGORIES)
    assert min(per_category.values()) >= 3, per_category
    kinds = Counter(e.spec.kind for e in ENTRIES if e.spec.category is None)
    assert {"map", "filter", "reduce", "match", "cross", "cogroup"} <= set(kinds)


@pytest.mark.parametrize("entry", ORDINARY)
def test_ordinary_function_gets_exactly_its_declared_properties(entry):
    spec = entry.spec
    props = analyze(entry.fn, spec.input_fields(), spec.kind)
    assert props.pure, f"{entry.id} came out impure: {props.evidence}"
    assert props.origin == "analysis"
    assert props.reads == fs(spec.reads)
    assert props.writes == fs(spec.writes)
    assert props.emits == spec.emits
    if spec.card_reads is not None:
        assert props.card_reads == fs(spec.card_reads)
    assert props.card_reads <= props.reads
    if spec.copy is not None:
        assert props.copy is spec.copy
    if spec.output is not None:
        assert props.output_fields == fs(spec.output)
    if spec.group_copied is not None:
        assert props.group_copied == fs(spec.group_copied)
    if spec.forwards_groups is not None:
        assert props.forwards_groups is spec.forwards_groups
        assert bool(props.evidence_for("forwards_groups")) is spec.forwards_groups
    sides = spec.input_fields() if isinstance(spec.input_fields(), tuple) else (spec.input_fields(),)
    assert len(props.side_reads) == len(sides)
    for side_reads, fields in zip(props.side_reads, sides):
        assert side_reads == props.reads & fields
    for name in props.reads:  # every read has a source line in the function's file
        lines = props.lines_for("reads", name)
        assert lines, f"{entry.id}: no evidence for reads {name}"


def _bounds_contain(found, truth) -> bool:
    lo, hi = found
    tlo, thi = truth
    return lo <= tlo and (hi is None or (thi is not None and thi <= hi))


@pytest.mark.parametrize("entry", ADVERSARIAL)
def test_adversarial_function_is_impure_or_a_superset_of_the_truth(entry):
    spec = entry.spec
    props = analyze(entry.fn, spec.input_fields(), spec.kind)
    if spec.impure:
        assert not props.pure, f"{entry.id} should be impure, got reads={props.reads} writes={props.writes}"
    if not props.pure:
        every = spec.all_fields()
        assert props.reads == props.writes == props.card_reads == every
        assert props.output_fields is None and not props.copy
        assert props.emits == ((0, 1) if spec.kind == "filter" else (0, None))
        reasons = props.evidence_for("impure")
        assert reasons and reasons[0].note, "an impure result says why"
        return
    assert props.reads >= fs(spec.reads)
    assert props.writes >= fs(spec.writes)
    assert props.card_reads >= fs(spec.card_reads or "")
    assert _bounds_contain(props.emits, spec.emits)


def test_impure_evidence_points_at_the_offending_line():
    from tests.analysis_corpus import adversarial_effects as m

    props = analyze(m.jitter, {"a", "b"})
    (reason,) = props.evidence_for("impure")
    assert reason.file.endswith("adversarial_effects.py")
    assert "random.random()" in reason.text
    assert m.jitter.__code__.co_firstlineno < reason.line <= m.jitter.__code__.co_firstlineno + 2


def _conflict(p, q) -> set:
    """Definition 4: the attributes on which two operators conflict."""
    return (p.reads & q.writes) | (p.writes & q.reads) | (p.writes & q.writes)


def test_paper_section_3_read_and_write_sets_and_conflicts():
    from tests.analysis_corpus import paper

    f1, f2, f3 = (analyze(f, {"A", "B"}) for f in (paper.f1, paper.f2, paper.f3))
    assert (f1.reads, f1.writes) == ({"B"}, {"B"})
    assert (f2.reads, f2.writes) == ({"A"}, set())
    assert (f3.reads, f3.writes) == ({"A", "B"}, {"A"})
    assert _conflict(f1, f2) == set()  # Map1 and Map2 can be swapped
    assert "A" in _conflict(f2, f3)  # f3 writes A, which f2 reads
    assert f2.card_reads == {"A"} and f2.emits == (0, 1)
    assert f1.emits == f3.emits == (1, 1)
    # the evidence names the lines of the paper's getField/setField
    assert f3.lines_for("writes", "A") == (paper.f3.__code__.co_firstlineno + 2,)
    assert f2.lines_for("reads", "A") == (paper.f2.__code__.co_firstlineno + 2,)

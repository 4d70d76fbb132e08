"""An operator hands at most `HELD_FACTOR` times the sample size of its records to the one
above it on the sample run (`samples.run_every_subtree`): what is above an explosion is
profiled on what it was handed, and its sample is not its whole output."""

from __future__ import annotations

import udflow as uf
from udflow.engine.statistics import profile_functions
from udflow.samples import HELD_FACTOR, output_samples


def explode(r):
    for i in range(r["n"]):
        yield {"doc": r["doc"], "i": i}


def even(r):
    if r["i"] % 2 == 0:
        yield r


def count(rows):
    rows = list(rows)
    yield {"doc": rows[0]["doc"], "items": len(rows)}


def _flow(docs: int, items: int):
    rows = [{"doc": d, "n": items} for d in range(docs)]
    return uf.source("docs", rows=rows).map(explode, name="explode").map(even, name="even").reduce(
        ["doc"], count, name="count")


def test_the_operator_above_an_explosion_runs_on_what_it_was_handed():
    sample = 100
    profiles = profile_functions(_flow(docs=sample, items=10).root, sample_size=sample)
    assert profiles["explode"].calls == sample  # every sampled record: its fan-out is whole
    assert profiles["explode"].selectivity == 10
    handed = HELD_FACTOR * sample
    assert profiles["even"].calls == handed  # the first records of 1,000, not all of them
    assert profiles["even"].selectivity == 0.5
    assert profiles["count"].sample_groups == handed // 10  # the groups of what even emitted


def test_an_explosion_within_the_limit_hands_everything():
    sample = 20
    profiles = profile_functions(_flow(docs=sample, items=2).root, sample_size=sample)
    assert profiles["even"].calls == 2 * sample


def test_a_sample_above_a_cut_is_not_the_whole_output():
    sample = 20
    by_label = dict(output_samples(_flow(docs=sample, items=50).root, source_records=sample))
    assert by_label["Source(docs)"].complete and by_label["explode"].complete  # its own output is whole
    assert not by_label["even"].complete and not by_label["count"].complete
    whole = dict(output_samples(_flow(docs=sample, items=2).root, source_records=sample))
    assert all(s.complete for s in whole.values())


def test_a_join_above_a_cut_does_not_take_the_cut_side_as_whole():
    """A join's selectivity is measured on the sample only where one side's sample is whole
    (every partner of the other side's records seen): an input cut short is not."""
    sample = 100
    lexicon = uf.source("lexicon", rows=[{"word": w, "score": w % 3} for w in range(2 * sample)])
    words = uf.source("docs", rows=[{"doc": d, "n": 10} for d in range(sample)]).map(explode, name="explode")
    joined = words.match(lexicon, on=("i", "word"), name="scored")
    profiles = profile_functions(joined.root, sample_size=sample)
    assert profiles["scored"].join_selectivity is None  # the words were cut, the lexicon's sample is not whole
    whole_lexicon = uf.source("lexicon", rows=[{"word": w, "score": w % 3} for w in range(sample)])
    joined = words.match(whole_lexicon, on=("i", "word"), name="scored")
    assert profile_functions(joined.root, sample_size=sample)["scored"].join_selectivity == 1 / sample

"""Cardinality estimates against reality (issue 15, item 2), and EXPLAIN ANALYZE.

Actual rows come from the reference interpreter (each operator once over its inputs'
records: exact, cheap); `explain(analyze=True)` itself runs on Spark. The data is
larger than the optimizer's sample wherever it matters, so the estimates are
extrapolations, not counts of the sample.
"""

from __future__ import annotations

import random
import statistics

import pytest

import udflow as uf
from examples import clickstream, documents, ratings, taxi, tpch_q7, tpch_q15
from tests.cli_runner import in_process
from udflow.engine.analyzed import on_reference, operator_rows, q_error
from udflow.engine.statistics import DEFAULT_SAMPLE_SIZE

MEDIAN_TARGET, MAX_TARGET = 2.0, 10.0


def q_errors(opt) -> list[float]:
    """Every operator's q-error, in the plan as written and in the chosen plan."""
    out = []
    for alt in {opt.original_alternative.node: None, opt.chosen.node: None}:
        actual = on_reference(alt, {})
        out += [q_error(e, a.rows) for _, e, a in operator_rows(alt, lambda n: opt.model.estimate(n).rows, actual)]
    return out


# ---------------------------------------------------------------------------
# A join on a field a Map creates (the documents pipeline)
# ---------------------------------------------------------------------------

WORDS = [f"w{i}" for i in range(1500)]


def documents_flow(lexicon_size: int, docs: int = 3000, seed: int = 1):
    """Documents tokenized by a Map into (doc_id, word) records, joined with a lexicon on
    `word`: words drawn with Zipf-like skew, the lexicon holding every other word of the
    vocabulary (and, when larger than it, words no document uses)."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    rows = [{"doc_id": d, "text": " ".join(rng.choices(WORDS, weights, k=rng.randint(5, 15)))} for d in range(docs)]
    lexicon = [{"entry": w, "score": i % 5} for i, w in enumerate(WORDS[::2])]
    lexicon += [{"entry": f"x{i}", "score": 0} for i in range(max(0, lexicon_size - len(lexicon)))]

    def tokenize(r):
        for word in r["text"].split():
            yield {"doc_id": r["doc_id"], "word": word}

    def per_doc(rows):
        rows = list(rows)
        yield {"doc_id": rows[0]["doc_id"], "score": sum(r["score"] for r in rows)}

    return (uf.source("docs", rows=rows).map(tokenize)
            .match(uf.source("lexicon", rows=lexicon[:lexicon_size]), on=("word", "entry"))
            .reduce(["doc_id"], per_doc))


@pytest.mark.parametrize("lexicon_size", [500, 3 * DEFAULT_SAMPLE_SIZE])
def test_a_join_on_a_created_field_is_estimated_from_the_values_not_as_a_key_join(lexicon_size):
    """Before: `word` had no distinct count, so the join was taken for a key join (every
    word finding one entry, at most min(left, right) rows): a factor ~40 low here. Now:
    the sample's value overlap when the lexicon is sampled whole (500 entries), the
    distinct counts (the created field's scaled up from the sample) when it is not."""
    flow = documents_flow(lexicon_size)
    opt = uf.optimize(flow)
    join = next(n for n in flow.root.walk() if n.kind == "match")
    actual = on_reference(flow.root, {})
    key_join = min(actual[c.label].rows for c in join.inputs)  # what the key-join estimate said at best
    assert q_error(key_join, actual[join.label].rows) > 2.5
    assert q_error(opt.model.estimate(join).rows, actual[join.label].rows) <= 2.0
    assert max(q_errors(opt)) <= 3.0


# ---------------------------------------------------------------------------
# The examples: the targets
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_errors(tpch_dir, tmp_path_factory):
    data = tmp_path_factory.mktemp("clickstream")
    clickstream.generate_data(str(data), 0.02)  # 14k clicks: beyond the sample
    users = {}
    for module, scale in ((ratings, 0.005), (taxi, 0.005), (documents, 0.025)):  # beyond the sample
        where = tmp_path_factory.mktemp(module.__name__.split(".")[-1])
        module.generate_data(str(where), scale)
        users[module.__name__.split(".")[-1]] = module.build_flow(str(where))
    flows = {
        **users,
        "tpch_q7": tpch_q7.build_flow(tpch_dir),
        "tpch_q15": tpch_q15.build_flow(tpch_dir),
        "clickstream": clickstream.build_flow(str(data)),
        "clickstream/parse_urls": clickstream.build_flow(str(data), parse_urls=True),
    }
    return {name: q_errors(uf.optimize(flow)) for name, flow in flows.items()}


def test_q_errors_of_the_examples_meet_the_targets(example_errors):
    every = [q for errors in example_errors.values() for q in errors]
    assert len(every) >= 30
    assert statistics.median(every) <= MEDIAN_TARGET, example_errors
    assert max(every) <= MAX_TARGET, example_errors


def test_the_documents_pipeline_join_on_a_created_word(example_errors):
    """The issue's case: the join of each document's words (created by a Map) with a lexicon
    was estimated at 305 rows and produced 281,550."""
    assert max(example_errors["documents"]) <= 1.5


def test_q7_estimates_are_close_everywhere(example_errors):
    """The nation filter above the joins keeps 46 of 17,973 records: the first 2,000 lineitems
    show it none (a selectivity the sample cannot tell from zero); a larger sample does."""
    assert max(example_errors["tpch_q7"]) <= 1.5
    assert max(example_errors["tpch_q15"]) <= 1.5


# ---------------------------------------------------------------------------
# Same bag, same count
# ---------------------------------------------------------------------------


def same_bag_estimates(opt) -> dict[frozenset, set]:
    """Per bag computed by more than one subtree of the plans (the same operators, in another
    order), the estimates of its rows."""
    by_bag: dict[frozenset, dict] = {}
    for alt in opt.alternatives:
        for node in alt.node.walk():
            labels = frozenset(n.label for n in node.walk())
            by_bag.setdefault(labels, {})[node] = float(f"{opt.model.estimate(node).rows:.9g}")
    return {bag: set(trees.values()) for bag, trees in by_bag.items() if len(trees) > 1}


def test_every_subtree_computing_the_same_bag_has_one_estimate_in_q7(tpch_dir):
    """Q7's 242 plans: every subtree made of the same operators (the same bag, whatever the
    join order and wherever the date filter stands) gets one estimate of its rows."""
    opt = uf.optimize(tpch_q7.build_flow(tpch_dir), mode="full")
    assert len(opt.alternatives) == 242
    reordered = same_bag_estimates(opt)
    assert len(reordered) >= 20  # bags computed by several different subtrees
    assert all(len(rows) == 1 for rows in reordered.values()), {
        len(b): sorted(r) for b, r in reordered.items() if len(r) > 1}


def test_filters_and_joins_in_any_order_get_one_estimate():
    """Four joins, two filters on dimensions (280 plans): a filter below a join used to cap the
    distinct count of the join key, and the same bag was estimated at 13 rows in one plan and
    32 in another. A Match's selectivity is now its own: one estimate per bag."""
    from bench.enumeration import generated_flow

    opt = uf.optimize(generated_flow(4, seed=1, filters=2, star=2), mode="full")
    reordered = same_bag_estimates(opt)
    assert len(reordered) >= 20
    assert all(len(rows) == 1 for rows in reordered.values())


# ---------------------------------------------------------------------------
# EXPLAIN ANALYZE
# ---------------------------------------------------------------------------


def test_explain_analyze_on_spark_shows_every_operators_actual_rows(tpch_dir, spark):
    flow = tpch_q15.build_flow(tpch_dir)
    opt = uf.optimize(flow, resolution=1e-6)  # its reordering gains 0.16 %: a tie by default
    text = opt.explain(analyze=True, spark=spark)
    assert opt.chosen.node != opt.original_alternative.node  # both plans run
    for alt in (opt.chosen.node, opt.original_alternative.node):
        for label, est, actual in operator_rows(alt, lambda n: opt.model.estimate(n).rows, on_reference(alt, {})):
            assert f"actual {actual.rows} (q {q_error(est, actual.rows):.2f})" in text, label
    assert "Chosen plan:" in text and "Plan as written:" in text and " s]" in text
    assert "speed-up of the chosen plan: estimated" in text and "measured" in text
    assert text.count("q-error of operator rows: median") == 2


def test_udflow_explain_analyze_on_the_command_line(tmp_path, spark):
    done = in_process(spark, "explain", "tests/pipelines/gen_joins.py::reduce_above_join",
                      "--analyze", "--master", "local[2]", "--cache-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Analyzed on Spark" in done.stdout
    assert "q-error of operator rows: median" in done.stdout
    assert "actual " in done.stdout and " s]" in done.stdout

"""The optimizer on small flows: Algorithm 1's example, search invariants, statistics, costs, explain.

Everything here runs the real analysis, the real RuleBook and the reference
interpreter; nothing is mocked.
"""

from __future__ import annotations

import math
import os

import duckdb
import pytest

import udflow as uf
from udflow.engine.groups import GroupSearch
from udflow.engine.memo import Interner
from bench.enumeration import fixed_profiles, generated_flow
from udflow.engine import physical
from udflow.engine.cost import CostModel
from udflow.engine.optimize import keyed_operators, optimize, statistics_of
from udflow.engine.search import Search
from udflow.engine.statistics import profile_functions, source_statistics
from udflow.errors import OptimizationError, UdflowError
from udflow.plan import Map, Source
from udflow.rules import RuleBook, check

# -- the paper's section 6 example -----------------------------------------------------------
#   Src -> Map1 -> Map2 -> Map3, every pair reorderable except Map2/Map3

# the flows here are small: a rewrite gains a fraction of a percent, within the default resolution
# (the estimates' error, `engine/ties.py`); the searches are compared at one that absorbs rounding only
FINE = 1e-6


def normalise_c(r):  # Map1: reads and writes C only
    return {**r, "C": abs(r["C"])}


def a_not_negative(r):  # Map2: a filter that reads A
    return r["A"] >= 0


def a_plus_b(r):  # Map3: writes A (which Map2 reads), reads B
    return {**r, "A": r["A"] + r["B"]}


ROWS = [{"A": a, "B": b, "C": c} for a in (-2, 0, 3) for b in (-1, 4) for c in (-5, 5)]


def section6_flow() -> uf.Flow:
    src = uf.source("Src", rows=ROWS)
    return src.map(normalise_c, name="Map1").filter(a_not_negative, name="Map2").map(a_plus_b, name="Map3")


def chain(node) -> list[str]:
    """A unary plan as the paper writes it: Src -> ... -> root."""
    return [n.label for n in node.walk()][::-1]


def test_section6_example_gives_exactly_the_papers_three_flows():
    flow = section6_flow()
    with RuleBook(flow.root) as book:
        alts = Search(book.exchanges).alternatives(flow.root)
    got = [chain(a.node) for a in alts]
    assert sorted(got) == sorted(
        [
            ["Source(Src)", "Map1", "Map2", "Map3"],
            ["Source(Src)", "Map2", "Map1", "Map3"],
            ["Source(Src)", "Map2", "Map3", "Map1"],
        ]
    )
    assert got[0] == ["Source(Src)", "Map1", "Map2", "Map3"]  # the original first
    by_plan = {tuple(chain(a.node)): a.chain for a in alts}
    assert len(by_plan[("Source(Src)", "Map2", "Map3", "Map1")]) == 2  # two exchanges, two certificates


def test_section6_every_alternative_computes_the_same_bag_and_certificates_check():
    flow = section6_flow()
    opt = uf.optimize(flow)
    expected = sorted(map(repr, flow.collect(engine="reference")))
    assert len(opt.alternatives) == 3
    for alt in opt.alternatives:
        assert sorted(map(repr, alt.flow.collect(engine="reference"))) == expected
        for cert in alt.certificates:
            assert check(cert, flow).ok, cert


def test_section6_why_not_names_the_conflict():
    opt = uf.optimize(section6_flow())
    verdict = opt.why_not("Map2", "Map3")
    assert not verdict.allowed
    assert "A" in str(verdict)
    assert opt.why_not(opt.original.operator("Map1"), "Map2").allowed


# -- search invariants ----------------------------------------------------------------------


def two_joins_flow():
    orders = uf.source(
        "orders",
        rows=[{"o_id": i, "o_cust": i % 7, "o_total": float(i * 3 % 50)} for i in range(60)],
        key=["o_id"],
        foreign_keys={("o_cust",): ("cust", ("c_id",))},
    )
    cust = uf.source(
        "cust", rows=[{"c_id": i, "c_nation": i % 3} for i in range(7)], key=["c_id"],
        foreign_keys={("c_nation",): ("nation", ("n_id",))},
    )
    nation = uf.source("nation", rows=[{"n_id": i, "n_name": f"N{i}"} for i in range(3)], key=["n_id"])

    def big(r):
        return r["o_total"] > 40

    def named_n1(r):
        return r["n_name"] == "N1"

    return (
        orders.match(cust, on=("o_cust", "c_id"))
        .match(nation, on=("c_nation", "n_id"))
        .filter(big)
        .filter(named_n1)
    )


def test_no_duplicates_original_first_and_group_search_equals_algorithm1():
    flow = two_joins_flow()
    with RuleBook(flow.root) as book:
        exact = Search(book.exchanges).alternatives(flow.root)
        groups = GroupSearch(book.exchanges)
        full = groups.plans(groups.explore(flow.root))
    intern = Interner()
    exact_ids = [intern.id_of(c.node) for c in exact]
    full_ids = [intern.id_of(c.node) for c in full]
    assert len(set(exact_ids)) == len(exact_ids) and len(set(full_ids)) == len(full_ids)
    assert set(exact_ids) == set(full_ids)
    assert intern.id_of(flow.root) in set(full_ids) and exact_ids[0] == intern.id_of(flow.root)
    assert len(exact) > 5  # filters move into join inputs, joins re-associate


def test_every_alternative_of_a_join_flow_gives_the_same_bag():
    flow = two_joins_flow()
    opt = uf.optimize(flow, resolution=FINE)
    assert opt.mode == opt.alternatives.mode == "full"
    expected = sorted(map(repr, (dict(sorted(r.items())) for r in flow.collect(engine="reference"))))
    assert expected  # the filters keep something
    for alt in opt.alternatives:
        got = sorted(map(repr, (dict(sorted(r.items())) for r in alt.flow.collect(engine="reference"))))
        assert got == expected, str(alt)
    costs = [a.cost for a in opt.alternatives]
    assert costs == sorted(costs) and opt.best == opt.alternatives[0].flow


def test_a_filter_moves_below_an_expensive_join_function():
    """Python calls dominate the cost: a filter goes below a Match whose function costs 1 ms per
    pair (hinted), and the estimate says by how much. (`str.center` has no model, so the
    function runs in Python: a native one would cost generated code per pair, not the hint.)"""

    @uf.hint(cost=1e-3)
    def joined(o, c):
        return {**o, **c, "c_title": c["c_name"].center(30)}

    orders = uf.source("orders", rows=[{"o_id": i, "o_cust": i % 7, "o_total": i % 50} for i in range(200)], key=["o_id"])
    cust = uf.source("cust", rows=[{"c_id": i, "c_name": f"C{i}"} for i in range(7)], key=["c_id"])

    def big(r):
        return r["o_total"] > 45

    slow = orders.match(cust, on=("o_cust", "c_id"), f=joined).filter(big)
    opt = uf.optimize(slow)
    assert opt.best.root.kind == "match" and opt.best.root.left.label == "Filter(big)"
    assert opt.speedup > 2 and opt.certificates[0].operators == ("Filter(big)", slow.root.input.label)
    pairs_saved = opt.original_alternative.estimate.python_calls - opt.chosen.estimate.python_calls
    assert pairs_saved > 100  # ~200 join calls before, ~16 after (o_total > 45 keeps 4 of 50)


def test_pruned_search_finds_a_plan_as_cheap_as_full_enumeration():
    flow = two_joins_flow()
    full = optimize(flow, mode="full")
    pruned = optimize(flow, mode="pruned", profiles=full.profiles)
    assert pruned.mode == "pruned" and full.mode == "full"
    assert len(pruned.alternatives) < len(full.alternatives)
    assert math.isclose(pruned.chosen.cost, full.chosen.cost, rel_tol=1e-12)
    assert any(a.node == flow.root for a in pruned.alternatives)  # the plan as written is kept


def test_auto_mode_prunes_beyond_the_size_limit_and_stays_correct():
    flow = two_joins_flow()  # more than 3 plans: full_limit counts plans (it counted operators before issue 13)
    small = optimize(flow)
    large = optimize(flow, full_limit=3, profiles=small.profiles)
    assert small.mode == "full" and large.mode == "pruned"
    assert large.alternatives.considered > 0 and len(large.alternatives) <= len(small.alternatives)
    expected = sorted(map(repr, (dict(sorted(r.items())) for r in flow.collect(engine="reference"))))
    got = sorted(map(repr, (dict(sorted(r.items())) for r in large.best.collect(engine="reference"))))
    assert got == expected


# -- the pruned search against its reference ----------------------------------------------------
#   The reference is the pruned search as it was before it was made fast: every member of every
#   group expanded, and one plan kept per (root operator, partitioning) in every group.


def reference_pruned(flow, profiles) -> tuple[float, int]:
    """The cost of the reference's best plan, and how many questions it asked the RuleBook."""
    root = flow.root
    interner = Interner()
    model = CostModel(statistics_of(root), profiles, interner, keyed=keyed_operators(root))
    with RuleBook(root) as book:
        groups = GroupSearch(book.exchanges, interner=interner, one_per_root=True)
        found = groups.best(groups.explore(root), model.cost, model.partitioning, per_root=True)
    return min(model.cost(c.node) for c in found), groups.exchange_calls


def property_only_cost(flow, profiles) -> float:
    """Keeping one plan per partitioning alone, in every group below the top."""
    root = flow.root
    interner = Interner()
    model = CostModel(statistics_of(root), profiles, interner, keyed=keyed_operators(root))
    with RuleBook(root) as book:
        groups = GroupSearch(book.exchanges, interner=interner, one_per_root=True, one_member=True)
        found = groups.best(groups.explore(root), model.cost, model.partitioning)
    return min(model.cost(c.node) for c in found)


def test_expanding_one_member_per_group_finds_every_plan():
    for flow in (section6_flow(), two_joins_flow()):
        with RuleBook(flow.root) as book:
            every = GroupSearch(book.exchanges)
            every_plans = every.plans(every.explore(flow.root))
            one = GroupSearch(book.exchanges, one_member=True)
            one_plans = one.plans(one.explore(flow.root))
        intern = Interner()
        assert {intern.id_of(c.node) for c in one_plans} == {intern.id_of(c.node) for c in every_plans}
        assert one.exchange_calls <= every.exchange_calls


@pytest.fixture
def variable_costs_only(monkeypatch):
    """The generated flows are tiny: each exchange's fixed cost (`physical.STAGE`) outweighs
    the records any of their plans moves, and every plan has one per join. The tests below
    are about the records a plan moves, so the model counts only those."""
    monkeypatch.setattr(physical, "STAGE", 0.0)


def test_pruned_search_keeps_what_a_parent_reads_not_only_the_partitioning(variable_costs_only):
    """Four joins, three filters and two computing Maps: where a filter or a Map stands changes
    what an operator above reads of its input besides its partitioning (its width, fields,
    distinct counts of keys), so the cheapest plan of a group is not always the best input.
    (Join sizes no longer depend on where filters stand: a Match's selectivity is its own
    property, so the flow without Maps is no longer a hard case.) The pruned search finds a
    plan at least as cheap as the reference's; one plan per partitioning alone misses it
    (the flow is a hard case, or this test would prove nothing)."""
    flow = generated_flow(4, seed=2, filters=3, star=1, maps=2)  # one plan per partitioning: 1.22x costlier
    profiles = fixed_profiles(flow)
    pruned = optimize(flow, mode="pruned", profiles=profiles, native=False, resolution=FINE)
    reference, _ = reference_pruned(flow, profiles)
    assert pruned.chosen.cost <= reference * (1 + 1e-9)
    assert property_only_cost(flow, profiles) > pruned.chosen.cost * 1.01
    # sound: the plan computes the same bag, and every exchange behind it checks independently
    expected = sorted(map(repr, (dict(sorted(r.items())) for r in flow.collect(engine="reference"))))
    got = sorted(map(repr, (dict(sorted(r.items())) for r in pruned.best.collect(engine="reference"))))
    assert got == expected and pruned.best.root != flow.root
    assert pruned.certificates and all(check(c, flow).ok for c in pruned.certificates)


def test_pruned_search_on_nine_joins_is_no_costlier_than_before_and_asks_less(variable_costs_only):
    flow = generated_flow(9)  # 12 joins: 2656 questions against 10310 (bench.enumeration times 12)
    profiles = fixed_profiles(flow)
    pruned = optimize(flow, mode="pruned", profiles=profiles, native=False)
    assert pruned.mode == "pruned" and pruned.alternatives.considered > 500
    reference, reference_questions = reference_pruned(flow, profiles)
    assert pruned.chosen.cost <= reference * (1 + 1e-9)
    with RuleBook(flow.root) as book:
        groups = GroupSearch(book.exchanges, one_per_root=True, one_member=True)
        groups.explore(flow.root)
    assert groups.exchange_calls * 3 < reference_questions  # 1331 against 4063
    assert pruned.speedup > 2  # the filters go down into their dimensions


@pytest.fixture(scope="module")
def task_flows(tmp_path_factory):
    from examples import clickstream, text_mining

    base = tmp_path_factory.mktemp("engine_tasks")
    return {
        "clickstream": clickstream.build_flow(clickstream.generate_data(str(base / "c"), 0.005, seed=0)),
        "text_mining": text_mining.build_flow(text_mining.generate_data(str(base / "t"), 0.01, seed=0)),
    }


@pytest.mark.parametrize("name", ["clickstream", "text_mining"])
def test_the_pruned_exploration_reaches_every_plan_of_the_paper_tasks(task_flows, name):
    """The first member of each group alone reaches 4 of clickstream's 9 plans, and misses the
    cheapest; the pruned exploration reaches all of them."""
    flow = task_flows[name]
    with RuleBook(flow.root) as book:
        every = GroupSearch(book.exchanges)
        every_plans = every.plans(every.explore(flow.root))
        few = GroupSearch(book.exchanges, one_per_root=True, one_member=True)
        few_plans = few.plans(few.explore(flow.root))
    intern = Interner()
    assert {intern.id_of(c.node) for c in few_plans} == {intern.id_of(c.node) for c in every_plans}


@pytest.mark.parametrize("name", ["clickstream", "text_mining"])
def test_pruned_search_costs_the_same_as_full_enumeration_on_the_paper_tasks(task_flows, name):
    flow = task_flows[name]
    full = optimize(flow, mode="full", resolution=FINE)
    pruned = optimize(flow, mode="pruned", profiles=full.profiles, resolution=FINE)
    assert math.isclose(pruned.chosen.cost, full.chosen.cost, rel_tol=1e-12)
    assert len(full.alternatives) > 1


def test_bad_arguments_are_udflow_errors():
    with pytest.raises(OptimizationError, match="properties"):
        uf.optimize(section6_flow(), properties="magic")
    with pytest.raises(OptimizationError, match="Flow"):
        uf.optimize(section6_flow().root)
    with pytest.raises(UdflowError, match="selectivity"):
        uf.hint(selectivity=-1)


# -- statistics and sampling ------------------------------------------------------------------


def test_parquet_statistics_match_duckdb(tpch_dir):
    from examples.tpch_data import tpch_source

    lineitem = tpch_source(tpch_dir, "lineitem").root
    stats = source_statistics(lineitem, ["l_suppkey", "l_orderkey"])
    path = os.path.join(tpch_dir, "lineitem.parquet")
    rows, suppliers, orders = duckdb.connect().execute(
        f"select count(*), count(distinct l_suppkey), count(distinct l_orderkey) from read_parquet('{path}')"
    ).fetchone()
    assert stats.rows == rows
    assert stats.distinct_of("l_suppkey") == suppliers and stats.distinct_of("l_orderkey") == orders
    assert 20 < stats.width < 400  # bytes per record as Spark holds a row, from the sampled records


def test_sampled_selectivity_is_close_to_the_truth_and_hints_win(tpch_dir):
    from examples import tpch_q15

    flow = tpch_q15.build_flow(tpch_dir)
    profiles = profile_functions(flow.root, sample_size=3000)
    path = os.path.join(tpch_dir, "lineitem.parquet")
    truth = duckdb.connect().execute(
        f"select avg(case when l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-04-01' "
        f"then 1.0 else 0.0 end) from read_parquet('{path}')"
    ).fetchone()[0]
    sampled = profiles["Map(shipped_in_quarter)"]
    assert sampled.source == "sample" and sampled.calls == 3000
    assert abs(sampled.selectivity - float(truth)) < 0.03
    assert sampled.cost > 0

    @uf.hint(selectivity=0.5, cost=1e-3)
    def keep_all(r):
        return True

    hinted = uf.source("t", rows=[{"x": i} for i in range(10)]).filter(keep_all)
    prof = profile_functions(hinted.root)[hinted.root.label]
    assert (prof.selectivity, prof.cost, prof.source) == (0.5, 1e-3, "hint")


def test_foreign_key_join_estimate_equals_the_true_join_size(tpch_dir):
    from examples import tpch_q15

    flow = tpch_q15.build_flow(tpch_dir)
    opt = uf.optimize(flow)
    match = next(n for n in flow.root.walk() if n.kind == "match")
    estimated = opt.model.estimate(match).rows
    filtered = opt.model.estimate(match.left).rows
    # l_suppkey -> s_suppkey is a foreign key to a primary key: one partner per lineitem
    assert math.isclose(estimated, filtered, rel_tol=1e-9)


# -- explain and pictures ---------------------------------------------------------------------


def test_explain_shows_both_plans_rows_rewrites_facts_and_costs():
    opt = uf.optimize(two_joins_flow(), resolution=FINE)
    text = opt.explain(verbose=True)
    assert "Plan as written" in text and "Chosen plan" in text
    assert f"{len(opt.alternatives)} alternatives considered" in text
    assert "rows]" in text and "estimated cost" in text
    for cert in opt.certificates:
        assert cert.rule in text
    assert "fact" in text and "line" in text  # facts and the source lines behind them


def test_explain_leads_with_the_plans_one_line_per_rewrite_and_how_each_operator_runs():
    """issue 31, item 4: facts and estimates only behind verbose=True"""
    opt = uf.optimize(two_joins_flow())
    text = opt.explain()
    assert "Chosen plan" in text and "How the chosen plan runs on Spark" in text
    for i, cert in enumerate(opt.certificates, 1):
        assert f"  {i}. {cert.rule}: " in text
    assert "fact  " not in text and "z3    " not in text and "What the modelled functions compute" not in text
    assert "explain(verbose=True)" in text
    assert len(text.splitlines()) < len(opt.explain(verbose=True).splitlines())


def test_to_dot_draws_both_plans_side_by_side():
    opt = uf.optimize(two_joins_flow())
    dot = opt.to_dot()
    assert dot.startswith("digraph") and dot.count("subgraph cluster_") == 2
    for node in opt.original.root.walk():
        assert f'"original/{node.label}"' in dot and f'"chosen/{node.label}"' in dot
    assert dot.count("{") == dot.count("}")
    html = opt._repr_html_()
    assert "<pre>" in html and "Chosen" in html

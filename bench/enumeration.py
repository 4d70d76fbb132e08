"""How long does the optimizer take, and how much memory?  (issues 5 and 13; the paper: 1654 ms for Q7)

    python -m bench.enumeration [--data data/tpch-sf0.01] [--joins 12]   Q7 and one pruned flow
    python -m bench.enumeration --pruned-check                          pruned = full, 7 and 8 joins
    python -m bench.enumeration --scale [--compare]                     the scale table (issue 13)

1. TPC-H Q7 as written (Figure 2(a)): `optimize` with full enumeration and costing,
   median of 5 runs; sampling (running the functions on a sample of their input)
   is done once, timed and reported separately, and excluded from the median.
   Target: under 165 ms (a tenth of the paper's time).
2. A generated flow with 12 joins (a snowflake chain with a star of dimensions
   on the fact table, and two filters above the joins), in the
   pruned mode, median of 3 (each run printed). Target: under 1 s.
3. `--pruned-check`: the pruned search against full enumeration (plans reached, cost
   chosen) on generated flows of 7 and 8 joins in the three shapes, with and without a
   Map; tests/test_engine_scale.py checks the same on 2 to 6 joins. Exit status 1 on a
   difference.
4. `--scale`: the default mode (auto) on generated flows of 4 to 20 joins in chain,
   star and snowflake shapes, bare or with two filters and two computing Maps between
   the joins, plus join-heavy flows with a Cartesian product and a CoGroup; each in a
   fresh process (`--one`), reporting the whole `optimize` call's time, the process's
   peak resident memory, the mode auto chose and why. With `--compare`, the same
   process then runs full enumeration (flows of up to 8 joins; same function profiles, a 120 s budget) and
   reports whether auto chose a plan of the same estimated cost. Targets: 8 joins
   <= 0.5 s and 150 MB, 20 joins <= 2 s and 300 MB.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

import udflow as uf
from udflow.engine.optimize import optimize
from udflow.engine.ties import better


SHAPES = ("chain", "star", "snowflake")


def generated_flow(
    joins: int = 12, rows: int = 200, seed: int = 7, filters: int = 2, star: int = 2, maps: int = 0,
    join_udfs: int = 0,
) -> uf.Flow:
    """A fact table F joined with `joins` dimensions: a chain F-C1-C2-... and a star F-S1, F-S2, ... of `star`.

    The first `filters` dimensions get a filter above all joins on one of their
    attributes, which may move down into its dimension; the joins can be
    reordered and re-associated. (Each free filter multiplies the plan space:
    its placements are independent of the join order.) `maps` computing Maps
    (each writes a new field from the fact's value) sit between the joins: the
    first directly above the fact table, the next above the first join, and so
    on. The first `join_udfs` Matches of the chain carry a Python function
    (`{**left, **right}` with a computed field) instead of concatenating.
    """
    rng = random.Random(seed)
    chain = joins - star
    dims = [f"c{i}" for i in range(1, chain + 1)] + [f"s{i}" for i in range(1, star + 1)]
    size = {d: rng.randint(5, rows // 2) for d in dims}

    def dimension(name: str, parent_fk: str | None) -> uf.Flow:
        records = []
        for k in range(size[name]):
            r = {f"{name}_key": k, f"{name}_attr": rng.randint(0, 9)}
            if parent_fk:
                r[parent_fk] = rng.randrange(size[parent_fk.split("_")[0]])
            records.append(r)
        nxt = f"c{int(name[1:]) + 1}" if name.startswith("c") and int(name[1:]) < chain else None
        fks = {(f"{name}_{nxt}",): (nxt, (f"{nxt}_key",))} if nxt else {}
        if nxt:
            for r in records:
                r[f"{name}_{nxt}"] = rng.randrange(size[nxt])
        return uf.source(name, rows=records, key=[f"{name}_key"], foreign_keys=fks)

    referenced = (["c1"] if chain else []) + [f"s{i}" for i in range(1, star + 1)]
    fact_fks = {(f"f_{d}",): (d, (f"{d}_key",)) for d in referenced}
    fact = uf.source(
        "fact",
        rows=[
            {"f_id": i, "f_value": rng.random(), **{f"f_{d}": rng.randrange(size[d]) for d in referenced}}
            for i in range(rows)
        ],
        key=["f_id"],
        foreign_keys=fact_fks,
    )
    flow = _computed(fact, 0) if maps > 0 else fact
    done = 0
    for i in range(1, chain + 1):
        on_left = "f_c1" if i == 1 else f"c{i - 1}_c{i}"
        udf = _joined(f"c{i}") if i <= join_udfs else None
        flow = flow.match(dimension(f"c{i}", None), on=(on_left, f"c{i}_key"), f=udf)
        done += 1
        flow = _computed(flow, done) if done < maps else flow
    for i in range(1, star + 1):
        flow = flow.match(dimension(f"s{i}", None), on=(f"f_s{i}", f"s{i}_key"))
        done += 1
        flow = _computed(flow, done) if done < maps else flow
    for d in dims[:filters]:
        flow = flow.filter(_attr_below(d, rng.randint(2, 9)), name=f"Filter({d})")
    return flow


def shaped_flow(joins: int, shape: str = "snowflake", filters: int = 2, maps: int = 0, seed: int = 7) -> uf.Flow:
    """`generated_flow` in one of three shapes: a chain of dimensions (each joined to the
    previous one), a star (every dimension joined to the fact table), or a snowflake (a
    chain with a star of a quarter of the dimensions on the fact table)."""
    star = {"chain": 0, "star": joins, "snowflake": max(1, joins // 4)}[shape]
    return generated_flow(joins, seed=seed, filters=filters, star=star, maps=maps)


def _computed(flow: uf.Flow, i: int) -> uf.Flow:
    """A Map computing a new field from the fact's value (a UDF between the joins)."""
    field = f"f_score{i}"

    def score(r):
        return {**r, field: r["f_value"] * (i + 2)}

    score.__name__ = f"score{i}"
    return flow.map(score, name=f"Map(score{i})")


def _joined(dim: str):
    """A Match function: the pair concatenated, with a field computed from both sides."""
    field = f"{dim}_weighted"

    def join(left, right):
        return {**left, **right, field: left["f_value"] * right[f"{dim}_attr"]}

    join.__name__ = f"join_{dim}"
    return join


def _attr_below(dim: str, limit: int):
    field = f"{dim}_attr"

    def keep(r):
        return r[field] < limit

    keep.__name__ = f"{dim}_attr_below_{limit}"
    return keep


def mixed_flow(joins: int, seed: int = 7) -> uf.Flow:
    """A snowflake of `joins` Matches (two filters, a computing Map above the fact table and
    a join function), then a Cartesian product with a small calendar source (a Cross) and a
    CoGroup with an events source on the fact's key, a filter over the whole."""
    base = generated_flow(joins, seed=seed, star=max(1, joins // 4), filters=2, maps=1, join_udfs=1)
    calendar = uf.source("calendar", rows=[{"day": d, "weekend": d % 7 in (5, 6)} for d in range(4)])
    rng = random.Random(seed)
    events = uf.source("events", rows=[{"e_fact": rng.randrange(200), "e_kind": rng.randrange(3)}
                                       for _ in range(300)])

    def counted(facts, evs):
        evs = list(evs)
        for r in facts:
            yield {**r, "events": len(evs)}

    def on_weekdays(r):
        return not r["weekend"]

    crossed = base.cross(calendar)
    return crossed.cogroup(events, on=("f_id", "e_fact"), f=counted).filter(on_weekdays)


def time_q7(data_dir: str, runs: int = 5) -> dict:
    from examples import tpch_q7
    from examples.tpch_data import generate_tpch

    generate_tpch(data_dir, 0.01)
    flow = tpch_q7.build_flow(data_dir)
    first = optimize(flow, mode="full")  # samples the functions once
    profiles = first.profiles
    times, cpu = [], []
    for _ in range(runs):
        started, cpu_started = time.perf_counter(), time.process_time()
        opt = optimize(flow, mode="full", profiles=profiles)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return {
        "alternatives": len(opt.alternatives),
        "median_s": statistics.median(times),
        "median_cpu_s": statistics.median(cpu),
        "sampling_s": first.timings["sampling"],
        "timings": opt.timings,
    }


def time_pruned(joins: int, runs: int = 3) -> dict:
    flow = generated_flow(joins)
    first = optimize(flow, mode="pruned")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        opt = optimize(flow, mode="pruned", profiles=first.profiles)
        times.append(time.perf_counter() - started)
    return {"operators": len(flow.operators), "seconds": statistics.median(times), "runs": times,
            "kept": len(opt.alternatives),
            "rulebook": opt.timings["rules_setup"] + opt.timings["rulebook"],
            "engine": opt.timings["statistics"] + opt.timings["search"] - opt.timings["rulebook"] + opt.timings["costing"],
            "considered": opt.alternatives.considered, "speedup": opt.speedup,
            "sampling_s": first.timings["sampling"]}


# -- the pruned search against full enumeration ---------------------------------------------------

STREAMED = 150_000  # plans: beyond, the full side of a comparison is the classes' minimum
RESOLUTION = 1e-6  # generated flows' plans differ by fractions of a percent: compare past rounding only
PRUNED_CHECK_JOINS = (7, 8)  # tests/test_engine_scale.py checks 2 to 6 joins in every shape


def fixed_profiles(flow: uf.Flow, cost: float = 2e-7) -> dict:
    """Sampled profiles with every function's time per call fixed, so costs repeat exactly."""
    from udflow.engine.statistics import profile_functions

    return {label: dataclasses.replace(p, cost=cost) for label, p in profile_functions(flow.root).items()}


def explored(flow: uf.Flow, profiles: dict, *, every_member: bool = True):
    """(groups, top group, cost model) of a flow's group search, every member expanded."""
    from udflow.engine.cost import CostModel
    from udflow.engine.groups import GroupSearch
    from udflow.engine.memo import Interner
    from udflow.engine.optimize import keyed_operators, statistics_of
    from udflow.rules import RuleBook

    root = flow.root
    interner = Interner()
    model = CostModel(statistics_of(root), profiles, interner, keyed=keyed_operators(root))
    with RuleBook(root) as book:
        groups = GroupSearch(book.exchanges, interner=interner,
                             one_per_root=not every_member, one_member=not every_member)
        top = groups.explore(root)
    return groups, top, model


def full_best(groups, top, model) -> float:
    """Full enumeration's cheapest cost over the fully explored groups: every plan streamed
    (what `optimize(mode="full")` does) when there are at most STREAMED; beyond, the minimum
    over the classes (the same number when the substructure holds, which
    tests/test_engine_scale.py checks plan by plan)."""
    from udflow.engine.space import PlanSpace

    space = PlanSpace(groups, model.cost, model.interface)
    if space.count(top) <= STREAMED:
        return min(cost for cost, _ in space.stream(top))
    return model.cost(space.cheapest(top).node)


def pruned_against_full(shape: str, joins: int, maps: int) -> dict:
    """The pruned search and full enumeration on one generated flow (two filters above the
    joins, `maps` computing Maps): plans each reaches, and the costs they choose."""
    flow = shaped_flow(joins, shape, filters=min(2, joins), maps=maps)
    profiles = fixed_profiles(flow)
    started = time.perf_counter()
    pruned = optimize(flow, mode="pruned", profiles=profiles, native=False, resolution=RESOLUTION)
    pruned_s = time.perf_counter() - started
    groups, top, model = explored(flow, profiles)
    return {"flow": f"{shape}/{joins}/maps={maps}", "pruned_plans": pruned.alternatives.count,
            "full_plans": groups.count(top), "pruned_cost": pruned.chosen.cost,
            "full_cost": full_best(groups, top, model), "pruned_s": pruned_s}


def pruned_agrees(r: dict) -> bool:
    """The pruned exploration reaches every plan, and chooses full enumeration's cost within
    the resolution (plans that close tie, and a tie keeps the fewest rewrites)."""
    return r["pruned_plans"] == r["full_plans"] and r["pruned_cost"] <= r["full_cost"] * (1 + RESOLUTION)


def run_pruned_check(joins: tuple[int, ...] = PRUNED_CHECK_JOINS) -> bool:
    ok = True
    for shape in SHAPES:
        for j in joins:
            for maps in (0, 1):
                r = pruned_against_full(shape, j, maps)
                ok &= pruned_agrees(r)
                print(f"{r['flow']:<20} {r['full_plans']:>10} plans  pruned {r['pruned_s']:6.2f} s  "
                      f"pruned / full cost {r['pruned_cost'] / r['full_cost']:.7f}  "
                      f"{'same' if pruned_agrees(r) else 'DIFFERENT'}", flush=True)
    return ok


# -- the scale table (issue 13) ------------------------------------------------------------------

SCALE_JOINS = (4, 6, 8, 12, 16, 20)
VARIANTS = {"bare": (0, 0), "filters+maps": (2, 2)}  # (filters above the joins, Maps between them)
EXTRA_VARIANTS = {"filters+map": (2, 1)}  # the 20-join example: one Map above the fact table
TARGETS = {8: (0.5, 150), 20: (2.0, 300)}  # joins -> (seconds, MB)
COMPARE_UP_TO = 8  # joins: full enumeration of larger flows does not finish in minutes


def scale_flow(spec: str) -> uf.Flow:
    """"shape/joins/variant" (e.g. "star/8/filters+maps") or "mixed/joins"."""
    parts = spec.split("/")
    if parts[0] == "mixed":
        return mixed_flow(int(parts[1]))
    filters, maps = {**VARIANTS, **EXTRA_VARIANTS}[parts[2]]
    return shaped_flow(int(parts[1]), parts[0], filters=filters, maps=maps)


def measure_one(spec: str, compare: bool) -> dict:
    """In this (fresh) process: the default mode's optimize, timed, with peak memory; then,
    with `compare`, full enumeration with the same profiles."""
    import udflow.rules  # noqa: F401  (imports are not the optimizer's time)

    flow = scale_flow(spec)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started, cpu = time.perf_counter(), time.process_time()
    opt = optimize(flow)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"spec": spec, "operators": len(flow.operators), "mode": opt.mode, "seconds": seconds, "cpu_s": cpu,
           "peak_mb": peak, "baseline_mb": before, "cost": opt.chosen.cost, "speedup": opt.speedup,
           "plans": opt.alternatives.count, "reason": opt.alternatives.reason,
           "rulebook_s": opt.timings["rules_setup"] + opt.timings["rulebook"], "sampling_s": opt.timings["sampling"]}
    if compare:
        started = time.perf_counter()
        full = optimize(flow, mode="full", keep=10, profiles=opt.profiles, budget_s=120)
        out.update(full_seconds=time.perf_counter() - started, full_complete=full.alternatives.complete,
                   full_cost=full.chosen.cost, full_plans=full.alternatives.count)
    return out


def run_scale(compare: bool, specs: list[str]) -> list[dict]:
    rows = []
    for spec in specs:
        joins = int(spec.split("/")[1])
        done = subprocess.run([sys.executable, "-m", "bench.enumeration", "--one", spec]
                              + (["--compare"] if compare and joins <= COMPARE_UP_TO else []),
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            print(f"{spec}: FAILED\n{done.stderr[-2000:]}", flush=True)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(_scale_line(row) + f"  [load {os.getloadavg()[0]:.1f}]", flush=True)
    return rows


def _scale_line(r: dict) -> str:
    joins = int(r["spec"].split("/")[1])
    target = TARGETS.get(joins)
    verdict = ""
    if target and not r["spec"].startswith("mixed"):
        ok = r["seconds"] <= target[0] and r["peak_mb"] <= target[1]
        verdict = f"  target {target[0]} s / {target[1]} MB: {'met' if ok else 'NOT met'}"
    line = (f"{r['spec']:<26} {r['operators']:>3} ops  {r['mode']:<7} {r['seconds']:7.2f} s (cpu {r['cpu_s']:.2f})  "
            f"peak {r['peak_mb']:6.0f} MB (imports {r['baseline_mb']:.0f})  "
            f"plans {r['plans'] if r['plans'] is not None else '-':>10}  speed-up {r['speedup']:.2f}x{verdict}")
    if "full_cost" in r:
        if not r["full_complete"]:
            line += f"\n{'':<28}full enumeration did not finish in 120 s"
        else:
            same = not better(r["full_cost"], r["cost"])  # within the cost model's resolution
            line += (f"\n{'':<28}full: {r['full_plans']} plans in {r['full_seconds']:.1f} s; auto's cost / full's "
                     f"{r['cost'] / r['full_cost']:.4f} ({'same' if same else 'DIFFERENT'})")
    return line


def scale_specs() -> list[str]:
    specs = [f"{shape}/{j}/{v}" for j in SCALE_JOINS for shape in SHAPES for v in VARIANTS]
    return specs + [f"mixed/{j}" for j in (4, 8, 12)]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/tpch-sf0.01")
    parser.add_argument("--joins", type=int, default=12)
    parser.add_argument("--scale", action="store_true", help="the scale table, one fresh process per flow")
    parser.add_argument("--compare", action="store_true", help="with --scale: also full enumeration")
    parser.add_argument("--only", nargs="*", metavar="SPEC", help="with --scale: these flows only")
    parser.add_argument("--pruned-check", action="store_true",
                        help="the pruned search against full enumeration on generated flows of 7 and 8 joins")
    parser.add_argument("--one", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pruned_check:
        sys.exit(0 if run_pruned_check() else 1)
    if args.one:
        print(json.dumps(measure_one(args.one, args.compare)))
        return
    if args.scale:
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before")
        run_scale(args.compare, args.only or scale_specs())
        print(f"load average {os.getloadavg()[0]:.2f} after")
        return

    q7 = time_q7(args.data)
    print(f"TPC-H Q7, full enumeration + costing: {q7['alternatives']} alternatives, "
          f"median of 5 {q7['median_s'] * 1000:.1f} ms (CPU {q7['median_cpu_s'] * 1000:.1f} ms; "
          f"load average {os.getloadavg()[0]:.1f}) "
          f"(paper 1654 ms: {1654 / (q7['median_s'] * 1000):.1f}x faster; target < 165 ms)")
    t = q7["timings"]
    print("  phases of the last run: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in t.items() if k != "sampling"))
    engine = t["statistics"] + t["search"] - t["rulebook"] + t["costing"]
    print(f"  of which the RuleBook (setup + exchanges) {(t['rules_setup'] + t['rulebook']) * 1000:.1f} ms, "
          f"the engine (search, statistics, costing) {engine * 1000:.1f} ms")
    print(f"  sampling (excluded above, once): {q7['sampling_s'] * 1000:.1f} ms")
    pruned = time_pruned(args.joins)
    print(f"generated {args.joins}-join flow ({pruned['operators']} operators), pruned search: median of "
          f"{len(pruned['runs'])} {pruned['seconds'] * 1000:.1f} ms (runs: "
          + ", ".join(f"{t * 1000:.0f}" for t in pruned["runs"]) + " ms; target < 1000 ms), "
          f"{pruned['considered']} multi-expressions, "
          f"{pruned['kept']} plans kept, estimated speed-up over as written {pruned['speedup']:.2f}x; "
          f"RuleBook (setup + exchanges) {pruned['rulebook'] * 1000:.1f} ms of it, engine {pruned['engine'] * 1000:.1f} ms; "
          f"sampling {pruned['sampling_s'] * 1000:.1f} ms excluded")


if __name__ == "__main__":
    main()

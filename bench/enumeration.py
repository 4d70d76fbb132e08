"""How long does the optimizer take?  (issue 5; the paper: 1654 ms for Q7, naive Java)

    python -m bench.enumeration [--data data/tpch-sf0.01] [--joins 12]

1. TPC-H Q7 as written (Figure 2(a)): `optimize` with full enumeration and costing,
   median of 5 runs; sampling (running the functions on a sample of their input)
   is done once, timed and reported separately, and excluded from the median.
   Target: under 165 ms (a tenth of the paper's time).
2. A generated flow with 12 joins (a snowflake chain with a star of dimensions
   on the fact table, and two filters above the joins), in the
   pruned mode, median of 3 (each run printed). Target: under 1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import udflow as uf
from udflow.engine.optimize import optimize


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


def time_q7(data_dir: str, runs: int = 5) -> dict:
    from examples import tpch_q7
    from examples.tpch_data import generate_tpch

    generate_tpch(data_dir, 0.01)
    flow = tpch_q7.build_flow(data_dir)
    first = optimize(flow, mode="full")  # samples the functions once
    profiles = first.profiles
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        opt = optimize(flow, mode="full", profiles=profiles)
        times.append(time.perf_counter() - started)
    return {
        "alternatives": len(opt.alternatives),
        "median_s": statistics.median(times),
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/tpch-sf0.01")
    parser.add_argument("--joins", type=int, default=12)
    args = parser.parse_args(argv)

    q7 = time_q7(args.data)
    print(f"TPC-H Q7, full enumeration + costing: {q7['alternatives']} alternatives, "
          f"median of 5 {q7['median_s'] * 1000:.1f} ms "
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

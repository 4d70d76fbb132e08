"""The paper's evaluation (section 7.3, Table 1, Figures 5-7), reproduced on local Spark.

For each of the four tasks (clickstream, TPC-H Q7, TPC-H Q15, text mining):

1. **Table 1**: the number of alternatives `uf.optimize` enumerates with manual
   annotations (`properties="manual"`) and with static analysis
   (`properties="analysis"`), and the optimizer's wall time for each.
2. **Figures 5-7**: the plans ranked by estimated cost; the plan as written,
   the chosen plan (rank 1) and up to 9 others at regular rank intervals run on
   Spark: one untimed warm-up per plan, then `--runs` rounds (median and
   spread reported), each round running every plan once, in ascending rank
   order and the next in descending order, so that drift in the machine hits
   all of them alike. An estimate of the time left is printed as it goes.
3. **Correctness in the same run**: every executed plan must return the same
   bag of records as the plan as written (on the task's select list when its
   Reduce copies an arbitrary group record, as Q15's does); any difference
   fails the benchmark loudly (exit status 1, the difference printed).

Results go to `bench/results/<date>/` (`<date>-quick` for `--quick`):
`paper_eval.json` (every figure), `paper_eval.md` (the tables) and one PNG per
task in the style of Figures 5-7: normalized estimated cost and normalized
measured runtime per rank, both normalized by their smallest value.

Run:  python -m bench.paper_eval [--quick] [--tasks clickstream,text_mining] [--runs 3] [--max-plans 10]
      [--scale text_mining=2]      (defaults: about 25 min on 2 cores; bench/README.md)
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Optional

import udflow as uf
from examples.paper_tasks import bag, bag_difference


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    module: str
    scale: float  # a few minutes on 2 cores for the whole task
    quick_scale: float
    data_prefix: str  # data/<prefix><scale>
    paper: dict  # the paper's figures, for the side-by-side
    minutes: float  # wall time of the whole task at `scale`, 3 runs, 2 cores (printed as the estimate)
    picks: int = 10  # plans picked at regular rank intervals, the chosen one included (plus the plan as written)


# Scales and picks keep the whole run near 25 minutes on 2 cores (see bench/README.md):
# every executed plan runs 1 + `runs` times, so a task costs about 4x the sum of its plans' times.
TASKS = (
    Task("clickstream", "Clickstream", "examples.clickstream", 2.0, 0.01, "clickstream-s",
         {"manual": 4, "analysis": 3, "speedup_written": 1.4}, minutes=8, picks=6),
    Task("tpch_q7", "TPC-H Q7", "examples.tpch_q7", 0.05, 0.01, "tpch-sf",
         {"manual": 2518, "analysis": 2518, "best_worst": 7.0}, minutes=7),
    Task("tpch_q15", "TPC-H Q15", "examples.tpch_q15", 0.1, 0.01, "tpch-sf",
         {"manual": 4, "analysis": 4}, minutes=3),
    Task("text_mining", "Text Mining", "examples.text_mining", 1.5, 0.01, "text-mining-s",
         {"manual": 24, "analysis": 24, "best_worst": 10.0}, minutes=8, picks=7),
)
MAX_PICKS = 10  # the chosen plan and up to 9 others
CHOSEN_TARGET = 1.10  # the chosen plan within 10% of the fastest measured plan


class ResultMismatch(AssertionError):
    """An executed plan returned another bag than the plan as written."""


# ---------------------------------------------------------------------------
# Picking and running plans
# ---------------------------------------------------------------------------


def regular_ranks(n: int, k: int = MAX_PICKS) -> list[int]:
    """Up to `k` ranks (1-based) spread evenly over 1..n, always with the first and the last."""
    if n <= k:
        return list(range(1, n + 1))
    return sorted({1 + round(i * (n - 1) / (k - 1)) for i in range(k)})


def result_bag(module, rows):
    """The bag the plans must agree on: whole records, or the task's select list when it has one."""
    select = getattr(module, "SELECT_LIST", None)
    if select:
        rows = [{c: r.get(c) for c in select} for r in rows]
    return bag(rows)


def timed_collect(flow, spark) -> tuple[float, list]:
    started = time.perf_counter()
    rows = flow.collect(engine="spark", spark=spark)
    return time.perf_counter() - started, rows


def optimizer_figures(flow, spark) -> tuple[dict, Any]:
    """Table 1 for one flow: alternatives and optimizer wall time, manual and analysis."""
    figures, analysis = {}, None
    for properties in ("manual", "analysis"):
        started = time.perf_counter()
        opt = uf.optimize(flow, properties=properties, spark=spark)
        wall = time.perf_counter() - started
        figures[properties] = {
            "alternatives": len(opt.alternatives),
            "mode": getattr(opt, "mode", "full"),
            "optimizer_seconds": wall,
            "timings": {k: float(v) for k, v in getattr(opt, "timings", {}).items()},
            "written_rank": opt.original_alternative.rank,
        }
        if properties == "analysis":
            analysis = opt
    return figures, analysis


def plans_to_run(opt, max_picks: int = MAX_PICKS) -> list[dict]:
    """The plan as written, then the picked ranks; a plan picked twice runs once with both roles."""
    alternatives = list(opt.alternatives)
    written = opt.original_alternative
    picked = {rank: alternatives[rank - 1] for rank in regular_ranks(len(alternatives), max_picks)}
    plans = [{"roles": ["written"], "alternative": written, "rank": written.rank}]
    for rank, alt in picked.items():
        if alt.node == written.node:
            plans[0]["roles"].append("chosen" if rank == 1 else "picked")
            continue
        plans.append({"roles": ["chosen" if rank == 1 else "picked"], "alternative": alt, "rank": rank})
    return plans


def run_plans(module, plans: list[dict], runs: int, spark, log) -> None:
    """Per plan one untimed warm-up, then `runs` timed rounds over all plans; check every bag.

    The warm-ups fill the JVM's JIT, the Python workers and the file cache for
    every plan alike, and double as the first correctness check; their times
    give the estimate of what is left. Each round runs every plan once, in
    ascending rank order, the next round in descending order, so that a drift
    of the machine over time (another load starting, the JIT warming up further)
    is shared by all plans instead of penalizing the ones that run late.
    """
    written = plans[0]["alternative"].flow
    started = time.perf_counter()
    rows = written.collect(engine="spark", spark=spark)
    expected = result_bag(module, rows)  # the bag every plan must return
    plans[0]["warmup"] = time.perf_counter() - started
    log(f"    warm-up rank {plans[0]['rank']:>5} {'/'.join(plans[0]['roles']):<15} {plans[0]['warmup']:8.3f} s "
        f"({len(rows)} records, the bag every plan must return)")
    for plan in plans[1:]:
        plan["warmup"], rows = timed_collect(plan["alternative"].flow, spark)
        check_bag(module, plan, rows, expected)
        log(f"    warm-up rank {plan['rank']:>5} {'/'.join(plan['roles']):<15} {plan['warmup']:8.3f} s")
    remaining = runs * sum(p["warmup"] for p in plans)
    log(f"    {runs} round(s) of {len(plans)} plan(s) to go: about {remaining / 60:.1f} min")
    for plan in plans:
        plan["runtimes"] = []
    ordered = sorted(plans, key=lambda p: p["rank"])
    for round_ in range(runs):
        round_started = time.perf_counter()
        for plan in ordered if round_ % 2 == 0 else list(reversed(ordered)):
            seconds, rows = timed_collect(plan["alternative"].flow, spark)
            check_bag(module, plan, rows, expected)
            plan["runtimes"].append(seconds)
            log(f"    round {round_ + 1}/{runs}: rank {plan['rank']:>5} {'/'.join(plan['roles']):<15} {seconds:8.3f} s")
        left = (runs - round_ - 1) * (time.perf_counter() - round_started)
        if left:
            log(f"    about {left / 60:.1f} min left for this task")


def check_bag(module, plan: dict, rows: list, expected) -> None:
    """Fail loudly when a plan returns another bag than the plan as written."""
    got = result_bag(module, rows)
    if got != expected:
        raise ResultMismatch(
            f"rank {plan['rank']} ({'/'.join(plan['roles'])}) returned another bag than the plan as "
            f"written:\n{bag_difference(got, expected)}\nplan:\n{plan['alternative'].node}"
        )


def evaluate(task: Task, scale: float, runs: int, data_root: str, spark, log, max_picks: int = MAX_PICKS) -> dict:
    module = importlib.import_module(task.module)
    data_dir = os.path.join(data_root, f"{task.data_prefix}{scale:g}")
    started = time.perf_counter()
    module.generate_data(data_dir, scale)
    generated = time.perf_counter() - started
    flow = module.build_flow(data_dir)
    log(f"{task.title}: scale {scale:g}, data in {data_dir} ({generated:.1f} s)")

    figures, opt = optimizer_figures(flow, spark)
    log(f"  alternatives: manual {figures['manual']['alternatives']}, analysis {figures['analysis']['alternatives']}"
        f"; optimizer {figures['analysis']['optimizer_seconds']:.2f} s")
    plans = plans_to_run(opt, max_picks)
    run_plans(module, plans, runs, spark, log)

    best_cost = min(p["alternative"].cost for p in plans)
    medians = {id(p): statistics.median(p["runtimes"]) for p in plans}
    fastest = min(medians.values())
    executed = []
    for p in sorted(plans, key=lambda p: p["rank"]):
        alt = p["alternative"]
        executed.append({
            "rank": p["rank"],
            "roles": p["roles"],
            "estimated_cost": alt.cost,
            "normalized_cost": alt.cost / best_cost if best_cost else None,
            "warmup_seconds": p["warmup"],
            "runtimes": p["runtimes"],
            "median_seconds": medians[id(p)],
            "spread": (max(p["runtimes"]) - min(p["runtimes"])) / medians[id(p)],
            "normalized_runtime": medians[id(p)] / fastest,
            "plan": str(alt.node),
            "rules": list(getattr(alt, "rules", ())),
        })
    by_role = {role: e for e in executed for role in e["roles"]}
    written, chosen = by_role["written"], by_role.get("chosen", by_role["written"])
    slowest = max(e["median_seconds"] for e in executed)
    return {
        "task": task.name,
        "title": task.title,
        "scale": scale,
        "data_dir": data_dir,
        "generation_seconds": generated,
        "table1": figures,
        "executed": executed,
        "speedup_chosen_over_written": written["median_seconds"] / chosen["median_seconds"],
        "estimated_speedup_chosen_over_written": written["estimated_cost"] / chosen["estimated_cost"],
        "best_over_worst": slowest / fastest,
        "chosen_over_fastest": chosen["median_seconds"] / fastest,
        "chosen_within_target": chosen["median_seconds"] / fastest <= CHOSEN_TARGET,
        "runs": runs,
        "paper": task.paper,
    }


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def markdown(results: list[dict], failures: dict[str, str], header: str) -> str:
    lines = [f"# Paper evaluation ({header})", "",
             "Spread: (slowest - fastest run) / median of a plan's timed runs; one untimed warm-up per plan first.", "",
             "## Table 1: alternatives enumerated", "",
             "| Task | Manual | Analysis | Paper manual | Paper analysis | Optimizer time (analysis) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        m, a = r["table1"]["manual"], r["table1"]["analysis"]
        share = f" ({100 * a['alternatives'] / m['alternatives']:.0f}%)" if m["alternatives"] else ""
        paper = r["paper"]
        lines.append(f"| {r['title']} | {m['alternatives']} | {a['alternatives']}{share} | {paper['manual']} | "
                     f"{paper['analysis']} | {a['optimizer_seconds'] * 1000:.0f} ms |")
    lines += ["", "## Measured on Spark (median of runs, plans alternated)", "",
              "| Task | Scale | Plans run | Written rank | Chosen vs written (estimated) | Best vs worst | "
              "Chosen vs fastest | Paper |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        paper = ", ".join(f"{k.replace('_', ' ')} {v}x" for k, v in r["paper"].items() if k not in ("manual", "analysis"))
        target = "met" if r["chosen_within_target"] else "NOT met"
        lines.append(
            f"| {r['title']} | {r['scale']:g} | {len(r['executed'])} | {r['table1']['analysis']['written_rank']} | "
            f"{r['speedup_chosen_over_written']:.2f}x ({r['estimated_speedup_chosen_over_written']:.2f}x) | "
            f"{r['best_over_worst']:.2f}x | "
            f"{r['chosen_over_fastest']:.3f}x (<= {CHOSEN_TARGET:.2f}: {target}) | {paper or '-'} |")
    for r in results:
        lines += ["", f"### {r['title']}", "",
                  "| Rank | Role | Est. cost (norm.) | Runtime (norm.) | Median s | Spread | Warm-up s | Runs s |",
                  "|---:|---|---:|---:|---:|---:|---:|---|"]
        for e in r["executed"]:
            lines.append(f"| {e['rank']} | {'/'.join(e['roles'])} | {e['normalized_cost']:.2f} | "
                         f"{e['normalized_runtime']:.2f} | {e['median_seconds']:.3f} | {100 * e['spread']:.0f}% | "
                         f"{e['warmup_seconds']:.2f} | "
                         f"{', '.join(f'{s:.2f}' for s in e['runtimes'])} |")
        chosen = next(e for e in r["executed"] if "chosen" in e["roles"] or e["rank"] == 1)
        lines += ["", "Chosen plan:", "", "```", chosen["plan"], "```"]
    if failures:
        lines += ["", "## FAILURES", ""]
        for name, message in failures.items():
            lines += [f"### {name}", "", "```", message, "```"]
    return "\n".join(lines) + "\n"


def plot(result: dict, path: str) -> None:
    """Figures 5-7: per executed rank, normalized estimated cost and normalized runtime."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    executed = result["executed"]
    x = range(len(executed))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(executed) + 2), 3.6))
    width = 0.38
    ax.bar([i - width / 2 for i in x], [e["normalized_cost"] for e in executed], width,
           label="estimated cost", color="#8da0cb")
    ax.bar([i + width / 2 for i in x], [e["normalized_runtime"] for e in executed], width,
           label="runtime", color="#fc8d62")
    labels = []
    for e in executed:
        tag = "\n(written)" if "written" in e["roles"] else ""
        labels.append(f"{e['rank']}{tag}")
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_xlabel("plan rank (by estimated cost)")
    ax.set_ylabel("normalized to the lowest")
    top = max(max(e["normalized_cost"] for e in executed), max(e["normalized_runtime"] for e in executed))
    if top > 20:
        ax.set_yscale("log")
    ax.axhline(1.0, color="grey", linewidth=0.6)
    ax.set_title(f"{result['title']}: {len(executed)} of {result['table1']['analysis']['alternatives']} plans "
                 f"(scale {result['scale']:g}, median of {result['runs']})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def json_safe(value):
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def spark_session():
    from udflow.spark_backend.session import new_session

    parallelism = str(2 * (os.cpu_count() or 2))
    return new_session("local[*]", {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": parallelism,
        "spark.default.parallelism": parallelism,
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "8g",
        "spark.python.worker.reuse": "true",
        "spark.pyspark.python": sys.executable,
    }, app_name="udflow-paper-eval")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="The paper's evaluation: Table 1 and Figures 5-7 on local Spark")
    parser.add_argument("--quick", action="store_true", help="tiny scales, one run per plan (a smoke run)")
    parser.add_argument("--tasks", default=",".join(t.name for t in TASKS),
                        help="comma-separated subset, run in this order")
    parser.add_argument("--runs", type=int, default=None, help="timed runs per plan (default 3; 1 with --quick)")
    parser.add_argument("--max-plans", type=int, default=None,
                        help="plans picked at regular rank intervals, the chosen one included "
                             f"(default: the task's, at most {MAX_PICKS})")
    parser.add_argument("--scale", action="append", default=[], metavar="TASK=SCALE", help="override a scale")
    parser.add_argument("--data", default="data", help="folder for the generated data sets")
    parser.add_argument("--out", default=os.path.join("bench", "results"), help="results folder")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    wanted = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = set(wanted) - {t.name for t in TASKS}
    if unknown:
        raise SystemExit(f"unknown task(s) {sorted(unknown)}; known: {[t.name for t in TASKS]}")
    overrides = dict(s.split("=", 1) for s in args.scale)
    runs = args.runs or (1 if args.quick else 3)
    if not hasattr(uf, "optimize"):
        raise SystemExit("udflow.optimize does not exist yet (engine issue); nothing to evaluate")

    stamp = dt.date.today().isoformat() + ("-quick" if args.quick else "")
    out_dir = os.path.join(args.out, stamp)
    os.makedirs(out_dir, exist_ok=True)
    by_name = {t.name: t for t in TASKS}
    if not args.quick and not overrides and args.max_plans is None:
        minutes = sum(by_name[n].minutes for n in wanted) * (1 + runs) / 4  # a warm-up + `runs` per plan
        print(f"estimate: about {minutes:.0f} min on 2 quiet cores ({', '.join(wanted)}, {runs} run(s) per plan)",
              flush=True)
    spark = spark_session()
    results, failures = [], {}
    for task in (by_name[name] for name in wanted):  # in the order asked for
        scale = float(overrides.get(task.name, task.quick_scale if args.quick else task.scale))
        started = time.perf_counter()
        try:
            result = evaluate(task, scale, runs, args.data, spark, lambda m: print(m, flush=True),
                              args.max_plans or task.picks)
        except Exception as exc:  # report every task; a failure still fails the whole run below
            failures[task.name] = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
            print(f"!! {task.title} FAILED: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            continue
        result["task_seconds"] = time.perf_counter() - started
        results.append(result)
        plot(result, os.path.join(out_dir, f"paper_eval_{task.name}.png"))
        print(f"  chosen vs written {result['speedup_chosen_over_written']:.2f}x, best vs worst "
              f"{result['best_over_worst']:.2f}x, chosen vs fastest {result['chosen_over_fastest']:.2f}x "
              f"({result['task_seconds']:.0f} s)", flush=True)

    header = f"{stamp}, {runs} run(s) per plan, {os.cpu_count()} cores"
    with open(os.path.join(out_dir, "paper_eval.json"), "w") as fh:
        json.dump(json_safe({"header": header, "results": results, "failures": failures}), fh, indent=2)
    report = markdown(results, failures, header)
    with open(os.path.join(out_dir, "paper_eval.md"), "w") as fh:
        fh.write(report)
    print(f"\nwrote {out_dir}/paper_eval.json, paper_eval.md and {len(results)} plot(s)")
    if failures:
        print(f"\nFAILED: {', '.join(failures)}; see {out_dir}/paper_eval.md", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

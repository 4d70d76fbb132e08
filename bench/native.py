"""Native lowering (issue 12): udflow against hand-written PySpark and Spark SQL, side by side.

On one SparkSession (the embedded `local[*]` one, `udflow.spark_backend.get_session()`),
for TPC-H Q7 and Q15, clickstream and text mining (examples/) and the three user
pipelines (examples/ratings.py by movie and by genre, taxi.py, documents.py), and the
newcomer's shop pipeline of issue 31 (examples/shop.py, whose "hand" variant is its
`F.udf` twin), these variants of the same query:

    written     the flow as written                     flow.collect()
    optimized   udflow.optimize(flow).chosen            chosen.collect()
    python      the same chosen plan, native lowering   chosen.collect(native=False)
                switched off (every function in Python)
    hand        the query as a PySpark user writes it   df.collect()
                (native where PySpark has it, F.udf for the rest: bench/native_hand.py
                and each example's `hand_pyspark`)
    udf         the user pipelines only: the same       df.collect()
                steps as plain `F.udf`s, as a PySpark
                user writes them first (each example's
                `udf_pyspark`, which `from_spark` opens)
    sql         Q7 and Q15 only: the TPC-H query text   spark.sql(...).collect()

Every variant ends in the same sink, `collect()` of its result rows to the driver; for
Q7 and Q15 the rows of the TPC-H select list, which is what Spark SQL and the
hand-written query return (udflow: `collect(fields=SELECT_LIST)`, a projection Spark
prunes below; Q15's flow copies a whole lineitem record into each group's result,
which the select list drops).
Each runs once untimed (warm-up, and the correctness check: every variant must
return the bag the plan as written returns, floats within a relative 1e-9, Q15
on its select list, or the benchmark reports the difference and exits 1), then
`--runs` rounds in which every variant runs once, the order alternating between
rounds; the median is reported. Ratios: optimized / hand, optimized / udf, optimized / sql,
python / optimized (what native lowering gains), written / optimized. Per
pipeline, how many operators with a user function the chosen plan runs natively
(`Lowering.native_labels`).

Run:  python -m bench.native [--scale 1] [--user-scale 1] [--runs 3] [--tasks q7,taxi] [--alternatives 9] [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Optional

import udflow
from bench import native_hand
from examples import clickstream, documents, ratings, shop, taxi, text_mining, tpch_q7, tpch_q15
from examples.user_data import bag_mismatch, rows_of
from udflow.plan import CoGroup, Cross, Map, Match, Reduce

VARIANTS = ("written", "optimized", "python", "hand", "udf", "sql")
PAIRS = (("optimized", "hand"), ("optimized", "udf"), ("optimized", "sql"), ("written", "optimized"))  # ratios also shown round by round


@dataclass(frozen=True)
class Task:
    name: str
    data: str  # folder under --data-root
    generate: Callable[[str, float], str]
    flow: Callable[[str], udflow.Flow]
    hand: Callable
    sql: Optional[Callable] = None
    compare: Optional[tuple] = None  # fields compared (Q15: the select list); None: all of udflow's
    tpch: bool = False
    scale_factor: float = 1.0  # this task's scale relative to --user-scale
    udf: Optional[Callable] = None  # (spark, data_dir) -> the pipeline written with F.udf


TASKS = (
    Task("q7", "tpch-sf{scale}", tpch_q7.generate_data, tpch_q7.build_flow, native_hand.q7_hand,
         native_hand.q7_sql, tpch_q7.SELECT_LIST, tpch=True),
    Task("q15", "tpch-sf{scale}", tpch_q15.generate_data, tpch_q15.build_flow, native_hand.q15_hand,
         native_hand.q15_sql, tpch_q15.SELECT_LIST, tpch=True),
    Task("clickstream", "clickstream-{scale}", clickstream.generate_data, clickstream.build_flow,
         native_hand.clickstream_hand),
    Task("text_mining", "text-mining-{scale}", text_mining.generate_data, text_mining.build_flow,
         native_hand.text_mining_hand, scale_factor=0.3),
    Task("ratings_movie", "ratings-{scale}", ratings.generate_data, lambda d: ratings.build_flow(d, "movie"),
         lambda s, d: ratings.hand_pyspark(s, d, "movie"), udf=lambda s, d: ratings.udf_pyspark(s, d, "movie")),
    Task("ratings_genre", "ratings-{scale}", ratings.generate_data, lambda d: ratings.build_flow(d, "genre"),
         lambda s, d: ratings.hand_pyspark(s, d, "genre"), udf=lambda s, d: ratings.udf_pyspark(s, d, "genre")),
    Task("taxi", "taxi-{scale}", taxi.generate_data, taxi.build_flow, taxi.hand_pyspark, udf=taxi.udf_pyspark),
    # issue 31's newcomer: "hand" is the twin as that user writes it, F.udf and groupBy().agg
    Task("shop", "shop-{scale}", shop.generate_data, shop.build_flow, shop.twin_pyspark, scale_factor=4.0),
    Task("documents", "documents-{scale}", documents.generate_data, documents.build_flow, documents.hand_pyspark,
         udf=documents.udf_pyspark),
)


@dataclass
class Outcome:
    task: str
    scale: float
    times: dict = field(default_factory=dict)  # variant -> [seconds]
    errors: dict = field(default_factory=dict)  # variant -> message
    mismatches: dict = field(default_factory=dict)  # variant -> how it differs from the plan as written
    rows: int = 0
    native: list = field(default_factory=list)
    udf_operators: list = field(default_factory=list)
    python_reasons: dict = field(default_factory=dict)
    general_cases: dict = field(default_factory=dict)  # label -> which rows (groups) run in Python
    rewrites: list = field(default_factory=list)
    plans: dict = field(default_factory=dict)  # "plan<i>" -> (its rewrites, estimated cost): `--alternatives`

    def median(self, variant: str) -> Optional[float]:
        runs = self.times.get(variant)
        return statistics.median(runs) if runs else None

    def ratio(self, a: str, b: str) -> Optional[float]:
        x, y = self.median(a), self.median(b)
        return x / y if x and y else None

    def paired(self, a: str, b: str) -> Optional[tuple[float, float, float]]:
        """The ratio a/b round by round (each round runs every variant back to back, so the
        machine's drift cancels): its median and middle half (quartiles), which say whether
        a ratio near 1 is a difference or noise."""
        xs, ys = self.times.get(a), self.times.get(b)
        if not xs or not ys or len(xs) != len(ys):
            return None
        ratios = [x / y for x, y in zip(xs, ys)]
        if len(ratios) < 2:
            return ratios[0], ratios[0], ratios[0]
        q1, q2, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        return q2, q1, q3


def udf_operators(node) -> list[str]:
    """Labels of the plan's operators that run a user function."""
    return [n.label for n in node.walk()
            if isinstance(n, (Map, Reduce, CoGroup)) or (isinstance(n, (Match, Cross)) and n.fn is not None)]


def native_census(spark, alternative) -> tuple[list, dict, dict]:
    """Which operators of `alternative`'s plan the default lowering runs natively, why others
    with a model stay in Python, and which rows of native ones run in Python (`general_case`).
    Lowering only (plus the sampling a Python operator below a join needs)."""
    from udflow.spark_backend.lower import Lowering

    lowering = Lowering(spark, alternative.flow.physical(), samples=dict(alternative.samples))
    try:
        lowering.lower(alternative.node)
    finally:
        lowering.release()
    return sorted(lowering.native_labels), dict(lowering.python_reasons), dict(lowering.general_cases)


def variants(spark, task: Task, data_dir: str, flow, chosen) -> dict[str, Callable[[], list]]:
    runs = {
        "written": lambda: flow.collect(spark=spark, fields=task.compare),
        "optimized": lambda: chosen.collect(spark=spark, fields=task.compare),
        "python": lambda: chosen.collect(spark=spark, native=False, fields=task.compare),
        "hand": lambda: rows_of(task.hand(spark, data_dir).collect()),
    }
    if task.udf is not None:
        runs["udf"] = lambda: rows_of(task.udf(spark, data_dir).collect())
    if task.sql is not None:
        runs["sql"] = lambda: rows_of(task.sql(spark, data_dir).collect())
    return runs


def run_task(spark, task: Task, data_dir: str, scale: float, runs: int, log, wanted=VARIANTS,
             alternatives: int = 0) -> Outcome:
    out = Outcome(task.name, scale)
    flow = task.flow(data_dir)
    opt = udflow.optimize(flow)
    chosen = opt.chosen
    out.rewrites = list(chosen.rules)
    out.udf_operators = udf_operators(chosen.node)
    out.native, out.python_reasons, out.general_cases = native_census(spark, chosen)
    sides = {n: run for n, run in variants(spark, task, data_dir, flow, chosen).items() if n in wanted}
    for i, alt in enumerate(list(opt.alternatives)[:alternatives], 1):  # does the model rank them as Spark runs them?
        out.plans[f"plan{i}"] = (", ".join(alt.rules) or "as written", alt.cost)
        sides[f"plan{i}"] = lambda alt=alt: alt.collect(spark=spark, fields=task.compare)

    reference = None
    for name, run in sides.items():  # warm-up and correctness check
        try:
            t0 = time.perf_counter()
            rows = run()
            log(f"  {task.name:<14} {name:<9} warm-up {time.perf_counter() - t0:7.2f} s, {len(rows)} rows")
        except Exception as exc:  # noqa: BLE001 - reported in the table and the JSON, exit status 1
            out.errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:400]}"
            log(f"  {task.name:<14} {name:<9} FAILED: {out.errors[name]}")
            continue
        if reference is None:
            reference = rows_of(rows, task.compare)
            out.rows = len(reference)
            continue
        why = difference(reference, rows, task.compare)
        if why:
            out.mismatches[name] = why
            log(f"  {task.name:<14} {name:<9} DIFFERS from the plan as written: {why}")

    good = [n for n in sides if n not in out.errors and n not in out.mismatches]
    for i in range(runs):
        order = good if i % 2 == 0 else list(reversed(good))
        for name in order:
            t0 = time.perf_counter()
            sides[name]()
            out.times.setdefault(name, []).append(time.perf_counter() - t0)
        log(f"  {task.name:<14} round {i + 1}: " + ", ".join(f"{n} {out.times[n][-1]:.2f}" for n in good))
    return out


def difference(reference: list[dict], rows: list, fields: Optional[tuple]) -> Optional[str]:
    """How `rows` differ from `reference` as bags (on `fields`, else on the reference's fields)."""
    if fields is None and reference:
        fields = tuple(sorted(reference[0]))
    try:
        rows = rows_of(rows, fields)
    except KeyError as missing:
        return f"no field {missing}"
    return bag_mismatch(reference, rows)


def fmt(x: Optional[float], unit: str = "") -> str:
    return "-" if x is None else f"{x:.2f}{unit}"


def table(outcomes: list[Outcome]) -> str:
    head = (f"{'pipeline':<14} {'scale':>6} {'rows':>7} | " + " ".join(f"{v:>9}" for v in VARIANTS)
            + f" | {'opt/hand':>8} {'opt/udf':>8} {'opt/sql':>8} {'py/opt':>7} {'wr/opt':>7} | native")
    lines = [head, "-" * len(head)]
    for o in outcomes:
        cells = []
        for v in VARIANTS:
            cells.append("ERROR" if v in o.errors else "DIFFERS" if v in o.mismatches else fmt(o.median(v), "s"))
        lines.append(
            f"{o.task:<14} {o.scale:>6g} {o.rows:>7} | " + " ".join(f"{c:>9}" for c in cells)
            + f" | {fmt(o.ratio('optimized', 'hand'), 'x'):>8} {fmt(o.ratio('optimized', 'udf'), 'x'):>8}"
            f" {fmt(o.ratio('optimized', 'sql'), 'x'):>8}"
            f" {fmt(o.ratio('python', 'optimized'), 'x'):>7} {fmt(o.ratio('written', 'optimized'), 'x'):>7}"
            f" | {len(o.native)}/{len(o.udf_operators)}")
    return "\n".join(lines)


def details(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        lines.append(f"{o.task}: rewrites {', '.join(o.rewrites) or 'none'}; native: {', '.join(o.native) or 'none'}")
        for a, b in PAIRS:
            found = o.paired(a, b)
            if found:
                lines.append(f"    {a}/{b} round by round: median {found[0]:.2f}x, middle half {found[1]:.2f}-{found[2]:.2f}x")
        for name, (rules, cost) in o.plans.items():
            vs_hand = o.paired(name, "hand")
            lines.append(f"    {name} (estimated {cost:.3f} s; {rules}): median {fmt(o.median(name), ' s')}"
                         + (f", /hand round by round {vs_hand[0]:.2f}x ({vs_hand[1]:.2f}-{vs_hand[2]:.2f}x)" if vs_hand else ""))
        for label, why in sorted(o.python_reasons.items()):
            lines.append(f"    {label} stays in Python: {why[:200]}")
        for label, which in sorted(o.general_cases.items()):
            lines.append(f"    {label}: {which}")
        for v, e in o.errors.items():
            lines.append(f"    ERROR {v}: {e}")
        for v, m in o.mismatches.items():
            lines.append(f"    DIFFERS {v}: {m}")
    return "\n".join(lines)


def session():
    # The executors import examples/ (the hand-written UDFs refer to its functions).
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    from udflow.spark_backend import get_session

    return get_session()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (Q7, Q15)")
    parser.add_argument("--user-scale", type=float, default=1.0,
                        help="scale of clickstream, text mining (x0.3) and the user pipelines")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", default=",".join(t.name for t in TASKS))
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="a subset of written,optimized,python,hand,udf,sql (the first is the reference bag)")
    parser.add_argument("--data-root", default="data")
    parser.add_argument("--quick", action="store_true", help="TPC-H 0.01, user scale 0.01, one run")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--alternatives", type=int, default=0,
                        help="also time the optimizer's first N plans of each task (plan1 = the chosen one)")
    parser.add_argument("--tag", default="", help="appended to the JSON file's name")
    args = parser.parse_args(argv)
    if args.quick:
        args.scale, args.user_scale, args.runs = 0.01, 0.01, 1
    wanted = args.tasks.split(",")
    unknown = set(wanted) - {t.name for t in TASKS}
    if unknown:
        parser.error(f"unknown tasks {sorted(unknown)}")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    spark = session()
    outcomes = []
    for task in (t for t in TASKS if t.name in wanted):
        scale = args.scale if task.tpch else round(args.user_scale * task.scale_factor, 6)
        data_dir = os.path.join(args.data_root, task.data.format(scale=f"{scale:g}"))
        t0 = time.perf_counter()
        if task.tpch or not os.path.isdir(data_dir):  # generate_tpch skips what is there
            task.generate(data_dir, scale)
        log(f"{task.name}: data {data_dir} ready in {time.perf_counter() - t0:.1f} s")
        try:
            outcomes.append(run_task(spark, task, data_dir, scale, args.runs, log, args.variants.split(","),
                                     args.alternatives))
        except Exception:  # noqa: BLE001 - one broken pipeline must not hide the others' figures
            log(traceback.format_exc())
            outcomes.append(Outcome(task.name, scale, errors={"optimize": traceback.format_exc(limit=1)}))

    report = table(outcomes) + "\n\n" + details(outcomes)
    print(report)
    load_after = os.getloadavg()
    print(f"\nmachine: {os.cpu_count()} cores, load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"sink: collect() of the result rows; median of {args.runs} after a warm-up")
    result = {
        "started": started.isoformat(timespec="seconds"), "tpch_scale": args.scale, "user_scale": args.user_scale,
        "runs": args.runs, "variants": args.variants.split(","), "sink": "collect()", "cores": os.cpu_count(),
        "load_average": {"before": load_before, "after": load_after},
        "spark_master": spark.sparkContext.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "pipelines": [
            {"task": o.task, "scale": o.scale, "rows": o.rows, "times": o.times,
             "median": {v: o.median(v) for v in o.times},
             "ratios": {"optimized/hand": o.ratio("optimized", "hand"), "optimized/udf": o.ratio("optimized", "udf"),
                        "optimized/sql": o.ratio("optimized", "sql"),
                        "python/optimized": o.ratio("python", "optimized"),
                        "written/optimized": o.ratio("written", "optimized")},
             "paired": {f"{a}/{b}": found for a, b in PAIRS if (found := o.paired(a, b))},
             "native": o.native, "udf_operators": o.udf_operators, "python_reasons": o.python_reasons,
             "general_cases": o.general_cases,
             "rewrites": o.rewrites, "plans": o.plans, "errors": o.errors, "mismatches": o.mismatches}
            for o in outcomes
        ],
    }
    os.makedirs(args.out, exist_ok=True)
    suffix = "-quick" if args.quick else ""
    if args.tag:
        suffix += f"-{args.tag}"
    path = os.path.join(args.out, f"native_{started.date().isoformat()}{suffix}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(f"written: {path}")
    return 1 if any(o.errors or o.mismatches for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())

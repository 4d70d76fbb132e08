"""`udflow.from_spark` (issue 30): PySpark pipelines written with `F.udf`, opened by udflow, against
the same DataFrame as written, hand-written native PySpark, and Spark's own UDF transpiler.

For the four user pipelines of examples/ (ratings per movie and per genre, taxi cleaning,
document sentiment), on one SparkSession (the embedded `local[*]` one, as bench/native.py),
these variants of the same query, each ending in `collect()`:

    udf          the F.udf DataFrame as a PySpark user writes it     udf_pyspark(...).collect()
    from_spark   that DataFrame through udflow                         optimize_dataframe(df).collect()
                 (the optimize and the collect are timed apart, and the optimize's three
                 steps: reading the plan, `optimize`, `to_spark`)
    hand         the query as written natively (each example's        hand_pyspark(...).collect()
                 `hand_pyspark`)
    transpiler   the F.udf DataFrame with plain (useArrow=False) UDFs and Spark's transpiler on:
                 spark.sql.experimental.optimizer.transpilePyUDFs=true and spark.sql.ansi.enabled=true,
                 set only while this variant builds and runs its DataFrame (a UDF is transpiled
                 when `F.udf` is called, and the JVM swaps it in at optimization)

Every variant builds its DataFrame inside the timed run (reading a CSV with inferSchema, as
`hand_pyspark` does, is a pass over the file); the times are split into build (+ optimize) and
collect. First an untimed warm-up of each variant, which is the correctness check: every
variant's rows must equal the udf variant's (floats within a relative 1e-9), and the udf
variant's must equal the udflow flow's (`build_flow`, optimized, on Spark), or the bench reports
the difference and exits 1. Then `--runs` rounds, the order alternating; medians and ratios:
from_spark / hand, from_spark / udf, from_spark / transpiler (end to end, and collect only).
Per pipeline it also reports what from_spark did (`open_dataframe(df).kept`, the UDFs it
opened, the optimized flow's physical plan) and how many UDFs Spark transpiled.

Run:  python -m bench.from_spark [--user-scale 0.25] [--runs 3] [--tasks taxi,documents]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import statistics
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional

import udflow
from bench.native import session
from examples import documents, ratings, taxi
from examples.user_data import bag_mismatch, rows_of

VARIANTS = ("udf", "from_spark", "hand", "transpiler")
RATIOS = (("from_spark", "hand"), ("from_spark", "udf"), ("from_spark", "transpiler"))
TARGET_HAND = 1.15  # from_spark may cost at most 15% over hand-written PySpark
TRANSPILER_CONF = {"spark.sql.experimental.optimizer.transpilePyUDFs": "true", "spark.sql.ansi.enabled": "true"}


@dataclass(frozen=True)
class Task:
    name: str
    data: str  # folder under --data-root, as bench/native.py names it (the data is shared)
    generate: Callable[[str, float], str]
    flow: Callable[[str], udflow.Flow]
    hand: Callable
    udf: Callable  # (spark, data_dir, use_arrow) -> DataFrame


TASKS = (
    Task("ratings_movie", "ratings-{scale}", ratings.generate_data, lambda d: ratings.build_flow(d, "movie"),
         lambda s, d: ratings.hand_pyspark(s, d, "movie"), lambda s, d, a: ratings.udf_pyspark(s, d, "movie", a)),
    Task("ratings_genre", "ratings-{scale}", ratings.generate_data, lambda d: ratings.build_flow(d, "genre"),
         lambda s, d: ratings.hand_pyspark(s, d, "genre"), lambda s, d, a: ratings.udf_pyspark(s, d, "genre", a)),
    Task("taxi", "taxi-{scale}", taxi.generate_data, taxi.build_flow, taxi.hand_pyspark, taxi.udf_pyspark),
    Task("documents", "documents-{scale}", documents.generate_data, documents.build_flow, documents.hand_pyspark,
         documents.udf_pyspark),
)


@dataclass
class Outcome:
    task: str
    scale: float
    rows: int = 0
    total: dict = field(default_factory=dict)  # variant -> [seconds]: build (+ optimize) and collect
    collect: dict = field(default_factory=dict)  # variant -> [seconds]: collect() alone
    optimize: list = field(default_factory=list)  # from_spark: optimize_dataframe's seconds
    phases: list = field(default_factory=list)  # from_spark: (read the plan, optimize, to_spark) seconds
    errors: dict = field(default_factory=dict)
    mismatches: dict = field(default_factory=dict)
    kept: list = field(default_factory=list)
    opened_udfs: list = field(default_factory=list)
    physical: list = field(default_factory=list)
    transpiled: dict = field(default_factory=dict)  # what the transpiler did with the UDFs

    def median(self, variant: str, times: Optional[dict] = None) -> Optional[float]:
        runs = (self.total if times is None else times).get(variant)
        return statistics.median(runs) if runs else None

    def ratio(self, a: str, b: str, times: Optional[dict] = None) -> Optional[float]:
        x, y = self.median(a, times), self.median(b, times)
        return x / y if x and y else None


# ---------------------------------------------------------------------------
# The variants
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def confs(spark, settings: dict):
    """`settings` on the session for the block, each conf back to what it was after."""
    before = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def timed_collect(build: Callable, out: dict) -> list:
    """Build the DataFrame, collect it; `out` gets the build and collect seconds."""
    t0 = time.perf_counter()
    df = build()
    t1 = time.perf_counter()
    rows = df.collect()
    out["build"], out["collect"] = t1 - t0, time.perf_counter() - t1
    return rows


def _optimized_dataframe(df, out: dict):
    """`udflow.optimize_dataframe(df)`, its three steps timed apart into out["phases"]:
    reading the plan (`open_dataframe`), `optimize`, and `to_spark`."""
    from udflow.engine import optimize
    from udflow.frontend import open_dataframe

    t0 = time.perf_counter()
    opened = open_dataframe(df)
    t1 = time.perf_counter()
    best = optimize(opened.flow).best
    t2 = time.perf_counter()
    fast = best.to_spark(spark=df.sparkSession, fields=list(opened.columns))
    out["phases"] = (t1 - t0, t2 - t1, time.perf_counter() - t2)
    return fast


def variants(spark, task: Task, data_dir: str) -> dict[str, Callable[[dict], list]]:
    """Each variant as a function of a dict it fills with its build and collect times."""

    def from_spark(out):
        t0 = time.perf_counter()
        df = task.udf(spark, data_dir, None)
        built = time.perf_counter() - t0
        rows = timed_collect(lambda: _optimized_dataframe(df, out), out)
        out["optimize"] = out["build"]
        out["build"] += built
        return rows

    def transpiler(out):
        with confs(spark, TRANSPILER_CONF), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Unable to transpile UDF ...": reported once, by `transpiled`
            return timed_collect(lambda: task.udf(spark, data_dir, False), out)

    return {
        "udf": lambda out: timed_collect(lambda: task.udf(spark, data_dir, None), out),
        "from_spark": from_spark,
        "hand": lambda out: timed_collect(lambda: task.hand(spark, data_dir), out),
        "transpiler": transpiler,
    }


# ---------------------------------------------------------------------------
# What from_spark and the transpiler did
# ---------------------------------------------------------------------------


def describe_from_spark(spark, task: Task, data_dir: str, out: Outcome) -> None:
    """The parts from_spark kept (and why), the UDFs it opened, the optimized flow's physical plan."""
    from udflow.frontend import open_dataframe

    opened = open_dataframe(task.udf(spark, data_dir, None))
    out.kept = [str(k) for k in opened.kept]
    out.opened_udfs = [name for name, _ in opened.udfs]
    out.physical = list(udflow.optimize(opened.flow).best.physical().lines())


def describe_transpiler(spark, task: Task, data_dir: str) -> dict:
    """Which UDFs Spark transpiled: per UDF, "transpiled" (a TranspiledPythonUDF in the analysed
    plan and no Python UDF of its name left in the optimized plan), else the transpiler's reason."""
    with confs(spark, TRANSPILER_CONF), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = task.udf(spark, data_dir, False)
        qe = df._jdf.queryExecution()
        analysed = expression_classes(qe.analyzed())
        left = python_udf_names(qe.optimizedPlan())
    reasons = {}
    for w in caught:
        text = str(w.message)
        if text.startswith("Unable to transpile UDF <function "):
            name = text[len("Unable to transpile UDF <function "):].split(" ", 1)[0]
            reasons[name] = text.split(": ", 1)[-1][:200]
    names = sorted(set(analysed["PythonUDF"]) | set(analysed["TranspiledPythonUDF"]))
    return {n: "transpiled" if n in analysed["TranspiledPythonUDF"] and n not in left
            else reasons.get(n, "offered, but Spark kept the Python UDF" if n in analysed["TranspiledPythonUDF"]
                             else "not transpiled") for n in names}


def _seq(s) -> list:
    return [s.apply(i) for i in range(s.size())]


def _expressions(plan):
    """Every expression of every node of a JVM logical plan (py4j), depth first."""
    stack = [plan]
    while stack:
        node = stack.pop()
        stack.extend(_seq(node.children()))
        todo = _seq(node.expressions())
        while todo:
            e = todo.pop()
            yield e
            if e.getClass().getSimpleName() != "TranspiledPythonUDF":  # its fallback is not a second UDF
                todo.extend(_seq(e.children()))


def expression_classes(plan) -> dict:
    """UDF names of the plan's PythonUDF and TranspiledPythonUDF expressions."""
    found = {"PythonUDF": [], "TranspiledPythonUDF": []}
    for e in _expressions(plan):
        kind = e.getClass().getSimpleName()
        if kind in found:
            found[kind].append(e.name() if kind == "PythonUDF" else _fallback_name(e))
    return found


def _fallback_name(transpiled) -> str:
    """A TranspiledPythonUDF's name: that of the Python UDF it holds to fall back on."""
    todo = _seq(transpiled.children())
    while todo:
        e = todo.pop()
        if e.getClass().getSimpleName() == "PythonUDF":
            return e.name()
        todo.extend(_seq(e.children()))
    return transpiled.prettyName()


def python_udf_names(plan) -> set:
    return {e.name() for e in _expressions(plan) if e.getClass().getSimpleName() == "PythonUDF"}


# ---------------------------------------------------------------------------
# A pipeline
# ---------------------------------------------------------------------------


def run_task(spark, task: Task, data_dir: str, scale: float, runs: int, log) -> Outcome:
    out = Outcome(task.name, scale)
    describe_from_spark(spark, task, data_dir, out)
    try:
        out.transpiled = describe_transpiler(spark, task, data_dir)
    except Exception as exc:  # noqa: BLE001 - a plan Spark's internals print differently: said, not fatal
        out.transpiled = {"?": f"{type(exc).__name__}: {exc}"[:200]}
    sides = variants(spark, task, data_dir)
    reference = None
    for name, run in sides.items():  # warm-up and correctness check
        try:
            times = {}
            rows = run(times)
            log(f"  {task.name:<14} {name:<10} warm-up {times['build'] + times['collect']:7.2f} s, {len(rows)} rows")
        except Exception as exc:  # noqa: BLE001 - reported in the table and the JSON, exit status 1
            out.errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:400]}"
            log(f"  {task.name:<14} {name:<10} FAILED: {out.errors[name]}")
            continue
        if name == "udf":
            reference, columns = rows_of(rows), list(rows[0].asDict()) if rows else []
            out.rows = len(reference)
            flow_rows = udflow.optimize(task.flow(data_dir)).chosen.collect(spark=spark)
            why = bag_mismatch(rows_of(flow_rows, columns), reference)
            if why:
                out.mismatches["udf"] = f"the F.udf DataFrame is not the flow's bag: {why}"
                log(f"  {task.name:<14} udf        DIFFERS from build_flow: {why}")
            continue
        why = "no reference" if reference is None else bag_mismatch(reference, rows_of(rows, columns))
        if why:
            out.mismatches[name] = why
            log(f"  {task.name:<14} {name:<10} DIFFERS from the udf variant: {why}")

    good = [n for n in sides if n not in out.errors and n not in out.mismatches]
    for i in range(runs):
        for name in good if i % 2 == 0 else list(reversed(good)):
            times = {}
            sides[name](times)
            out.total.setdefault(name, []).append(times["build"] + times["collect"])
            out.collect.setdefault(name, []).append(times["collect"])
            if "optimize" in times:
                out.optimize.append(times["optimize"])
                out.phases.append(times["phases"])
        log(f"  {task.name:<14} round {i + 1}: " + ", ".join(f"{n} {out.total[n][-1]:.2f}" for n in good))
    return out


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def fmt(x: Optional[float], unit: str = "") -> str:
    return "-" if x is None else f"{x:.2f}{unit}"


def table(outcomes: list[Outcome]) -> str:
    head = (f"{'pipeline':<14} {'scale':>6} {'rows':>6} | " + " ".join(f"{v:>10}" for v in VARIANTS)
            + f" | {'optimize':>8} | {'fs/hand':>7} {'fs/udf':>7} {'fs/transp':>9} | transpiled")
    lines = [head, "-" * len(head)]
    for o in outcomes:
        cells = ["ERROR" if v in o.errors else "DIFFERS" if v in o.mismatches else fmt(o.median(v), "s")
                 for v in VARIANTS]
        done = sum(1 for v in o.transpiled.values() if v == "transpiled")
        lines.append(f"{o.task:<14} {o.scale:>6g} {o.rows:>6} | " + " ".join(f"{c:>10}" for c in cells)
                     + f" | {fmt(statistics.median(o.optimize) if o.optimize else None, 's'):>8} | "
                     + " ".join(f"{fmt(o.ratio(a, b), 'x'):>{w}}" for (a, b), w in zip(RATIOS, (7, 7, 9)))
                     + f" | {done}/{len(o.transpiled)}")
    lines.append("(end to end: building the DataFrame, from_spark's optimize, collect(); medians)")
    lines.append("")
    lines.append(f"{'collect only':<14} {'':>6} {'':>6} | " + " ".join(f"{v:>10}" for v in VARIANTS)
                 + f" | {'':>8} | {'fs/hand':>7} {'fs/udf':>7} {'fs/transp':>9} |")
    for o in outcomes:
        cells = [fmt(o.median(v, o.collect), "s") for v in VARIANTS]
        lines.append(f"{o.task:<14} {'':>6} {'':>6} | " + " ".join(f"{c:>10}" for c in cells) + f" | {'':>8} | "
                     + " ".join(f"{fmt(o.ratio(a, b, o.collect), 'x'):>{w}}" for (a, b), w in zip(RATIOS, (7, 7, 9)))
                     + " |")
    return "\n".join(lines)


def details(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        met = o.ratio("from_spark", "hand")
        lines.append(f"{o.task}: from_spark / hand {fmt(met, 'x')} (target <= {TARGET_HAND}x: "
                     f"{'-' if met is None else 'met' if met <= TARGET_HAND else 'NOT met'})")
        lines.append(f"    from_spark opened the UDFs {', '.join(o.opened_udfs) or 'none'}; kept: "
                     + ("; ".join(o.kept) or "nothing"))
        if o.phases:
            read, optimized, lowered = (1000 * statistics.median(p[i] for p in o.phases) for i in range(3))
            lines.append(f"    from_spark's own time (medians): reading the plan {read:.0f} ms, optimize "
                         f"{optimized:.0f} ms, to_spark {lowered:.0f} ms")
        lines.extend(f"    | {line}" for line in o.physical)
        for name, what in o.transpiled.items():
            lines.append(f"    transpiler, {name}: {what}")
        for v, e in o.errors.items():
            lines.append(f"    ERROR {v}: {e}")
        for v, m in o.mismatches.items():
            lines.append(f"    DIFFERS {v}: {m}")
    return "\n".join(lines)


def as_json(o: Outcome) -> dict:
    return {"task": o.task, "scale": o.scale, "rows": o.rows, "total": o.total, "collect": o.collect,
            "optimize": o.optimize, "phases": o.phases,
            "median": {v: o.median(v) for v in o.total}, "median_collect": {v: o.median(v, o.collect) for v in o.collect},
            "ratios": {f"{a}/{b}": o.ratio(a, b) for a, b in RATIOS},
            "ratios_collect": {f"{a}/{b}": o.ratio(a, b, o.collect) for a, b in RATIOS},
            "kept": o.kept, "opened_udfs": o.opened_udfs, "physical": o.physical, "transpiled": o.transpiled,
            "errors": o.errors, "mismatches": o.mismatches}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="TPC-H scale: no TPC-H pipeline here, accepted as bench.native takes it")
    parser.add_argument("--user-scale", type=float, default=1.0, help="scale of the user pipelines")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", default=",".join(t.name for t in TASKS))
    parser.add_argument("--data-root", default="data")
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--tag", default="", help="appended to the JSON file's name")
    args = parser.parse_args(argv)
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
        scale = args.user_scale
        data_dir = os.path.join(args.data_root, task.data.format(scale=f"{scale:g}"))
        t0 = time.perf_counter()
        if not os.path.isdir(data_dir):
            task.generate(data_dir, scale)
        log(f"{task.name}: data {data_dir} ready in {time.perf_counter() - t0:.1f} s")
        try:
            outcomes.append(run_task(spark, task, data_dir, scale, args.runs, log))
        except Exception:  # noqa: BLE001 - one broken pipeline must not hide the others' figures
            log(traceback.format_exc())
            outcomes.append(Outcome(task.name, scale, errors={"setup": traceback.format_exc(limit=2)}))

    report = table(outcomes) + "\n\n" + details(outcomes)
    print(report)
    load_after = os.getloadavg()
    print(f"\nmachine: {os.cpu_count()} cores, load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"sink: collect() of the result rows; median of {args.runs} after a warm-up")
    result = {
        "started": started.isoformat(timespec="seconds"), "user_scale": args.user_scale, "runs": args.runs,
        "variants": list(VARIANTS), "sink": "collect()", "cores": os.cpu_count(),
        "load_average": {"before": load_before, "after": load_after}, "spark_master": spark.sparkContext.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "arrow_udfs_by_default": spark.conf.get("spark.sql.execution.pythonUDF.arrow.enabled", None),
        "transpiler_conf": TRANSPILER_CONF, "pipelines": [as_json(o) for o in outcomes], "table": report,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"from_spark_{started.date().isoformat()}{'-' + args.tag if args.tag else ''}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(f"written: {path}")
    return 1 if any(o.errors or o.mismatches for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())

"""`udflow verify`: trust nothing the optimizer said, check it again.

For each pipeline whose outcome holds a chosen plan:

1. every certificate behind the chosen plan is re-checked with
   `udflow.rules.check`, the independent checker (it shares no code with the
   Datalog program and re-runs the Z3 queries), against the pipeline rebuilt
   from its own module;
2. the chosen plan itself is rebuilt from the outcome (its tree of operator
   labels over the pipeline's own operators) and must be made only of the
   pipeline's operators, each used once, plus the copies a rewrite made (a
   filter pushed into both inputs of a union);
3. with `sample=N`: the first N records of every source are taken as inputs
   (the first rows keep join partners together, where a random sample of two
   joined tables would rarely match), and the plan as written and the chosen
   plan are run on them by the reference interpreter. The two bags must be
   equal, floats compared to 9 significant digits (a sum in another order
   differs in the last bits).

A rejection names the pipeline, the rewrite (its number in the chain, its rule
and operators) and the checker's reason, e.g. the fact a tampered certificate
no longer lists.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from typing import Any, Optional

from udflow.batch import discovery
from udflow.batch.outcome import failed, rebuild
from udflow.batch.pool import send
from udflow.engine.steps import physical_plan
from udflow.plan import Node, Source


def verify_in_worker(outcome: dict, sample: Optional[int], events: Any) -> dict:
    """A worker's task: verify one outcome; every failure becomes a failed outcome."""
    name, file, attr = outcome["name"], outcome["file"], outcome["attr"]
    send(events, name, "importing")
    started = time.perf_counter()
    try:
        flow = discovery.build(discovery.load_module(file), discovery.PipelineRef(file, attr))
        send(events, name, "checking")
        problems = verify_outcome(flow, outcome, sample)
    except discovery.PipelineLoadError as err:
        return failed(name, file, attr, err.stage, err.reason, time.perf_counter() - started)
    except (Exception, SystemExit) as exc:
        return failed(name, file, attr, "verify", discovery.describe_error(exc, file), time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if problems:
        return failed(name, file, attr, "verify", "; ".join(problems), seconds)
    checked = len(outcome.get("certificates", ()))
    verdict = f"ok: {checked} certificate{'s' if checked != 1 else ''} accepted"
    if sample:
        verdict += f", same bag on {sample} sampled records per source"
    return {"name": name, "file": file, "attr": attr, "status": "ok", "verdict": verdict,
            "certificates": checked, "seconds": seconds}


def verify_outcome(flow: Any, outcome: dict, sample: Optional[int]) -> list[str]:
    """Every problem found with `outcome` for the pipeline `flow` (empty: all verified)."""
    from udflow.rules import Certificate, check

    problems = []
    for n, data in enumerate(outcome.get("certificates", ()), 1):
        what = f"rewrite {n} ({data.get('rule', '?')} on {', '.join(data.get('operators', ()))})"
        try:
            result = check(Certificate.from_dict(data), flow)
        except Exception as exc:  # a malformed certificate is a rejected one
            problems.append(f"{what} rejected: {type(exc).__name__}: {exc}")
            continue
        if not _accepted(result):
            problems.append(f"{what} rejected: {_reason(result)}")
    try:
        best = rebuild(flow.root, outcome["best_plan"])
    except ValueError as exc:
        return problems + [f"the chosen plan is not made of this pipeline's operators: {exc}"]
    if not _same_operators(flow.root, best, outcome["best_plan"]):
        problems.append("the chosen plan does not use every operator of the pipeline exactly once "
                        "(copies made by a rewrite aside)")
    elif sample:
        difference = compare_on_sample(flow.root, best, sample)
        if difference:
            problems.append(difference)
    return problems


def _same_operators(original: Node, chosen: Node, tree: dict) -> bool:
    """Every operator of `original` once in `chosen`, plus copies (`copy_of`) of existing ones."""
    copies = set()

    def collect(t: dict) -> None:
        if "copy_of" in t:
            copies.add(t["label"])
        for c in t["children"]:
            collect(c)

    collect(tree)
    labels = sorted(n.label for n in chosen.walk() if n.label not in copies)
    return labels == sorted(n.label for n in original.walk())


def _accepted(result: Any) -> bool:
    for name in ("ok", "accepted", "valid"):
        if hasattr(result, name):
            return bool(getattr(result, name))
    return bool(result)


def _reason(result: Any) -> str:
    for name in ("reason", "message", "errors", "problems"):
        value = getattr(result, name, None)
        if value:
            return value if isinstance(value, str) else "; ".join(map(str, value))
    return str(result)


# ---------------------------------------------------------------------------
# Sampled comparison on the reference interpreter
# ---------------------------------------------------------------------------


def head(source: Source, n: int) -> tuple[dict, ...]:
    """The first `n` records of a source, as the reference interpreter reads them."""
    from udflow import reference

    if source.path is not None and source.format != "csv":
        import pyarrow.dataset as ds

        raw = ds.dataset(source.path, format="parquet").head(n).to_pylist()
        return tuple({source.prefix + c: r.get(c) for c in source.columns} for r in raw)
    return tuple(reference.read_source(source)[:n])


def sampled(root: Node, n: int) -> Node:
    """`root` with every source replaced by its first `n` records, held in memory."""
    if isinstance(root, Source):
        return dataclasses.replace(root, path=None, format=None, rows=head(root, n))
    return root.with_inputs(*(sampled(child, n) for child in root.inputs))


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    return value


def bag(records: list[dict]) -> Counter:
    return Counter(_canonical(r) for r in records)


def compare_on_sample(original: Node, chosen: Node, n: int) -> Optional[str]:
    """None when both plans give the same bag on the first `n` records per source, else what differs."""
    from udflow import reference

    want = bag(reference.run(sampled(original, n)))
    try:
        got = bag(reference.run(sampled(chosen, n)))
    except Exception as exc:  # the plan as written ran on the same records
        return (f"on {n} sampled records per source the chosen plan fails where the plan as written "
                f"does not: {type(exc).__name__}: {exc}")
    if want == got:
        return None
    missing, extra = want - got, got - want
    example = next(iter(missing or extra))
    return (f"on {n} sampled records per source the chosen plan gives a different bag: "
            f"{sum(missing.values())} record(s) missing, {sum(extra.values())} extra, e.g. "
            f"{'missing' if missing else 'extra'} {dict(example)}")


# ---------------------------------------------------------------------------
# The plan as written on both engines
# ---------------------------------------------------------------------------


def sample_files(root: Node, n: int, folder: str) -> Node:
    """`root` over the first `n` records of every source, each written to `folder` in its
    source's own format (a parquet file keeps its column types, a CSV file its text), so
    that each engine reads the sample with its own reader, as it would read the source."""
    import csv
    import itertools
    import os

    count = itertools.count()

    def rewrite(node: Node) -> Node:
        if not isinstance(node, Source):
            return node.with_inputs(*(rewrite(child) for child in node.inputs))
        if node.path is None:
            return dataclasses.replace(node, rows=tuple(node.rows[:n]))
        target = os.path.join(folder, f"{next(count)}.{node.format or 'parquet'}")
        if node.format == "csv":
            with open(_first_csv(node.path), newline="") as src, open(target, "w", newline="") as dst:
                csv.writer(dst).writerows(itertools.islice(csv.reader(src), n + 1))
        else:
            import pyarrow.dataset as ds
            import pyarrow.parquet as pq

            pq.write_table(ds.dataset(node.path, format="parquet").head(n), target)
        return dataclasses.replace(node, path=target)

    return rewrite(root)


def _first_csv(path: str) -> str:
    import os

    if not os.path.isdir(path):
        return path
    return os.path.join(path, sorted(f for f in os.listdir(path) if not f.startswith(("_", ".")))[0])


def _as_compared(record: dict, left_out: frozenset[str] = frozenset()) -> dict:
    """A record as both engines can show it: no None fields (Spark's typed rows carry every
    column, a Python record only the fields it was given), timestamps in UTC without zone,
    without the fields `left_out`."""
    import datetime

    out = {}
    for k, v in record.items():
        if v is None or k in left_out:
            continue
        if isinstance(v, datetime.datetime) and v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        out[k] = v
    return out


def _bag_or_error(run, plan: Node, left_out: frozenset[str]) -> tuple[Optional[Counter], Optional[str]]:
    try:
        return bag([_as_compared(r, left_out) for r in run(plan)]), None
    except Exception as exc:  # noqa: BLE001 - one engine refusing is a difference too
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def order_dependent(root: Node) -> frozenset[str]:
    """Fields a Reduce or CoGroup copies from its group's first record (`{**rows[0], ...}`,
    analysis: `group_copied`), its key aside: which record is first is the reference
    interpreter's input order but any record on Spark, so both answers are right."""
    from udflow.flow import properties_of
    from udflow.plan import CoGroup, Reduce

    fields: set[str] = set()
    for node in root.walk():
        if isinstance(node, (Reduce, CoGroup)):
            keys = set(getattr(node, "key", ())) | set(getattr(node, "left_key", ())) | set(getattr(node, "right_key", ()))
            try:
                fields |= set(properties_of(node).group_copied) - keys
            except Exception:  # noqa: BLE001 - no analysis: compare every field
                continue
    return frozenset(fields)


def reference_only(root: Node) -> Optional[str]:
    """Why the plan cannot run on Spark at all (an operator type with no Spark lowering),
    or None: such a plan has nothing to compare."""
    from udflow.plan import Custom

    for node in root.walk():
        op = getattr(node, "op_type", None) if isinstance(node, Custom) else None
        if op is not None and op.spark is None and not (op.arity == 1 and op.record_at_a_time):
            return f"operator type {op.name!r} ({node.label}) has no Spark lowering"
    return None


def compare_engines(root: Node, n: int, spark: Any) -> Optional[str]:
    """None when the plan gives the same bag on the reference interpreter and on Spark over
    the first `n` records of every source, else what differs (or what only one engine refused).
    Fields copied from a group's first record (`order_dependent`) are left out: a group has
    no order."""
    import tempfile

    from udflow import reference, spark_backend
    from udflow.spark_backend.forms import SPARK_FORMS

    unordered = order_dependent(root)
    with tempfile.TemporaryDirectory(prefix="udflow-verify-") as folder:
        plan = sample_files(root, n, folder)
        want, refused_by_reference = _bag_or_error(reference.run, plan, unordered)
        got, refused_by_spark = _bag_or_error(lambda p: spark_backend.collect(p, physical_plan(p, forms=SPARK_FORMS), spark=spark), plan, unordered)
    if refused_by_reference and refused_by_spark:
        return None  # both refuse the plan: they agree there is no result
    if refused_by_reference or refused_by_spark:
        engine = "the reference interpreter" if refused_by_reference else "Spark"
        return (f"on {n} sampled records per source the plan as written fails on {engine} only: "
                f"{refused_by_reference or refused_by_spark}")
    if want == got:
        return None
    missing, extra = want - got, got - want
    example = next(iter(missing or extra))
    return (f"on {n} sampled records per source the plan as written gives another bag on Spark than on "
            f"the reference interpreter: {sum(missing.values())} record(s) only on the reference, "
            f"{sum(extra.values())} only on Spark, e.g. {dict(example)}")


def verify_batch(outcomes: list[dict], sample: Optional[int], jobs: int, reporter) -> list[dict]:
    """Verify every successful outcome in worker processes; failed ones stay failed."""
    from udflow.batch.pool import Task, run_tasks

    order = [o["name"] for o in outcomes]
    reporter.begin(order)
    tasks = []
    results: dict[str, dict] = {}
    for o in outcomes:
        if o["status"] == "ok":
            tasks.append(Task(o["name"], o["file"], o["attr"], verify_in_worker, (o, sample)))
        else:
            results[o["name"]] = o
            reporter.finish(o["name"], o)
    results.update(run_tasks(tasks, jobs, reporter))
    reporter.end()
    return [results[name] for name in order]

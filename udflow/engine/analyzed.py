"""`explain(analyze=True)`: estimated rows beside the rows a run produced, per operator.

Like SQL's EXPLAIN ANALYZE: the plan runs (on Spark, `spark_backend.analyze`, or on
the reference interpreter for a quick look at small data) and each operator shows

    Match(l_orderkey=o_orderkey)  [est ~18.3k rows, actual 17973 (q 1.02), 0.84 s]

The q-error of an estimate is max(est / actual, actual / est) (both at least one
record): 1 is exact, 2 is off by a factor of two either way. The summary gives the
median and the largest q-error over the operators, and, when both plans ran, the
estimated speed-up of the chosen plan beside the measured one.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any, Callable, Optional

from udflow.plan import Node, Source, draw


@dataclass(frozen=True)
class Actual:
    """What one operator produced on a run: records, and seconds of its own step (None: not timed)."""

    rows: int
    seconds: Optional[float] = None


def q_error(estimated: float, actual: float) -> float:
    """max(est / actual, actual / est), each at least one record."""
    e, a = max(float(estimated), 1.0), max(float(actual), 1.0)
    return max(e / a, a / e)


def on_spark(spark: Any = None, native: bool = True) -> Callable[[Node, dict], dict[str, Actual]]:
    """A runner: the plan on Spark, operator by operator (`spark_backend.analyze`)."""

    def run(node: Node, hints: dict) -> dict[str, Actual]:
        from udflow.engine.steps import physical_plan
        from udflow.spark_backend.analyze import analyze
        from udflow.spark_backend.forms import forms_of

        measured = analyze(node, physical_plan(node, hints, forms_of(native)), spark)
        return {label: Actual(m.rows, m.seconds) for label, m in measured.items()}

    return run


def on_reference(node: Node, hints: dict) -> dict[str, Actual]:
    """A runner: the plan on the reference interpreter, each operator once (small data only)."""
    from udflow import reference
    from udflow.engine.statistics import run_every_subtree

    return {label: Actual(rows) for label, (rows, _, _) in run_every_subtree(node, reference.run).items()}


def operator_rows(node: Node, estimate: Callable[[Node], float], actual: dict[str, Actual]) -> list[tuple]:
    """(label, estimated rows, actual) for every operator of `node` (sources left out: their
    rows are counted, not estimated)."""
    return [(n.label, estimate(n), actual[n.label]) for n in node.walk()
            if not isinstance(n, Source) and n.label in actual]


def section(title: str, node: Node, estimate: Callable[[Node], float], actual: dict[str, Actual]) -> list[str]:
    """One analysed plan: the tree with estimated and actual rows, and its q-errors."""

    def note(n: Node) -> str:
        got = actual.get(n.label)
        if got is None:
            return f"[est ~{_count(estimate(n))} rows]"
        text = f"est ~{_count(estimate(n))} rows, actual {got.rows}"
        if not isinstance(n, Source):
            text += f" (q {q_error(estimate(n), got.rows):.2f})"
        if got.seconds is not None:
            text += f", {got.seconds:.2f} s"
        return f"[{text}]"

    errors = [q_error(e, a.rows) for _, e, a in operator_rows(node, estimate, actual)]
    seconds = [a.seconds for a in actual.values() if a.seconds is not None]
    lines = [f"{title}" + (f": {sum(seconds):.2f} s, the sum of its steps" if seconds else "")]
    lines += ["  " + line for line in draw(node, annotate=note).splitlines()]
    if errors:
        lines.append(f"  q-error of operator rows: median {median(errors):.2f}, max {max(errors):.2f} "
                     f"over {len(errors)} operators")
    return lines


def speedup_line(estimated: float, written: dict[str, Actual], chosen: dict[str, Actual]) -> Optional[str]:
    """Estimated speed-up beside the measured one (sums of the steps), when both were timed."""
    t_written = sum(a.seconds for a in written.values() if a.seconds is not None)
    t_chosen = sum(a.seconds for a in chosen.values() if a.seconds is not None)
    if not t_written or not t_chosen:
        return None
    return (f"speed-up of the chosen plan: estimated {estimated:.2f}x, measured {t_written / t_chosen:.2f}x "
            f"({t_written:.2f} s as written, {t_chosen:.2f} s chosen)")


def _count(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.3g}M"
    if x >= 1e4:
        return f"{x / 1e3:.3g}k"
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"

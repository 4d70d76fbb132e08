"""udflow's native coverage beside Polars' on the functions Polars translates (issue 29,
"What must be shown": "on functions of the kind Polars translates, udflow runs natively at
least as many as Polars does, and exactly").

    python -m bench.polars_compare                         # print the table
    python -m bench.polars_compare --out bench/results/polars_compare.md

Polars warns a user whose `map_elements` function has an expression equal to it, found by
its bytecode parser (`polars._utils.udfs.BytecodeParser`, from the installed polars). That
parser reads a one-argument function of one column's value, one expression long. So the
functions of the coverage corpus (`bench/coverage_corpus`) that are of that kind, one
`return` of one expression over one field (`{**r, "out": <expr>}` for a Map, `<expr>` for a
filter), are rewritten with the field's value as the argument (`lambda x: <expr>`, the
function's own module globals), and given to the parser. udflow's side is the original
function's class (`bench.coverage.classify`: fully native, partly native, Python); its
exactness on Spark is what `python -m bench.coverage --check` checks (0 differences).

Polars' exactness is checked here, without Spark: each translation runs on a Polars column of
the field's values from the corpus's three row sets (`bench.coverage.rows_for`: None, NaN,
-0.0, values near 2**63, empty and non-ASCII strings, extreme dates...), against the function
called on each value. A value differs when Python returns another value or type (1 vs 1.0,
NaN equal to NaN), or raises where Polars gives one; for a filter, when Python's truthiness
is not Polars' keep (a null is dropped).
"""

from __future__ import annotations

import argparse
import ast
import collections
import inspect
import textwrap
import time
import warnings
from typing import Any, Optional


def one_field_form(fn, kind: str) -> Optional[tuple[str, str, Any]]:
    """(field, `lambda x: ...` source, that function) where `fn` is one expression over one
    field, else None."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef) or len(func.args.args) != 1 or len(func.body) != 1 \
            or not isinstance(func.body[0], ast.Return) or func.body[0].value is None:
        return None
    param, value = func.args.args[0].arg, func.body[0].value
    if kind == "map":
        if not (isinstance(value, ast.Dict) and len(value.keys) == 2 and value.keys[0] is None
                and isinstance(value.values[0], ast.Name) and value.values[0].id == param):
            return None
        value = value.values[1]
    reads = [n for n in ast.walk(value) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
             and n.value.id == param and isinstance(n.slice, ast.Constant)]
    uses = [n for n in ast.walk(value) if isinstance(n, ast.Name) and n.id == param]
    fields = {n.slice.value for n in reads}
    if len(fields) != 1 or len(uses) != len(reads) or any(isinstance(n, ast.Lambda) for n in ast.walk(value)):
        return None

    class Argument(ast.NodeTransformer):
        def visit_Subscript(self, node):
            if node in reads:
                return ast.copy_location(ast.Name("x", ast.Load()), node)
            return self.generic_visit(node)

    source = "lambda x: " + ast.unparse(Argument().visit(value))
    return fields.pop(), source, eval(compile(source, fn.__code__.co_filename, "eval"), fn.__globals__)  # noqa: S307


def polars_expression(one, field: str) -> Optional[str]:
    """The Polars expression its parser finds equal to `one` over column `field`, or None."""
    from polars._utils.udfs import BytecodeParser

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return BytecodeParser(one, map_target="expr").to_expression(field)
    except Exception:  # noqa: BLE001 - the parser gave up
        return None


def python_outcomes(one, values: list) -> list:
    out = []
    for v in values:
        try:
            out.append(("ok", one(v)))
        except Exception as exc:  # noqa: BLE001 - Python's error is an outcome
            out.append(("raises", type(exc).__name__))
    return out


def polars_values(expression: str, field: str, values: list, fn) -> tuple[Optional[list], str]:
    """The translation's value on each of `values` (a Polars column), or None and why."""
    import polars as pl

    try:
        frame = pl.DataFrame({field: values}, strict=False)
    except Exception as exc:  # noqa: BLE001
        return None, f"no Polars column of these values ({type(exc).__name__})"
    try:
        expr = eval(expression, {**fn.__globals__, "pl": pl})  # noqa: S307 - the parser's own text
        return frame.select(expr.alias("__out"))["__out"].to_list(), ""
    except Exception as exc:  # noqa: BLE001 - Polars raised on the column
        return None, f"Polars raised {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"


def differences(kind: str, python: list, polars: list, values: list) -> list:
    """(value, Python's outcome, Polars' value) where they differ."""
    from bench.coverage import canon

    out = []
    for v, (status, py), pol in zip(values, python, polars):
        if status == "raises":
            if kind == "filter" and pol is None:
                continue  # a dropped row; Python would have raised: counted apart below
            out.append((v, f"raises {py}", pol))
        elif kind == "filter":
            if bool(py) != (pol is True):
                out.append((v, py, pol))
        elif canon(py) != canon(pol):
            out.append((v, py, pol))
    return out


def compare() -> list[dict]:
    from bench import coverage, coverage_corpus

    rows = []
    for module, fn, kind, fields in coverage_corpus.functions():
        name = f"{module}.{fn.__name__}"
        sets = coverage.rows_for(name, fields)
        try:
            cls, detail = coverage.classify(coverage.build(fn, kind, sets["edge"]))
        except Exception as exc:  # noqa: BLE001
            cls, detail = "error", f"{type(exc).__name__}: {exc}"[:200]
        row = {"name": name, "kind": kind, "udflow": cls, "detail": detail, "shape": None, "polars": None}
        rows.append(row)
        form = one_field_form(fn, kind)
        if form is None:
            continue
        field, source, one = form
        row["shape"] = source
        expression = polars_expression(one, field)
        if expression is None:
            continue
        row["polars"] = expression
        values = [r[field] for which in ("edge", "clean", "plain") for r in sets[which]]
        got, why = polars_values(expression, field, values, fn)
        row["values"] = len(values)
        if got is None:
            row["polars_failure"] = why
            continue
        row["differences"] = differences(kind, python_outcomes(one, values), got, values)
    return rows


def markdown(rows: list[dict], seconds: float) -> str:
    import polars as pl

    from bench.coverage import show

    shaped = [r for r in rows if r["shape"]]
    translated = [r for r in shaped if r["polars"]]
    by_class = collections.Counter(r["udflow"] for r in translated)
    native = by_class["fully native"] + by_class["partly native"]
    exact = [r for r in translated if "differences" in r and not r["differences"]]
    inexact = [r for r in translated if r.get("differences")]
    beyond_none = [r for r in inexact if any(v is not None for v, _, _ in r["differences"])]
    failed = [r for r in translated if "polars_failure" in r]
    untranslated = [r for r in shaped if not r["polars"]]
    beyond = collections.Counter(r["udflow"] for r in untranslated)
    out = [
        "# udflow beside Polars on the functions Polars translates (issue 29)",
        "",
        f"Generated by `python -m bench.polars_compare` ({time.strftime('%Y-%m-%d')}, {seconds:.0f} s), "
        f"polars {pl.__version__}. Of the {len(rows)} functions of `bench/coverage_corpus/`, "
        f"{len(shaped)} are of the kind Polars' bytecode parser reads (one expression over one field); "
        "each is given to the parser as `lambda x: <expr>`.",
        "",
        "| | functions |",
        "|---|---:|",
        f"| Polars translates to an expression | {len(translated)} |",
        f"| ... udflow runs fully native | {by_class['fully native']} |",
        f"| ... udflow runs natively with a Python call inside | {by_class['partly native']} |",
        f"| ... udflow runs in Python | {by_class['python']} |",
        f"| ... Polars' expression gives Python's value on every test value | {len(exact)} |",
        f"| ... Polars' expression differs from Python on some value | {len(inexact)} |",
        f"| ... ... on a value other than None (where Python raises, Polars gives null) | {len(beyond_none)} |",
        f"| ... Polars' expression fails on the column | {len(failed)} |",
        f"| Polars does not translate | {len(untranslated)} |",
        f"| ... udflow runs fully native | {beyond['fully native']} |",
        f"| ... udflow runs natively with a Python call inside | {beyond['partly native']} |",
        "",
        f"On the {len(translated)} functions Polars translates, udflow runs {native} natively "
        f"({by_class['fully native']} fully); Polars' expressions agree with Python on {len(exact)}. "
        "udflow's native forms are checked against Python on the same rows by "
        "`python -m bench.coverage --check` (`bench/results/coverage.md`).",
        "",
        "## Where Polars' expression is not Python's function",
        "",
        "| function | Polars' expression | values differing | e.g. value: Python / Polars |",
        "|---|---|---:|---|",
    ]
    for r in inexact:  # an example other than None where there is one
        v, py, pol = next((d for d in r["differences"] if d[0] is not None), r["differences"][0])
        out.append(f"| `{r['name']}` | `{r['polars']}` | {len(r['differences'])} of {r['values']} | "
                   f"`{show(v)}`: `{show(py)}` / `{show(pol)}` |")
    for r in failed:
        out.append(f"| `{r['name']}` | `{r['polars']}` | all | {r['polars_failure']} |")
    out += ["", "## Translated by Polars, not fully native in udflow", "", "| function | udflow | why |", "|---|---|---|"]
    for r in translated:
        if r["udflow"] != "fully native":
            out.append(f"| `{r['name']}` | {r['udflow']} | {r['detail'][:160]} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="", help="write the markdown table here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    text = markdown(compare(), time.perf_counter() - started)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

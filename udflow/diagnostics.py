"""What a flow's construction can tell the user before anything runs (used by `udflow.flow`):

    source_family(src, field)        a source field's key family (`udflow.keytypes`)
    check_key_types(label, pairs)    join / co-group keys the engines would compare differently
    check_rows_types(name, ...)      an in-memory field whose values cannot share one column
    unknown_reads(node, props, ...)  a function reading a field its input cannot have (a typo)
    lambda_label(fn)                 lambdas written on one line told apart by their column
    warn_at(fn, warning)             a warning shown at the user's function, once per place
    proved_for(root) / check_still_proved(...)  a reordered plan run after a value its functions
                                     read from outside their code was rebound

Nothing here imports `udflow.flow`: the caller passes what it knows of the tree.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any, Callable, Iterable, Optional

from udflow import keytypes
from udflow.errors import FieldWarning, FlowConstructionError, StalePlanError, closest
from udflow.plan import Node, Source, function_location, function_name

# ---------------------------------------------------------------------------
# Key types
# ---------------------------------------------------------------------------


def source_family(src: Source, name: str) -> Optional[str]:
    """The family of a source's field: parquet's column type; for in-memory rows, the type
    of its values; for CSV and DataFrames, their Spark column types (declared or inferred,
    the same on both engines)."""
    if name not in src.fields:
        return None
    if src.path is None:
        try:
            return keytypes.column_family(keytypes.of_values(r.get(name) for r in src.rows))
        except ValueError:
            return None  # refused by check_rows_types when the source was built
    if src.format != "parquet":
        return _SPARK_FAMILIES.get(dict(src.types).get(src.column_of(name), "").split("(")[0])
    return keytypes.of_arrow(_parquet_schema(src.path, _mtime(src.path)).field(src.column_of(name)).type)


_SPARK_FAMILIES = {"bigint": "int", "int": "int", "smallint": "int", "tinyint": "int", "double": "float",
                   "float": "float", "decimal": "decimal", "string": "str", "boolean": "bool", "date": "date",
                   "timestamp": "timestamp", "binary": "bytes"}


def _mtime(path: str) -> float:
    import os

    if not os.path.isdir(path):
        return os.path.getmtime(path)
    return max([os.path.getmtime(os.path.join(path, f)) for f in os.listdir(path)] or [0.0])


@lru_cache(maxsize=256)
def _parquet_schema(path: str, mtime: float):
    import pyarrow.dataset as ds

    return ds.dataset(path, format="parquet").schema


def check_key_types(label: str, pairs: Iterable[tuple[str, Optional[str], str, str, Optional[str], str]]) -> None:
    """`pairs`: (left field, its family, left input's label, right field, family, label).
    Refuses a pair whose families are both known and not comparable alike on both engines."""
    for lk, lf, left, rk, rf, right in pairs:
        if lf is not None and rf is not None and not keytypes.compatible(lf, rf):
            raise FlowConstructionError(
                f"{label}: key field {lk!r} of {left} is {lf} but key field {rk!r} of {right} is {rf}; "
                f"the engines would compare them differently (Python: never equal; Spark: cast and "
                f"compared), so {keytypes.advice(lf, rf)}"
            )


def check_foreign_keys(root: Node) -> None:
    """Every foreign key of the flow's sources points at something that can be right: a table
    of the flow with the named columns, or a table the flow does not read at all (a schema's
    foreign keys name them all; they are then unused). A table name close to one the flow
    reads is a typo, refused with the closest names."""
    import difflib

    sources = [n for n in root.walk() if isinstance(n, Source)]
    columns_of = {}
    for s in sources:
        columns_of.setdefault(s.table, set()).update(s.columns)
    for s in sources:
        for fk in s.foreign_keys:
            where = f"source {s.table!r}: foreign key {list(fk.fields)} -> {fk.target!r} {list(fk.target_fields)}"
            if fk.target not in columns_of:
                near = difflib.get_close_matches(fk.target, sorted(columns_of), n=1, cutoff=0.8)
                if near:
                    raise FlowConstructionError(f"{where}: the flow reads no table {fk.target!r}; "
                                                f"did you mean {near[0]!r}?")
                continue
            for f in fk.target_fields:
                if f not in columns_of[fk.target]:
                    raise FlowConstructionError(
                        f"{where}: table {fk.target!r} has no column {f!r};"
                        f"{closest(f, columns_of[fk.target]) or ''} (columns: "
                        f"{', '.join(sorted(columns_of[fk.target]))})")


def check_rows_types(name: str, fields: Iterable[str], rows: list[dict]) -> None:
    """An in-memory source's field holds values one column can store, as on Spark, where a
    column has one type; otherwise the engines would differ (docs/backend.md, "One field, one
    meaning"): refused when the source is built, for both engines."""
    for f in fields:
        families = keytypes.of_values(r.get(f) for r in rows)
        try:
            keytypes.column_family(families)
        except ValueError:
            raise FlowConstructionError(f"source {name!r}: field {f!r} {_mixed(f, families, rows)}") from None


def _mixed(field: str, families: frozenset, rows: list[dict]) -> str:
    """What is wrong with a field of values of several `families`, and what to do."""
    if families == {"int", "float"}:
        an_int = next(r[field] for r in rows if keytypes.of_value(r.get(field)) == "int")
        a_float = next(r[field] for r in rows if isinstance(r.get(field), float))
        return (f"holds ints and floats ({an_int!r} and {a_float!r}); a column has one type on Spark, and a "
                "double column would give the ints back as floats: make them all floats (float(x)) or all ints")
    if families == {"timestamp", "timestamp_ntz"}:
        return ("holds naive and aware datetimes; Python cannot compare them and a column has one type on "
                "Spark, so make them all naive or all aware")
    return (f"holds values of different types ({', '.join(sorted(families))}); a column has one type on "
            "Spark, so convert them to one")


# ---------------------------------------------------------------------------
# Reads of fields the input cannot have
# ---------------------------------------------------------------------------


def unknown_reads(node: Node, props: Any, available: frozenset[str], stacklevel: int) -> None:
    """Warn (`FieldWarning`) for every field `node`'s function reads that its inputs cannot
    have, which is most likely a typo (`r["trip_distanse"]`): a KeyError on every record, or
    a `.get` that is always None. Names the field, the line that spells it and the closest
    field the input has. A warning, not an error: a read the analysis sees may sit behind a
    guard (`if "x" in r`) that Python never passes."""
    if props.origin != "analysis":
        return
    for name in sorted(props.reads - available):
        line, tested = spellings(node.function, name)
        if tested:
            continue  # `"x" in r`: the function knows the field may be absent
        line = line or next(iter(props.lines_for("reads", name)), 0)
        where = f" (line {line})" if line else ""
        hint = closest(name, available) or f" its input has: {', '.join(sorted(available))}"
        warnings.warn(
            f"{node.label}: {props.location} reads field {name!r}{where}, which its input cannot have;{hint}",
            FieldWarning,
            stacklevel=stacklevel + 1,
        )


def spellings(fn: Callable, name: str) -> tuple[int, bool]:
    """(the first line of `fn`'s source that spells the string `name`, 0 if none; whether
    the source tests it for membership, `"name" in r` / `not in`). The line is where a typo
    is (`r["name"]`, `r.get("name")`), rather than where the value is used."""
    import ast
    import inspect
    import io
    import tokenize

    first_line, tested = 0, False
    try:
        lines, first = inspect.getsourcelines(inspect.unwrap(fn))
        tokens = [t for t in tokenize.generate_tokens(io.StringIO("".join(lines)).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)]
        for tok, after in zip(tokens, tokens[1:]):
            if tok.type == tokenize.STRING and ast.literal_eval(tok.string) == name:
                first_line = first_line or first + tok.start[0] - 1
                tested = tested or after.string in ("in", "not")
    except (OSError, TypeError, SyntaxError, ValueError, tokenize.TokenError):
        pass
    return first_line, tested


# ---------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------


def lambda_label(fn: Any) -> str:
    """`function_name(fn)`, except that a lambda sharing its line with other lambdas is
    told apart by its column: `lambda@12:30` (1-based, where its `lambda` keyword is)."""
    import linecache

    name = function_name(fn)
    code = getattr(fn, "__code__", None)
    if code is None or not name.startswith("lambda@"):
        return name
    line = linecache.getline(code.co_filename, code.co_firstlineno)
    starts = [i for i in range(len(line)) if line.startswith("lambda", i)
              and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_"))]
    if len(starts) < 2:
        return name
    body = next((col for ln, _, col, _ in code.co_positions() if ln == code.co_firstlineno and col), None)
    keyword = max((i for i in starts if body is None or i < body), default=starts[0])
    return f"{name}:{keyword + 1}"


# ---------------------------------------------------------------------------
# Plans proven for the values their functions read
# ---------------------------------------------------------------------------


def proved_for(root: Node) -> tuple:
    """(label, function, snapshot) of every function of the plan: what its reorderings were
    proven for (`udflow.analysis.outside`: the globals, closure cells and defaults it reads)."""
    from udflow.analysis.outside import snapshot

    return tuple((n.label, n.fn, snapshot(n.fn)) for n in root.walk() if getattr(n, "fn", None) is not None)


def check_still_proved(proved: tuple) -> None:
    """Raise where a value a function reads from outside its code was rebound since the plan
    was optimised: the analysis behind its reorderings saw the old value."""
    from udflow.analysis.outside import changed

    for label, fn, before in proved:
        names = changed(fn, before)
        if names:
            raise StalePlanError(
                f"{label}: {function_location(fn)} reads {', '.join(names)}, rebound since this plan was "
                "optimised; its reorderings were proven for the old values, so optimise the flow again"
            )


def warn_at(fn: Callable, warning: Warning) -> None:
    """`warning` at `fn`'s file and first line, shown once per function and text, as Python
    shows a warning once per place (the registry is the function's module's, as
    `warnings.warn` would use for code there); where `fn` has no code, at the caller."""
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or scope is None:
        warnings.warn(warning, stacklevel=3)
        return
    warnings.warn_explicit(warning, type(warning), code.co_filename, code.co_firstlineno,
                           module=scope.get("__name__"), registry=scope.setdefault("__warningregistry__", {}))

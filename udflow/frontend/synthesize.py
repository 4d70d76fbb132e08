"""A PySpark UDF as a udflow record function: the UDF's own code, its parameters bound to fields.

`F.udf(double_it, "double")("x")` as the column `y` is, in udflow's terms, the Map

    def double_it(__udflow_row):                     (the line above the user's def)
        x = __udflow_row["x"]                          (the line of the user's def)
        return {**__udflow_row, "y": (x * 2 if x is not None else None)}
        ...                                            (the user's body, line for line)

The record function is the UDF's text, edited (`udflow.analysis.edited`): a `def` taking
the record on the line above the user's, the parameters bound to the argument columns on
the line of the user's `def`, and every `return E` of the UDF itself made `return
<wrap>(E)`; every other line is the user's, at its own line number, so what the analysis
says about a line is about the user's line. A filter returns the
UDF's value. An explosion (`F.explode(udf(...))`) of a UDF that returns a str's split
iterates it in place, which the analysis models natively (split and explode in Spark):

    for __udflow_x in s.split(): yield {**__udflow_row, "tok": __udflow_x}

The UDF's closure variables stay closure variables: the function is made by an outer
`def __udflow_make(<free variables>)` two lines above. Where the text cannot be edited
so (a def on one line, a file without the source), `call_wrapper` calls the UDF as it
is: the analysis follows it as a helper, so its reads and writes stay exact and its
value runs as Python. Any other explosion is a loop over a helper that calls the UDF
(`items_helper`): Python computes each record's list, as the user's UDF did, and Spark
explodes it (Spark's explode of a null array: no record):

    def tokens(__udflow_row):
        for __udflow_x in tokens_items(__udflow_row["text"]):
            yield {**__udflow_row, "tok": __udflow_x}
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Callable, Optional

from udflow.analysis.edited import (
    CALLEE,
    CONVERT_ITEMS,
    ELEMENT,
    MAKE,
    ROW,
    VALUE,
    NotInlined,
    Shape,
    inlined,
    made,
)
from udflow.analysis.outside import snapshot


def record_function(fn: Callable, columns: tuple, shape: Shape, tag: str) -> Callable:
    """The record function of UDF `fn` over `columns` (one per parameter): inlined where
    its text allows, else `call_wrapper`. The same one each time a DataFrame is opened
    while the values `fn` reads from outside are the same (`outside.snapshot`): what udflow
    knows of a function (its analysis, the UDFs its Python terms run) is kept per function
    object, and a job that opens its DataFrame again would otherwise analyse every UDF anew
    (taxi's five: 50 ms of each `optimize_dataframe`)."""
    try:
        return _remembered(fn, columns, shape, tag, snapshot(fn))
    except TypeError:  # an unhashable value read from outside: made afresh
        return _made(fn, columns, shape, tag)


@lru_cache(maxsize=1024)
def _remembered(fn: Callable, columns: tuple, shape: Shape, tag: str, outside: tuple) -> Callable:
    # `outside` is only part of the key: a value rebound since makes another function
    return _made(fn, columns, shape, tag)


def _made(fn: Callable, columns: tuple, shape: Shape, tag: str) -> Callable:
    try:
        return inlined(fn, columns, shape, tag)
    except NotInlined:
        return call_wrapper(fn, columns, shape, tag)


# ---------------------------------------------------------------------------
# Functions of udflow's own making
# ---------------------------------------------------------------------------


def call_wrapper(fn: Callable, columns: tuple, shape: Shape, tag: str) -> Callable:
    """`def name(row): v = fn(row[c1], ...)` then what `shape` does with `v`: the analysis
    follows `fn` as a helper where it can (exact reads and writes; its value runs as Python)."""
    name = getattr(fn, "__name__", "udf")
    name = name if name.isidentifier() else "udf"
    args = ", ".join(f"{ROW}[{c!r}]" for c in columns)
    if shape.kind == "explode":
        items = items_helper(fn, len(columns), shape, tag, f"{name}_items")
        body = [f"    for {ELEMENT} in {items.__name__}({args}):",
                f"        yield {{**{ROW}, {shape.out!r}: {ELEMENT}}}"]
        return _generated(name, ROW, body, tag, {items.__name__: items})
    body = [f"    {VALUE} = {CALLEE}({args})", f"    return {shape.wrap(VALUE)}"]
    return _generated(name, ROW, body, tag, {CALLEE: fn, **shape.bound()})


def items_helper(fn: Callable, arity: int, shape: Shape, tag: str, name: str) -> Callable:
    """`name(a0, ...)`: the items `F.explode` makes rows of, the UDF's value made its declared
    element type item by item, none for a None value (Spark's explode of a null array). The
    record function iterates it (`for x in name(r["text"]): yield {...}`), which the analysis
    models as an explosion of a helper's list: Python computes the list, Spark explodes it."""
    from udflow.spark_results import ITEMS

    params = ", ".join(f"a{i}" for i in range(arity))
    body = [f"    {VALUE} = {CALLEE}({params})",
            f"    if {VALUE} is None:",
            "        return []"]
    if shape.convert in ITEMS:  # `[convert(x) for x in v]`, without a call per usual item
        body.append(f"    return {CONVERT_ITEMS}({VALUE})")
        return _generated(name, params, body, tag, {CALLEE: fn, CONVERT_ITEMS: ITEMS[shape.convert]})
    body.append(f"    return [{shape.converted(ELEMENT)} for {ELEMENT} in {VALUE}]")
    return _generated(name, params, body, tag, {CALLEE: fn, **shape.bound()})


def projection(columns: tuple, renames: dict, tag: str) -> Callable:
    """`{new: r[old], ...}`: the record of the named columns, in order (renamed as `renames`)."""
    items = ", ".join(f"{renames.get(c, c)!r}: {ROW}[{c!r}]" for c in columns)
    return _generated("project", ROW, [f"    return {{{items}}}"], tag)


def copies(renames: dict, tag: str) -> Callable:
    """`{**r, new: r[old], ...}`: each renamed column copied to its new name."""
    items = ", ".join(f"{new!r}: {ROW}[{old!r}]" for old, new in renames.items())
    return _generated("rename", ROW, [f"    return {{**{ROW}, {items}}}"], tag)


def condition_filter(atoms: tuple, tag: str) -> Callable:
    """A filter keeping the records where every `conditions.Atom` holds, with Spark's semantics."""
    test = " and ".join(a.python(ROW) for a in atoms)
    return _generated("where", ROW, [f"    return {test}"], tag, globals_extra={"date": datetime.date})


def reduce_function(keys: tuple, aggregates: tuple, tag: str) -> Callable:
    """A Reduce computing Spark's aggregates in Python: `aggregates` are (out, function, field or
    None); sum/avg/min/max skip None and give None over no value, count(field) counts the
    non-None values, count(*) the rows."""
    body = ["    rows = list(rows)", "    first = rows[0]"]
    items = [f"{k!r}: first[{k!r}]" for k in keys]
    for i, (out, function, arg) in enumerate(aggregates):
        if arg is None:
            items.append(f"{out!r}: len(rows)")
            continue
        xs = f"xs{i}"
        body.append(f"    {xs} = [r[{arg!r}] for r in rows if r[{arg!r}] is not None]")
        value = {"count": f"len({xs})", "sum": f"sum({xs}) if {xs} else None",
                 "avg": f"sum({xs}) / len({xs}) if {xs} else None",
                 "min": f"min({xs}) if {xs} else None", "max": f"max({xs}) if {xs} else None"}[function]
        items.append(f"{out!r}: {value}")
    body.append(f"    yield {{{', '.join(items)}}}")
    return _generated("aggregate", "rows", body, tag)


def _generated(name: str, param: str, body: list, tag: str, bound: Optional[dict] = None,
               globals_extra: Optional[dict] = None) -> Callable:
    """`def name(param): <body>` in a file of its own (`udflow-from-spark/<name> [<tag>].py`),
    made inside a maker so that each name of `bound` is a closure variable holding its value."""
    bound = bound or {}
    lines = [f"def {MAKE}({', '.join(bound)}):", f" def {name}({param}):", *body, f" return {name}"]
    made_of = (tuple(lines), name, tuple(bound.items()), tuple((globals_extra or {}).items()), tag)
    try:
        return _remembered_text(*made_of)
    except TypeError:  # a bound value that cannot be a key
        return _made_text(*made_of)


@lru_cache(maxsize=1024)
def _remembered_text(lines: tuple, name: str, bound: tuple, globals_extra: tuple, tag: str) -> Callable:
    """The function of `lines` made once per text and bound values: opening a DataFrame again
    gives the flow the same functions, whose analysis udflow has kept."""
    return _made_text(lines, name, bound, globals_extra, tag)


def _made_text(lines: tuple, name: str, bound: tuple, globals_extra: tuple, tag: str) -> Callable:
    filename = f"udflow-from-spark/{name} [{tag}]"
    globals_ = {"__builtins__": __builtins__, "__name__": "__udflow_from_spark__", **dict(globals_extra)}
    return made(list(lines), filename, name, globals_, [value for _, value in bound])

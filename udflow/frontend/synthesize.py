"""A PySpark UDF as a udflow record function: the UDF's own code, its parameters bound to fields.

`F.udf(double_it, "double")("x")` as the column `y` is, in udflow's terms, the Map

    def double_it(__udflow_row):                     (the line above the user's def)
        x = __udflow_row["x"]                          (the line of the user's def)
        return {**__udflow_row, "y": (x * 2 if x is not None else None)}
        ...                                            (the user's body, line for line)

The record function is the UDF's text with three edits: a `def` taking the record on
the line above the user's, the parameters bound to the argument columns on the line of
the user's `def`, and every `return E` of the UDF itself made `return <wrap>(E)`; every
other line is the user's, at its own line number. The text is registered with
`linecache` under the name `<file> [from_spark]`, so the analysis reads it like any
function, and what it says about a line is about the user's line. A filter returns the
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

import ast
import dataclasses
import datetime
import hashlib
import linecache
import types
from dataclasses import dataclass
from typing import Callable, Optional

from udflow.analysis.source import file_index, find_node
from udflow.analysis.syntax import always_returns

ROW = "__udflow_row"
VALUE = "__udflow_v"
ELEMENT = "__udflow_x"
MAKE = "__udflow_make"
CALLEE = "__udflow_fn"
CONVERT = "__udflow_as"  # what Spark makes of the value: `udflow.spark_results`
CONVERT_ITEMS = "__udflow_as_items"  # the same, of each item of a list (`spark_results.ItemsConverted`)


class NotInlined(Exception):
    """The UDF's text cannot be edited into a record function (the reason says why)."""


@dataclass(frozen=True)
class Shape:
    """What the record function does with the UDF's value `v`."""

    kind: str  # "map" | "filter" | "explode"
    out: str = ""  # the field written (map, explode)
    convert: Optional[Callable] = None  # the value (an explosion: each element) made its declared type

    def converted(self, text: str) -> str:
        return f"{CONVERT}({text})" if self.convert is not None else f"({text})"

    def wrap(self, text: str) -> str:
        if self.kind == "map":
            return f"{{**{ROW}, {self.out!r}: {self.converted(text)}}}"
        return self.converted(text)

    def bound(self) -> dict:
        return {CONVERT: self.convert} if self.convert is not None else {}

    def fallthrough(self) -> str:
        return self.wrap("None")


def record_function(fn: Callable, columns: tuple, shape: Shape, tag: str) -> Callable:
    """The record function of UDF `fn` over `columns` (one per parameter): inlined where
    its text allows, else `call_wrapper`."""
    try:
        return inlined(fn, columns, shape, tag)
    except NotInlined:
        return call_wrapper(fn, columns, shape, tag)


# ---------------------------------------------------------------------------
# The UDF's own text, edited
# ---------------------------------------------------------------------------


def inlined(fn: Callable, columns: tuple, shape: Shape, tag: str) -> Callable:
    code = getattr(fn, "__code__", None)
    index = file_index(code) if isinstance(fn, types.FunctionType) else None
    node = find_node(code, index) if index is not None else None
    if node is None:
        raise NotInlined("no source")
    params = [p.arg for p in node.args.posonlyargs + node.args.args]
    if node.args.vararg or node.args.kwarg or node.args.kwonlyargs or len(params) != len(columns):
        raise NotInlined("its parameters are not one per column")
    lines = list(index.lines)
    if isinstance(node, ast.Lambda):
        text, first, indent = _lambda_text(lines, node, params, columns, shape)
    else:
        text, first, indent = _def_text(lines, node, params, columns, shape)
    name = fn.__name__ if fn.__name__ != "<lambda>" else f"lambda_{node.lineno}"
    return _compile(fn, text, first, indent, name, f"{code.co_filename} [from_spark {tag}]", shape.bound())


def _binding(params, columns) -> str:
    return "; ".join(f"{p} = {ROW}[{c!r}]" for p, c in zip(params, columns)) or "pass"


def _def_text(lines, node: ast.FunctionDef, params, columns, shape: Shape):
    body = node.body
    if body[0].lineno == node.lineno:
        raise NotInlined("a def on one line")
    indent = " " * body[0].col_offset
    out = [""] * len(lines)
    out[node.lineno - 1] = indent + _binding(params, columns)
    for line in range(body[0].lineno, node.end_lineno + 1):
        out[line - 1] = lines[line - 1]
    returns = list(_own_returns(node))
    if shape.kind == "explode":
        last = body[-1]
        if [s for s in body if not _docstring(s)] != [last] or returns != [last] or not is_split(last.value):
            raise NotInlined("an explosion of anything but the split of a str")
        shape = _split_strings(shape, last.value)
        _splice(out, last.lineno, last.col_offset, len("return"), f"for {ELEMENT} in")
        _splice(out, last.end_lineno, last.end_col_offset + len(f"for {ELEMENT} in") - len("return"), 0,
                f": yield {{**{ROW}, {shape.out!r}: {shape.converted(ELEMENT)}}}")
        return out[: node.end_lineno], node.lineno, indent
    for ret in sorted(returns, key=lambda r: (r.lineno, r.col_offset), reverse=True):
        _rewrite_return(out, ret, shape)
    tail = [] if always_returns(body) else [indent + "return " + shape.fallthrough()]
    return out[: node.end_lineno] + tail, node.lineno, indent


def _lambda_text(lines, node: ast.Lambda, params, columns, shape: Shape):
    body = node.body
    indent = "    "
    segment = _segment(lines, body)
    out = [""] * len(lines)
    head = indent + _binding(params, columns) + "; "
    if shape.kind == "explode" and not is_split(body):
        raise NotInlined("an explosion of anything but the split of a str")
    if shape.kind == "explode":
        shape = _split_strings(shape, body)
        text = head + f"for {ELEMENT} in {segment}: yield {{**{ROW}, {shape.out!r}: {shape.converted(ELEMENT)}}}"
    else:
        text = head + "return " + shape.wrap(segment)
    for i, part in enumerate(text.split("\n")):
        out[node.lineno - 1 + i] = part
    last = node.lineno + text.count("\n")
    return out[:last], node.lineno, indent


def _split_strings(shape: Shape, e: ast.expr) -> Shape:
    """An explosion of `s.split(...)` declared `array<string>`: its elements are strs already."""
    from udflow import spark_results

    splits = isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("split", "rsplit")
    strings = shape.convert in (spark_results.arrow_string, spark_results.pickled_string)
    return dataclasses.replace(shape, convert=None) if splits and strings else shape


def is_split(e: ast.expr) -> bool:
    """`e` is `TERM.split(...)` (or rsplit, splitlines): a list, never None, so the record
    function iterates it as it is (where Spark's explode of a null array gives no row, Python's
    for over None raises); the analysis models `for x in s.split(sep)` natively."""
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
            and e.func.attr in ("split", "rsplit", "splitlines"))


def _docstring(s) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def _segment(lines, e: ast.expr) -> str:
    """The source text of expression `e` (its lines joined by newlines)."""
    if e.lineno == e.end_lineno:
        return lines[e.lineno - 1][e.col_offset:e.end_col_offset]
    parts = [lines[e.lineno - 1][e.col_offset:]]
    parts += lines[e.lineno: e.end_lineno - 1]
    parts.append(lines[e.end_lineno - 1][: e.end_col_offset])
    return "\n".join(parts)


def _own_returns(node):
    """The `return` statements of `node` itself, not of functions or classes defined in it."""
    stack = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))


def _splice(out: list, line: int, col: int, length: int, text: str) -> None:
    s = out[line - 1]
    out[line - 1] = s[:col] + text + s[col + length:]


def _rewrite_return(out: list, ret: ast.Return, shape: Shape) -> None:
    """`return E` -> `return <wrap>(E)`, the end first so the start's columns still hold."""
    if ret.value is None:
        _splice(out, ret.lineno, ret.col_offset, len("return"), "return " + shape.fallthrough())
        return
    v = ret.value
    opening = shape.wrap("\0").split("\0")
    _splice(out, v.end_lineno, v.end_col_offset, 0, opening[1])
    _splice(out, v.lineno, v.col_offset, 0, opening[0])


def _compile(fn, text_lines: list, first: int, indent: str, name: str, filename: str, bound: dict) -> Callable:
    """Put `def name(ROW):` on the line above `first`, the maker above it, compile, and make
    the function over `fn`'s globals and closure values."""
    free = fn.__code__.co_freevars
    if first < 3:
        raise NotInlined("the function starts on the file's first lines")
    inner = indent[:-1] if len(indent) > 1 else None
    if not inner:
        raise NotInlined("its body is indented by one column")
    lines = list(text_lines)
    lines[first - 3] = f"def {MAKE}({', '.join(free + tuple(bound))}):"
    lines[first - 2] = f"{inner}def {name}({ROW}):"
    lines.append(f"{inner}return {name}")
    values = [cell.cell_contents for cell in fn.__closure__ or ()] + list(bound.values())
    return _made(lines, filename, name, fn.__globals__, values)


def _made(lines: list, label: str, name: str, globals_: dict, values) -> Callable:
    """Compile `lines` as the file `label` (`<where> [<tag>]`) with its text's hash in the
    brackets: `linecache` is how the analysis reads it, so two texts never share a name."""
    text = "\n".join(lines) + "\n"
    filename = f"{label[:-1]} {hashlib.sha1(text.encode()).hexdigest()[:8]}]"
    linecache.cache[filename] = (len(text), None, [line + "\n" for line in lines], filename)
    try:
        module = compile(text, filename, "exec")
    except SyntaxError as err:
        raise NotInlined(f"the edited text does not compile ({err.msg})") from None
    maker_code = next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == MAKE)
    made = types.FunctionType(maker_code, globals_, MAKE)(*values)
    # not importable by name: cloudpickle ships it by value, with this code
    made.__qualname__ = f"{MAKE}.<locals>.{name}"
    made.__module__ = "__udflow_from_spark__"
    return made


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
    filename = f"udflow-from-spark/{name} [{tag}]"
    globals_ = {"__builtins__": __builtins__, "__name__": "__udflow_from_spark__", **(globals_extra or {})}
    return _made(lines, filename, name, globals_, list(bound.values()))

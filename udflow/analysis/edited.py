"""A function's own text, edited into a record function the analysis reads like any other.

`inlined(double_it, ("x",), Shape("map", out="y"), tag)` is, in udflow's terms, the Map

    def double_it(__udflow_row):                     (the line above the user's def)
        x = __udflow_row["x"]                          (the line of the user's def)
        return {**__udflow_row, "y": (x * 2)}          (the user's body, line for line)

The text is the function's with three edits: a `def` taking the record on the line above
the user's, the parameters bound to the argument columns on the line of the user's `def`,
and every `return E` of the function itself made `return <wrap>(E)`; every other line is
the user's, at its own line number. The text is registered with `linecache` under the
name `<file> [<origin> <tag>]`, so the analysis reads it like any function, and what it
says about a line is about the user's line. Two users: a PySpark UDF opened by
`from_spark` (`frontend.synthesize`), and a helper of the user's whose value the analysis
models (`analysis.helper_models`). The function's closure variables stay closure
variables: the function is made by an outer `def __udflow_make(<free variables>)` two
lines above; a text that cannot be edited so raises `NotInlined`.
"""

from __future__ import annotations

import ast
import dataclasses
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


# ---------------------------------------------------------------------------
# The UDF's own text, edited
# ---------------------------------------------------------------------------


def inlined(fn: Callable, columns: tuple, shape: Shape, tag: str, origin: str = "from_spark") -> Callable:
    """`fn`'s text edited into the record function `name(ROW)` over `columns` (one per
    parameter), its returns made what `shape` does with the value (module docstring)."""
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
    return _compile(fn, text, first, indent, name, f"{code.co_filename} [{origin} {tag}]", shape.bound())


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
    if shape.kind == "explode" and _appended(node, lines) is not None:
        _appends_as_yields(out, node, lines, shape)
        return out[: node.end_lineno], node.lineno, indent
    if shape.kind == "explode":
        last = body[-1]
        if [s for s in body if not _docstring(s)] != [last] or returns != [last] or not is_split(last.value):
            raise NotInlined("an explosion of anything but the split of a str, or of a list a loop appends to")
        shape = _split_strings(shape, last.value)
        _splice(out, last.lineno, last.col_offset, len("return"), f"for {ELEMENT} in")
        _splice(out, last.end_lineno, last.end_col_offset + len(f"for {ELEMENT} in") - len("return"), 0,
                f": yield {{**{ROW}, {shape.out!r}: {shape.converted(ELEMENT)}}}")
        return out[: node.end_lineno], node.lineno, indent
    for ret in sorted(returns, key=lambda r: (r.lineno, r.col_offset), reverse=True):
        _rewrite_return(out, ret, shape)
    tail = [] if always_returns(body) else [indent + "return " + shape.fallthrough()]
    return out[: node.end_lineno] + tail, node.lineno, indent


def _appended(node: ast.FunctionDef, lines: list) -> Optional[str]:
    """The name of the list the function builds and returns, as a tokenizer does, or None:

        out = []                      the statements of the body are `out = []`, a `for`
        for raw in text.split():      loop, `return out`; `out` is read nowhere else but as
            ...                       `out.append(E)` statements inside the loop, and no
            out.append(E)             other `return` or `yield` is the function's own
        return out
    """
    body = [s for s in node.body if not _docstring(s)]
    if len(body) != 3 or not isinstance(body[1], ast.For) or body[1].orelse:
        return None
    start, loop, end = body
    if not (isinstance(start, ast.Assign) and len(start.targets) == 1 and isinstance(start.targets[0], ast.Name)
            and isinstance(start.value, ast.List) and not start.value.elts and start.lineno == start.end_lineno):
        return None
    name = start.targets[0].id
    if not (isinstance(end, ast.Return) and isinstance(end.value, ast.Name) and end.value.id == name):
        return None
    if not all(_alone_on_its_line(lines, stmt) for stmt in (start, end)):
        return None
    if list(_own_returns(node)) != [end] or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node)):
        return None
    appends = [n.value for n in ast.walk(loop) if isinstance(n, ast.Expr) and _is_append(n.value, name)]
    reads = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name]
    return name if appends and len(reads) == len(appends) else None


def _alone_on_its_line(lines: list, stmt: ast.stmt) -> bool:
    """The statement is on one line of its own (a comment may follow it)."""
    text = lines[stmt.lineno - 1]
    return (stmt.lineno == stmt.end_lineno and not text[: stmt.col_offset].strip()
            and text[stmt.end_col_offset:].strip()[:1] in ("", "#"))


def _is_append(e: ast.expr, name: str) -> bool:
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "append"
            and isinstance(e.func.value, ast.Name) and e.func.value.id == name and len(e.args) == 1
            and not e.keywords and not isinstance(e.args[0], ast.Starred)
            and (e.args[0].lineno, e.args[0].end_lineno) == (e.lineno, e.end_lineno))


def _appends_as_yields(out: list, node: ast.FunctionDef, lines: list, shape: Shape) -> None:
    """The appending loop (`_appended`) as a generator of the exploded records, in the same
    order, raising where the loop raises (the list is exploded whole, so a record yielded
    before an error never leaves the operator either); the function is then the loop alone,
    the explosion the analysis models:

        out = []                  ->  (a blank line)
        out.append(E)             ->  yield {**row, "tok": <convert>(E)}
        return out                ->  (a blank line)
    """
    name = _appended(node, lines)
    start, loop, end = [s for s in node.body if not _docstring(s)]
    calls = [n.value for n in ast.walk(loop) if isinstance(n, ast.Expr) and _is_append(n.value, name)]
    opening = f"yield {{**{ROW}, {shape.out!r}: " + (f"{CONVERT}(" if shape.convert is not None else "(")
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset), reverse=True):
        item = call.args[0]
        _splice(out, call.end_lineno, item.end_col_offset, call.end_col_offset - item.end_col_offset, ")}")
        _splice(out, call.lineno, call.col_offset, item.col_offset - call.col_offset, opening)
    for stmt in (start, end):
        out[stmt.lineno - 1] = ""


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
    return made(lines, filename, name, fn.__globals__, values)


def made(lines: list, label: str, name: str, globals_: dict, values) -> Callable:
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

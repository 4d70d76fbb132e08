"""The symbolic side of the interpreter: each expression's value as an IR term.

While the interpreter evaluates an expression of the function itself (not of a
helper it calls), `term_of(frame, node, value)` builds the `udflow.expr` term
the node computes from its children's terms (kept per node in
`Analysis.node_terms`) and the values of names (`Val.term`). A construct
outside the IR's whitelist gives None: "no term", and a model that needs it
is not built (`model.py` says which construct and line).

    r["a"] * 2                  Arith('*', Field('a'), Lit(2))
    x.lower() if x else ""      IfElse(Field('x'), Call('str.lower', (Field('x'),)), Lit(''))
    START <= r["d"] <= END      BoolOp('and', (Cmp('<=', Lit(START), Field('d')),
                                               Cmp('<=', Field('d'), Lit(END))))
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass
from typing import Optional

import builtins

from udflow.analysis.constants import constant_made, constant_timedelta, timedelta_of
from udflow.analysis.attribute_terms import attribute_term, iso_calendar_part, replaced_parts
from udflow.analysis.format_terms import joined_term
from udflow.analysis.local_tables import table_of
from udflow.analysis.regex_terms import group_of, matched
from udflow.analysis.char_terms import kept_chars_of
from udflow.analysis.nested_tables import nested_get_of
from udflow.analysis.resolved import hexdigest_call, isclose_call, module_call, quantize_call
from udflow import spark_results
from udflow.analysis.values import FieldOf, RecRef, Val
from udflow.bits import Bits, Invert
from udflow.helper_calls import HelperCall
from udflow.splits import JoinItems, SplitItem, SplitJoin, SplitLen
from udflow.tables import InTable, TableGet, TableItem
from udflow.analysis.split_terms import join_of, rsplit_of, split_len_of, split_of
from udflow.expr import (
    ARITH,
    LITERAL_TYPES,
    Agg,
    Arith,
    BoolOp,
    Call,
    Cmp,
    Contains,
    Elem,
    Expr,
    Field,
    First,
    GroupRows,
    IfElse,
    InValues,
    IsNone,
    Item,
    Lit,
    Neg,
    Not,
    Slice,
    Truth,
    Tuple,
    evaluate,
    transform,
)
from udflow.expr_functions import DATE_METHODS, FUNCTIONS

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
          ast.Pow: "**"}
BITOPS = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
# Builtins over a Reduce's group (`GroupRows`): an aggregate, or the same rows again
GROUP_CALLS = {"sum": "sum", "len": "count", "min": "min", "max": "max", "any": "any", "all": "all",
               "list": None, "tuple": None}
# calls whose value is a str (or which raise)
STR_CALLS = ("str", "re.sub", "format", "repr", "ascii", "unicodedata.normalize", "chars.keep")
# Terms that never raise (on values of LITERAL_TYPES; a Field's presence is the analysis's)
NEVER_RAISE = (Field, Lit, Truth, Not, IsNone, InValues, BoolOp, IfElse, First, GroupRows, Elem, Tuple, Item)
NEVER_RAISING_AGGREGATES = ("count", "any", "all")  # any/all: built over never-raising terms only
TUPLE_AGGREGATES = ("min", "max")  # the only aggregates over a `Tuple` of per-record terms


@dataclass(frozen=True)
class GroupList(GroupRows):
    """Analysis-internal: a `GroupRows` whose Python value is a list or tuple (`list(rows)`,
    `[... for r in rows if c]`), so that its truthiness is whether it is non-empty. A
    generator over the group is always truthy, and the group parameter itself may be a
    one-shot iterator (always truthy): both stay plain `GroupRows`, without a truthiness
    term. Never part of a model: `plain` turns it back into a `GroupRows`."""


def never_raises(term: Expr) -> bool:
    """Whether evaluating the term never raises: `==`/`!=`, `is None`, membership in literals,
    truthiness, and/or/conditionals of such terms, counts, any/all."""
    return all(isinstance(t, NEVER_RAISE) or (isinstance(t, Cmp) and t.op in ("==", "!="))
               or (isinstance(t, Agg) and t.fn in NEVER_RAISING_AGGREGATES) for t in term.walk())


def is_tuple_aggregate(term) -> bool:
    """`min((a, b) for r in rows ...)` / `max(...)`: an aggregate whose value is a tuple."""
    return isinstance(term, Agg) and term.fn in TUPLE_AGGREGATES and isinstance(term.rows.elem, Tuple)


def tuples_in_place(term: Expr, whole: bool = False) -> bool:
    """Whether every tuple of the term is where the IR gives it a meaning: a `Tuple` only as
    the element of min/max over the group, and that aggregate only inside an `Item` (`m[0]`).
    `whole`: the term is a statement's value kept for later (`m = min(...)`, `xs = [(a, b)
    for r in rows]`), which may be the tuple-valued aggregate or list itself."""
    if isinstance(term, Tuple):
        return False
    if isinstance(term, Item):
        return is_tuple_aggregate(term.term) and tuples_in_place(term.term, whole=True)
    if isinstance(term, GroupRows) and isinstance(term.elem, Tuple):
        return whole and _items_in_place(term)
    if isinstance(term, Agg) and isinstance(term.rows.elem, Tuple):
        return whole and is_tuple_aggregate(term) and _items_in_place(term.rows)
    return all(tuples_in_place(c) for c in term.children())


def _items_in_place(rows: GroupRows) -> bool:
    parts = rows.elem.items + ((rows.where,) if rows.where is not None else ())
    return all(tuples_in_place(p) for p in parts)


def plain(term: Optional[Expr]) -> Optional[Expr]:
    """The term with every `GroupList` a plain `GroupRows` (the IR the models speak)."""
    if term is None:
        return None
    return transform(term, lambda t: GroupRows(t.elem, t.where) if type(t) is GroupList else t)


def truth_term(term: Optional[Expr]) -> Optional[Expr]:
    """A term with the truthiness of `term`, for where Python uses only its truthiness (an
    `if`, a conditional's test, `not`, `bool()`), or None when there is none. A list over the
    group is truthy iff it is non-empty: `len(...) > 0`, i.e. `Cmp(">", Agg("count",
    GroupRows(None, where)), Lit(0))`; `and`/`or` and a conditional's branches keep their
    evaluation order, each operand replaced by a term of the same truthiness."""
    if term is None:
        return None
    if isinstance(term, GroupList):
        return Cmp(">", Agg("count", GroupRows(None, term.where)), Lit(0))
    if isinstance(term, GroupRows):
        return None  # a generator or an iterator: truthy whatever it holds
    if isinstance(term, BoolOp):
        parts = tuple(truth_term(v) for v in term.values)
        return None if any(p is None for p in parts) else BoolOp(term.op, parts)
    if isinstance(term, IfElse):
        body, orelse = truth_term(term.body), truth_term(term.orelse)
        return None if body is None or orelse is None else IfElse(term.test, body, orelse)
    found = matched(term, True)  # a match object is always true: its truth is whether one was found
    return found if found is not None else term


def term_of(frame, node, value: Val) -> Optional[Expr]:
    """The term `node` computes, or None."""
    build = _BUILDERS.get(type(node))
    return build(frame, node, value) if build is not None else None


def _child(frame, node) -> Optional[Expr]:
    return frame.an.node_terms.get(id(node))


def _constant(frame, node, value):
    return Lit(node.value) if isinstance(node.value, LITERAL_TYPES) else None


def _name(frame, node, value: Val):
    if value.term is not None:
        return value.term
    c = value.const()
    return Lit(c.value) if c is not None and isinstance(c.value, LITERAL_TYPES) else None


def _binop(frame, node, value):
    left, right = _child(frame, node.left), _child(frame, node.right)
    if left is None or right is None or value.of(RecRef):  # `r | {...}` merges dicts: no term
        return None
    if type(node.op) in BITOPS:
        return Bits(BITOPS[type(node.op)], left, right)
    op = BINOPS.get(type(node.op))
    return Arith(op, left, right) if op in ARITH else None


def _unary(frame, node, value):
    operand = _child(frame, node.operand)
    if operand is None:
        return None
    if isinstance(node.op, ast.USub):
        return Neg(operand)
    if isinstance(node.op, ast.Invert):
        return Invert(operand)
    if isinstance(node.op, ast.Not):
        operand = truth_term(operand)
        return Not(operand) if operand is not None else None
    return None


def _boolop(frame, node, value):
    parts = [_child(frame, v) for v in node.values]
    if any(p is None for p in parts):
        return None
    return BoolOp("and" if isinstance(node.op, ast.And) else "or", tuple(parts))


def _ifexp(frame, node, value):
    parts = [truth_term(_child(frame, node.test))] + [_child(frame, n) for n in (node.body, node.orelse)]
    return None if any(p is None for p in parts) else IfElse(*parts)


def _compare(frame, node, value):
    operands = [node.left] + list(node.comparators)
    pairs = []
    for op, a, b in zip(node.ops, operands, operands[1:]):
        pair = _comparison(frame, op, a, b)
        if pair is None:
            return None
        pairs.append(pair)
    return pairs[0] if len(pairs) == 1 else BoolOp("and", tuple(pairs))


def _comparison(frame, op, a, b) -> Optional[Expr]:
    left, right = _child(frame, a), _child(frame, b)
    if left is not None and isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, (ast.Tuple, ast.List, ast.Set)) \
            and all(isinstance(e, ast.Constant) and isinstance(e.value, LITERAL_TYPES) for e in b.elts):
        # a literal tuple, list or set has no term of its own: membership is == against each
        # value (a set's hash finds the equal ones: 1 in {1.0}, True in {1}; a field's value
        # is always hashable, so a set raises no TypeError a tuple would not)
        return InValues(left, tuple(e.value for e in b.elts), isinstance(op, ast.NotIn))
    table = table_of(frame, b) if isinstance(op, (ast.In, ast.NotIn)) else None
    if left is not None and table is not None:
        return InTable(left, table, isinstance(op, ast.NotIn))
    if left is None or right is None:
        return None
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, Lit) and right.value is None:
        found = matched(left, isinstance(op, ast.IsNot))  # a match's test: the only term of a match
        return found if found is not None else IsNone(left, isinstance(op, ast.IsNot))
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(right, Lit) and isinstance(right.value, str):
            found = Contains(left, right)
        elif _is_str_term(right):
            found = Contains(left, right)
        else:
            return None
        return Not(found) if isinstance(op, ast.NotIn) else found
    name = CMPOPS.get(type(op))
    return Cmp(name, left, right) if name is not None else None


def _is_str_term(term: Expr) -> bool:
    return isinstance(term, (Field, SplitItem, SplitJoin, JoinItems)) or isinstance(term, Elem) and term.split \
        or (isinstance(term, Call) and (term.name.startswith("str.") or term.name in STR_CALLS))


def _subscript(frame, node, value: Val):
    if (part := iso_calendar_part(frame, node, _child, _int_literal(node.slice))) is not None:
        return part
    base = _child(frame, node.value)
    if is_tuple_aggregate(base):  # before value.term: the interpreter's value is one record's tuple
        index = _int_literal(node.slice)
        n = len(base.rows.elem.items)
        if index is None or index is False or not -n <= index < n:
            return None  # a slice, a computed index, or IndexError: no term
        return Item(base, index % n)
    split, index = split_of(frame, node.value, _child, _is_str_term, limited=True), _int_literal(node.slice)
    if split is not None and type(index) is int:
        return SplitItem(split[0], split[1], index, split[2])
    if (cut := rsplit_of(frame, node.value, _child, _is_str_term)) is not None and type(index) is int:
        return SplitItem(*cut[:2], index, cut[2], reverse=True)
    if value.term is not None:
        return value.term
    if (nested := nested_get_of(frame, node, _child)) is not None:
        return nested
    table = table_of(frame, node.value)
    if table is not None and table.kind in ("dict", "sequence"):
        key = _child(frame, node.slice)
        return TableItem(table, key) if key is not None else None
    if len(value.atoms) == 1:
        (a,) = value.atoms
        if isinstance(a, FieldOf) and a.side in (0, 1):
            return _field_term(frame, a)
    if isinstance(node.slice, ast.Slice) and node.slice.step is None:
        base = _child(frame, node.value)
        bounds = [_int_literal(b, _child(frame, b) if b is not None else None)
                  for b in (node.slice.lower, node.slice.upper)]
        if base is not None and all(b is not False for b in bounds):
            return Slice(base, bounds[0], bounds[1])
    return None


def _field_term(frame, a: FieldOf) -> Optional[Expr]:
    """A field of the input record; in a Reduce, of the record at hand in an iteration of
    the group (valid inside an `Agg` only) or of `rows[0]`."""
    if frame.an.kind == "cogroup":
        return None
    if frame.an.kind != "reduce":
        return Field(a.name) if a.pos == "each" else None
    return {"each": Field(a.name), "first": First(a.name)}.get(a.pos)


def _int_literal(node, term: Optional[Expr] = None):
    """None for an open bound, the int for a literal one or one computed from literals alone
    (`-len(suffix)` with `suffix` a constant: a loop over a constant tuple, unrolled), False
    for anything else."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int):
        return -node.operand.value
    if term is not None and all(_folded(t) for t in term.walk()):
        try:
            value = evaluate(term, {})
        except Exception:  # noqa: BLE001 - a bound that raises is no literal: the slice has no term
            return False
        return value if type(value) is int else False
    return False


def _folded(t: Expr) -> bool:
    """A part of a slice bound folded to its value: constants, `-`, `+`/`-` and `len` (nothing
    that could build a large value while the analysis runs: `len("a" * 10**9)` is not folded)."""
    return (isinstance(t, (Lit, Neg)) or isinstance(t, Arith) and t.op in ("+", "-")
            or isinstance(t, Call) and t.name == "len")


def _attribute(frame, node, value):
    return attribute_term(frame, node, _child)


def _call(frame, node, value):
    if (closeness := isclose_call(frame, node, _child)) is not None:
        return closeness
    if (digest := hexdigest_call(frame, node, _child)) is not None:
        return digest
    if (quantized := quantize_call(frame, node, _child)) is not None:
        return quantized
    if (replaced := replaced_parts(frame, node, _child)) is not None:
        return replaced
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) \
            or getattr(node.func, "id", getattr(node.func, "attr", None)) == "timedelta":
        return constant_timedelta(frame, node, _child) or timedelta_of(frame, node, _child)
    affixes = _affix_tuple(frame, node)
    if affixes is not None:
        return affixes
    split = split_len_of(frame, node, _child, _is_str_term, lambda: _is_builtin(frame, node, vars(builtins)))
    if split is not None:
        return SplitLen(*split)
    if (joined := join_of(frame, node, _child, _is_str_term)) is not None:
        return joined
    if (kept := kept_chars_of(frame, node, _child, _is_str_term)) is not None:
        return kept
    if (nested := nested_get_of(frame, node, _child)) is not None:
        return nested
    args = [_child(frame, a) for a in node.args]
    if any(a is None for a in args):
        return None
    constant = constant_made(frame, node, args)
    if constant is not None:
        return constant
    if isinstance(node.func, ast.Attribute):
        table = table_of(frame, node.func.value) if node.func.attr == "get" else None
        if table is not None and table.kind == "dict" and 1 <= len(args) <= 2:
            return TableGet(table, args[0], args[1] if len(args) == 2 else Lit(None))
        if (called := module_call(frame, node.func, args)) is not None:
            return called
        receiver = _child(frame, node.func.value)
        if (group := group_of(receiver, node.func.attr, args)) is not None:
            return group
        if receiver is not None and node.func.attr in DATE_METHODS and len(args) == (node.func.attr == "strftime"):
            return Call(f"date.{node.func.attr}", (receiver, *args))  # the receiver's own method, as Python calls it
        if receiver is not None and node.func.attr == "total_seconds" and not args:
            return Call("timedelta.total_seconds", (receiver,))
        name = f"str.{node.func.attr}"
        if receiver is not None and name in FUNCTIONS and _is_str_term(receiver):
            return Call(name, (receiver, *args))
        return None
    if isinstance(node.func, ast.Name):
        if node.func.id == "bool" and len(args) == 1 and _is_builtin(frame, node, vars(builtins)):
            truth = truth_term(args[0])  # for a list over the group, already a bool
            return truth if isinstance(args[0], GroupList) or truth is None else Truth(truth)
        if len(args) == 1 and isinstance(args[0], GroupRows):
            return _group_call(frame, node, args[0])
        if node.func.id in FUNCTIONS and "." not in node.func.id and _is_builtin(frame, node, FUNCTIONS) and args:
            if node.func.id in ("min", "max") and len(args) < 2:
                return None  # min(iterable) is not a scalar function
            return Call(node.func.id, tuple(args))
        conversion = _conversion(frame, node)
        if conversion is not None and len(args) == 1:
            return Call(conversion, tuple(args))
        helper = _helper(frame, node)
        if helper is not None:
            inlined = frame.an.inline_helper(helper, tuple(args), never_raises) if frame.an.inline_helper else None
            return inlined or HelperCall(node.func.id, helper, tuple(args))
    return None


def _affix_tuple(frame, node) -> Optional[Expr]:
    """`s.startswith(("a", "b"))` (or endswith) with a tuple of str constants: the `or` of one
    call per constant, each a bool (s is a term, computed once per evaluation by Python too);
    None for any other call."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith") and len(node.args) == 1
            and isinstance(node.args[0], ast.Tuple) and node.args[0].elts):
        return None
    values = node.args[0].elts
    if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
        return None
    receiver = _child(frame, func.value)
    if receiver is None or not _is_str_term(receiver):
        return None
    calls = tuple(Call(f"str.{func.attr}", (receiver, Lit(v.value))) for v in values)
    return calls[0] if len(calls) == 1 else BoolOp("or", calls)


def _conversion(frame, node):
    """The name of the `udflow.spark_results` conversion `node` calls (a from_spark UDF's value
    made its declared type), or None."""
    try:
        callee = frame.lookup(node.func.id, node)
    except Exception:  # noqa: BLE001 - not a name the analysis resolves
        return None
    names = {spark_results.NAMES.get(id(getattr(a, "obj", None))) for a in callee.atoms}
    return names.pop() if len(names) == 1 and None not in names else None


def _helper(frame, node):
    """The user's own function `node` calls by name (a module-level or closure function with
    source, which the interpreter followed: a model is built only where it is pure), or None."""
    try:
        callee = frame.lookup(node.func.id, node)
    except Exception:  # noqa: BLE001 - not a name the analysis resolves
        return None
    objs = {id(getattr(a, "obj", None)): getattr(a, "obj", None) for a in callee.atoms}
    if len(objs) != 1:
        return None
    (fn,) = objs.values()
    # the interpreter followed it (a function without source made the whole analysis impure)
    if not isinstance(fn, types.FunctionType) or (fn.__module__ or "").startswith("udflow"):
        return None
    return fn


def _is_builtin(frame, node, table) -> bool:
    callee = frame.lookup(node.func.id, node)
    return bool(callee.atoms) and all(getattr(a, "obj", None) is table.get(node.func.id) for a in callee.atoms)


def _group_call(frame, node, rows: GroupRows) -> Optional[Expr]:
    """`sum(...)`, `len(...)`, `min(...)`, `max(...)`, `any(...)`, `all(...)` over the group, or
    `list(rows)`."""
    name = node.func.id
    if name not in GROUP_CALLS or not _is_builtin(frame, node, vars(builtins)):
        return None
    fn = GROUP_CALLS[name]
    if fn is None:
        return GroupList(rows.elem, rows.where)  # list(...), tuple(...): a materialised sequence
    if fn != "count" and rows.elem is None:
        return None  # the records themselves compared or added: not a scalar aggregate
    if isinstance(rows.elem, Tuple) and fn not in TUPLE_AGGREGATES:
        return None  # sum, len, any, all over tuples: not modelled
    rows = GroupRows(rows.elem, rows.where)
    if fn in ("any", "all") and not never_raises(rows):
        return None  # Python stops at the first deciding value: a later one's error never happens
    return Agg(fn, rows)


def _tuple(frame, node, value):
    """`(a, b, ...)`: a `Tuple`, meaningful only as the element of min/max over the group
    (`tuples_in_place` keeps it out of models anywhere else)."""
    items = [_child(frame, e) for e in node.elts]
    if not items or any(isinstance(e, ast.Starred) for e in node.elts) or any(i is None for i in items):
        return None
    return Tuple(tuple(items))


def _comprehension(frame, node, value):
    """`[elem for r in rows if c]` (or a generator) over a Reduce's group: a `GroupRows`."""
    if len(node.generators) != 1:
        return None
    gen = node.generators[0]
    rows = _child(frame, gen.iter)
    if not isinstance(rows, GroupRows) or rows.elem is not None or not isinstance(gen.target, ast.Name):
        return None
    conds = [_child(frame, c) for c in gen.ifs]
    if any(c is None for c in conds):
        return None
    where = [rows.where] if rows.where is not None else []
    where += conds
    if isinstance(node.elt, ast.Name) and node.elt.id == gen.target.id:
        elem = None
    else:
        elem = _child(frame, node.elt)
        if elem is None:
            return None
    cond = None if not where else where[0] if len(where) == 1 else BoolOp("and", tuple(where))
    return GroupList(elem, cond) if isinstance(node, ast.ListComp) else GroupRows(elem, cond)


def _joined(frame, node, value):
    return joined_term(frame, node, value.const(), _child)


_BUILDERS = {
    ast.JoinedStr: _joined,
    ast.Constant: _constant,
    ast.Name: _name,
    ast.BinOp: _binop,
    ast.UnaryOp: _unary,
    ast.BoolOp: _boolop,
    ast.IfExp: _ifexp,
    ast.Compare: _compare,
    ast.Subscript: _subscript,
    ast.Attribute: _attribute,
    ast.Call: _call,
    ast.Tuple: _tuple,
    ast.ListComp: _comprehension,
    ast.GeneratorExp: _comprehension,
}



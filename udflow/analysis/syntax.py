"""Facts read off the syntax tree alone, before any value is known: how a block
can end, which names a loop body assigns, whether a function is a generator,
which error an operator may raise."""

from __future__ import annotations

import ast

from udflow.analysis.values import Val

COMMUTATIVE_OPS = (ast.Add, ast.Mult, ast.BitOr, ast.BitAnd, ast.BitXor)


def exits(stmts) -> bool:
    """Does the block contain a return/break/continue/raise (outside nested functions)?"""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


def assigned_names(stmts) -> dict:
    """name -> True iff every assignment to it in the block is commutative
    (`x += e`, `x = x + e`, `x = max(x, e)`): its final value does not depend on the order."""
    out: dict = {}

    def note(name, commutative):
        out[name] = out.get(name, True) and commutative

    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            note(n.target.id, isinstance(n.op, COMMUTATIVE_OPS))
            stack.append(n.value)
            continue
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            v, name = n.value, n.targets[0].id
            minmax = (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("max", "min")
                and any(isinstance(a, ast.Name) and a.id == name for a in v.args)
            )
            folds = (
                isinstance(v, ast.BinOp) and isinstance(v.op, COMMUTATIVE_OPS)
                and any(isinstance(x, ast.Name) and x.id == name for x in (v.left, v.right))
            )
            note(name, minmax or folds)
            stack.append(v)
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            note(n.id, False)
        stack.extend(ast.iter_child_nodes(n))
    return out


def always_returns(stmts) -> bool:
    """Does every path through the block end in `return` or `raise` (never fall off its end)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    if isinstance(last, ast.Try):  # the body (or its else) returns, and so does every handler
        return always_returns(last.finalbody) or (
            (always_returns(last.body) or always_returns(last.orelse)) and all(always_returns(h.body)
                                                                              for h in last.handlers))
    return False


def is_generator(fnode) -> bool:
    """Does the function contain `yield` (outside nested functions)?"""
    if isinstance(fnode, ast.Lambda):
        return False
    stack = list(fnode.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


BITWISE_OPS = (ast.BitAnd, ast.BitOr, ast.BitXor)
SHIFT_OPS = (ast.LShift, ast.RShift)


def binop_error(op, left: Val, right: Val) -> str:
    """The kind of error `left op right` may raise (`RaiseSite.op`). A bitwise operator raises
    on anything but ints and bools ("bits": `1.5 & 1` raises where `1.5 + 1` does not); a shift
    also by a negative count ("shift", as a division by what may be 0), unless the count is a
    constant that is not."""
    if isinstance(op, BITWISE_OPS):
        return "bits"
    if isinstance(op, SHIFT_OPS):
        c = right.const()
        return "bits" if c is not None and isinstance(c.value, int) and 0 <= c.value < 2**16 else "shift"
    if isinstance(op, ast.Mod) and left.const() is not None and isinstance(left.const().value, str):
        return "format"
    if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
        c = right.const()
        divisor_safe = c is not None and isinstance(c.value, (int, float)) and c.value != 0
        return "arith" if divisor_safe else "divide"
    return "arith"

"""Emit bounds of a generator by walking its control flow (paper, section 5:
"estimated by traversing the control flow graph of a UDF").

Each statement is summarised by what it can do to the number of records
emitted so far, separately for the paths that fall through to the next
statement and the paths that leave the function (`return`):

    Bounds = (lo, hi)      hi None = unbounded
    block  = (fall, ret)   each Bounds, or None when no path of that kind exists

Sequencing adds, branching joins (min of lows, max of highs), a loop may run
any number of times (lo 0, hi unbounded when its body emits). Exceptions end
the function without emitting (functions that raise on purpose are impure).
"""

from __future__ import annotations

import ast
from typing import Optional

Bounds = Optional[tuple]


def _add(a: Bounds, b: Bounds) -> Bounds:
    if a is None or b is None:
        return None
    hi = None if a[1] is None or b[1] is None else a[1] + b[1]
    return (a[0] + b[0], hi)


def _join(a: Bounds, b: Bounds) -> Bounds:
    if a is None:
        return b
    if b is None:
        return a
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
    return (min(a[0], b[0]), hi)


def _own_yields(node) -> Bounds:
    """Yields inside one simple statement (not in nested functions)."""
    lo = 0
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.YieldFrom):
            return (0, None)
        if isinstance(n, ast.Yield):
            lo += 1
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and n is not node:
            continue
        stack.extend(ast.iter_child_nodes(n))
    return (lo, lo)


def _emits_any(b: Bounds) -> bool:
    return b is not None and (b[1] is None or b[1] > 0)


def block(stmts) -> tuple:
    fall: Bounds = (0, 0)
    ret: Bounds = None
    for s in stmts:
        if fall is None:
            break
        f, r = statement(s)
        ret = _join(ret, _add(fall, r))
        fall = _add(fall, f)
    return fall, ret


def statement(s) -> tuple:
    if isinstance(s, ast.Return):
        return None, _own_yields(s)
    if isinstance(s, ast.Raise):
        return None, None
    if isinstance(s, ast.If):
        bf, br = block(s.body)
        of, orr = block(s.orelse)
        return _add(_own_yields(s.test), _join(bf, of)), _add(_own_yields(s.test), _join(br, orr))
    if isinstance(s, (ast.For, ast.While, ast.AsyncFor)):
        bf, br = block(s.body)
        ef, er = block(s.orelse)
        emits = _emits_any(bf) or _emits_any(br)
        upto = (0, None) if emits else (0, 0)
        fall = _join(upto, _add(upto, ef) if ef is not None else None)
        ret = None
        if br is not None or er is not None:
            ret = (0, None) if emits or _emits_any(er) else (0, 0)
        return fall, ret
    if isinstance(s, (ast.Try,)):
        parts = [block(s.body)] + [block(h.body) for h in s.handlers] + [block(s.orelse), block(s.finalbody)]
        his = [b[1] for p in parts for b in p if b is not None]
        hi = None if any(h is None for h in his) else sum(his)
        has_ret = any(p[1] is not None for p in parts)
        return (0, hi), ((0, hi) if has_ret else None)
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return block(s.body)
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (0, 0), None
    if isinstance(s, (ast.Break, ast.Continue)):
        return (0, 0), None  # inside a loop, whose bounds already start at 0
    return _own_yields(s), None


def generator_bounds(fnode) -> tuple:
    """(lo, hi) records emitted by one call of the generator function `fnode`."""
    fall, ret = block(fnode.body)
    out = _join(fall, ret)
    return out if out is not None else (0, 0)

"""The model's terms for a str's split read in place: `s.split(sep)[i]`, `len(s.split(sep))` and
`j.join(s.split(sep))`, and for `j.join([a, b])` (`udflow.splits`). The list itself has no term:
only these uses of it do."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from udflow.expr import Expr, Lit
from udflow.splits import JoinItems, SplitJoin


def rsplit_of(frame, node, child: Callable, is_str: Callable) -> Optional[tuple]:
    """(the receiver's term, the separator, 1) where `node` is `<a str term>.rsplit(sep, 1)` (or
    `maxsplit=1`) of a constant, non-empty separator: the text cut at its last separator;
    None for any other node."""
    split = split_of(frame, node, child, is_str, limited=True, method="rsplit")
    return split if split is not None and split[1] and split[2] == 1 else None


def split_of(frame, node, child: Callable, is_str: Callable, limited: bool = False,
             method: str = "split") -> Optional[tuple]:
    """(the receiver's term, the separator or None) where `node` is `<a str term>.split()` or
    `.split(<a str constant>)`; None for any other node (a computed separator). `limited`:
    also `.split(sep, n)` or `.split(sep, maxsplit=n)` of a constant sep and n >= 0, and the
    tuple gets the maxsplit third (-1 where there is none). `method` "rsplit" reads
    `.rsplit(...)` alike."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method) \
            or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if any(k.arg != "maxsplit" for k in node.keywords) or node.keywords and len(node.args) != 1:
        return None  # `sep=` by name, or a maxsplit without a separator before it
    given = node.args + [k.value for k in node.keywords]
    if len(given) > (2 if limited else 1):
        return None
    receiver = child(frame, node.func.value)
    if receiver is None or not is_str(receiver):
        return None
    sep = child(frame, given[0]) if given else Lit(None)
    if not isinstance(sep, Lit) or not (sep.value is None or isinstance(sep.value, str)):
        return None
    if len(given) < 2:
        return (receiver, sep.value, -1) if limited else (receiver, sep.value)
    count = child(frame, given[1])  # a maxsplit: of a constant, non-empty separator only
    if not (isinstance(count, Lit) and type(count.value) is int and count.value >= 0 and sep.value):
        return None
    return receiver, sep.value, count.value


def split_len_of(frame, node, child: Callable, is_str: Callable, is_builtin_len: Callable) -> Optional[tuple]:
    """`split_of` of the argument where `node` is `len(<a split split_of takes>)`, `len` being
    the builtin; else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
            and len(node.args) == 1 and not node.keywords):
        return None
    split = split_of(frame, node.args[0], child, is_str, limited=True)
    return split if split is not None and is_builtin_len() else None


def join_of(frame, node, child: Callable, is_str: Callable) -> Optional[Expr]:
    """`<a str constant>.join(<a split split_of takes>)` as a `SplitJoin`, `.join([a, b, ...])`
    of str terms (a list or tuple display) as `JoinItems`; None for any other node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and len(node.args) == 1 and not node.keywords):
        return None
    joiner = child(frame, node.func.value)
    if not (isinstance(joiner, Lit) and isinstance(joiner.value, str)):
        return None
    (arg,) = node.args
    split = split_of(frame, arg, child, is_str)
    if split is not None:
        return SplitJoin(*split, joiner.value)
    if not isinstance(arg, (ast.List, ast.Tuple)) or not arg.elts or any(isinstance(e, ast.Starred) for e in arg.elts):
        return None
    items = [child(frame, e) for e in arg.elts]
    return JoinItems(joiner.value, tuple(items)) if all(i is not None and is_str(i) for i in items) else None

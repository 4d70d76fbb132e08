"""The model's terms for a str's split read in place: `s.split(sep)[i]` and `len(s.split(sep))`
(`udflow.splits`). The list itself has no term: only these two uses of it do."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from udflow.expr import Lit


def split_of(frame, node, child: Callable, is_str: Callable) -> Optional[tuple]:
    """(the receiver's term, the separator or None) where `node` is `<a str term>.split()` or
    `.split(<a str constant>)`; None for any other node (maxsplit, a computed separator)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split"
            and not node.keywords and len(node.args) <= 1):
        return None
    receiver = child(frame, node.func.value)
    if receiver is None or not is_str(receiver):
        return None
    if not node.args:
        return receiver, None
    sep = child(frame, node.args[0])
    if not isinstance(sep, Lit) or not (sep.value is None or isinstance(sep.value, str)):
        return None
    return receiver, sep.value


def split_len_of(frame, node, child: Callable, is_str: Callable, is_builtin_len: Callable) -> Optional[tuple]:
    """`split_of` of the argument where `node` is `len(<a split split_of takes>)`, `len` being
    the builtin; else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
            and len(node.args) == 1 and not node.keywords):
        return None
    split = split_of(frame, node.args[0], child, is_str)
    return split if split is not None and is_builtin_len() else None

"""The arguments of a call, evaluated: `args` is a list of `(star, value)`, with
star `"*"` for `*xs` and `""` otherwise; `kwargs` maps each keyword to its value,
and `"**"` to the values of the `**mappings` passed."""

from __future__ import annotations

import ast


def call_arguments(frame, e: ast.Call) -> tuple:
    """`(args, kwargs)` of the call `e`, evaluated in `frame`."""
    args, kwargs = [], {}
    for a in e.args:
        if isinstance(a, ast.Starred):
            args.append(("*", frame.ev(a.value)))
        else:
            args.append(("", frame.ev(a)))
    for kw in e.keywords:
        if kw.arg is None:
            kwargs.setdefault("**", []).append(frame.ev(kw.value))
        else:
            kwargs[kw.arg] = frame.ev(kw.value)
    return args, kwargs


def plain_args(frame, e, args, kwargs, what) -> list:
    """The positional values, when none is starred and no `**mapping` is passed."""
    if any(star for star, _ in args) or "**" in kwargs:
        raise frame.an.impure(f"calls {what} with *args/**kwargs the analysis cannot follow", e)
    return [v for _, v in args]


def kw_values(kwargs):
    """Every keyword value, those of `**mappings` included."""
    for k, v in kwargs.items():
        if k == "**":
            yield from v
        else:
            yield v


def call_name(func_node) -> str:
    """The callee as written, to name it in a reason."""
    try:
        return ast.unparse(func_node)
    except Exception:  # pragma: no cover - unparse handles every expression
        return "a function"

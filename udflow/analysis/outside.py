"""What a function can read from outside its own code, as a key that changes when any of it does.

The analysis folds the constants a function reads from module globals, closure cells and
parameter defaults into its properties and model (Q7's `start`, `end`, a threshold
`LIMIT`), and follows the helper functions it calls. Python reads those values when the
function runs, not when udflow analysed it:

    LIMIT = 5
    flow = src.filter(lambda r: r["x"] < LIMIT)     # analysed here: x < 5
    LIMIT = 7
    flow.collect()                                   # Python keeps x < 7

So the analysis cache (`udflow.analysis.analyze`) is keyed by this snapshot as well as
by the function: a value rebound since the last analysis means a new analysis, and every
consumer (the search, the native lowering) sees what the function computes now.

The snapshot covers every name the function's code (nested lambdas and comprehensions
included) looks up as a global, the attributes it reads of a module it holds (`cfg.LIMIT`),
its closure cells and defaults, and the same of every plain Python function among those
values (the helpers the analysis follows). A constant is keyed by its type and repr (so
that `1`, `1.0` and `True` differ, and NaN equals itself); anything else by identity: the
analysis folds no mutable value (a dict it reads is shared state, never a constant).
"""

from __future__ import annotations

import types
from functools import lru_cache

from udflow.analysis.known import is_constant


def snapshot(fn) -> tuple:
    """A hashable key of the outside values `fn` (and the functions they hold) can read:
    ((name, key), ...), each name once (`helper.NAME` for a helper's, `()0` for a default)."""
    out: list = []
    _collect(fn, out, set(), "")
    return tuple(out)


def changed(fn, before: tuple) -> list[str]:
    """The names whose values differ between the snapshot `before` and `fn`'s now."""
    now = dict(snapshot(fn))
    was = dict(before)
    return sorted(name for name in now.keys() | was.keys() if now.get(name) != was.get(name))


def _collect(fn, out: list, seen: set, prefix: str) -> None:
    fn = getattr(fn, "__func__", fn)  # a bound method reads its function's names
    if not isinstance(fn, types.FunctionType) or id(fn) in seen:
        return
    seen.add(id(fn))
    code = fn.__code__
    names = _names(code)  # globals and attributes alike (both are the code's co_names)
    held = [(name, fn.__globals__[name]) for name in names if name in fn.__globals__]
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            held.append((name, cell.cell_contents))
        except ValueError:  # an empty cell: nothing bound yet
            held.append((name, _EMPTY))
    held += [(f"(){i}", d) for i, d in enumerate(fn.__defaults__ or ())]
    held += sorted((fn.__kwdefaults__ or {}).items())
    for name, value in held:
        out.append((prefix + name, _key(value)))
        if isinstance(value, types.ModuleType):
            out += [(f"{prefix}{name}.{a}", _key(attribute)) for a in names
                    if (attribute := _attribute(value, a)) is not _EMPTY]
        else:
            _collect(value, out, seen, f"{prefix}{name}.")


_EMPTY = object()


def _attribute(module, name: str):
    """`module.name`, or _EMPTY where it has none (a module's own `__getattr__` may raise
    anything for a name the code uses on another object)."""
    try:
        return getattr(module, name)
    except Exception:  # noqa: BLE001 - not an attribute this function can read
        return _EMPTY


@lru_cache(maxsize=4096)
def _names(code) -> tuple:
    """The names the code and the code nested in it look up as globals or attributes."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.update(_names(const))
    return tuple(sorted(names))


def _key(value) -> tuple:
    if isinstance(value, (str, bytes)):  # equal only to the same text (no repr of a long one)
        return (type(value).__name__, value)
    if is_constant(value):
        return (type(value).__name__, repr(value))
    return ("id", id(value))

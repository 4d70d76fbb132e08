"""Whole-group forwarding: a Reduce that keeps or drops each key group entire.

A reduce function *forwards groups* when, for every group G it is called on,
its output bag is either G itself or empty:

    f(G) = G   or   f(G) = []        for every group G

Such a Reduce with key H preserves the key groups of every key K ⊇ H (each
K-group lies inside one H-group, so it is kept or dropped whole): it
satisfies KGP (paper, Definition 5, extended to KAT operators) and can be
reordered with another Reduce under ROC (the remark after Theorem 2).

The check is syntactic and deliberately narrow; it complements the
interpreter, which has already established that the function is pure and
emits its input records unchanged (`writes` empty, `copy`). What is left to
prove is the *count*: every record yielded exactly once, or none. A group
name is the parameter, or a name bound once, at the top of the body, to
`list(parameter)`. The only emit sites allowed are the forwarding ones:

    yield from G                      for r in G:
                                          yield r

and along every path of the body at most one of them runs (a condition may
read anything; `return` and `raise` end a path). A group name may otherwise
only be iterated by a comprehension or a loop without `yield`, or measured by
`len`; anything else (indexing, slicing, methods, aliasing, passing it to a
function, a nested function that sees it) gives up. The parameter itself,
when not materialised, may only be measured by `len` besides the forwarding:
it may be a one-shot iterator, which a first pass would partly consume.

A CoGroup function *forwards side i* under the same discipline with its i-th
group parameter, one more forwarding site allowed, which extends each record
with fields named by string literals:

    for r in G:
        yield {**r, "n_orders": len(other), ...}

so that every call emits, for its side-i group G, one record per record of G
(each that record, possibly extended) or nothing, and nothing at all when G is
empty. The other group may be used freely: what the extension writes is the
interpreter's `writes`, and the rules keep the Reduce that moves across the
CoGroup away from those fields (ROC).
"""

from __future__ import annotations

import ast
import builtins
from typing import Optional

# Path counts: the set of how many forwarding sites ran along some path.
Counts = Optional[frozenset]
_MANY = 2  # counts are capped: two or more is already wrong


def forwarding_lines(fnode, group: str, globals_: dict, extend: bool = False) -> Optional[tuple[int, ...]]:
    """The lines of the forwarding sites of function `fnode` for its group parameter
    `group`, or None when it cannot be shown to forward whole groups. `extend` also
    accepts sites that extend each record with literal-named fields (CoGroup sides)."""
    if not isinstance(fnode, ast.FunctionDef):
        return None
    for name in ("list", "len"):
        if globals_.get(name, getattr(builtins, name)) is not getattr(builtins, name):
            return None
    body = fnode.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    names = _group_names(body, group)
    if names is None:
        return None
    materialised = names - {group} if not _rebinds_first(body, group) else names
    sites: list[int] = []
    if not _uses_ok(fnode, body, names, group, materialised, sites, extend):
        return None
    fall, ret = _block(body, names, extend)
    paths = (fall or frozenset()) | (ret or frozenset())
    if not sites or not paths or max(paths) > 1:
        return None
    return tuple(sorted(sites))


def _is_list_of(e, group: str) -> bool:
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "list"
            and len(e.args) == 1 and not e.keywords
            and isinstance(e.args[0], ast.Name) and e.args[0].id == group)


def _alias(stmt, group: str) -> Optional[str]:
    """`X = list(group)`: the name X, else None."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and _is_list_of(stmt.value, group)):
        return stmt.targets[0].id
    return None


def _rebinds_first(body, group: str) -> bool:
    return bool(body) and _alias(body[0], group) == group


def _group_names(body, group: str) -> Optional[frozenset]:
    """The parameter and its top-level `list(...)` copies; None when a copy is rebound."""
    names = {group}
    for stmt in body:
        target = _alias(stmt, group)
        if target is not None and target != group:
            if target in names:
                return None
            names.add(target)
    if _rebinds_first(body, group) and sum(_alias(s, group) == group for s in body) != 1:
        return None
    return frozenset(names)


def _forwarded(stmt, names, extend: bool = False) -> Optional[str]:
    """The group name a forwarding statement forwards, else None."""
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.YieldFrom)
            and isinstance(stmt.value.value, ast.Name) and stmt.value.value.id in names):
        return stmt.value.value.id
    if (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and isinstance(stmt.iter, ast.Name)
            and stmt.iter.id in names and not stmt.orelse and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Expr) and isinstance(stmt.body[0].value, ast.Yield)
            and _emits_record(stmt.body[0].value.value, stmt.target.id, extend)):
        return stmt.iter.id
    return None


def _emits_record(value, name: str, extend: bool) -> bool:
    """`name` itself, or (with `extend`) `{**name, "field": expr, ...}` where no expression
    rebinds a name or yields: the record, unchanged or extended."""
    if isinstance(value, ast.Name):
        return value.id == name
    if not (extend and isinstance(value, ast.Dict) and value.keys and value.keys[0] is None
            and isinstance(value.values[0], ast.Name) and value.values[0].id == name):
        return False
    extra = list(zip(value.keys[1:], value.values[1:]))
    return all(isinstance(k, ast.Constant) and isinstance(k.value, str)
               and not any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Lambda))
                           for n in ast.walk(v))
               for k, v in extra)


def _has_yield(node) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def _uses_ok(fnode, body, names, group, materialised, sites: list, extend: bool = False) -> bool:
    """Every occurrence of a group name (and of `list`/`len`) is one the module docstring allows."""
    allowed: set = set()  # ids of Name nodes whose use is accounted for
    for stmt in body:
        if _alias(stmt, group) is not None:
            allowed.add(id(stmt.value.args[0]))
            allowed.add(id(stmt.targets[0]))
    for n in ast.walk(fnode):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and n is not fnode:
            if any(isinstance(m, ast.Name) and m.id in names for m in ast.walk(n)):
                return False  # a closure over the group
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return False
        if isinstance(n, ast.stmt) and _forwarded(n, names, extend) is not None:
            allowed.add(id(n.value.value if isinstance(n, ast.Expr) else n.iter))
            sites.append(n.lineno)
        elif isinstance(n, ast.comprehension) and isinstance(n.iter, ast.Name) and n.iter.id in materialised:
            allowed.add(id(n.iter))
        elif isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id in materialised \
                and not _has_yield(n):
            allowed.add(id(n.iter))
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len"
              and len(n.args) == 1 and not n.keywords and isinstance(n.args[0], ast.Name)
              and n.args[0].id in names):
            allowed.add(id(n.args[0]))
    for n in ast.walk(fnode):
        if isinstance(n, ast.Name):
            if n.id in ("list", "len") and not isinstance(n.ctx, ast.Load):
                return False
            if n.id in names and id(n) not in allowed:
                return False
    return True


def _block(stmts, names, extend: bool = False) -> tuple[Counts, Counts]:
    """(counts on paths falling through, counts on paths that return)."""
    fall: Counts = frozenset({0})
    ret: Counts = None
    for s in stmts:
        if fall is None:
            break
        f, r = _statement(s, names, extend)
        ret = _union(ret, _add(fall, r))
        fall = _add(fall, f)
    return fall, ret


def _statement(s, names, extend: bool = False) -> tuple[Counts, Counts]:
    if _forwarded(s, names, extend) is not None:
        return frozenset({1}), None
    if isinstance(s, ast.Raise):
        return None, None
    if isinstance(s, ast.Return):
        if s.value is not None and not (isinstance(s.value, ast.Constant) and s.value.value is None):
            return None, frozenset({_MANY})
        return None, frozenset({0})
    if isinstance(s, ast.If) and not _has_yield(s.test):
        bf, br = _block(s.body, names, extend)
        of, orr = _block(s.orelse, names, extend)
        return _union(bf, of), _union(br, orr)
    if _has_yield(s):
        return None, frozenset({_MANY})  # any other emit site
    returns = any(isinstance(n, ast.Return) for n in ast.walk(s))
    return frozenset({0}), (frozenset({0}) if returns else None)


def _add(a: Counts, b: Counts) -> Counts:
    if a is None or b is None:
        return None
    return frozenset(min(x + y, _MANY) for x in a for y in b)


def _union(a: Counts, b: Counts) -> Counts:
    if a is None:
        return b
    if b is None:
        return a
    return a | b

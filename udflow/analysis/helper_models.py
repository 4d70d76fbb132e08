"""A call of the user's own helper as the term of what the helper returns: the helper inlined.

    def stem(word):                                (w[:-5] if w.endswith("ingly") and len(w) - 5 >= 3 else
        for suffix in SUFFIXES:                     (w[:-4] if w.endswith("edly") and len(w) - 4 >= 3 else
            if word.endswith(suffix) and ...:  ->   ...
                return word[: -len(suffix)]          w))
        return word                                with w the term of the call's argument

The helper's text is edited into a record function over one field per parameter
(`analysis.edited`: each `return E` made `return {**row, VALUE: E}`, falling off the end
`None`) and analysed like any Map (so a loop over a constant tuple is unrolled, a helper it
calls is inlined in turn). Its model's cases, first match first, are the conditional above,
each parameter's field replaced by the argument's term. A helper with no such model (a
loop over data, a try, a value the IR cannot express) stays a `HelperCall`: Python
computes it inside the native plan, as before.

Law: the term gives what the call gives and raises what it raises, first error first.
Python evaluates the arguments, left to right, then the body; the term reads an argument
where the body reads its parameter (the same value, terms being pure, but possibly later or
never), so an argument that may raise is computed first (`Evaluated`), in order, and the
body is the conditional's branch that follows:

    h(1 // r["d"])   ->   (<body> if computed(1 // r["d"]) else None)      (always the body)
"""

from __future__ import annotations

import inspect
import types
from functools import lru_cache
from typing import Optional

from udflow.analysis.edited import NotInlined, Shape, inlined
from udflow.analysis.model import Emit, RecordModel
from udflow.analysis.outside import snapshot
from udflow.expr import BoolOp, Evaluated, Expr, Field, IfElse, Lit, transform

VALUE = "__udflow_value"
PARAMETER = "__udflow_param{}"  # the field the record function reads a parameter from


def inlined_call(fn: types.FunctionType, args: tuple, never_raises, model_of) -> Optional[Expr]:
    """The term of `fn(*args)` (module docstring), or None where the helper has no value model.
    `never_raises(term)`: whether evaluating a term surely raises nothing; `model_of(f, fields)`:
    the model of the Map `f` over `fields` (the analysis, handed in: it calls this)."""
    body = value_model(fn, len(args), snapshot(fn), model_of)
    if body is None:
        return None
    by_field = {Field(PARAMETER.format(k)): a for k, a in enumerate(args)}
    term = transform(body, lambda t: by_field.get(t, t))
    first = tuple(Evaluated(a) for a in args if not never_raises(a))
    if not first:
        return term
    return IfElse(first[0] if len(first) == 1 else BoolOp("and", first), term, Lit(None))


@lru_cache(maxsize=512)
def value_model(fn: types.FunctionType, arity: int, outside: tuple, model_of) -> Optional[Expr]:
    """What `fn` returns as one term over the fields `PARAMETER.format(k)`, or None; cached
    per function and the outside values it reads (`outside.snapshot`), as the analysis is."""
    code = fn.__code__
    if code.co_flags & inspect.CO_GENERATOR or code.co_argcount != arity or fn.__defaults__ or fn.__kwdefaults__:
        return None  # a generator, or parameters other than one per argument
    columns = tuple(PARAMETER.format(k) for k in range(arity))
    try:
        record_function = inlined(fn, columns, Shape("map", out=VALUE), fn.__name__, origin="helper")
    except NotInlined:
        return None
    model = model_of(record_function, frozenset(columns))
    if not isinstance(model, RecordModel) or not model.cases or model.cases[-1].guard != Lit(True):
        return None
    values = []
    for case in model.cases:
        fields = dict(case.emit.fields) if isinstance(case.emit, Emit) else {}
        if VALUE not in fields:
            return None
        values.append((case.guard, fields[VALUE]))
    term = values[-1][1]
    for guard, value in reversed(values[:-1]):
        term = IfElse(guard, value, term)
    if not term.fields() <= set(columns):
        return None
    return term


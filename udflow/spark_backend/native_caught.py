"""`try: E except T: F` (`udflow.caught.Caught`) natively, on the rows where E surely raises nothing.

No native form raises an exception another can catch: a failing guard ends the query. So
the native form takes the rows on which E's native form computes Python's value without
raising, and the others run the whole term in Python, in the plan (`python_calls`, handed
those rows only), where the handler catches what Python's `except` catches:

    try:                                      CASE WHEN at IS NOT NULL
        return datetime.strptime(                   AND <trim(at) has the format's strict
            text.strip(), "%Y-%m-%d %H:%M:%S")           spelling, a date that exists>
    except (ValueError, AttributeError):      THEN make_timestamp_ntz(<its fields>)
        return None                           ELSE <Python's try statement> END

E has a native form here (`native_form`) when it is a text made of fields, constants,
slices and `strip`/`lstrip`/`rstrip()` (which raise only on a None receiver), or a parse of such a
text (`native_parse`: `float`, `int`, `strptime` with a strict spelling): then E raises
nothing where the fields it reads are not None and the text is strict, and there its
native value is Python's. The handler and its fallback F are Python's on the other rows,
so the fallback may be any term of E's type (or None). A `try` of another form is computed
whole by Python in the plan, typed by the driver's sample as a helper's call is.

Where no Python can run (an aggregate's argument, an explosion's pieces) it has no native
form.
"""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext

from udflow.caught import Caught
from udflow.expr import BoolOp, Call, Elem, Field, IsNone, Lit, Slice
from udflow.spark_backend import native_parse, native_spans
from udflow.spark_backend.native_case import HIDDEN
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import conjunction

_TEXT_CALLS = ("str.strip", "str.lstrip", "str.rstrip")  # raise only on a None receiver


def native_form(t: Caught) -> bool:
    """Whether the body of `t` is of the form the native lowering takes (module docstring)."""
    return _plain_text(_parse_and_text(t)[1]) and not any(isinstance(e, Elem) for e in t.walk())


def _parse_and_text(t: Caught) -> tuple:
    """(the body's parse or None, the text it parses: the body itself where it is no parse)."""
    return (t.body, t.body.args[0]) if native_parse.parses(t.body) else (None, t.body)


def _plain_text(term) -> bool:
    if isinstance(term, (Field, Lit)):
        return True
    if isinstance(term, Slice):
        return _plain_text(term.operand)
    return isinstance(term, Call) and term.name in _TEXT_CALLS and len(term.args) == 1 and _plain_text(term.args[0])


def lower_caught(low, t: Caught) -> Typed:
    """The native form where `native_form` holds, else the whole term as Python in the plan."""
    if low.python_calls is None:
        raise NotNative("a try statement where no Python runs (an aggregate's argument, a piece)")
    if native_form(t):
        mark, limits = low.python_calls.mark(), len(low.limits)
        try:
            return _strict_rows(low, t)
        except NotNative:
            low.python_calls.rewind(mark)
            del low.limits[limits:]
    return low.python_calls.lower_sampled(low, t, "a try statement")


def _strict_rows(low, t: Caught) -> Typed:
    parse, text = _parse_and_text(t)
    fields = [Field(name) for name in sorted(text.fields())]
    nonnull = [f"({c.sql} IS NOT NULL)" for c in map(low.lower, fields) if c.nullable]
    present = [IsNone(f, negated=True) for f in fields]
    with low.knowing(present[0] if len(present) == 1 else BoolOp("and", tuple(present)), True) if present \
            else nullcontext():
        x, raises = low.lower_raising(text)
    if raises:
        raise NotNative(f"{text} may raise where its fields are not None")
    if not isinstance(text, Field):  # read many times by one expression: computed once, below
        x = dataclasses.replace(x, sql=low.python_calls.native_below(text, x.sql))
    if parse is None:
        condition, value, family = "TRUE", x.sql, x.family
    else:
        strict = native_parse.STRICT[parse.name](x.sql, parse.args[1:]) if x.family == "str" else None
        if strict is None:
            raise NotNative(f"{parse.name} of a {x.family}")
        (condition, value), family = strict, native_parse.FAMILY[parse.name]
    fallback = _lowered_alone(low, t.fallback)
    if fallback.family not in ("none", family):
        raise NotNative(f"a try statement whose value is a {family} or a {fallback.family}")
    sure = conjunction("AND", nonnull + ([condition] if condition != "TRUE" else []))
    if sure == "TRUE":
        return Typed(value, family, x.nullable and parse is None)
    guards = _int_limit(low, t, parse, fields, fallback) if family == "int" else []
    python = low.python_calls.lower_term(low, t, family, only_where=f"(NOT coalesce({sure}, FALSE))")
    return Typed(low.guarded(guards, f"CASE WHEN {sure} THEN {value} ELSE {python.sql} END"), family, True)


def _lowered_alone(low, fallback) -> Typed:
    """The fallback lowered for its family and whether it is a constant (`Typed.known`: `-1`,
    the negation of a literal, is one): Python computes it, so the calls and limits its
    lowering added are dropped."""
    mark, limits = low.python_calls.mark(), len(low.limits)
    try:
        return low.lower(fallback)
    finally:
        low.python_calls.rewind(mark)
        del low.limits[limits:]


def _int_limit(low, t: Caught, parse, fields: list, fallback: Typed) -> list:
    """Python's `int()` of a text of `native_parse.int_width` characters at most (18 in base 10)
    fits 64 bits (whitespace, signs and underscores only shorten it); a longer one may not, and
    no column holds it: such rows are outside the native form (computed by the function in
    Python where the operator splits, else an error). The bound is the field's length: a case
    mapping lengthens only letters (`"ß".upper()` is "SS"), which are digits of a base past 10
    only, so there the text must be the field itself. A computed fallback could be any int:
    not native."""
    if fallback.known is None or len(fields) != 1 or fields[0].name.startswith(HIDDEN):
        raise NotNative("a try statement of int() with a computed fallback, or not over an input column")
    base = native_parse.int_base(parse.args[1:]) if parse is not None else 10
    if base > 10 and parse.args[0] != fields[0]:
        raise NotNative(f"a try statement of int() in base {base} of a text other than its field")
    width = native_parse.int_width(base)
    column = low.lower(fields[0]).sql
    within = native_spans.RowCondition(f"(char_length({column}) <= {width})", (fields[0].name,),
                                       f"{fields[0].name} is longer than {width} characters (int() may pass 64 bits)")
    error = low.cannot_hold(f"an int() of a text longer than {width} characters may pass 64 bits",
                            native_spans.Limit.where(within))
    return [] if error is None else [(f"(char_length({column}) > {width})", error)]

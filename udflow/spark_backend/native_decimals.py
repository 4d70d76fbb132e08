"""`x.quantize(exp, rounding)` of a Decimal: Spark's rounding of a decimal to a scale.

Python's `Decimal.quantize` gives the value rounded to the exponent of the constant `exp`
(`Decimal("0.01")`: two places), trailing zeros kept (`Decimal("1.5")` quantized to
`Decimal("1.50")`), by `rounding` or, where none is given, the context's (half to even in
Python's default context, the one udflow's Decimal models assume). Spark's decimal of
scale q holds the same value with the same places, so each rounding is one of Spark's:

    rounding                 native form, x a decimal(p, s) rounded to q >= 0 places
    ---------------------    ----------------------------------------------------------
    s <= q (no digit lost)   CAST(x AS DECIMAL(p - s + q, q)): the places padded with zeros
    None, ROUND_HALF_EVEN    bround(x, q) (java.math's HALF_EVEN)
    ROUND_HALF_UP            round(x, q) (HALF_UP: a tie away from zero, as Python's)
    ROUND_FLOOR, _CEILING    floor(x, q), ceil(x, q)
    ROUND_DOWN, ROUND_UP     toward or away from zero: floor or ceil by the sign of x

each cast to DECIMAL(p - s + 1 + q, q), the one more integral digit a rounding up may need
(`99.995` to `100.00`). ROUND_HALF_DOWN and ROUND_05UP have no Spark function: Python's
call. A result of more than 28 digits (Python's precision) raises Python's
InvalidOperation, tested on the rounded value as Python tests it: |v| >= 10**(28 - q). An
exponent above 1 (`Decimal("1E+1")`: tens) has no Spark scale (Python writes
`Decimal("1.2E+2")`), and a type wider than 38 digits none either: not native.
`round(x, n)` of a Decimal is `x.quantize(Decimal("1E-n"))` in Python: the same form for
0 <= n <= 38. None raises
Python's AttributeError, and so does a receiver of another type (an int has no quantize):
Python's call. Spark's decimals have no negative zero (`docs/native.md`, the Decimal
contract): `Decimal("-0.001")` quantized is `Decimal("-0.00")` in Python and `0.00` on Spark.
"""

from __future__ import annotations

import decimal

from udflow.expr import Lit
from udflow.spark_backend import python_words
from udflow.spark_backend.native_strings import none_receiver_guards
from udflow.spark_backend.native_types import DECIMAL_DIGITS, NotNative, Typed
from udflow.spark_backend.sql import MAX_PRECISION, call, cast, literal

ROUNDED = {None: "bround", decimal.ROUND_HALF_EVEN: "bround", decimal.ROUND_HALF_UP: "round",
           decimal.ROUND_FLOOR: "floor", decimal.ROUND_CEILING: "ceil"}
BY_SIGN = {decimal.ROUND_DOWN: ("ceil", "floor"), decimal.ROUND_UP: ("floor", "ceil")}  # (x < 0, x >= 0)
SHOWN = {"decimal.quantize": "x.quantize(exp), x.quantize(exp, rounding) of a Decimal, exp a constant of "
                             "0 or more places, rounding HALF_EVEN, HALF_UP, FLOOR, CEILING, DOWN or UP"}


def places(exp) -> int | None:
    """The places `exp` quantizes to, or None where no Spark scale holds them."""
    if not isinstance(exp, decimal.Decimal) or not exp.is_finite():
        return None
    q = -exp.as_tuple().exponent
    return q if 0 <= q <= MAX_PRECISION else None


def quantize_form(args) -> bool:
    """A receiver, a constant exponent Spark's scales hold and a rounding Spark computes."""
    return len(args) == 3 and isinstance(args[1], Lit) and places(args[1].value) is not None \
        and isinstance(args[2], Lit) and (args[2].value in ROUNDED or args[2].value in BY_SIGN)


def _quantize(low, args) -> Typed:
    x, exp, rounding = args
    if x.family != "decimal":
        raise NotNative(f"quantize of a {x.family}")
    return quantized(low, x, places(exp.known[0]), rounding.known[0], none_receiver_guards(low, x, "quantize"))


def quantized(low, x: Typed, q: int, mode, guards: list) -> Typed:
    """The decimal `x` quantized to `q` places by the rounding `mode` (None: half to even),
    after `guards` (its None's error); also `round(x, q)`, which is `x.quantize(1E-q)`."""
    p, s = x.decimal
    precision = p - s + q + (1 if s > q else 0)
    if precision > MAX_PRECISION:
        raise NotNative(f"a decimal({p},{s}) quantized to {q} places needs more than {MAX_PRECISION} digits")
    if s <= q:
        value = x.sql
    elif mode in ROUNDED:
        value = call(ROUNDED[mode], x.sql, str(q))
    else:
        below, above = BY_SIGN[mode]
        value = f"CASE WHEN {x.sql} < 0 THEN {call(below, x.sql, str(q))} ELSE {call(above, x.sql, str(q))} END"
    value = cast(value, f"DECIMAL({precision},{q})")
    if precision > DECIMAL_DIGITS:
        bound = cast(literal(format(decimal.Decimal(10).scaleb(DECIMAL_DIGITS - q - 1), "f")),
                     f"DECIMAL({MAX_PRECISION},{q})")
        words = python_words.raised_by(decimal.Decimal.quantize, decimal.Decimal(10) ** 40, decimal.Decimal(1).scaleb(-q))
        guards = guards + [(f"(abs({value}) >= {bound})", low.error(words))]
    return Typed(low.guarded(guards, value), "decimal", False, decimal=(precision, q))


CALLS = {"decimal.quantize": _quantize}
FORMS = {"decimal.quantize": quantize_form}

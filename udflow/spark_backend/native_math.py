"""The `math` functions whose value Spark computes exactly as Python does: native forms.

IEEE 754 gives one correctly rounded result for a square root and none for `exp`, `log`
or `sin`, whose last bit may differ between the JVM's libraries and C's; `floor`, `ceil`
and `fabs` are exact everywhere. So these four are native, the rest run as Python inside
the native plan (`python_calls`).

    call          Python                                   native form
    ------------  ---------------------------------------  ------------------------------------
    math.sqrt(x)  float(x) ** 0.5, correctly rounded;      sqrt(CAST(x AS DOUBLE)); x < 0
                  ValueError: math domain error for x < 0  raises first (NaN is not below 0:
                  (-inf included), nan for nan, -0.0 for   sqrt(NaN) is NaN in both)
                  -0.0
    math.fabs(x)  abs(float(x)): 0.0 for -0.0, nan for     abs(CAST(x AS DOUBLE))
                  nan
    math.floor(x) an int: x itself for an int or bool;     x; for a float CAST(FLOOR(x) AS
    math.ceil(x)  ValueError for nan, OverflowError for    BIGINT) after the NaN, infinity and
                  +-inf, any size of int otherwise         64-bit guards (an int past 64 bits
                                                           raises, as everywhere)

None raises TypeError ("must be real number, not NoneType"), as Python says it; a str,
Decimal or date argument has no native form here (Python's rules for them differ).

**The last-bit contract** (`AT_VALUE`). `math.log`, `math.log10`, `math.exp`, `math.sin`,
`math.cos`, `math.tan` and `math.atan` have no one correct result: CPython calls the
platform's C library (glibc here, within 1 to 2 ulps of the exact value; another
platform's libm gives other last bits), Spark calls Java's `StrictMath` (fdlibm) or
`Math`, within 1 ulp. The two differ in the last bit or two on up to 3% of arguments
(measured over 150k to 300k doubles: at most 2 ulps). Where such a call
*is the value of a written field* (the field's whole term, or a branch of a conditional
that is), it runs natively and the field's value is equal to Python's within
`CONTRACT_ULPS`, as a float sum is equal up to association: nothing the function decides
(a guard, a comparison, a key) depends on those bits. Anywhere else (`if math.log(x) > 2`)
the call runs as Python (`python_calls`), exactly. Python's errors stay Python's:

    call          Python raises                              native form
    ------------  -----------------------------------------  ------------------------------
    math.log(x)   ValueError: math domain error for x <= 0   ln(CAST(x AS DOUBLE)) after the
    math.log10(x) (-0.0 and -inf included); nan for nan,     x <= 0 guard (Spark's null
                  inf for inf                                there never shows)
    math.exp(x)   OverflowError: math range error where the  exp(CAST(x AS DOUBLE)); the
                  result passes 1.8e308 and x is finite      guard reads the result
    math.sin(x)   ValueError: math domain error for +-inf;   sin(CAST(x AS DOUBLE)) after the
    math.cos(x)   nan for nan                                infinity guard
    math.tan(x)
    math.atan(x)  never raises (+-pi/2 for +-inf)            atan(CAST(x AS DOUBLE))
"""

from __future__ import annotations

import math
import struct
from typing import Optional

from udflow.expr import Arith, Field, Lit, Neg
from udflow.spark_backend import native_decimals, native_spans, python_words, sql
from udflow.spark_backend.native_types import INT_MAX, INT_MIN, NotNative, Typed
from udflow.spark_backend.sql import call, cast, literal

NUMBERS = ("int", "float", "bool")
TWO_63 = "9.223372036854775807E18"  # 2**63 as a double literal: the first double past the longs


def _number(name: str, x: Typed) -> None:
    if x.family not in NUMBERS:
        raise NotNative(f"{name} of {x.family}")


def _as_double(x: Typed) -> str:
    return x.sql if x.family == "float" else cast(x.sql, "DOUBLE")


def _none(low, name: str, x: Typed) -> list:
    return low.none_guard(name, x, run=getattr(math, name.removeprefix("math.")))


def _sqrt(low, args) -> Typed:
    (x,) = args
    _number("math.sqrt", x)
    guards = _none(low, "math.sqrt", x)
    if x.family != "bool":  # a bool is 0 or 1
        guards.append((f"({x.sql} < 0)", low.error(python_words.raised_by(math.sqrt, -1.0))))
    return Typed(low.guarded(guards, call("sqrt", _as_double(x))), "float", False)


def _fabs(low, args) -> Typed:
    (x,) = args
    _number("math.fabs", x)
    return Typed(low.guarded(_none(low, "math.fabs", x), call("abs", _as_double(x))), "float", False)


def _scaled(name: str, factor: float):
    """`math.radians(x)`, `math.degrees(x)`: CPython's `x * (pi / 180)` (or `180 / pi`), one IEEE
    product with that double constant, as Spark computes it (an infinity past 1.8e308, as Python)."""
    def make(low, args) -> Typed:
        (x,) = args
        _number(f"math.{name}", x)
        value = f"({_as_double(x)} * {literal(factor)})"
        return Typed(low.guarded(_none(low, f"math.{name}", x), value), "float", False)
    return make


def to_integer(low, name: str, run, x: Typed, value, guards: list) -> Typed:
    """An int from a float `x` (`value(x_sql)`, a double holding an integer), as Python's
    `run` makes it: NaN raises ValueError, an infinity OverflowError (after `guards`); an
    int or bool argument is its own value. Python's int holds floor(1e308), a long does
    not: past 64 bits is a limit of the native form."""
    if x.family != "float":
        return Typed(low.guarded(guards, cast(x.sql, "BIGINT")), "int", False)
    guards = guards + [
        (f"isnan({x.sql})", low.error(python_words.raised_by(run, math.nan))),
        (_infinite(x.sql), low.error(python_words.raised_by(run, math.inf))),
    ]
    span = native_spans.to_int(x.span)
    overflow = low.cannot_hold(native_spans.OVERFLOW, native_spans.fits_long(span))
    if overflow is not None:
        guards.append((f"({x.sql} >= {TWO_63} OR {x.sql} < {INT_MIN}D)", overflow))
    return Typed(low.guarded(guards, cast(value(x.sql), "BIGINT")), "int", False, span=span)


def _rounded(name: str, spark_name: Optional[str]):
    """`math.floor`, `math.ceil`, `math.trunc` (Spark's cast truncates toward 0, as trunc)."""
    run = getattr(math, name)

    def make(low, args) -> Typed:
        (x,) = args
        _number(f"math.{name}", x)
        value = (lambda v: call(spark_name, v)) if spark_name else (lambda v: v)
        return to_integer(low, f"math.{name}", run, x, value, _none(low, f"math.{name}", x))
    return make


def _classify(name: str):
    """`math.isnan`, `math.isinf`, `math.isfinite`: a bool; an int or bool is finite (a long
    always converts to a double)."""
    run = getattr(math, name)
    tests = {"isnan": lambda v: f"isnan({v})",
             "isinf": _infinite,
             "isfinite": lambda v: f"NOT (isnan({v}) OR {_infinite(v)})"}

    def make(low, args) -> Typed:
        (x,) = args
        _number(f"math.{name}", x)
        value = tests[name](x.sql) if x.family == "float" else literal(run(0))
        return Typed(low.guarded(_none(low, f"math.{name}", x), value), "bool", False)
    return make


def _isclose(low, args) -> Typed:
    """`math.isclose(a, b, rel_tol=r, abs_tol=t)` of numbers, r and t finite constants not
    below 0 (`analysis.resolved.isclose_call`), as CPython tests it: equal values are close
    (infinities included), an infinity is close to nothing else, and otherwise |b - a| is
    at most |r * b|, |r * a| or t. Each of those is one IEEE operation, computed alike by
    the JVM and C. NaN is close to nothing, which Spark's SQL must be told: its `=` holds
    for NaN = NaN, and NaN is largest in its orderings (`NaN <= x` false, `x <= NaN` true)."""
    a, b, rel, tol = args
    for x in (a, b):
        _number("math.isclose", x)
    x, y = _as_double(a), _as_double(b)
    diff = f"abs({y} - {x})"
    value = sql.case([(f"(isnan({x}) OR isnan({y}))", "FALSE"), (f"({x} = {y})", "TRUE"),
                      (f"({_infinite(x)} OR {_infinite(y)})", "FALSE")],
                     f"({diff} <= abs({rel.sql} * {y}) OR {diff} <= abs({rel.sql} * {x}) OR {diff} <= {tol.sql})")
    # Python's TypeError for a None does not depend on the tolerances
    return Typed(low.guarded(low.none_guard("math.isclose()", a, b, run=math.isclose), value), "bool", False)


def isclose_form(args: tuple) -> bool:
    """Whether `math.isclose`'s argument terms take the native form: its two tolerances
    constants (finite, not negative: `analysis.resolved.isclose_call`)."""
    return len(args) == 4 and all(isinstance(t, Lit) and type(t.value) is float and math.isfinite(t.value)
                                  and t.value >= 0 for t in args[2:])


def _numpy_isnan(low, args) -> Typed:
    """`np.isnan(x)` of a number: numpy's np.bool_, True for NaN only (an int or bool is never
    NaN); None raises numpy's TypeError. **Contract**: the np.bool_ comes back from Spark a
    bool, as from every Spark path (as np.float64 comes back a float)."""
    import numpy

    (x,) = args
    _number("numpy.isnan", x)
    value = f"isnan({x.sql})" if x.family == "float" else "FALSE"
    return Typed(low.guarded(low.none_guard("numpy.isnan()", x, run=numpy.isnan), value), "bool", False)


def _round(low, args) -> Typed:
    """round(x): an int, ties to even (`rint` is IEEE's round-half-even, exact); of an int or
    a bool, its value as an int."""
    (x,) = args
    _number("round", x)
    return to_integer(low, "round", round, x, lambda v: f"rint({v})", low.none_guard("round()", x, run=round))


def lower_round_to(low, args, call) -> Typed:
    """round(x, n), n a constant within ±22 (10**n an exact double): Python rounds the exact
    binary value of x half to even at n digits (round(2.675, 2) is 2.67), Spark's `bround`
    the decimal text (2.68). Natively: y = x * 10**n (x / 10**-n), k = rint(y), the value
    k / 10**n, correctly rounded as Python's is. y is within half an ulp of x * 10**n, so k
    is Python's where y lies farther than 2**-50 * |y| from a half-integer and |y| < 2**52;
    on the other rows (near a tie, or too large) Python computes it (`python_calls`, handed
    those rows only). NaN and the infinities are their own value, as in Python. The flag
    that picks those rows is computed on every row below, so x must be arithmetic over
    fields and numbers (`_null_strict`: it raises only where a field is None, which the
    CASE raises) raising nothing else whatever a condition around it proves."""
    x, digits = args
    n = sql.int_of_literal(digits.sql)
    if x.family == "decimal" and n is not None and 0 <= n <= sql.MAX_PRECISION:  # x.quantize(Decimal(f"1E-{n}"))
        return native_decimals.quantized(low, x, n, None, low.none_guard("round()", x, digits, run=round))
    _number("round", x)
    if n is None or not -22 <= n <= 22:
        raise NotNative("round(x, n) with n not a constant within ±22")
    guards = low.none_guard("round()", x, digits, run=round)
    if x.family != "float":
        return _round_int(low, x, n, guards)
    if n == 0:  # y is x exactly
        return Typed(low.guarded(guards, f"rint({x.sql})"), "float", False)
    if low.python_calls is None or not _null_strict(call.args[0]):
        raise NotNative("round(x, n) where the rows near a tie cannot run as Python, or of a term that may "
                        "take a value where one of its fields is None")
    # on every row, as the flag is computed; a None operand raises TypeError in x itself (its
    # guards, in the CASE), so the flag may read x's SQL without them: null there, no row flagged
    with low.on_every_row(), low.assuming(frozenset(call.args[0].fields())):
        anywhere, raises = low.lower_raising(call.args[0])
    if raises:
        raise NotNative("round(x, n) of a term that may raise (the rows near a tie are told apart on every row)")
    scale = literal(10.0 ** abs(n))
    off_tie = _off_tie(anywhere.sql, n, scale)
    python = low.python_calls.lower(low, call, args, only_where=f"({anywhere.sql} IS NOT NULL AND NOT {off_tie})")
    # x once, for its errors (a None operand's TypeError); its value is `anywhere`'s there
    value = (f"CASE WHEN {x.sql} IS NULL THEN NULL WHEN {off_tie} THEN {_rounded_at(anywhere.sql, n, scale)} "
             f"ELSE {python.sql} END")
    return Typed(low.guarded(guards, value), "float", False)


def _null_strict(term) -> bool:
    """Arithmetic over fields and numbers: Python raises TypeError wherever a field is None."""
    if isinstance(term, (Field, Lit)):
        return not isinstance(term, Lit) or type(term.value) in (int, float)
    if isinstance(term, Neg):
        return _null_strict(term.operand)
    return isinstance(term, Arith) and _null_strict(term.left) and _null_strict(term.right)


def _off_tie(x: str, n: int, scale: str) -> str:
    """Where round(x, n) is k / 10**n with k = rint(y) (`lower_round_to`), or x itself (NaN,
    an infinity)."""
    y = f"({x} * {scale})" if n > 0 else f"({x} / {scale})"
    return (f"(isnan({x}) OR {_infinite(x)} OR (abs({y}) < {literal(2.0 ** 52)} "
            f"AND abs(abs({y} - rint({y})) - {literal(0.5)}) > abs({y}) * {literal(2.0 ** -50)}))")


def _rounded_at(x: str, n: int, scale: str) -> str:
    y, back = (f"({x} * {scale})", "/") if n > 0 else (f"({x} / {scale})", "*")
    return f"CASE WHEN isnan({x}) OR {_infinite(x)} THEN {x} ELSE (rint({y}) {back} {scale}) END"


def _round_int(low, x: Typed, n: int, guards: list) -> Typed:
    """round(i, n) of an int or a bool: itself for n >= 0 (round(True, 2) is 1); for n < 0,
    Spark's `bround` of a long, exact half to even as Python's (round(25, -1) is 20), within
    a long while |i| stays 10**-n below its ends (else the row runs in Python)."""
    if n >= 0:
        return Typed(low.guarded(guards, cast(x.sql, "BIGINT")), "int", False)
    if n < -18:
        raise NotNative("round(int, n) with n below -18")
    step, whole = 10 ** -n, cast(x.sql, "BIGINT")  # True is 1
    if x.family == "bool":
        limit = native_spans.Limit.never_fires()
    else:
        limit = native_spans.Limit.unknown() if x.span is None else x.span.within(INT_MIN + step, INT_MAX - step)
    overflow = low.cannot_hold(native_spans.OVERFLOW, limit)
    if overflow is not None:
        guards = guards + [(f"({whole} > {INT_MAX - step} OR {whole} < {INT_MIN + step})", overflow)]
    return Typed(low.guarded(guards, f"bround({whole}, {n})"), "int", False)


def _contract(name: str, spark_name: str, raises_where=None, raising_value: float = 0.0):
    """The native form of `math.<name>` under the last-bit contract: Spark's `spark_name` of
    the argument as a double, after the None guard and, where `raises_where(double, value)`
    holds, Python's error for `raising_value` (Java returns NaN, infinity or null there)."""
    run = getattr(math, name)

    def make(low, args) -> Typed:
        (x,) = args
        _number(f"math.{name}", x)
        guards = _none(low, f"math.{name}", x)
        double = _as_double(x)
        value = call(spark_name, double)
        if raises_where is not None:
            guards.append((raises_where(double, value), low.error(python_words.raised_by(run, raising_value))))
        return Typed(low.guarded(guards, value), "float", False)
    return make


def _not_positive(x: str, _value: str) -> str:  # log(0), log(-1), log(-inf): math domain error
    return f"({x} <= 0)"


def _overflowed(x: str, value: str) -> str:  # exp past 1.8e308 from a finite x: math range error
    return f"({value} = double('Infinity') AND {x} <> double('Infinity'))"


def _infinite(x: str, _value: str = "") -> str:  # +-inf; sin, cos, tan of one: math domain error
    return f"({x} IN (double('Infinity'), double('-Infinity')))"


# Java's specification and glibc's tables: each within 1 ulp (2 for glibc's log10) of the exact
# value; measured over 150k-300k arguments, at most 2 ulps apart. (sinh, cosh, tanh: Java allows
# 2.5 ulps and they differ by 3: not under this bound, they stay Python.)
CONTRACT_ULPS = 3
AT_VALUE = {  # native only as the value of a written field (the module docstring)
    "math.log": _contract("log", "ln", _not_positive),
    "math.log10": _contract("log10", "log10", _not_positive),
    "math.exp": _contract("exp", "exp", _overflowed, 1000.0),
    **{f"math.{name}": _contract(name, name, _infinite, math.inf) for name in ("sin", "cos", "tan")},
    "math.atan": _contract("atan", "atan"),
}


def field_contracts(case) -> list:
    """(field, term, `contract_calls` of it) for each field a case of a model writes."""
    from udflow.analysis.model import Emit, case_terms_of

    if not isinstance(case.emit, Emit):
        return []
    terms = case_terms_of(case)
    return [(name, term, contract_calls(term, terms)) for name, term in case.emit.fields]


def ulps_apart(a: float, b: float) -> int:
    """How many doubles lie between `a` and `b` (of one sign), counting one end."""
    ia, ib = (struct.unpack("<q", struct.pack("<d", v))[0] for v in (a, b))
    return abs(ia - ib)


def contract_calls(term, case_terms) -> frozenset:
    """The calls of `AT_VALUE` in a written field's `term` that run natively: those at its
    value position (the term itself, or a branch of a conditional that stands there, not its
    test) that occur nowhere else among `case_terms` (the case's guard and fields, `term`
    included), so that no decision of the function reads their last bits."""
    from udflow.expr import Call, IfElse

    def at_value(t) -> list:
        if isinstance(t, IfElse):
            return at_value(t.body) + at_value(t.orelse)
        return [t] if isinstance(t, Call) and t.name in AT_VALUE and len(t.args) == 1 else []

    return frozenset(c for c in at_value(term) if sum(x == c for other in case_terms for x in other.walk()) == 1)


CALLS = {
    "math.sqrt": _sqrt,
    "math.fabs": _fabs,
    "math.floor": _rounded("floor", "floor"),
    "math.ceil": _rounded("ceil", "ceil"),
    "math.trunc": _rounded("trunc", None),
    "round": _round,
    **{f"math.{name}": _classify(name) for name in ("isnan", "isinf", "isfinite")},
    "math.isclose": _isclose,
    "numpy.isnan": _numpy_isnan,
    "math.radians": _scaled("radians", math.pi / 180.0),
    "math.degrees": _scaled("degrees", 180.0 / math.pi),
}

"""The native forms of arithmetic and of the whitelisted calls (`udflow.expr_functions.FUNCTIONS`).

An arithmetic maker gives `(value, extra guards, decimal type)` for operands the
lowering has already checked for None (and for zero, for a division); a call
maker gives the `Typed` result with its own guards. Each states where Python and
Spark part ways and what is done about it.
"""

from __future__ import annotations

import decimal
import math
import operator

from udflow import spark_results
from udflow.expr import Lit
from udflow.spark_backend import (native_dates, native_decimals, native_math, native_minmax, native_spans,
                                  native_strings, python_words, sql)
from udflow.spark_backend.native_types import (
    DECIMAL_DIGITS,
    EXACT_DOUBLE,
    INT_AS_DECIMAL,
    INT_MAX,
    INT_MIN,
    NotNative,
    Typed,
    as_number,
    constant,
)
from udflow.spark_backend.native_spans import OVERFLOW
from udflow.spark_backend.sql import call, cast, literal



# -- arithmetic -------------------------------------------------------------------------------


def _int_op(name: str, op: str):
    """+, -, * on ints: Spark's long wraps around (or raises under ANSI); Python's int grows.
    Where the operands' spans prove the result fits (`native_spans`), the plain operation."""
    def make(low, left, right):
        limit = native_spans.fits_long(native_spans.arith(op, left.span, right.span))
        overflow = low.cannot_hold(OVERFLOW, limit)
        if overflow is None:
            return f"({left.sql} {op} {right.sql})", [], None
        tried = call(name, left.sql, right.sql)  # null on overflow, in either ANSI mode
        # the operation written once: its raise is reached only where it overflowed
        return f"coalesce({tried}, {overflow})", [], None
    return make


POWERS = 4  # the largest constant exponent of an int written as its products


def _int_power(low, left, right):
    """`x ** k` of an int and a constant k of 0 to POWERS: x times itself, each product
    guarded as `*` is (an int past 64 bits is outside the native form: Python computes it
    where the operator splits). Python's int power is exact, as the products are; a
    negative k gives a float in Python, and a computed one any size: not native."""
    k = right.known[0] if right.known is not None else None
    if type(k) is not int or not 0 <= k <= POWERS or left.family != "int":
        raise NotNative("** of ints other than by a constant of 0 to 4")
    if k == 0:
        return "CAST(1 AS BIGINT)", [], None
    times, product = _int_op("try_multiply", "*"), left
    for _ in range(k - 1):
        value, _, _ = times(low, product, left)
        product = Typed(value, "int", False, span=native_spans.arith("*", product.span, left.span))
    return product.sql, [], None


def _float_op(op: str):
    def make(low, left, right):
        return f"({cast(left.sql, 'DOUBLE')} {op} {cast(right.sql, 'DOUBLE')})", [], None
    return make


def _decimal_op(op: str, exact_type):
    """Python keeps 28 significant digits and rounds the rest; Spark keeps the exact result
    at its scale s (while it fits 38 digits). The coefficient has more than 28 digits exactly
    when |x| >= 10**(28 - s): that raises. A result Spark would round to fewer decimal
    places is not native at all."""
    def make(low, left, right):
        a, b = _decimal_type(left), _decimal_type(right)
        exact = exact_type(a, b)
        result = sql.spark_result(exact)
        if result is None:
            raise NotNative(f"a Decimal {op} wider than 38 digits, which Spark rounds")
        if exact[0] <= DECIMAL_DIGITS:  # every value of the type has at most 28 digits
            return f"({_as_decimal(left)} {op} {_as_decimal(right)})", [], result
        name = {"+": "try_add", "-": "try_subtract", "*": "try_multiply"}[op]
        value = call(name, _as_decimal(left), _as_decimal(right))  # null only past 38 digits
        too_wide = f"coalesce(abs({value}) >= {power_of_ten(DECIMAL_DIGITS - result[1], result[1])}, TRUE)"
        message = f"a Decimal result of more than {DECIMAL_DIGITS} digits (Python rounds it)"
        limit = native_spans.fits_decimal(native_spans.arith(op, left.span, right.span), DECIMAL_DIGITS, result[1])
        wide = low.cannot_hold(message, limit)  # a limit: Python's rounded value, in Python
        guard = [] if wide is None else [(too_wide, wide)]
        if result[1] < DECIMAL_DIGITS:  # past the guard it fits 28 digits: say so in its type,
            # which spares a sum over it the bound on every value (`native_groups._decimal_sum`)
            return cast(value, f"DECIMAL({DECIMAL_DIGITS},{result[1]})"), guard, (DECIMAL_DIGITS, result[1])
        return value, guard, result
    return make


def _decimal_type(x: Typed) -> tuple:
    return x.decimal if x.family == "decimal" else INT_AS_DECIMAL


def _as_decimal(x: Typed) -> str:
    return x.sql if x.family == "decimal" else cast(x.sql, "DECIMAL(20,0)")


def power_of_ten(exponent: int, scale: int) -> str:
    """10**exponent as a decimal(38, scale) literal (the type of the value it is compared with)."""
    text = "1" + "0" * exponent if exponent >= 0 else "0." + "0" * (-exponent - 1) + "1"
    return f"CAST('{text}' AS DECIMAL({sql.MAX_PRECISION},{scale}))"


def _true_div(low, left, right):
    value = f"({cast(left.sql, 'DOUBLE')} / {cast(right.sql, 'DOUBLE')})"
    if left.family == right.family == "int":  # exactly rounded only while both are exact doubles
        # both bounds, not abs(x) > 2**53: abs(-2**63) overflows (Spark's own error under ANSI
        # mode). Not BETWEEN, which Spark 4 rewrites to compute x once in a projection below
        # (`With`): an operand that may raise would raise there, before the terms of the
        # fields written ahead of this one, whose errors Python raises first
        outside = [f"({x.sql} < {literal(-EXACT_DOUBLE)} OR {x.sql} > {literal(EXACT_DOUBLE)})"
                   for x in (left, right) if not _small_literal(x)]
        limit = native_spans.Limit.never_fires()
        for x in (left, right):
            if not _small_literal(x):
                limit = limit.both(native_spans.exact_in_double(x.span))
        inexact = low.cannot_hold("int / int beyond 2**53 has no exactly rounded native form", limit)
        if outside and inexact is not None:
            return value, [(sql.conjunction("OR", outside), inexact)], None
    return value, [], None


def _small_literal(x: Typed) -> bool:
    """An int constant within 2**53 (`x / 60`): no bound to test at run time."""
    constant = sql.int_of_literal(x.sql)
    return constant is not None and abs(constant) <= EXACT_DOUBLE


def int_float_order(left: Typed, right: Typed):
    """For an int compared with a float (either side): SQL giving -1, 0 or 1 as `left` is below,
    equal to or above `right`, exactly, as Python compares them; None where Spark's comparison
    is exact already. Spark rounds the int to a double first (2**53 + 1 == 2.0**53 there, not
    in Python); that is exact for an int constant within 2**53, and against a float constant
    below 2**53 in magnitude (a larger int rounds to a larger double). Both operands must be
    known not None where the result is used; a NaN float gives 0 (the caller decides NaN)."""
    if {left.family, right.family} != {"int", "float"}:
        return None
    i, f = (left, right) if left.family == "int" else (right, left)
    constant = sql.float_of_literal(f.sql)
    if _small_literal(i) or (constant is not None and not EXACT_DOUBLE <= abs(constant) < math.inf):  # NaN too
        return None
    order = _exact_int_float_order(i.sql, f.sql)
    return order if i is left else f"(- {order})"


def _exact_int_float_order(i: str, f: str) -> str:
    """Below 2**63 in magnitude, floor(f) is a long and a double exactly: i against f is i
    against floor(f), then f's fraction. Beyond it every long lies on one side."""
    two_63 = literal(2.0**63)
    whole = f"CAST(floor({f}) AS BIGINT)"
    return sql.case([(f"isnan({f})", "0"), (f"({f} >= {two_63})", "-1"), (f"({f} < - {two_63})", "1"),
                     (f"({i} < {whole})", "-1"), (f"({i} > {whole})", "1"),
                     (f"({f} > CAST({whole} AS DOUBLE))", "-1")], "0")


def python_mod(a: str, n: str) -> str:
    """Python's a % n on ints: the sign of the divisor (SQL's % and pmod keep the dividend's,
    or make it positive)."""
    r = f"({a} % {n})"
    return sql.case([(f"({r} != 0 AND (({r} < 0) != ({n} < 0)))", f"({r} + {n})")], r)


def _int_floordiv(low, left, right):
    # in decimals: a - (a % n) may leave the longs (-2**63 // 3 fits, -2**63 - 1 does not)
    wide = "DECIMAL(21,0)"
    floor = f"({cast(left.sql, wide)} - {cast(python_mod(left.sql, right.sql), wide)})"
    exact = f"({floor} / {cast(right.sql, wide)})"
    limit = native_spans.not_int_min(left.span).either(native_spans.not_minus_one(right.span))
    overflow = low.cannot_hold(OVERFLOW, limit)
    if overflow is None:
        return cast(exact, "BIGINT"), [], None
    return cast(exact, "BIGINT"), [(f"({left.sql} = {literal(INT_MIN)} AND {right.sql} = -1)", overflow)], None


def _int_mod(low, left, right):
    return python_mod(left.sql, right.sql), [], None


ARITH_MAKERS = {
    ("+", "int"): _int_op("try_add", "+"),
    ("-", "int"): _int_op("try_subtract", "-"),
    ("*", "int"): _int_op("try_multiply", "*"),
    ("/", "float"): _true_div,  # int / int is exact below 2**53 only; float / x is IEEE
    ("//", "int"): _int_floordiv,
    ("%", "int"): _int_mod,
    ("**", "int"): _int_power,
    ("+", "float"): _float_op("+"),
    ("-", "float"): _float_op("-"),
    ("*", "float"): _float_op("*"),
    ("+", "decimal"): _decimal_op("+", sql.added),
    ("-", "decimal"): _decimal_op("-", sql.added),
    ("*", "decimal"): _decimal_op("*", sql.multiplied),
}


def arith(low, t) -> Typed:
    """`left op right` (`expr.Arith`): guards for None and a zero divisor, in Python's order and
    words, then the maker of the result's family. A bool is the int 0 or 1 (`True + 1` is 2,
    `True + True` an int, `True / True` a float, `x / False` divides by zero)."""
    if native_dates.moves(t):
        return native_dates.shifted(low, t)
    if native_strings.digest_bucket(t):
        return native_strings.lower_digest_bucket(low, t)
    left, right = low.lower(t.left), low.lower(t.right)
    families = {left.family, right.family}
    if not families <= {"int", "float", "decimal", "bool"}:
        if t.op == "+" and families == {"str"}:
            guards = low.none_guard("'+'", left, right, run=python_words.BINARY["+"])
            return Typed(low.guarded(guards, call("concat", left.sql, right.sql)), "str", False)
        raise NotNative(f"{t.op} on {left.family} and {right.family}")
    if families == {"float", "decimal"}:
        raise NotNative("float and Decimal do not mix in Python")
    # Python's words name the operands' own types ('bool'), before they are read as ints
    guards = low.none_guard(f"'{t.op}'", left, right, run=python_words.BINARY.get(t.op))
    left, right = as_number(left), as_number(right)
    families = {left.family, right.family}
    family = "decimal" if "decimal" in families else "float" if "float" in families else "int"
    if t.op == "/":
        family = "decimal" if family == "decimal" else "float"
    if t.op in ("/", "//", "%") and not _never_zero(t.right, low):
        # a bool's words are an int's: ZeroDivisionError never names the zero's type
        guards.append((f"({right.sql} = 0)", low.error(_by_zero(t.op, left, right))))
    maker = ARITH_MAKERS.get((t.op, family))
    if maker is None:
        raise NotNative(f"{t.op} on {family} values")
    value, more, dec = maker(low, left, right)
    spans = {"int": native_spans.arith, "float": native_spans.float_arith, "decimal": native_spans.arith}
    span = spans[family](t.op, left.span, right.span) if family in spans else None
    return Typed(low.guarded(guards + more, value), family, False, decimal=dec, span=span)


def neg(low, t) -> Typed:
    """`-x` (`expr.Neg`): None raises; -(-2**63) leaves the longs; -True is -1. The negation of
    an int or float constant is a constant (`x < -0.5` compares with a literal)."""
    x = low.lower(t.operand)
    if x.known is not None and type(x.known[0]) in (int, float):
        negated = -x.known[0]
        if isinstance(negated, float) or INT_MIN <= negated <= INT_MAX:
            return constant(negated)
    if x.family not in ("int", "float", "decimal", "bool"):
        raise NotNative(f"- on {x.family}")
    exact_decimal_sign(x, "unary -")
    guards = low.none_guard("unary -", x, run=operator.neg)
    x = as_number(x)
    guards += _int_min_guard(low, x)
    return Typed(low.guarded(guards, f"(- {x.sql})"), x.family, False, decimal=x.decimal,
                 span=native_spans.negated(x.span))


def _int_min_guard(low, x: Typed) -> list:
    """-x and abs(x) of an int leave the longs at -2**63 only."""
    overflow = low.cannot_hold(OVERFLOW, native_spans.not_int_min(x.span)) if x.family == "int" else None
    return [] if overflow is None else [(f"({x.sql} = {literal(INT_MIN)})", overflow)]


def _by_zero(op: str, left: Typed, right: Typed):
    """Python's words for `left op 0` (`python_words`); a Decimal 0 / 0 is another error
    (InvalidOperation) than x / 0 (DivisionByZero), chosen where the guard fires."""
    run, zero = python_words.BINARY[op], (python_words.ZERO, right.family)
    text = python_words.words(run, left.family, zero) or f"ZeroDivisionError: {op} by zero"
    undefined = python_words.words(run, (python_words.ZERO, left.family), zero)
    if undefined is None or undefined == text:
        return text
    return [(f"({left.sql} = 0)", undefined), (None, text)]


def _never_zero(term, low) -> bool:
    """A divisor that is never 0, so no zero guard: a constant other than 0 (True included: it
    is 1), or a column the lowering knows is not 0 (a group's `len(rows)`, `native_groups`; a
    field a condition proves not 0, `nullness.nonzero_when_true`)."""
    return native_spans.never_zero(term, low.nonzero)


# -- calls ------------------------------------------------------------------------------------


def exact_decimal_sign(x: Typed, what: str) -> None:
    """Python's -x and abs(x) of a Decimal round to 28 digits like any Decimal operation;
    Spark's keep every digit. Exact when x's type holds at most 28; else not native."""
    if x.family == "decimal" and x.decimal[0] > DECIMAL_DIGITS:
        raise NotNative(f"{what} of a decimal({x.decimal[0]},{x.decimal[1]}) (Python rounds it to "
                        f"{DECIMAL_DIGITS} digits)")


def _call_abs(low, args):
    (x,) = args
    if x.family not in ("int", "float", "decimal"):
        raise NotNative(f"abs of {x.family}")
    exact_decimal_sign(x, "abs()")
    guards = low.none_guard("abs()", x, run=abs) + _int_min_guard(low, x)
    return Typed(low.guarded(guards, call("abs", x.sql)), x.family, False, decimal=x.decimal,
                 span=native_spans.absolute(x.span))


def _call_len(low, args):
    (x,) = args
    if x.family != "str":
        raise NotNative(f"len of {x.family}")
    guards = low.none_guard("len()", x, run=len)
    return Typed(low.guarded(guards, cast(call("char_length", x.sql), "BIGINT")), "int", False,
                 span=native_spans.Span.between(0, 2**31 - 1))  # a Spark string holds under 2**31 characters


def _str_affix(name: str):
    def make(low, args):
        x, affix = args
        if x.family != "str" or affix.family != "str":
            raise NotNative("startswith/endswith of non-str values")
        run = python_words.starts if name == "startswith" else python_words.ends
        guards = low.none_guard("startswith/endswith", x, affix, run=run)
        return Typed(low.guarded(guards, call(name, x.sql, affix.sql)), "bool", False)
    return make


def _date_part(name: str, attribute: str = ""):
    attribute = attribute or name  # Python's name of the part (`.day`), where Spark's differs

    def make(low, args):
        (x,) = args
        if x.family not in ("date", "datetime"):  # a naive datetime: TIMESTAMP_NTZ, no zone to shift it
            raise NotNative("a date attribute of a non-date")
        guards = native_strings.none_receiver_guards(low, x, attribute)
        return Typed(low.guarded(guards, cast(call(name, x.sql), "BIGINT")), "int", False)
    return make


def _time_part(name: str):
    """A datetime's hour, minute or second (a naive one: TIMESTAMP_NTZ, no zone to shift it);
    a date has none in Python (AttributeError), so a date argument is not native."""
    def make(low, args):
        (x,) = args
        if x.family != "datetime":
            raise NotNative(f".{name} of a {x.family}")
        return _date_part(name)(low, args)
    return make


def _weekday(iso: bool):
    """d.weekday(): Monday 0 .. Sunday 6 (isoweekday: 1 .. 7); Spark's dayofweek counts Sunday 1
    .. Saturday 7."""
    def make(low, args):
        (x,) = args
        if x.family not in ("date", "datetime"):
            raise NotNative("weekday() of a non-date")
        guards = native_strings.none_receiver_guards(low, x, "isoweekday" if iso else "weekday")
        value = f"CAST((dayofweek({x.sql}) + 5) % 7 + {1 if iso else 0} AS BIGINT)"
        return Typed(low.guarded(guards, value), "int", False)
    return make


# the parts of d.isocalendar(), by index: the ISO year, the ISO week, the ISO weekday (1 .. 7)
ISO_CALENDAR = ("extract(YEAROFWEEK FROM {})", "weekofyear({})", "(dayofweek({}) + 5) % 7 + 1")


def _iso_calendar(low, args):
    """d.isocalendar()[k] (k a constant, `analysis.attribute_terms`): Spark's ISO 8601 week fields."""
    x, k = args
    if x.family not in ("date", "datetime") or k.known not in ((0,), (1,), (2,)):
        raise NotNative("an ISO calendar part of a non-date")
    guards = native_strings.none_receiver_guards(low, x, "isocalendar")
    return Typed(low.guarded(guards, cast(ISO_CALENDAR[k.known[0]].format(x.sql), "BIGINT")), "int", False)


def _call_float(low, args):
    (x,) = args
    if x.family not in ("int", "float"):  # float(Decimal) is correctly rounded in Python only
        raise NotNative(f"float() of {x.family}")
    guards = low.none_guard("float()", x, run=float)
    return Typed(low.guarded(guards, cast(x.sql, "DOUBLE")), "float", False)


def _call_int(low, args):
    (x,) = args
    if x.family not in ("int", "decimal", "float", "bool"):
        raise NotNative(f"int() of {x.family} (str parsing is Python's)")
    guards = low.none_guard("int()", x, run=int)
    if x.family in ("float", "bool"):  # toward 0, as Spark's cast truncates
        return native_math.to_integer(low, "int", int, x, lambda v: v, guards)
    if x.family == "decimal":
        precision, scale = x.decimal
        if precision - scale > 18:  # else every value fits a long
            bound = lambda v: f"CAST('{v}' AS DECIMAL({sql.MAX_PRECISION},{scale}))"  # noqa: E731
            out_of_range = f"({x.sql} > {bound(INT_MAX)} OR {x.sql} < {bound(INT_MIN)})"
            guards.append((out_of_range, low.error(OVERFLOW)))
    return Typed(low.guarded(guards, cast(x.sql, "BIGINT")), "int", False)


def _call_str(low, args):
    """str(x) (and an f-string's `{x}`): a str as it is, an int in decimal digits (Spark's cast
    writes the same), a bool as True/False, None as 'None', a date or naive datetime as its
    isoformat with a space (`native_dates.iso_text`). A float (Python writes its repr)
    or a Decimal (its exponent) is not native."""
    (x,) = args
    texts = {"str": x.sql, "int": cast(x.sql, "STRING"),
             # no ELSE: a None bool stays null, for the coalesce below to write 'None'
             "bool": f"CASE WHEN {x.sql} THEN 'True' WHEN NOT {x.sql} THEN 'False' END", "none": "'None'",
             **{family: native_dates.iso_text(x.sql, family, " ") for family in ("date", "datetime")}}
    if x.family not in texts:
        raise NotNative(f"str() of {x.family}")
    if x.family == "none" or not x.nullable:
        return Typed(texts[x.family], "str", False)
    return Typed(f"coalesce({texts[x.family]}, 'None')", "str", False)


# the Python type family a PySpark UDF's declared type holds as it is (`udflow.spark_results`)
NATURAL = {"double": "float", "bigint": "int", "int": "int", "string": "str", "boolean": "bool"}


def _spark_result(regime: str, declared: str):
    """A from_spark UDF's value made its declared type: the value itself where its family is the
    type's own (an int checked against 32 bits for `int` under Arrow), an int as a double under
    Arrow; any other conversion runs as Python (`udflow.spark_results`)."""

    def make(low, args):
        (x,) = args
        if x.family == "none":
            return x
        if regime == "arrow" and declared == "double" and x.family == "int":
            return Typed(cast(x.sql, "DOUBLE"), "float", x.nullable)
        if x.family != NATURAL[declared] or (declared == "int" and regime == "pickled"):
            raise NotNative(f"Spark's conversion of a {x.family} to {declared}")
        if declared != "int":
            return x
        outside = f"({x.sql} < {literal(spark_results.INT32[0])} OR {x.sql} > {literal(spark_results.INT32[1])})"
        message = ("SparkConversionError: returned an int outside 32 bits for its declared type int, "
                   "which Spark cannot convert (Arrow UDF)")
        return Typed(low.guarded([(outside, low.error(message))], x.sql), "int", x.nullable)

    return make


CALLS = {
    "abs": _call_abs,
    "str": _call_str,
    "len": _call_len,
    "str.startswith": _str_affix("startswith"),
    "str.endswith": _str_affix("endswith"),
    "date.year": _date_part("year"),
    "date.month": _date_part("month"),
    "date.day": _date_part("dayofmonth", "day"),
    "date.hour": _time_part("hour"),
    "date.minute": _time_part("minute"),
    "date.second": _time_part("second"),
    "date.weekday": _weekday(iso=False),
    "date.isoweekday": _weekday(iso=True),
    "date.isocalendar": _iso_calendar,
    "date.dayofyear": _date_part("dayofyear", "timetuple"),
    "date.isoformat": native_dates.isoformat,
    "date.replace": native_dates.replaced,
    "min": native_minmax.min_max("least"),
    "max": native_minmax.min_max("greatest"),
    "float": _call_float,
    "int": _call_int,
    **native_math.CALLS,
    **native_strings.CALLS,
    **native_decimals.CALLS,
    **{name: _spark_result(*name.split(".")[1:]) for name in spark_results.CONVERSIONS},
}
# the arguments each native form takes (receiver included); min/max take any number; the str
# methods' forms are `native_strings.FORMS`. Python's other forms (`s.startswith("a", 1)`,
# `float()`, `s.replace(a, b, 1)`) are not native; `int(s, 16)` is a parse (`native_parse`)
FORMS = {**native_strings.FORMS, **native_decimals.FORMS, "math.isclose": native_math.isclose_form,
         "date.replace": lambda args: len(args) % 2 == 1 and all(isinstance(a, Lit) for a in args[1:])}
ARITY = {"str.startswith": 2, "str.endswith": 2, "min": None, "max": None, "date.isocalendar": 2,
         "math.isclose": 4,  # (a, b, rel_tol, abs_tol), the tolerances constants (`FORMS`)
         "timedelta": 2}  # (unit, amount)


def arity_fits(name: str, args: tuple) -> bool:
    """Whether a call of `name` with these argument terms has a native form."""
    if name in FORMS:
        return FORMS[name](args)
    wanted = ARITY.get(name, 1)
    return wanted is None or len(args) == wanted


# the whitelisted calls (udflow.expr_functions.FUNCTIONS) with a native form; a duration's over a
# subtraction of dates (`native_dates`, lowered before its argument), and a timedelta of a
# computed number (lowered by the move that adds it)
NATIVE_CALLS = frozenset(CALLS) | frozenset(native_dates.DURATIONS) | frozenset(native_dates.MOVES)

"""Expression IR -> Spark Column, with Python's semantics or not at all.

`NativeLowering(schema, where).lower(term)` gives a `Typed` Column whose value
is, on every row, what `udflow.expr.evaluate(term, row)` returns, and which
raises (Spark's `raise_error`, reported as the user's error) on every row where
`evaluate` raises. A construct it cannot make exact raises `NotNative` with the
reason: the operator then stays in Python. The traps, and what is done:

    trap                                   native form
    ------------------------------------   -----------------------------------------
    None in arithmetic / ordering          raise_error (Python: TypeError), SQL would give null
    x / 0, x // 0, x % 0                   raise_error (ZeroDivisionError), SQL null or ANSI error
    int overflow past 64 bits              raise_error (Python ints are unbounded)
    int / int beyond 2**53                 raise_error (no exactly rounded native form)
    // and % on negatives                  the sign of the divisor, as Python (not SQL's or pmod's)
    NaN: == is False, orderings False      isnan guards (SQL: NaN = NaN, NaN is largest)
    None == None is True                   null-safe equality
    1 == "1" is False                      constant False for unrelated families (no cast)
    truthiness of str/int/float/None       explicit: length > 0, != 0, not null
    Decimal arithmetic (28 digits)         raise_error where a result needs more digits
    float mixed with Decimal               NotNative (Python raises TypeError on +)
    str.strip (Unicode whitespace)         regexp over Python's own whitespace characters
    str.lower/upper (case tables differ)   NotNative: Python's and the JVM's Unicode tables differ

Every guard tests the operands before the operation runs, inside one CASE, so
the order of Python's errors (TypeError before ZeroDivisionError) is kept and
ANSI mode never decides an outcome: the session's setting is not changed.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any, Optional

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from udflow.expr import (
    Arith,
    BoolOp,
    Call,
    Cmp,
    Contains,
    Expr,
    Field,
    IfElse,
    InValues,
    IsNone,
    Lit,
    Neg,
    Not,
    Slice,
    Truth,
)

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
EXACT_DOUBLE = 2**53
DECIMAL_DIGITS = 28  # Python's default decimal context precision
# str.strip() strips what Python calls whitespace; Spark's trim only spaces: a Java regex
# over exactly Python's characters, written as \uXXXX escapes
PY_WHITESPACE = "".join(f"\\u{c:04x}" for c in range(0x10000) if chr(c).isspace())
STRIP_PATTERN = f"^[{PY_WHITESPACE}]+|[{PY_WHITESPACE}]+$"


def col(name: str) -> Column:
    """A column by its exact name (dots and other characters included)."""
    return F.col("`" + name.replace("`", "``") + "`")


class NotNative(Exception):
    """The term has no exact native form here; the reason says which construct."""


@dataclass(frozen=True)
class Typed:
    """A lowered term: its Column, the Python type family of its values, whether it may be None."""

    column: Column
    family: str  # "int", "float", "decimal", "str", "bool", "date", "none"
    nullable: bool
    leaf: bool = False  # a column or a constant as it is: an error message may show it


FAMILIES = ((BooleanType, "bool"), (ByteType, "int"), (ShortType, "int"), (IntegerType, "int"),
            (LongType, "int"), (FloatType, "float"), (DoubleType, "float"), (DecimalType, "decimal"),
            (StringType, "str"), (DateType, "date"))


def family_of(data_type: DataType) -> Optional[str]:
    for cls, family in FAMILIES:
        if isinstance(data_type, cls):
            return family
    return None


class NativeLowering:
    """Lowers terms over the columns of `schema`; `where` names the user's function and line
    in the messages of the errors the native form raises."""

    def __init__(self, schema: StructType, where: str, nonnull: frozenset = frozenset(), checked=None,
                 shown=None, pinned: bool = True):
        self.fields = {f.name: f for f in schema.fields}
        self.where = where
        # the fields an error shows of its record: those the function reads, so that an error
        # message does not keep Spark from pruning the other columns (default: all)
        self.shown = [n for n in self.fields if shown is None or n in shown]
        self.nonnull = nonnull  # fields the data proves never None (Spark reads files as nullable)
        # column -> [(condition, message)]: reading the column raises where a condition holds
        # (an aggregate's own errors, raised where the model uses it: native_groups)
        self.checked = dict(checked or {})
        # errors made nondeterministic, so Catalyst never moves them (see `error`); False inside
        # an aggregate's argument, which Spark requires deterministic and never moves anyway
        self.pinned = pinned
        self._guards_made = 0  # raising guards built so far: a term that adds some may raise
        self.line = 0  # the user's line the terms being lowered stand on (named in errors)

    def lower(self, term: Expr) -> Typed:
        return self._lower_counting(term)[0]

    def _lower_counting(self, term: Expr) -> tuple[Typed, bool]:
        """The lowered term, and whether it (or a part of it) may raise."""
        method = getattr(self, "_" + type(term).__name__, None)
        if method is None:
            raise NotNative(f"{type(term).__name__} has no native form")
        before = self._guards_made
        typed = method(term)
        return typed, self._guards_made > before

    def predicate(self, term: Expr) -> Column:
        """A condition: Python's truthiness of the term, never null. `and`, `or` and `not` over
        parts that cannot raise become plain AND, OR, NOT, which Spark can push into a scan;
        a part that may raise keeps Python's short circuit (a CASE)."""
        return self._condition(term)[0]

    def _condition(self, term: Expr) -> tuple[Column, bool]:
        if isinstance(term, Not):
            column, raises = self._condition(term.operand)
            return ~column, raises
        if isinstance(term, BoolOp):
            parts = [self._condition(v) for v in term.values]
            if not any(raises for _, raises in parts):
                out = parts[0][0]
                for column, _ in parts[1:]:
                    out = (out & column) if term.op == "and" else (out | column)
                return out, False
        typed, raises = self._lower_counting(term)
        return self._truth(typed), raises

    # -- errors ---------------------------------------------------------------------------

    def error(self, message: str, *operands: Typed) -> Column:
        """A Column that raises `message`, naming the user's function and showing the operands,
        marked as the Python path marks a failing function (`udf.MarkedFailure`), so that the
        driver reports it as a `UdfRuntimeError` like any error of the function."""
        record = F.to_json(F.struct(*[F.col(f"`{name}`") for name in self.shown]))
        at = f" (line {self.line})" if self.line else ""
        text = F.concat(F.lit(f"{self.where} raised {message}{at}\n  record: "), record)
        if operands and all(o.leaf for o in operands):  # a computed operand would repeat its whole term
            shown = F.to_json(F.array(*[o.column.cast("string") for o in operands]))
            text = F.concat(text, F.lit("\n  operands: "), shown)
        encoded = F.regexp_replace(F.base64(F.encode(text, "UTF-8")), "\\s", "")
        # A nondeterministic part (spark_partition_id(); not rand(), whose comparisons with
        # constants Spark folds) makes the raising expression nondeterministic, so that Catalyst
        # neither moves it past another operator (a filter below or above, a join), nor merges
        # it into their conditions, nor hoists it as a common subexpression: it raises only on
        # the rows that reach it in the plan, as Python does. Evaluated only when raising.
        pinned = F.when(F.spark_partition_id() < 0, F.lit("?")).otherwise(F.lit("")) if self.pinned else F.lit("")
        return F.raise_error(F.concat(F.lit("<<udflow:"), encoded, F.lit(":udflow>>"), pinned))

    def _guarded(self, guards: list, value: Column) -> Column:
        """CASE WHEN guard1 THEN raise1 WHEN ... ELSE value END: the first failing guard raises."""
        if not guards:
            return value
        self._guards_made += len(guards)
        out = None
        for condition, error in guards:
            out = F.when(condition, error) if out is None else out.when(condition, error)
        return out.otherwise(value)

    def _none_guard(self, what: str, *operands: Typed) -> list:
        nullable = [o for o in operands if o.nullable]
        if not nullable:
            return []
        condition = nullable[0].column.isNull()
        for o in nullable[1:]:
            condition = condition | o.column.isNull()
        return [(condition, self.error(f"TypeError: None in {what}", *operands))]

    # -- leaves ---------------------------------------------------------------------------

    def _Field(self, t: Field) -> Typed:
        f = self.fields.get(t.name)
        if f is None:
            raise NotNative(f"field {t.name} is not a column here")
        family = family_of(f.dataType)
        if family is None:
            raise NotNative(f"field {t.name} has type {f.dataType.simpleString()}")
        value = F.col(f"`{t.name}`")
        checks = [(condition, self.error(message)) for condition, message in self.checked.get(t.name, ())]
        return Typed(self._guarded(checks, value), family, f.nullable and t.name not in self.nonnull, not checks)

    def _Lit(self, t: Lit) -> Typed:
        v = t.value
        if v is None:
            return Typed(F.lit(None), "none", True, True)
        if isinstance(v, bool):
            return Typed(F.lit(v), "bool", False, True)
        if isinstance(v, int):
            if not INT_MIN <= v <= INT_MAX:
                raise NotNative(f"the constant {v} does not fit 64 bits")
            return Typed(F.lit(v).cast("long"), "int", False, True)
        if isinstance(v, float):
            return Typed(F.lit(v).cast("double"), "float", False, True)
        if isinstance(v, decimal.Decimal):
            return Typed(_decimal_literal(v), "decimal", False, True)
        if isinstance(v, str):
            return Typed(F.lit(v), "str", False, True)
        if isinstance(v, datetime.datetime):
            raise NotNative("datetime constants are not lowered")
        if isinstance(v, datetime.date):
            return Typed(F.lit(v), "date", False, True)
        raise NotNative(f"constant {v!r}")

    # -- arithmetic -----------------------------------------------------------------------

    def _Arith(self, t: Arith) -> Typed:
        left, right = self.lower(t.left), self.lower(t.right)
        families = {left.family, right.family}
        if not families <= {"int", "float", "decimal"}:
            if t.op == "+" and families == {"str"}:
                return self._concat(left, right)
            raise NotNative(f"{t.op} on {left.family} and {right.family}")
        if families == {"float", "decimal"}:
            raise NotNative("float and Decimal do not mix in Python")
        guards = self._none_guard(f"'{t.op}'", left, right)
        family = "decimal" if "decimal" in families else "float" if "float" in families else "int"
        if t.op == "/":
            family = "decimal" if family == "decimal" else "float"
        if t.op in ("/", "//", "%"):
            guards.append((right.column == 0, self.error(f"ZeroDivisionError: {t.op} by zero", left, right)))
        maker = _ARITH_MAKERS.get((t.op, family))
        if maker is None:
            raise NotNative(f"{t.op} on {family} values")
        value, more = maker(self, left, right)
        return Typed(self._guarded(guards + more, value), family, False)

    def _concat(self, left: Typed, right: Typed) -> Typed:
        guards = self._none_guard("'+'", left, right)
        return Typed(self._guarded(guards, F.concat(left.column, right.column)), "str", False)

    def _Neg(self, t: Neg) -> Typed:
        x = self.lower(t.operand)
        if x.family not in ("int", "float", "decimal"):
            raise NotNative(f"- on {x.family}")
        guards = self._none_guard("unary -", x)
        if x.family == "int":
            guards.append((x.column == F.lit(INT_MIN), self.error("int overflow past 64 bits", x)))
        return Typed(self._guarded(guards, -x.column), x.family, False)

    # -- comparisons and truth ------------------------------------------------------------

    def _Cmp(self, t: Cmp) -> Typed:
        left, right = self.lower(t.left), self.lower(t.right)
        if t.op in ("==", "!="):
            return self._equality(t.op, left, right)
        group = _ordered_group(left.family, right.family)
        if group is None:
            raise NotNative(f"{t.op} between {left.family} and {right.family}")
        guards = self._none_guard(f"'{t.op}'", left, right)
        value = {"<": left.column < right.column, "<=": left.column <= right.column,
                 ">": left.column > right.column, ">=": left.column >= right.column}[t.op]
        if group == "float":  # Python: every ordering with NaN is False; Spark: NaN is largest
            value = F.when(self._is_nan(left) | self._is_nan(right), F.lit(False)).otherwise(value)
        return Typed(self._guarded(guards, value), "bool", False)

    def _equality(self, op: str, left: Typed, right: Typed) -> Typed:
        if "none" in (left.family, right.family):
            other = right if left.family == "none" else left
            value = other.column.isNull() if other.family != "none" else F.lit(True)
        elif _equal_group(left.family, right.family) is None:
            value = F.lit(False)  # 1 == "1", date == 1: unrelated values are never equal
        else:
            value = left.column.eqNullSafe(right.column)
            if "float" in (left.family, right.family):  # NaN == NaN is False in Python
                value = value & ~(self._is_nan(left) | self._is_nan(right))
        if op == "!=":
            value = ~value
        return Typed(value, "bool", False)

    def _is_nan(self, x: Typed) -> Column:
        return F.isnan(x.column) & x.column.isNotNull() if x.family == "float" else F.lit(False)

    def _truth(self, x: Typed) -> Column:
        """Python's bool(x), never null."""
        if x.family == "none":
            return F.lit(False)
        if x.family == "bool":
            value = x.column
        elif x.family in ("int", "float", "decimal"):
            value = x.column != 0  # NaN != 0 is True, as bool(nan)
        elif x.family == "str":
            value = F.length(x.column) > 0
        elif x.family == "date":
            return x.column.isNotNull() if x.nullable else F.lit(True)
        else:
            raise NotNative(f"truthiness of {x.family}")
        return F.coalesce(value, F.lit(False)) if x.nullable else value

    def _Truth(self, t: Truth) -> Typed:
        return Typed(self._truth(self.lower(t.operand)), "bool", False)

    def _Not(self, t: Not) -> Typed:
        return Typed(~self._truth(self.lower(t.operand)), "bool", False)

    def _BoolOp(self, t: BoolOp) -> Typed:
        values = [self.lower(v) for v in t.values]
        families = {v.family for v in values} - {"none"}
        if len(families) > 1:
            raise NotNative(f"{t.op} of {' and '.join(sorted(families))} values (the result's type would vary)")
        family = families.pop() if families else "none"
        result = values[-1]
        for v in reversed(values[:-1]):  # a and b == (b if a else a); a or b == (a if a else b)
            chosen = (result.column, v.column) if t.op == "and" else (v.column, result.column)
            column = F.when(self._truth(v), chosen[0]).otherwise(chosen[1])
            result = Typed(column, family, v.nullable or result.nullable)
        return result

    def _IfElse(self, t: IfElse) -> Typed:
        test, body, orelse = self.lower(t.test), self.lower(t.body), self.lower(t.orelse)
        families = {body.family, orelse.family} - {"none"}
        if len(families) > 1:
            raise NotNative(f"a conditional whose branches are {' and '.join(sorted(families))}")
        family = families.pop() if families else "none"
        column = F.when(self._truth(test), body.column).otherwise(orelse.column)
        return Typed(column, family, body.nullable or orelse.nullable)

    def _IsNone(self, t: IsNone) -> Typed:
        x = self.lower(t.operand)
        value = F.lit(True) if x.family == "none" else (x.column.isNull() if x.nullable else F.lit(False))
        return Typed(~value if t.negated else value, "bool", False)

    def _InValues(self, t: InValues) -> Typed:
        x = self.lower(t.operand)
        found = F.lit(False)
        for v in t.values:
            found = found | self._equality("==", x, self.lower(Lit(v))).column
        return Typed(~found if t.negated else found, "bool", False)

    # -- strings, dates, functions ------------------------------------------------------

    def _Contains(self, t: Contains) -> Typed:
        needle, haystack = self.lower(t.needle), self.lower(t.haystack)
        if haystack.family != "str" or needle.family not in ("str", "none"):
            raise NotNative(f"in on {needle.family} and {haystack.family}")
        guards = self._none_guard("'in'", needle, haystack)
        return Typed(self._guarded(guards, F.instr(haystack.column, needle.column) > 0), "bool", False)

    def _Slice(self, t: Slice) -> Typed:
        x = self.lower(t.operand)
        if x.family != "str":
            raise NotNative(f"slicing {x.family}")
        guards = self._none_guard("slicing", x)
        n = F.length(x.column)
        start = _bound(t.start, n, F.lit(0))
        stop = _bound(t.stop, n, n)
        value = F.when(stop > start, x.column.substr(start + 1, stop - start)).otherwise(F.lit(""))
        return Typed(self._guarded(guards, value), "str", False)

    def _Call(self, t: Call) -> Typed:
        maker = _CALLS.get(t.name)
        if maker is None:
            raise NotNative(f"{t.name} has no native form")
        args = [self.lower(a) for a in t.args]
        return maker(self, args)


# -- arithmetic makers: (value, extra guards) ------------------------------------------------


def _int_op(name, fallback):
    def make(self, left, right):
        tried = getattr(F, name)(left.column, right.column)  # null on overflow
        return fallback(left.column, right.column), [(tried.isNull(), self.error("int overflow past 64 bits", left, right))]
    return make


def _float_op(fn):
    def make(self, left, right):
        return fn(left.column.cast("double"), right.column.cast("double")), []
    return make


def _decimal_op(fn):
    def make(self, left, right):
        value = fn(_as_decimal(left), _as_decimal(right))
        return value, [(_too_many_digits(value), self.error(
            f"a Decimal result of more than {DECIMAL_DIGITS} digits (Python rounds it)", left, right))]
    return make


def _int_true_div(self, left, right):
    big = (F.abs(left.column) > EXACT_DOUBLE) | (F.abs(right.column) > EXACT_DOUBLE)
    value = left.column.cast("double") / right.column.cast("double")
    return value, [(big, self.error("int / int beyond 2**53 has no exactly rounded native form", left, right))]


def _python_mod(a: Column, n: Column) -> Column:
    """Python's a % n on ints: the sign of the divisor (SQL's % and pmod keep the dividend's,
    or make it positive)."""
    r = a % n
    return F.when((r != 0) & ((r < 0) != (n < 0)), r + n).otherwise(r)


def _int_floordiv(self, left, right):
    # in decimals: a - (a % n) may leave the longs (-2**63 // 3 fits, -2**63 - 1 does not)
    floor = left.column.cast("decimal(21,0)") - _python_mod(left.column, right.column).cast("decimal(21,0)")
    exact = floor / right.column.cast("decimal(21,0)")
    overflow = (left.column == F.lit(INT_MIN)) & (right.column == -1)
    return exact.cast("long"), [(overflow, self.error("int overflow past 64 bits", left, right))]


def _int_mod(self, left, right):
    return _python_mod(left.column, right.column), []


def _true_div(self, left, right):
    if left.family == right.family == "int":
        return _int_true_div(self, left, right)
    return left.column.cast("double") / right.column.cast("double"), []


_ARITH_MAKERS = {
    ("+", "int"): _int_op("try_add", lambda a, b: a + b),
    ("-", "int"): _int_op("try_subtract", lambda a, b: a - b),
    ("*", "int"): _int_op("try_multiply", lambda a, b: a * b),
    ("/", "float"): _true_div,  # int / int is exact below 2**53 only; float / x is IEEE
    ("//", "int"): _int_floordiv,
    ("%", "int"): _int_mod,
    ("+", "float"): _float_op(lambda a, b: a + b),
    ("-", "float"): _float_op(lambda a, b: a - b),
    ("*", "float"): _float_op(lambda a, b: a * b),
    ("+", "decimal"): _decimal_op(lambda a, b: a + b),
    ("-", "decimal"): _decimal_op(lambda a, b: a - b),
    ("*", "decimal"): _decimal_op(lambda a, b: a * b),
}




def _as_decimal(x: Typed) -> Column:
    return x.column if x.family == "decimal" else x.column.cast("decimal(20,0)")


def _too_many_digits(value: Column) -> Column:
    """More significant digits than Python's context keeps (at the value's own scale)."""
    digits = F.length(F.regexp_replace(F.abs(value).cast("string"), "[.]|^0+", ""))
    return digits > DECIMAL_DIGITS


def _decimal_literal(v: decimal.Decimal) -> Column:
    sign, digits, exponent = v.as_tuple()
    if not isinstance(exponent, int):
        raise NotNative(f"the constant {v!r}")
    scale = max(0, -exponent)
    precision = max(len(digits) + max(0, exponent), scale, 1)
    if precision > 38:
        raise NotNative(f"the constant {v!r} needs more than 38 digits")
    return F.lit(str(v)).cast(f"decimal({precision},{scale})")


def _ordered_group(a: str, b: str) -> Optional[str]:
    numeric = {"int", "float", "decimal"}
    if {a, b} <= numeric:
        if {a, b} == {"float", "decimal"}:
            return None  # Python compares them exactly, Spark through a double
        return "float" if "float" in (a, b) else "number"
    if a == b and a in ("str", "date"):
        return a
    return None


def _equal_group(a: str, b: str) -> Optional[str]:
    if "bool" in (a, b) and a != b:
        raise NotNative("== between a bool and a number")
    if {a, b} <= {"int", "float", "decimal"}:
        return None if {a, b} == {"float", "decimal"} else "number"
    return a if a == b else None


def _bound(bound: Any, n: Column, default: Column) -> Column:
    """A Python slice bound on a string of length n, clamped to [0, n]."""
    if bound is None:
        return default
    if bound >= 0:
        return F.least(F.lit(bound), n)
    return F.greatest(n + F.lit(bound), F.lit(0))


# -- calls -------------------------------------------------------------------------------------


def _call_abs(self, args):
    (x,) = args
    if x.family not in ("int", "float", "decimal"):
        raise NotNative(f"abs of {x.family}")
    guards = self._none_guard("abs()", x)
    if x.family == "int":
        guards.append((x.column == F.lit(INT_MIN), self.error("int overflow past 64 bits", x)))
    return Typed(self._guarded(guards, F.abs(x.column)), x.family, False)


def _call_len(self, args):
    (x,) = args
    if x.family != "str":
        raise NotNative(f"len of {x.family}")
    guards = self._none_guard("len()", x)
    return Typed(self._guarded(guards, F.char_length(x.column).cast("long")), "int", False)


def _str_strip(self, args):
    (x,) = args
    if x.family != "str":
        raise NotNative("strip of a non-str")
    guards = self._none_guard("str.strip", x)
    return Typed(self._guarded(guards, F.regexp_replace(x.column, STRIP_PATTERN, "")), "str", False)


def _str_affix(fn):
    def make(self, args):
        x, affix = args
        if x.family != "str" or affix.family != "str":
            raise NotNative("startswith/endswith of non-str values")
        guards = self._none_guard("startswith/endswith", x, affix)
        return Typed(self._guarded(guards, fn(x.column, affix.column)), "bool", False)
    return make


def _date_part(fn):
    def make(self, args):
        (x,) = args
        if x.family != "date":
            raise NotNative("a date attribute of a non-date")
        guards = [(x.column.isNull(), self.error("AttributeError: 'NoneType' object has no attribute", x))] \
            if x.nullable else []
        return Typed(self._guarded(guards, fn(x.column).cast("long")), "int", False)
    return make


def _min_max(pick):
    def make(self, args):
        if len(args) < 2 or len({a.family for a in args}) != 1 or args[0].family not in ("int", "decimal", "str", "date"):
            raise NotNative("min/max of values of different types (Python keeps the first of equals)")
        guards = self._none_guard("min()/max()", *args)
        return Typed(self._guarded(guards, pick(*[a.column for a in args])), args[0].family, False)
    return make


def _call_float(self, args):
    (x,) = args
    if x.family not in ("int", "float"):  # float(Decimal) is correctly rounded in Python only
        raise NotNative(f"float() of {x.family}")
    guards = self._none_guard("float()", x)
    return Typed(self._guarded(guards, x.column.cast("double")), "float", False)


def _call_int(self, args):
    (x,) = args
    if x.family not in ("int", "decimal"):
        raise NotNative(f"int() of {x.family} (float NaN/inf and str parsing are Python's)")
    guards = self._none_guard("int()", x)
    if x.family == "decimal":
        out_of_range = (x.column > F.lit(INT_MAX)) | (x.column < F.lit(INT_MIN))
        guards.append((out_of_range, self.error("int overflow past 64 bits", x)))
    return Typed(self._guarded(guards, x.column.cast("long")), "int", False)


_CALLS = {
    "abs": _call_abs,
    "len": _call_len,
    "str.strip": _str_strip,
    "str.startswith": _str_affix(F.startswith),
    "str.endswith": _str_affix(F.endswith),
    "date.year": _date_part(F.year),
    "date.month": _date_part(F.month),
    "date.day": _date_part(F.dayofmonth),
    "min": _min_max(F.least),
    "max": _min_max(F.greatest),
    "float": _call_float,
    "int": _call_int,
}
NATIVE_CALLS = frozenset(_CALLS)  # the whitelisted calls (udflow.expr.FUNCTIONS) with a native form

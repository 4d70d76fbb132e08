"""Expression IR -> Spark SQL text, with Python's semantics or not at all.

`NativeLowering(schema, where).lower(term)` gives a `Typed` SQL expression whose
value is, on every row, what `udflow.expr.evaluate(term, row)` returns, and which
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
    2**53 + 1 > 2.0**53 is True            int against float compared exactly (Spark: through a double)
    truthiness of str/int/float/None       explicit: length > 0, != 0, not null
    a bool in arithmetic or a comparison   the int 0 or 1 (True + 1 == 2, True == 1.0, 1 / False
                                           raises ZeroDivisionError); Spark would refuse or cast
                                           the number to a bool. Python's words name 'bool'
    & | ^ << >> ~ (`native_bits`)          ints and bools only; & | ^ of two bools a bool; x << n
                                           past 64 bits raises as + does; a count Java would mask
                                           to 6 bits never reaches Spark; a negative one raises
                                           ValueError
    Decimal arithmetic (28 digits)         raise_error where a result needs more digits: with the
                                           result's scale s known, |x| >= 10**(28 - s)
    Decimal wider than Spark's 38 digits   NotNative where Spark would round it to a smaller scale
    float mixed with Decimal               NotNative (Python raises TypeError on +)
    str.strip (Unicode whitespace)         regexp over Python's own whitespace characters
    str.lower/upper (case tables differ)   the call alone in Python (`python_calls`), else NotNative
    round(x, n) (Spark: the decimal text)  rint of x * 10**n; the rows near a tie are Python's call
    math.sqrt/fabs/floor/ceil              native (IEEE exact in both; `native_math`); exp, log, sin, ...
                                           (last bits differ between libraries) as `round`, but a
                                           log, log10, exp, sin, cos, tan or atan that is a field's
                                           whole value: native, within 3 ulps (`native_math.AT_VALUE`,
                                           `value`)

Every guard tests the operands before the operation runs, inside one CASE, so
the order of Python's errors (TypeError before ZeroDivisionError) is kept and
ANSI mode never decides an outcome: the session's setting is not changed.

The result is SQL text (`udflow.spark_backend.sql`): a whole operator reaches
Spark in one call, and its error messages are one small expression each.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional

from pyspark.sql import Column
from pyspark.sql.types import LongType, StructType

from udflow.expr import BoolOp, Call, Evaluated, Expr, Field, IfElse, Lit
from udflow.spark_backend import (functions, native_bits, native_calls, native_case, native_caught, native_dates,
                                  native_math, native_parse, native_spans, native_splits, native_tables, python_words,
                                  sql)
from udflow.spark_backend.native_errors import RaisingSql
from udflow.spark_backend.native_truth import Conditions
from udflow.spark_backend.native_types import (
    RAISES,
    NotNative,
    Typed,
    as_numbers,
    constant,
    decimal_of,
    equal_group,
    family_of,
    one_family,
    ordered_group,
    wider_decimal,
)
from udflow.spark_backend.sql import case, ident

__all__ = ["NativeLowering", "NotNative", "Typed", "col", "family_of"]


def col(name: str) -> Column:
    """A column by its exact name (dots and other characters included), in one JVM call."""
    return functions.expr(ident(name))


class NativeLowering(RaisingSql, Conditions):
    """Lowers terms over the columns of `schema`; `where` names the user's function and line
    in the messages of the errors the native form raises."""

    def __init__(self, schema: StructType, where: str, nonnull: frozenset = frozenset(), checked=None,
                 shown=None, pinned: bool = True, elem: Optional[str] = None, python_calls=None, sample: tuple = (),
                 computed_at=(), nonzero: frozenset = frozenset(), spans=None, limits=None, magnitudes=None,
                 elem_ascii: Optional[tuple] = None):
        self.fields = {f.name: f for f in schema.fields}
        # a numeric or datetime column's values in the normal case (`native_spans`), narrowed by the data's
        # `magnitudes` (`nullness.magnitudes_of`); a column computed in the operator itself
        # (a hidden term, an explosion's piece) is given its term's span, or None
        self.spans = native_spans.ColumnSpans(self.fields, magnitudes or {}, spans or {})
        # the guards of what the native form holds, each a `native_spans.Limit` (shared by the
        # lowerings of one operator): the operator's normal case is chosen from them
        self.limits = native_spans.Limits() if limits is None else limits
        self.sample = sample  # input records taken on the driver: they type a helper's results
        # a call with no native form runs as Python in the plan (`python_calls.PythonCalls`); None: NotNative
        self.python_calls = python_calls
        self.where = where
        # the fields an error shows of its record: those the function reads, so that an error
        # message does not keep Spark from pruning the other columns (default: all)
        self.shown = [n for n in self.fields if shown is None or n in shown]
        self.nonnull = nonnull  # fields the data proves never None (Spark reads files as nullable)
        self.nonzero = nonzero  # fields never 0 (a group's count, or a condition proves it): no zero guard
        self.every_row = (nonnull, nonzero)  # what holds on every input row (`on_every_row`)
        # terms every row reaching the term being lowered has computed without raising
        # (`nullness.computed_by`): reading one again needs no check of its errors
        self.computed: frozenset = frozenset()
        # terms other than fields an earlier condition proves not None (`nullness.terms_when_true`)
        self.nonnull_terms: frozenset = frozenset()
        # the next term lowered is a written field's value (`native_math.AT_VALUE`); lowering
        # it clears this, so that no part of it is
        self.at_value = False
        self.contract: frozenset = frozenset()  # the calls it may run by the contract
        # column -> [(condition, message)]: reading the column raises where a condition holds
        # (an aggregate's own errors, raised where the model uses it: native_groups)
        self.checked = dict(checked or {})
        # errors made nondeterministic, so Catalyst never moves them (see `error`); False inside
        # an aggregate's argument, which Spark requires deterministic and never moves anyway
        self.pinned = pinned
        self.elem = elem  # the column holding an explosion's piece (`Elem()`), where there is one
        # the input columns whose being ASCII makes every piece ASCII (`native_case.elem_ascii`), or None
        self.elem_ascii = elem_ascii
        self.guards_made = 0  # raising guards and errors built so far: a term that adds some may raise
        self.line = 0  # the user's line the terms being lowered stand on (named in errors)
        self.computed_at = dict(computed_at)  # a term -> the line of the statement computing it (`RecordModel`)
        self._record = None  # the shown record as base64 JSON, built once

    def lower(self, term: Expr) -> Typed:
        return self.lower_raising(term)[0]

    def lower_raising(self, term: Expr) -> tuple[Typed, bool]:
        """The lowered term, and whether it (or a part of it) may raise."""
        method = getattr(self, "_" + type(term).__name__, None)
        if method is None:
            raise NotNative(f"{type(term).__name__} has no native form")
        before, line = self.guards_made, self.line
        self.line = self._computed_line(term) or line
        at_value, self.at_value = self.at_value, False
        try:
            typed = method(term, at_value=True) if at_value and isinstance(term, (Call, IfElse)) else method(term)
        finally:
            self.line = line
        if typed.nullable and self._proven_nonnull(term):
            typed = dataclasses.replace(typed, nullable=False)
        return typed, self.guards_made > before

    def _proven_nonnull(self, term: Expr) -> bool:
        try:
            return term in self.nonnull_terms
        except TypeError:  # a constant of an unhashable value
            return False

    def _computed_line(self, term: Expr) -> int:
        try:
            return self.computed_at.get(term, 0)
        except TypeError:  # a constant of an unhashable value: no statement of its own
            return 0

    def value(self, term: Expr, case_terms: tuple) -> tuple[Typed, bool]:
        """`lower_raising` of a written field's whole term, among the terms of its case (its
        guard and fields): its calls `native_math.contract_calls` allows run natively."""
        self.contract = native_math.contract_calls(term, case_terms)
        self.at_value = bool(self.contract)
        return self.lower_raising(term)

    def guarded(self, guards: list, value: str) -> str:
        """CASE WHEN guard1 THEN raise1 WHEN ... ELSE value END: the first failing guard raises."""
        self.guards_made += len(guards)
        return case(guards, value)

    def cannot_hold(self, message: str, limit) -> Optional[str]:
        """The error raised where a value leaves what the native form holds (Python's value
        would be computed by the function in Python on such rows: `native_spans`), or None
        where the spans prove it never does, whatever the data, or the normal case the rows
        are known to lie in does (`native_spans.Limits`)."""
        if limit.never or not self.limits.needs_guard(limit):
            return None
        return self.error(message)

    def none_guard(self, what: str, *operands: Typed, run=None) -> list:
        """Raise where an operand is None; in Python's words (`python_words`) when `run`, the
        operation as Python runs it, is given, else `TypeError: None in <what>`."""
        nullable = [o for o in operands if o.nullable]
        if not nullable:
            return []
        condition = " OR ".join(f"{o.sql} IS NULL" for o in nullable)
        if any(RAISES in o.sql for o in operands):
            # Python computes every operand before the operation meets a None: an operand's own
            # error comes first. OR would stop at the first None; a sum reads each, in order
            condition = " + ".join(f"CAST({o.sql} IS NULL AS INT)" for o in operands) + " > 0"
        cases = python_words.none_cases(run, tuple(o.family for o in operands),
                                        tuple(o.nullable for o in operands)) if run is not None else []
        message = [(" AND ".join(f"{operands[i].sql} IS NULL" for i in nones), text) for nones, text in cases] \
            or f"TypeError: None in {what}"
        return [(f"({condition})", self.error(message))]

    # -- leaves ---------------------------------------------------------------------------

    def _Field(self, t) -> Typed:
        f = self.fields.get(t.name)
        if f is None:
            raise NotNative(f"field {t.name} is not a column here")
        family = family_of(f.dataType)
        if family is None:
            raise NotNative(f"field {t.name} has type {f.dataType.simpleString()}")
        value, checked = self._read(t.name, _widened(ident(t.name), f.dataType))
        nullable = f.nullable and t.name not in self.nonnull
        return Typed(value, family, nullable, not checked, decimal_of(f.dataType), self.spans.get(t.name))

    def _read(self, column: str, text: str) -> tuple[str, bool]:
        """Reading `column` (as `text`), raising its checked errors first; whether it has any.
        A check given a `native_spans.Limit` is a guard of what the native form holds (an int
        sum past 64 bits): not written where the spans prove it never fires, else one of the
        operator's limits, so that the groups past it run in Python (`general_case`)."""
        checks = []
        for condition, message, *limit in self.checked.get(column, ()):
            error = self.cannot_hold(message, limit[0]) if limit else self.error(message)
            if error is not None:
                checks.append((condition, error))
        return self.guarded(checks, text), bool(checks)

    def _Item(self, t) -> Typed:
        """`m[i]` of a tuple aggregate, which `native_groups` makes a struct column `m` with
        fields `_0, _1, ...`: its field `_i`, raising the aggregate's own errors where read."""
        f = self.fields.get(t.term.name) if isinstance(t.term, Field) else None
        struct = f.dataType if f is not None else None
        item = struct[f"_{t.index}"] if isinstance(struct, StructType) and f"_{t.index}" in struct.names else None
        if item is None or family_of(item.dataType) is None:
            raise NotNative(f"{t} is not a field of a struct column here")
        value, checked = self._read(f.name, _widened(f"{ident(f.name)}.{ident(item.name)}", item.dataType))
        nullable = f.name not in self.nonnull and (f.nullable or item.nullable)
        return Typed(value, family_of(item.dataType), nullable, not checked, decimal_of(item.dataType))

    def _Elem(self, t) -> Typed:
        if self.elem is None:
            raise NotNative("the element of an explosion outside one")
        if not t.split:  # an item of any type: the exploded column's, maybe None
            return self._Field(Field(self.elem))
        return Typed(ident(self.elem), "str", False, True)

    def _Lit(self, t: Lit) -> Typed:
        return constant(t.value)

    # -- arithmetic -----------------------------------------------------------------------

    def _Arith(self, t) -> Typed:
        return native_calls.arith(self, t)

    def _Neg(self, t) -> Typed:
        return native_calls.neg(self, t)

    # -- comparisons and truth ------------------------------------------------------------

    def _Cmp(self, t) -> Typed:
        left, right = self.lower(t.left), self.lower(t.right)
        if t.op in ("==", "!="):
            return self._equality(t.op, left, right)
        guards = self.none_guard(f"'{t.op}'", left, right, run=python_words.BINARY[t.op])
        left, right = as_numbers(left, right)  # True < 2, False < True: as the ints 0 and 1
        group = ordered_group(left.family, right.family)
        if group is None:
            raise NotNative(f"{t.op} between {left.family} and {right.family}")
        order = native_calls.int_float_order(left, right)
        value = f"({left.sql} {t.op} {right.sql})" if order is None else f"({order} {t.op} 0)"
        if group == "float" and order is None:
            # Python: every ordering with NaN is False; Spark: NaN is largest, so a NaN where the
            # smaller operand should be gives False already (`nan <= 70.0`), and only one where
            # the larger should be (`2.5 <= nan`, `nan <= nan`) needs the guard
            larger = right if t.op in ("<", "<=") else left
            never_nan = larger.known is not None and larger.known[0] == larger.known[0]  # a constant, not NaN
            nan = "FALSE" if never_nan else self._is_nan(larger)
            value = value if nan == "FALSE" else case([(nan, "FALSE")], value)
        elif group == "float":  # the exact int-float order gives 0 for a NaN: both sides
            value = case([(f"({self._is_nan(left)} OR {self._is_nan(right)})", "FALSE")], value)
        return Typed(self.guarded(guards, value), "bool", False)

    def _equality(self, op: str, left: Typed, right: Typed) -> Typed:
        if left.family != right.family:
            left, right = as_numbers(left, right)  # True == 1, False == 0.0, True == Decimal(1)
        if "none" in (left.family, right.family):
            other = right if left.family == "none" else left
            value = f"({other.sql} IS NULL)" if other.family != "none" else "TRUE"
        elif equal_group(left.family, right.family) is None:
            # 1 == "1", date == 1: unrelated values are never equal, but None == None is True
            value = f"({left.sql} IS NULL AND {right.sql} IS NULL)" if left.nullable and right.nullable else "FALSE"
        else:
            value = f"({left.sql} <=> {right.sql})"
            order = native_calls.int_float_order(left, right)
            if order is not None:
                value = f"({order} = 0)"
            if order is not None and (left.nullable or right.nullable):  # None == None; None == x is False
                value = case([(f"({left.sql} IS NULL OR {right.sql} IS NULL)",
                               f"({left.sql} IS NULL AND {right.sql} IS NULL)")], value)
            if "float" in (left.family, right.family):  # NaN == NaN is False in Python
                value = f"({value} AND NOT ({self._is_nan(left)} OR {self._is_nan(right)}))"
        return Typed(f"(NOT {value})" if op == "!=" else value, "bool", False)

    @staticmethod
    def _is_nan(x: Typed) -> str:
        if x.family != "float":
            return "FALSE"
        return f"(isnan({x.sql}) AND {x.sql} IS NOT NULL)" if x.nullable else f"isnan({x.sql})"

    def _Truth(self, t) -> Typed:
        return Typed(self.truth(self.lower(t.operand)), "bool", False)

    def _Not(self, t) -> Typed:
        return Typed(f"(NOT {self.truth(self.lower(t.operand))})", "bool", False)

    def _BoolOp(self, t) -> Typed:
        values = self._in_order(t.values, t.op, self.lower)
        family = one_family(values, f"{t.op} of")
        result = values[-1]
        for v in reversed(values[:-1]):  # a and b == (b if a else a); a or b == (a if a else b)
            chosen = (result, v) if t.op == "and" else (v, result)
            text = case([(self.truth(v), chosen[0].sql)], chosen[1].sql)
            result = Typed(text, family, v.nullable or result.nullable, decimal=wider_decimal(family, v, result),
                           span=native_spans.either(v.span, result.span))
        return result

    def _IfElse(self, t, at_value: bool = False) -> Typed:
        """`body if test else orelse`; at a field's value, so are its branches. Of the test
        only the truth is asked for (`predicate`). A test of `computed(...)` alone (a helper's
        raising arguments, computed first: `analysis.helper_models`) is true wherever it does
        not raise: the value is the body's, after the test."""
        if _computed_only(t.test):
            test = self.predicate(t.test)
            with self.knowing(t.test, True):
                self.at_value = at_value
                body = self.lower(t.body)
            return body if test == "TRUE" else dataclasses.replace(body, sql=case([(test, body.sql)], "NULL"),
                                                                   leaf=False)
        test = self.predicate(t.test)
        with self.knowing(t.test, True):
            self.at_value = at_value
            body = self.lower(t.body)
        with self.knowing(t.test, False):
            self.at_value = at_value
            orelse = self.lower(t.orelse)
        family = one_family([body, orelse], "a conditional whose branches are")
        text = case([(test, body.sql)], orelse.sql)
        return Typed(text, family, body.nullable or orelse.nullable, decimal=wider_decimal(family, body, orelse),
                     span=native_spans.either(body.span, orelse.span))

    def _IsNone(self, t) -> Typed:
        """`x is None`. Python computes x first: where it may raise, its SQL is read, never
        folded away (a raising term is nullable to Spark: its `raise_error` branch is, so
        Catalyst keeps its IS NULL)."""
        x, raises = self.lower_raising(t.operand)
        if raises:
            value = f"({x.sql} IS NULL)"
        else:
            value = "TRUE" if x.family == "none" else (f"({x.sql} IS NULL)" if x.nullable else "FALSE")
        return Typed(sql.negation(value) if t.negated else value, "bool", False)

    def _InValues(self, t) -> Typed:
        x, raises = self.lower_raising(t.operand)
        if raises and not t.values:
            raise NotNative("`in` of no values, over a term that may raise (Python computes it first)")
        found = [self._equality("==", x, self.lower(Lit(v))).sql for v in t.values]
        text = sql.conjunction("OR", found) if found else "FALSE"
        return Typed(sql.negation(text) if t.negated else text, "bool", False)

    # -- strings and functions ------------------------------------------------------------

    def _Contains(self, t) -> Typed:
        needle, haystack = self.lower(t.needle), self.lower(t.haystack)
        if haystack.family != "str" or needle.family not in ("str", "none"):
            raise NotNative(f"in on {needle.family} and {haystack.family}")
        guards = self.none_guard("'in'", needle, haystack, run=python_words.contained)
        return Typed(self.guarded(guards, f"(instr({haystack.sql}, {needle.sql}) > 0)"), "bool", False)

    def _Slice(self, t) -> Typed:
        x = self.lower(t.operand)
        if x.family != "str":
            raise NotNative(f"slicing {x.family}")
        guards = self.none_guard("slicing", x)
        n = f"length({x.sql})"
        start, stop = _bound(t.start, n, "0"), _bound(t.stop, n, n)
        value = case([(f"({stop} > {start})", f"substr({x.sql}, {start} + 1, {stop} - {start})")], "''")
        return Typed(self.guarded(guards, value), "str", False)

    def _Evaluated(self, t) -> Typed:
        """True once the operand is computed: `hash(x) & 0` is a form no rule folds away, as
        for `native_ops.always_computed` (the operand may raise: its errors are pinned)."""
        x, raises = self.lower_raising(t.operand)
        return Typed(f"((hash({x.sql}) & 0) = 0)" if raises else "TRUE", "bool", False)

    def _SplitItem(self, t) -> Typed:
        return native_splits.split_item(self, t)

    def _SplitLen(self, t) -> Typed:
        return native_splits.split_len(self, t)

    def _SplitJoin(self, t) -> Typed:
        return native_splits.split_join(self, t)

    def _JoinItems(self, t) -> Typed:
        return native_splits.join_items(self, t)

    def _Caught(self, t) -> Typed:
        return native_caught.lower_caught(self, t)

    def _HelperCall(self, t) -> Typed:
        if self.python_calls is None:
            raise NotNative(f"a call of your helper {t.name} (Python) here")
        return self.python_calls.lower_helper(self, t)  # its arguments computed by Python too

    def _Bits(self, t) -> Typed:
        return native_bits.bits(self, t)

    def _Invert(self, t) -> Typed:
        return native_bits.invert(self, t)

    def _TableGet(self, t) -> Typed:
        return native_tables.table_get(self, t)

    def _TableItem(self, t) -> Typed:
        return native_tables.table_item(self, t)

    def _NestedGet(self, t) -> Typed:
        return native_tables.nested_get(self, t)

    def _InTable(self, t) -> Typed:
        return native_tables.in_table(self, t)

    def _Call(self, t, at_value: bool = False) -> Typed:
        """The native form of the call; where it has none (for these arguments' types), the call
        alone as Python in the plan (`python_calls`), when that is allowed here. At a field's
        value, also the forms of the last-bit contract (`native_math.AT_VALUE`)."""
        if t.name in native_dates.DURATIONS:  # over a subtraction of dates, which has no column
            return native_dates.duration(self, t)
        maker = native_calls.CALLS.get(t.name) or (native_math.AT_VALUE.get(t.name) if at_value and t in self.contract
                                                   else None)
        if t.name in native_case.CASE_MAPPINGS and len(t.args) == 1:  # its form depends on the receiver's term
            maker = functools.partial(native_case.lower_case_mapping, call=t)
        kept = t.name == "chars.keep"  # its tests are constants of the call
        if kept:
            maker = functools.partial(native_case.lower_kept_chars, call=t)
        mark = self.python_calls.mark() if self.python_calls is not None else 0
        args = [self.lower(a) for a in t.args]
        parse = native_parse.parses(t, alone=True)
        if parse and args[0].family == "str":  # a text: native where strictly spelled
            maker = functools.partial(native_parse.lower_parse, call=t)
        rounding = t.name == "round" and len(t.args) == 2  # native but near a tie
        if rounding:
            maker = functools.partial(native_math.lower_round_to, call=t)
        if maker is not None and (native_calls.arity_fits(t.name, t.args) or t.name in native_case.CASE_MAPPINGS
                                  or parse or rounding or kept):
            try:
                return maker(self, args)
            except NotNative:
                if self.python_calls is None:
                    raise
        elif self.python_calls is None:
            if maker is None:
                raise NotNative(f"{t.name} has no native form")
            raise NotNative(f"{t.name} with {len(t.args)} arguments (the receiver included) has no native form")
        self.python_calls.rewind(mark)  # the call computes its arguments itself: they need no column
        return self.python_calls.lower(self, t, args)




def _computed_only(test: Expr) -> bool:
    """`computed(a)`, or an `and` of such: true wherever it does not raise."""
    parts = test.values if isinstance(test, BoolOp) and test.op == "and" else (test,)
    return all(isinstance(p, Evaluated) for p in parts)


def _widened(column: str, data_type) -> str:
    """An int column as a long: Spark computes tinyint * tinyint in 8 bits (100 * 100 overflows
    there), Python in unbounded ints, which the long arithmetic's guards follow."""
    if family_of(data_type) == "int" and not isinstance(data_type, LongType):
        return f"CAST({column} AS BIGINT)"
    return column


def _bound(bound, n: str, default: str) -> str:
    """A Python slice bound on a string of length n, clamped to [0, n]."""
    if bound is None:
        return default
    if bound >= 0:
        return f"least({bound}, {n})"
    return f"greatest({n} + ({bound}), 0)"


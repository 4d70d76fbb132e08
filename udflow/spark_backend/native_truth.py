"""What a condition is natively: Python's truthiness as SQL, and what a condition having held
proves for the terms lowered under it (a mixin of `NativeLowering`).

Only the truth of a condition is asked for, so `and`/`or` are not their values there:

    a and b              CASE WHEN a THEN b ELSE FALSE END      (AND, where no part raises)
    a or b               CASE WHEN a THEN TRUE ELSE b END       (OR, where no part raises)
    b if t else c        CASE WHEN t THEN b ELSE c END          (each branch a condition)
    a from_spark UDF's bool made its declared boolean (`spark.*.boolean`): the bool itself

Reaching a later operand, a branch or a case proves what the earlier conditions say
(`nullness`): not None, computed without raising, not 0.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Iterator

from udflow.expr import BoolOp, Call, Expr, IfElse, Not
from udflow.spark_backend import nullness
from udflow.spark_backend.nullness import BOOLEAN_RESULTS
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import case, conjunction, negation


class Conditions:
    """The condition half of `NativeLowering`: `predicate`, `truth`, `knowing`."""

    @contextmanager
    def assuming(self, nonnull: frozenset, computed: frozenset = frozenset(),
                 nonnull_terms: frozenset = frozenset(), nonzero: frozenset = frozenset()) -> Iterator[None]:
        """Lower knowing `nonnull` fields and `nonnull_terms` are not None, the `computed`
        terms were computed without raising and the `nonzero` fields are not 0 (an earlier
        condition proves it)."""
        before = self.nonnull, self.computed, self.nonnull_terms, self.nonzero
        self.nonnull, self.computed = before[0] | nonnull, before[1] | computed
        self.nonnull_terms, self.nonzero = before[2] | nonnull_terms, before[3] | nonzero
        try:
            yield
        finally:
            self.nonnull, self.computed, self.nonnull_terms, self.nonzero = before

    @contextmanager
    def on_every_row(self) -> Iterator[None]:
        """Lower as on any input row, knowing nothing a condition proves: for SQL computed
        below the operator on every row (a flag that hands Python its rows), where a zero
        guard a condition made needless would raise Spark's own error on the other rows."""
        before = self.nonnull, self.computed, self.nonnull_terms, self.nonzero
        self.nonnull, self.nonzero = self.every_row
        self.computed = self.nonnull_terms = frozenset()
        try:
            yield
        finally:
            self.nonnull, self.computed, self.nonnull_terms, self.nonzero = before

    def knowing(self, condition: Expr, truthy: bool):
        """`assuming` what `condition` having been truthy (or falsy) proves (`nullness`)."""
        if truthy:
            return self.assuming(nullness.when_true(condition), nullness.computed_when_true(condition),
                                 nullness.terms_when_true(condition), nullness.nonzero_when_true(condition))
        return self.assuming(nullness.when_false(condition), nullness.computed_when_false(condition),
                             nullness.terms_when_false(condition), nullness.nonzero_when_false(condition))

    def _in_order(self, values: tuple, op: str, lower) -> list:
        """Each operand of `and`/`or` lowered knowing what reaching it proves: the earlier
        operands were truthy (`and`) or falsy (`or`)."""
        out = []
        with ExitStack() as reached:
            for value in values:
                out.append(lower(value))
                # reaching the next operand, this one was computed, and was truthy (`and`) or falsy (`or`)
                reached.enter_context(self.knowing(value, op == "and"))
        return out

    def predicate(self, term: Expr) -> str:
        """A condition: Python's truthiness of the term, never null. `and`, `or` and `not` over
        parts that cannot raise become plain AND, OR, NOT, which Spark can push into a scan;
        a part that may raise keeps Python's short circuit (a CASE). Only the truth is asked
        for, so no operand is repeated as the value `and`/`or` gives:

            a and b    CASE WHEN a THEN b ELSE FALSE END
            a or b     CASE WHEN a THEN TRUE ELSE b END"""
        return self._condition(term)[0]

    def _condition(self, term: Expr) -> tuple[str, bool]:
        if isinstance(term, Not):
            text, raises = self._condition(term.operand)
            return negation(text), raises
        if isinstance(term, BoolOp):
            line, self.line = self.line, self._computed_line(term) or self.line
            try:
                lowered = self._in_order(term.values, term.op, self._condition)
            finally:
                self.line = line
            parts = [text for text, _ in lowered]
            if not any(raises for _, raises in lowered):
                return conjunction(term.op.upper(), parts), False
            truth = parts[-1]
            for part in reversed(parts[:-1]):
                truth = case([(part, truth)], "FALSE") if term.op == "and" else case([(part, "TRUE")], truth)
            return truth, True
        if isinstance(term, IfElse):
            return self._branches(term)
        if isinstance(term, Call) and term.name in BOOLEAN_RESULTS and self._family(term.args[0]) == "bool":
            return self._condition(term.args[0])
        typed, raises = self.lower_raising(term)
        return self.truth(typed), raises

    def _branches(self, term: IfElse) -> tuple[str, bool]:
        """The truth of `body if test else orelse`: the taken branch's, each asked as a condition."""
        test, raises = self._condition(term.test)
        with self.knowing(term.test, True):
            body, body_raises = self._condition(term.body)
        with self.knowing(term.test, False):
            orelse, orelse_raises = self._condition(term.orelse)
        return case([(test, body)], orelse), raises or body_raises or orelse_raises

    def _family(self, term: Expr) -> str:
        """The family of the term's value, lowered only to see it: no guard or Python call of
        that lowering is kept."""
        mark = self.python_calls.mark() if self.python_calls is not None else 0
        made = self.guards_made
        try:
            return self.lower(term).family
        except NotNative:
            return ""
        finally:
            self.guards_made = made
            if self.python_calls is not None:
                self.python_calls.rewind(mark)

    def truth(self, x: Typed) -> str:
        """Python's bool(x), never null."""
        if x.family == "none":
            return "FALSE"
        if x.family == "bool":
            value = x.sql
        elif x.family in ("int", "float", "decimal"):
            value = f"({x.sql} != 0)"  # NaN != 0 is True, as bool(nan)
        elif x.family == "str":
            value = f"(length({x.sql}) > 0)"
        elif x.family in ("date", "datetime"):
            return f"({x.sql} IS NOT NULL)" if x.nullable else "TRUE"
        else:
            raise NotNative(f"truthiness of {x.family}")
        return f"coalesce({value}, FALSE)" if x.nullable else value


"""How a native form raises: the user's error as SQL, marked as the Python path marks it.

`NativeLowering` builds its guards' errors with these methods (a mixin: they read the
lowering's `where`, `line`, `shown` fields, `pinned` and `guards_made`):

    error("ZeroDivisionError: float division by zero")
        raise_error(concat('<<udflow:', <head, base64>, '.', <the record's JSON>, ':udflow>>', <pin>))
    raised(encoded)      the same, for a message computed at run time (a Python call's error)

The driver finds the marker in Spark's error (`udf.translated`) and raises the decoded
text as the user's `UdfRuntimeError`, as for an error of the function run in Python.

Each raise site is analysed by Spark on every query that holds it, so it is kept small:
the record's JSON goes into the message as Spark writes it (a JSON value ends where its
text says, so it needs no encoding to be found again), and it is the only part built per
row; an operation's operands are columns of that record or constants of the line named.
"""

from __future__ import annotations

import base64

from udflow.spark_backend import sql
from udflow.spark_backend.sql import case, ident, literal


def b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


class RaisingSql:
    def error(self, message) -> str:
        """SQL that raises `message` (a text, or [(condition, text), ...] choosing one at run
        time), naming the user's function and showing the record's read fields, marked as the
        Python path marks a failing function (`udf.MarkedFailure`), so that the driver reports
        it as a `UdfRuntimeError` like any error of the function. The constant text is encoded
        here, once; only the record is written per row, and only when it raises."""
        self.guards_made += 1
        at = f" (line {self.line})" if self.line else ""

        def head(text: str) -> str:
            return literal(b64(f"{self.where} raised {text}{at}\n  record: "))

        if isinstance(message, str):
            first = head(message)
        else:  # [(condition, text), ...]: the first whose condition holds, else the last
            first = case([(cond, head(text)) for cond, text in message[:-1]], head(message[-1][1]))
        return self._raise([first, "'.'", self._record_text()])

    def raised(self, encoded: str, with_line: bool = True) -> str:
        """SQL that raises a message computed at run time (`encoded`: SQL of its text in base64,
        e.g. Python's own words for an error `python_calls` caught), marked as `error` marks;
        `with_line` False where the text names its line itself."""
        self.guards_made += 1
        at = f" (line {self.line})" if self.line and with_line else ""
        return self._raise([literal(b64(f"{self.where} raised ")), "'.'", encoded, "'.'",
                            literal(b64(f"{at}\n  record: ")), "'.'", self._record_text()])

    def _raise(self, chunks: list) -> str:
        # A nondeterministic part (spark_partition_id(); not rand(), whose comparisons with
        # constants Spark folds) makes the raising expression nondeterministic, so that Catalyst
        # neither moves it past another operator (a filter below or above, a join), nor merges
        # it into their conditions, nor hoists it as a common subexpression: it raises only on
        # the rows that reach it in the plan, as Python does. Evaluated only when raising.
        pin = "IF(spark_partition_id() < 0, '?', '')" if self.pinned else "''"
        return sql.call("raise_error", sql.call("concat", "'<<udflow:'", *chunks, "':udflow>>'", pin))

    def _record_text(self) -> str:
        if self._record is None:
            if self.shown:
                record = sql.call("named_struct", *[p for n in self.shown for p in (literal(n), ident(n))])
                self._record = sql.call("to_json", record, "map('ignoreNullFields', 'false')")
            else:
                self._record = literal(b64("{}"))
        return self._record

"""What a Spark session remembers between lowerings, and DataFrame calls with fewer round trips.

Each `collect()`, `to_spark()` or `write()` lowers its plan afresh, and part of that
work gives the same answer every time on the same session. The session keeps those
answers (`remembered`):

    "newline_scans"    whether a CSV file, as it is now, may hold quoted newlines (`read`)
    "term_functions"   the Arrow UDF registered for a Python term (`python_calls`)
    "helper_families"  the type of a helper's results on a sample (`python_calls`)
    "expr_splitter"    the JVM's splitter of one string into many (`select_expr`)
    "file_reads"       a file source's DataFrame, for its files as they are now (`read`)
    "jvm_handles"      a JVM class or constant (`jvm_handle`): py4j finds a class by asking
                       for each part of its name, one round trip each
    "paths_local"      whether a path without a scheme is a local file (the Hadoop
                       configuration's default file system: `read`)
    "normal_cases"     the normal case last found for a model over some columns, the guess
                       `general_case.split` lowers its operator over first

A table keeps at most LIMIT answers, the least recently used dropped first, so that a
long-lived session does not grow without bound.

Every py4j call is a round trip to the JVM (a tenth of a millisecond or more), and
PySpark sends a list element by element: `df.selectExpr(*exprs)` makes a Java list
with one call per expression and a few more. `select_expr` sends the list as one
string the JVM splits, two calls in all: a native operator selects dozens of columns.

    select_expr(df, ["a", "b + 1 AS c"])   the DataFrame df.selectExpr("a", "b + 1 AS c") is
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable

from pyspark.sql import DataFrame

from udflow.spark_backend import connect

LIMIT = 512
SEPARATOR = "\x00"  # in no SQL udflow writes (`sql.string` spells a control character as bytes)


def remembered(spark: Any, table: str, key: Hashable, make: Callable[[], Any]) -> Any:
    """`make()`, computed once per `key` in the session's `table`."""
    tables = spark.__dict__.setdefault("_udflow_memo", {})
    entries = tables.setdefault(table, OrderedDict())
    if key in entries:
        entries.move_to_end(key)
        return entries[key]
    value = entries[key] = make()
    if len(entries) > LIMIT:
        entries.popitem(last=False)
    return value


def jvm_handle(spark: Any, name: str, member: str = "") -> Any:
    """The JVM class `name` (a dotted name), or the value of its static method `member`
    (called without arguments), looked up once per session."""
    def look_up() -> Any:
        found = spark._jvm
        for part in name.split("."):
            found = getattr(found, part)
        return getattr(found, member)() if member else found

    return remembered(spark, "jvm_handles", (name, member), look_up)


def select_expr(df: DataFrame, exprs: list[str]) -> DataFrame:
    """`df.selectExpr(*exprs)` in two round trips to the JVM, however many `exprs`."""
    spark = df.sparkSession
    if connect.is_connect(spark) or any(SEPARATOR in e for e in exprs):
        return df.selectExpr(*exprs)
    from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame

    splitter = remembered(spark, "expr_splitter", None,
                          lambda: spark._jvm.java.util.regex.Pattern.compile(SEPARATOR))
    # Dataset.selectExpr is Scala varargs: it takes the String[] the split returns
    return ClassicDataFrame(df._jdf.selectExpr(splitter.split(SEPARATOR.join(exprs))), spark)

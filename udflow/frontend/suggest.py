"""`uf.suggest(df)`: for each Python UDF of a DataFrame, the PySpark Column equal to it.

Polars warns a user whose `map_elements` has a native equivalent; this is the same for
PySpark's `F.udf`. Each UDF is opened as `from_spark` opens it, alone over its argument
columns (an empty DataFrame of their types: no Spark job runs), and lowered by the same
native lowering that runs it in a flow. Where the whole UDF has a native form, the
suggestion is that form, as the code a user pastes in place of the UDF call:

    double_it (column y): F.expr("CASE WHEN (x IS NULL) THEN NULL ELSE (x * 2.0D) END")

It is exactly what udflow runs, guards included: where Python raises (`None + 1`),
the expression raises with Python's message. Where there is none, the reason names the
construct and its line (`str.upper (line 17)`).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any, Optional

from udflow.frontend import catalyst as cat
from udflow.spark_backend import native_case, python_calls


@dataclass(frozen=True)
class Suggestion:
    """One UDF call: where it is, and the native Column equal to it (`code`), or why none is."""

    udf: str
    column: str  # the column it computes (a filter: "filter"; an explosion: its element column)
    code: Optional[str]
    reason: str = ""

    def __str__(self) -> str:
        where = f"{self.udf} ({self.column})"
        return f"{where}: {self.code}" if self.code else f"{where}: no native form: {self.reason}"


def suggest(df: Any) -> list[Suggestion]:
    """A `Suggestion` per Python UDF call in `df`'s plan, in plan order (bottom up), on a
    classic session or a Spark Connect one."""
    from udflow.frontend.sessions import reader_of, session_of

    spark = session_of(df)
    calls = []
    _collect(reader_of(df, spark).read(df), calls)
    return [_suggestion(spark, reader_of(df, spark), udf, kind, column) for udf, kind, column in calls]


def _collect(node: cat.Node, calls: list) -> None:
    for child in node.children:
        _collect(child, calls)
    if isinstance(node, cat.Project):
        calls += [(o.expr, "map", o.name) for o in node.outputs if isinstance(o.expr, cat.Udf)]
    elif isinstance(node, cat.Filter):
        calls += [(c, "filter", "filter") for c in node.conjuncts if isinstance(c, cat.Udf)]
    elif isinstance(node, cat.Generate) and isinstance(node.arg, cat.Udf) and node.out is not None:
        calls.append((node.arg, "explode", node.out.name))


def _suggestion(spark, reader, udf: cat.Udf, kind: str, column: str) -> Suggestion:
    import udflow
    from udflow.frontend.synthesize import Shape
    from udflow.frontend.translate import NotTranslated, Translation

    label = f"column {column}" if kind == "map" else ("filter" if kind == "filter" else f"explode into {column}")
    names = [a.name for a in udf.args if isinstance(a, cat.Attr)]
    if len(names) != len(udf.args) or len(set(names)) != len(names):
        return Suggestion(udf.name, label, None, "its arguments are not distinct columns")
    translation = Translation(reader, {}, {})
    try:
        fn = translation.udf_function(udf, Shape(kind, column if kind != "filter" else ""), "suggest")
    except NotTranslated as why:
        return Suggestion(udf.name, label, None, str(why))
    schema = ", ".join(f"`{a.name}` {a.type}" for a in udf.args)
    source = udflow.source("input", dataframe=spark.createDataFrame([], schema))
    flow = source.filter(fn) if kind == "filter" else source.map(fn)
    step = flow.physical().root
    if not step.native or step.python_terms:
        reason = step.reason or "; ".join(f"{t} runs as Python" for t in step.python_terms) or step.how
        return Suggestion(udf.name, label, None, reason)
    lowered = flow.to_spark()
    if hasattr(lowered, "_jdf"):
        sql = _plain_errors(_find(lowered._jdf.queryExecution().analyzed(), kind, column))
    else:  # a Connect DataFrame: the client holds udflow's own SQL text, which Spark parsed
        sql = _plain_errors(_find_text(lowered._plan, kind, column))
    if native_case.CANNOT_HOLD in sql or python_calls.COLUMN in sql:  # native on ASCII rows only
        return Suggestion(udf.name, label, None, "a case mapping (str.lower/upper) has a native form on ASCII "
                          "text only: Python's and the JVM's Unicode tables differ beyond it")
    if "namedlambdavariable()" in sql:  # Spark writes a lambda's text as no parser reads it back
        return Suggestion(udf.name, label, None, "its native form has no SQL text Spark reads back "
                          "(a higher-order function over an array)")
    note = "  # an explode: use it in select(...)" if kind == "explode" else ""
    return Suggestion(udf.name, label, f"F.expr({sql!r}){note}")


# udflow's native errors carry an encoded message for its own driver to decode; a pasted
# expression raises Python's words as Spark's plain error instead
# (as Catalyst prints it back on a classic session, or as udflow wrote it, `NativeLowering._raise`,
# where a Connect client holds the text)
ENCODED_ERROR = re.compile(r"raise_error\(concat\('<<udflow:', '([A-Za-z0-9+/=]+)'.*?':udflow>>', "
                           r"(?:\(IF\(\(SPARK_PARTITION_ID\(\) < 0\), '\?', ''\)\)\)\)"
                           r"|IF\(spark_partition_id\(\) < 0, '\?', ''\)\)\)|''\)\))")


def _plain_errors(sql: str) -> str:
    def plain(match) -> str:
        head = base64.b64decode(match.group(1)).decode()
        text = head.split(" raised ", 1)[-1].split("\n", 1)[0]
        return "raise_error('" + text.replace("\\", "\\\\").replace("'", "\\'") + "')"

    return ENCODED_ERROR.sub(plain, sql)


def _find(plan, kind: str, column: str) -> str:
    """The SQL of the filter's condition, the column's expression or the generator, top down."""
    node = plan
    while node is not None:
        name = node.getClass().getSimpleName()
        if kind == "filter" and name == "Filter":
            return str(node.condition().sql())
        if kind == "explode" and name == "Generate":
            return str(node.generator().sql())
        if kind == "map" and name == "Project":
            for e in cat._seq(node.projectList()):
                if str(e.name()) == column and e.getClass().getSimpleName() == "Alias":
                    return str(e.child().sql())
        children = cat._seq(node.children())
        node = children[0] if children else None
    raise LookupError(f"no {kind} for {column} in the lowered plan")


def _find_text(plan, kind: str, column: str) -> str:
    """`_find` on a Connect client's plan: the text of the filter's condition, or of the
    projection that names the column (`<sql> AS `column``), top down."""
    from udflow.spark_backend.sql import ident

    suffix = f" AS {ident(column)}"
    node = plan
    while node is not None:
        name = type(node).__name__
        if kind == "filter" and name == "Filter":
            return _text_of(node.filter)
        if kind != "filter" and name == "Project":
            for c in node._columns:
                text = _text_of(c)
                if text.endswith(suffix) and text != ident(column) + suffix:
                    return text[: -len(suffix)]
        node = getattr(node, "_child", None)
    raise LookupError(f"no {kind} for {column} in the lowered plan")


def _text_of(column) -> str:
    expr = getattr(column, "_expr", column)
    text = getattr(expr, "_expr", None)
    if not isinstance(text, str):
        raise LookupError(f"not SQL text: {expr!r}")
    return text

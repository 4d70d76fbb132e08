"""A Spark Connect DataFrame's plan, read into the same data as `catalyst` reads a classic one.

A Connect client holds no analysed plan: its DataFrame is the tree of operations the user
called (`pyspark.sql.connect.plan`), with unresolved column names and, for each `F.udf`,
the Python function itself. This reader walks that tree; each node's columns and types
come from the server (`DataFrame.schema`, one round trip per node that holds a UDF or is
above one), and names resolve against the child's columns as Spark resolves them (case
insensitively, unless `spark.sql.caseSensitive`). A column keeps its id where the
operation passes it through, so the translation follows it across renames and joins.

What is read: projections (`select`, `withColumn(s)`, `withColumnRenamed`, `drop` is a
source), filters, `select(F.explode(udf(...)))`, inner joins on equalities of columns,
`groupBy(columns).agg(sum/count/avg/min/max of columns)`, and conditions of the shapes
`conditions` translates. A native expression of another kind keeps its node as written
(Connect has no SQL text of it to re-read), and so does any node of another kind.
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

from udflow.frontend import catalyst as cat
from udflow.frontend.conditions import FLIPPED, INTEGRAL, ORDERED, Atom

# Connect's names of the comparisons (`Column.__gt__` is the function ">")
OPERATORS = {">": ">", ">=": ">=", "<": "<", "<=": "<=", "==": "==", "!=": "!="}
AGGREGATES = {"sum": "sum", "count": "count", "avg": "avg", "mean": "avg", "min": "min", "max": "max"}
DDL_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint", "bool": "boolean"}


def _kind(x) -> str:
    return type(x).__name__


class ConnectReader:
    """Reads one Connect DataFrame's plan (`read(df)`)."""

    def __init__(self, spark):
        self.spark = spark
        self.ids = itertools.count(1)
        self.case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"

    def read(self, df) -> cat.Node:
        return self.node(df._plan)

    def dataframe(self, node: cat.Node):
        from pyspark.sql.connect.dataframe import DataFrame

        return DataFrame(node.jvm, self.spark)

    def input_files(self, node: cat.Node, df) -> list:
        """The files `node` (a relation) reads, as `df.inputFiles()` lists them."""
        return list(df.inputFiles()) if node.kind in ("Read", "DataSource", "Relation") else []

    # -- nodes ---------------------------------------------------------------

    def node(self, plan) -> cat.Node:
        kind = _kind(plan)
        if kind == "SubqueryAlias":
            return self.node(plan._child)
        reader = getattr(self, f"read_{kind.lower()}", None)
        has_udf = _plan_has_udf(plan)
        if reader is not None and has_udf:
            try:
                return reader(plan)
            except _Unread:  # a node read otherwise than the server reads it stays as written
                pass
        return cat.Plan(plan, self.output(plan), kind=kind, udf_below=has_udf)

    def output(self, plan, keep: Optional[dict] = None) -> tuple:
        """The node's columns from the server: an Attr per column, reusing `keep`'s id by name."""
        keep = keep or {}
        schema = self.dataframe(cat.Plan(plan)).schema
        return tuple(cat.Attr(f.name, keep[f.name].id if f.name in keep else next(self.ids),
                              f.dataType.simpleString()) for f in schema.fields)

    def named_outputs(self, plan, outs: list) -> tuple:
        """(the node's columns, its outputs) with the server's names and types, matched to `outs`
        by position (a projection's and an aggregate's columns are its expressions, in order)."""
        schema = self.dataframe(cat.Plan(plan)).schema
        if len(schema.fields) != len(outs):
            raise _Unread("the server's columns do not match the expressions")
        output = tuple(cat.Attr(f.name, o.id, f.dataType.simpleString()) for f, o in zip(schema.fields, outs))
        return output, tuple(cat.Out(a.name, a.id, o.expr, a.type) for a, o in zip(output, outs))

    def resolve(self, name: str, attrs) -> cat.Attr:
        same = [a for a in attrs if (a.name == name if self.case_sensitive else a.name.lower() == name.lower())]
        if len(same) != 1:
            raise _Unread(f"column {name} is {'ambiguous' if same else 'not found'}")
        return same[0]

    def read_project(self, plan) -> cat.Node:
        child = self.node(plan._child)
        outs = [self.out(c._expr, child.output) for c in plan._columns]
        explodes = [o for o in outs if isinstance(o.expr, _Explode)]
        if explodes:
            return self.generate(plan, child, outs, explodes)
        output, outs = self.named_outputs(plan, outs)
        return cat.Project(plan, output, child=child, outputs=outs)

    def read_withcolumns(self, plan) -> cat.Node:
        child = self.node(plan._child)
        new = {name: self.out(_alias(c._expr, name), child.output) for name, c in zip(plan._columnNames, plan._columns)}
        outs = [o for o in (cat.Out(a.name, a.id, a, a.type) for a in child.output) if o.name not in new]
        outs += list(new.values())
        by_name = {o.name: o for o in outs}
        output = self.output(plan, {o.name: cat.Attr(o.name, o.id, o.type) for o in outs})
        return cat.Project(plan, output, child=child, outputs=tuple(by_name[a.name] for a in output))

    def read_withcolumnsrenamed(self, plan) -> cat.Node:
        child = self.node(plan._child)
        renames = dict(plan._colsMap)
        outs = [cat.Out(renames.get(a.name, a.name), a.id if a.name not in renames else next(self.ids), a, a.type)
                for a in child.output]
        output, outs = self.named_outputs(plan, outs)
        return cat.Project(plan, output, child=child, outputs=outs)

    def read_filter(self, plan) -> cat.Node:
        child = self.node(plan._child)
        conjuncts = tuple(self.expr(c, child.output) for c in _conjuncts(plan.filter._expr))
        return cat.Filter(plan, child.output, child=child, conjuncts=conjuncts)

    def read_join(self, plan) -> cat.Node:
        left, right = self.node(plan.left), self.node(plan.right)
        output = left.output + right.output
        from pyspark.sql.connect import proto

        inner = plan.how == proto.Join.JoinType.JOIN_TYPE_INNER
        pairs, rest = [], []
        on = plan.on
        if not inner or not hasattr(on, "_expr"):  # `on="k"` joins USING k: one column, coalesced
            return cat.Join(plan, output, left=left, right=right, join_type="Inner" if inner else "outer",
                            rest=None if not inner else "a join on column names (USING)")
        for c in _conjuncts(on._expr):
            pair = self.equality(c, left.output, right.output)
            (pairs.append(pair) if pair else rest.append(str(c)))
        return cat.Join(plan, output, left=left, right=right, join_type="Inner", pairs=tuple(pairs),
                        rest=" AND ".join(rest) or None)

    def read_aggregate(self, plan) -> cat.Node:
        child = self.node(plan._child)
        if plan._group_type != "groupby" or plan._pivot_col is not None:
            return cat.Plan(plan, self.output(plan), kind="Aggregate", udf_below=True)
        keys = tuple(self.expr(c._expr, child.output) for c in plan._grouping_cols)
        outs = [cat.Out(k.name, k.id, k, k.type) for k in keys if isinstance(k, cat.Attr)]
        outs += [self.out(c._expr, child.output) for c in plan._aggregate_cols]
        output, outs = self.named_outputs(plan, outs)
        return cat.Aggregate(plan, output, child=child, keys=keys, outputs=outs)

    def generate(self, plan, child, outs, explodes) -> cat.Node:
        if len(explodes) != 1:
            return cat.Plan(plan, self.output(plan), kind="Project", udf_below=True)
        (e,) = explodes
        output, outs = self.named_outputs(plan, outs)
        e = next(o for o in outs if isinstance(o.expr, _Explode))
        element = next(a for a in output if a.id == e.id)
        generate = cat.Generate(plan, child.output + (element,), child=child, generator="Explode",
                                arg=e.expr.arg, out=element, outer=False, kept=child.output)
        rest = [o if o is not e else cat.Out(element.name, element.id, element, element.type) for o in outs]
        return cat.Project(plan, output, child=generate, outputs=tuple(rest))

    # -- expressions -----------------------------------------------------------

    def out(self, e, attrs) -> cat.Out:
        if _kind(e) == "ColumnAlias":
            inner = self.expr(e._child, attrs, generator=True)
            name = e._alias[0]
            if isinstance(inner, cat.Attr) and inner.name == name:
                return cat.Out(name, inner.id, inner, inner.type)
            return cat.Out(name, next(self.ids), inner, getattr(inner, "type", ""))
        inner = self.expr(e, attrs, generator=True)
        if isinstance(inner, cat.Attr):
            return cat.Out(inner.name, inner.id, inner, inner.type)
        return cat.Out(str(e), next(self.ids), inner, "")

    def expr(self, e, attrs, generator: bool = False):
        kind = _kind(e)
        try:
            if kind == "ColumnReference":
                return self.resolve(e._unparsed_identifier, attrs)
            if kind == "CommonInlineUserDefinedFunction" and _kind(e._function) == "PythonUDF":
                return self.udf(e, attrs)
            if kind == "UnresolvedFunction":
                return self.function(e, attrs, generator)
        except _Unread as why:
            return cat.Native(f"{e} ({why})", has_udf=_has_udf(e), portable=False)
        return cat.Native(str(e), has_udf=_has_udf(e), portable=False)

    def udf(self, e, attrs) -> cat.Udf:
        fn = e._function
        return cat.Udf(e._function_name, fn._func, _type_name(fn._output_type, self.spark),
                       tuple(self.expr(a, attrs) for a in e._arguments), int(fn._eval_type),
                       bool(e._deterministic))

    def function(self, e, attrs, generator: bool):
        name, args = e._name, list(e._args)
        if generator and name == "explode" and len(args) == 1:
            return _Explode(self.expr(args[0], attrs))
        if name in AGGREGATES and len(args) == 1 and not e._is_distinct:
            arg = args[0]
            if name == "count" and _kind(arg) in ("UnresolvedStar", "LiteralExpression"):
                return cat.Agg("count", None, False, False)
            column = self.expr(arg, attrs)
            if isinstance(column, cat.Attr):
                return cat.Agg(AGGREGATES[name], column, False, False)
        native = cat.Native(str(e), has_udf=_has_udf(e), portable=False)
        atom = self.atom(name, args, attrs)
        return native if atom is None else cat.Native(str(e), refs=(atom[1],), atom=atom[0], portable=False)

    def atom(self, name: str, args: list, attrs) -> Optional[tuple]:
        """(`conditions.Atom`, its column) for a condition of the shapes `conditions` states."""
        if name in ("isNotNull", "isNull") and len(args) == 1 and _kind(args[0]) == "ColumnReference":
            column = self.resolve(args[0]._unparsed_identifier, attrs)
            return Atom(column.name, "is not None" if name == "isNotNull" else "is None"), column
        if name not in OPERATORS or len(args) != 2:
            return None
        left, right, op = args[0], args[1], OPERATORS[name]
        if _kind(left) != "ColumnReference":
            left, right, op = right, left, FLIPPED[op]
        if _kind(left) != "ColumnReference" or _kind(right) != "LiteralExpression":
            return None
        column = self.resolve(left._unparsed_identifier, attrs)
        literal = _literal_for(right._value, column.type)
        if column.type not in ORDERED or literal is None:
            return None
        return Atom(column.name, op, literal, float_column=column.type in ("double", "float")), column

    def equality(self, e, left_attrs, right_attrs) -> Optional[tuple]:
        if _kind(e) != "UnresolvedFunction" or e._name != "==" or len(e._args) != 2:
            return None
        a, b = e._args
        if _kind(a) != "ColumnReference" or _kind(b) != "ColumnReference":
            return None
        try:
            return self.resolve(a._unparsed_identifier, left_attrs), self.resolve(b._unparsed_identifier, right_attrs)
        except _Unread:
            try:
                return (self.resolve(b._unparsed_identifier, left_attrs),
                        self.resolve(a._unparsed_identifier, right_attrs))
            except _Unread:
                return None


class _Unread(Exception):
    """A name the reader cannot resolve as the server would."""


class _Explode:
    """`explode(arg)` in a projection (read into a Generate)."""

    def __init__(self, arg):
        self.arg = arg


def _alias(expr, name):
    from pyspark.sql.connect.expressions import ColumnAlias

    return ColumnAlias(expr, [name], None)


def _conjuncts(e) -> list:
    if _kind(e) == "UnresolvedFunction" and e._name == "and" and len(e._args) == 2:
        return _conjuncts(e._args[0]) + _conjuncts(e._args[1])
    return [e]


def _has_udf(e) -> bool:
    if _kind(e) == "CommonInlineUserDefinedFunction":
        return True
    return any(_has_udf(c) for c in _children(e))


def _children(e) -> list:
    out = []
    for attr in ("_child", "_args", "_arguments", "_expr"):
        value = getattr(e, attr, None)
        if isinstance(value, (list, tuple)):
            out += [v for v in value if hasattr(v, "to_plan")]
        elif value is not None and hasattr(value, "to_plan"):
            out.append(value)
    return out


def _plan_has_udf(plan) -> bool:
    for attr in ("_columns", "_grouping_cols", "_aggregate_cols"):
        if any(_has_udf(c._expr) for c in getattr(plan, attr, None) or ()):
            return True
    condition = getattr(plan, "filter", None)
    if condition is not None and hasattr(condition, "_expr") and _has_udf(condition._expr):
        return True
    children = [getattr(plan, "_child", None), getattr(plan, "left", None), getattr(plan, "right", None)]
    return any(_plan_has_udf(c) for c in children if c is not None)


def _literal_for(value: Any, column_type: str):
    """The literal's Python value compared with a column of `column_type`, or None."""
    import datetime

    if isinstance(value, bool) or value is None:
        return None
    if column_type in INTEGRAL and isinstance(value, int):
        return value
    if column_type in ("double", "float") and isinstance(value, (int, float)):
        return float(value) if value == value else None
    if column_type == "string" and isinstance(value, str):
        return value
    if column_type == "date" and type(value) is datetime.date:
        return value
    return None


def _type_name(data_type, spark) -> str:
    """A UDF's declared type as Spark's simpleString."""
    if hasattr(data_type, "simpleString"):
        return data_type.simpleString()
    text = str(getattr(data_type, "data_type_string", data_type)).strip().lower()
    return DDL_NAMES.get(text, text)


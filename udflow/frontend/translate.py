"""From a DataFrame's analysed plan (`catalyst`) to a flow.

Bottom up, every part of the plan without a Python UDF is a source (a DataFrame
source, as `uf.source(name, dataframe=...)` makes). The operators with Python UDFs,
and the relational operators between them, become flow operators:

    Spark (analysed)                               udflow
    Project [a, f(x) AS y]                         Map(f): {**r, "y": f's value}, then a projection
    Filter p(y)                                     filter(p)
    Generate explode(t(s)), [tok]                  Map(t): one record per element
    Join Inner, (a = b)                            Match(a=b)
    Aggregate [k], [k, sum(v) AS s, count(1)]      Reduce[k](aggregate)

Native expressions keep Spark's semantics: a native projection or condition right
above a source is folded into that source (the JVM plan gets the node back over the
source's plan); elsewhere its node, and everything below it, stays as Spark wrote it
(a source), and `Opened.kept` says why. A part is never an error: what udflow does
not translate runs as the user wrote it.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Union

from udflow import spark_results
from udflow.frontend import catalyst as cat
from udflow.frontend import native_steps
from udflow.frontend.synthesize import (
    Shape,
    condition_filter,
    copies,
    projection,
    record_function,
    reduce_function,
)

# Spark types whose values a row-at-a-time Python UDF receives as udflow gives them
# (timestamps: Spark hands a UDF the session's local time, udflow UTC or naive)
PLAIN_TYPES = ("boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "date")
RESULT_TYPES = spark_results.DECLARED
GENERATORS = ("Explode",)


class NotTranslated(Exception):
    """This node stays as Spark wrote it (the message says why, in the user's terms)."""


@dataclass(frozen=True)
class KeptPart:
    """A part of the DataFrame that runs as written: the node and why it was not opened."""

    source: str
    node: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.node} stays as written ({self.reason})"


@dataclass(frozen=True)
class Opened:
    """What `from_spark` made: the flow, its sources by name, the parts kept as written."""

    flow: object
    columns: tuple
    kept: tuple = ()
    udfs: tuple = ()  # (UDF name, the file name of the record function it became) per UDF opened


@dataclass
class Translation:
    reader: cat.Reader
    keys: dict
    foreign_keys: dict
    names: dict = field(default_factory=dict)  # source name -> count
    fields: dict = field(default_factory=dict)  # Spark expression id -> the flow field holding it
    kept: list = field(default_factory=list)
    udfs: list = field(default_factory=list)

    # -- parts -----------------------------------------------------------------

    def flow(self, node: cat.Node):
        """The flow of `node`: translated where it holds a Python UDF and can be, else a source."""
        opened = self.open(node)
        return opened if not isinstance(opened, _Kept) else self.source(opened)

    def open(self, node: cat.Node) -> Union[object, "_Kept"]:
        if not node.has_udf:
            return _Kept(node, "")
        handler = {cat.Project: self.project, cat.Filter: self.filter, cat.Generate: self.generate,
                   cat.Join: self.join, cat.Aggregate: self.aggregate}.get(type(node))
        if handler is None:
            return _Kept(node, f"udflow does not translate a {node.title()} with a Python UDF below it")
        state = (len(self.kept), len(self.udfs), dict(self.names))
        try:
            return handler(node)
        except NotTranslated as why:  # the parts made below it are not in the flow: forget them
            self.kept[state[0]:], self.udfs[state[1]:], self.names = [], [], state[2]
            return _Kept(node, str(why))

    def source(self, kept: "_Kept"):
        import udflow

        df = self.reader.dataframe(kept.node)
        name = self.name_of(kept.node, df)
        columns = [a.name for a in kept.node.output]
        if len(set(columns)) != len(columns):
            raise cat.FrontendError(
                f"a part of the DataFrame has two columns of one name ({_duplicates(columns)}); "
                "udflow's records have one field per name: rename one (withColumnRenamed) before from_spark")
        if kept.reason:
            self.kept.append(KeptPart(name, kept.node.title(), kept.reason))
        self.fields.update({a.id: a.name for a in kept.node.output})
        return udflow.source(name, dataframe=df, key=self.keys.get(name),
                             foreign_keys=self.foreign_keys.get(name))

    def name_of(self, node: cat.Node, df) -> str:
        base = "source"
        try:
            files = self.reader.input_files(node, df)
        except Exception:  # noqa: BLE001 - a relation without files: a generic name
            files = []
        stems = {os.path.splitext(os.path.basename(f.rstrip("/")))[0].split("-part")[0] for f in files}
        dirs = {os.path.basename(os.path.dirname(f)) for f in files}
        if len(dirs) == 1 and next(iter(dirs)).endswith((".parquet", ".csv", ".json", ".orc")):
            base = os.path.splitext(next(iter(dirs)))[0]
        elif len(stems) == 1:
            base = next(iter(stems))
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "source"
        n = self.names.get(base, 0) + 1
        self.names[base] = n
        return base if n == 1 else f"{base}_{n}"

    # -- operators ---------------------------------------------------------------
    #
    # `self.fields` maps each Spark attribute (by expression id) to the flow field that holds
    # it. A rename (`withColumnRenamed`, `select(col.alias(...))`) only maps a new id to the
    # same field, and a dropped column stays in the records (nothing above reads it; the
    # final columns are selected when the flow becomes a DataFrame): no projection stands
    # between operators that could move. A Map copies a field to its Spark name only where
    # Spark's text must name it (a native expression) and at the root.

    def name(self, a: cat.Attr) -> str:
        return self.fields.get(a.id, a.name)

    def named(self, flow, attrs, node: cat.Node):
        """`flow` with each of `attrs` in a field of its own Spark name (a copy where it is not)."""
        renames = {self.name(a): a.name for a in attrs if self.name(a) != a.name}
        if not renames:
            return flow
        if flow.fields is None or any(new in flow.fields for new in renames.values()):
            raise NotTranslated("a renamed column's name is still taken by another column")
        for a in attrs:
            self.fields[a.id] = a.name
        return flow.map(copies(renames, "rename"),
                        name=_unique(flow, "rename " + ", ".join(f"{a} as {b}" for a, b in renames.items())))

    def project(self, node: cat.Project):
        natives = [o for o in node.outputs if isinstance(o.expr, cat.Native)]
        nested = [o for o in natives if o.expr.has_udf]
        if nested:
            raise NotTranslated(f"the column {nested[0].name} = {nested[0].expr} calls a Python UDF inside a "
                                "native expression")
        _portable(natives and [o.expr for o in natives])
        flow = self.flow(node.child)
        carried = set(flow.fields or ())
        if natives:  # computed from the input's columns, before any UDF writes one of them
            flow = self.named(flow, [a for o in natives for a in o.expr.refs], node)
            targets = {o.id: o.name if o.name not in carried else f"__udflow_{o.id}" for o in natives}
            flow = flow.apply(native_steps.SPARK_COLUMNS, columns=tuple((targets[o.id], o.expr.sql) for o in natives),
                              types=_types(o.expr for o in natives),
                              name=_unique(flow, "Spark columns " + ", ".join(o.name for o in natives)))
            self.fields.update(targets)
        for o in node.outputs:
            if isinstance(o.expr, cat.Udf):
                # a field the others still read keeps its value: this one writes a name of its own
                taken = o.name in _read_by_others(node.outputs, o, self.name) or o.name in self.written(node)
                target = f"__udflow_{o.id}" if taken else o.name
                flow = flow.map(self.udf_function(o.expr, Shape("map", target), "map"))
                self.fields[o.id] = target
            elif isinstance(o.expr, cat.Attr):
                self.fields[o.id] = self.name(o.expr)
        return flow

    def written(self, node: cat.Project) -> set:
        return {self.fields[o.id] for o in node.outputs if o.id in self.fields and not isinstance(o.expr, cat.Attr)}

    def filter(self, node: cat.Filter):
        natives = [c for c in node.conjuncts if not isinstance(c, cat.Udf)]
        if any(c.has_udf for c in natives):
            raise NotTranslated(f"the condition {natives[0]} calls a Python UDF inside a native expression")
        flow = self.flow(node.child)
        atoms = [c for c in natives if c.atom is not None]
        for i, c in enumerate(atoms):  # first: cheap, and Spark promises no order between conjuncts
            # one filter per conjunct: each moves on its own
            atom = dataclasses.replace(c.atom, column=self.name(c.refs[0]))
            flow = flow.filter(condition_filter((atom,), "where"), name=_unique(flow, f"where {atom}"))
        natives = [c for c in natives if c.atom is None]
        _portable(natives)
        if natives:
            flow = self.named(flow, [a for c in natives for a in c.refs], node)
            condition = " AND ".join(c.sql if len(natives) == 1 else f"({c.sql})" for c in natives)
            flow = flow.apply(native_steps.SPARK_FILTER, condition=condition, types=_types(natives),
                              name=_unique(flow, f"Spark filter {_short(condition)}"))
        for i, c in enumerate(c for c in node.conjuncts if isinstance(c, cat.Udf)):
            flow = flow.filter(self.udf_function(c, Shape("filter"), "filter"))
        return flow

    def generate(self, node: cat.Generate):
        if node.generator not in GENERATORS or node.outer or node.out is None:
            raise NotTranslated(f"{node.generator}{' (outer)' if node.outer else ''} is not translated")
        if not isinstance(node.arg, cat.Udf):
            raise NotTranslated(f"explode of {node.arg}, not of a Python UDF")
        flow = self.flow(node.child)
        if node.out.name in (flow.fields or ()):
            raise NotTranslated(f"the element column {node.out.name} is also a column of the input")
        flow = flow.map(self.udf_function(node.arg, Shape("explode", node.out.name), "explode"))
        self.fields[node.out.id] = node.out.name
        return flow

    def join(self, node: cat.Join):
        if node.join_type != "Inner" or not node.pairs or node.rest:
            what = node.rest if node.rest else f"a {node.join_type} join" if node.join_type != "Inner" else "no equality"
            raise NotTranslated(f"the join has {what}; udflow translates inner equi-joins")
        left, right = self.flow(node.left), self.flow(node.right)
        if left.fields is None or right.fields is None or left.fields & right.fields:
            left, right = self.only(left, node.left), self.only(right, node.right)
        on = (tuple(self.name(a) for a, _ in node.pairs), tuple(self.name(b) for _, b in node.pairs))
        try:
            return left.match(right, on=on)
        except Exception as err:  # noqa: BLE001 - a join udflow cannot state stays Spark's
            raise NotTranslated(f"the join cannot be a Match: {err}") from None

    def only(self, flow, node: cat.Node):
        """`flow` carrying exactly `node`'s columns under their Spark names (a join's side whose
        left-over fields would collide with the other side's)."""
        columns = tuple(self.name(a) for a in node.output)
        renames = {self.name(a): a.name for a in node.output if self.name(a) != a.name}
        for a in node.output:
            self.fields[a.id] = a.name
        if flow.fields is not None and set(flow.fields) == set(columns) and not renames:
            return flow
        return flow.map(projection(columns, renames, "project"))

    def aggregate(self, node: cat.Aggregate):
        if not node.keys or not all(isinstance(k, cat.Attr) for k in node.keys):
            raise NotTranslated("an aggregate without grouping columns, or grouped by an expression")
        child = self.flow(node.child)
        keys = tuple(self.name(k) for k in node.keys)
        aggregates = []
        for o in node.outputs:
            e = o.expr
            if isinstance(e, cat.Attr) and self.name(e) in keys:
                continue
            if not isinstance(e, cat.Agg) or e.distinct or e.filtered:
                raise NotTranslated(f"the aggregate column {o.name} = {e} is not one of sum, count, avg, min, max")
            if o.name in keys:
                raise NotTranslated(f"the aggregate column {o.name} has a grouping column's name")
            aggregates.append((o.name, e.function, self.name(e.arg) if e.arg is not None else None))
        flow = child.reduce(list(keys), reduce_function(keys, tuple(aggregates), "aggregate"))
        for o in node.outputs:
            self.fields[o.id] = self.name(o.expr) if isinstance(o.expr, cat.Attr) else o.name
        return flow

    def root(self, node: cat.Node):
        """The whole DataFrame's flow, its columns under their Spark names."""
        flow = self.flow(node)
        renames = {self.name(a): a.name for a in node.output if self.name(a) != a.name}
        if not renames:
            return flow
        if flow.fields is not None and not any(new in flow.fields for new in renames.values()):
            return flow.map(copies(renames, "rename root"),
                            name=_unique(flow, "rename " + ", ".join(f"{a} as {b}" for a, b in renames.items())))
        return flow.map(projection(tuple(self.name(a) for a in node.output), renames, "project root"))

    # -- UDFs ----------------------------------------------------------------------

    def udf_function(self, udf: cat.Udf, shape: Shape, tag):
        check_udf(udf, shape)
        regime = "arrow" if udf.eval_type == cat.ARROW_BATCHED else "pickled"
        declared = _declared(udf.return_type, shape)
        shape = dataclasses.replace(shape, convert=spark_results.conversion(regime, declared))
        columns = tuple(self.name(a) for a in udf.args)
        fn = record_function(udf.fn, columns, shape, f"{udf.name} {tag}")
        self.udfs.append((udf.name, getattr(fn, "__code__", None) and fn.__code__.co_filename))
        return fn


@dataclass(frozen=True)
class _Kept:
    node: cat.Node
    reason: str


def check_udf(udf: cat.Udf, shape: Shape) -> None:
    """The UDF is one udflow reads with Python's semantics as Spark runs it, or NotTranslated."""
    if not udf.deterministic:
        raise NotTranslated(f"UDF {udf.name} is declared non-deterministic (asNondeterministic): it stays "
                            "where it is, run as often as Spark runs it")
    if udf.eval_type not in cat.ROW_AT_A_TIME:
        raise NotTranslated(f"UDF {udf.name} is a pandas or Arrow UDF (eval type {udf.eval_type})")
    for a in udf.args:
        if not isinstance(a, cat.Attr):
            raise NotTranslated(f"UDF {udf.name} takes the expression {a}, not a column")
        if a.type not in PLAIN_TYPES and not a.type.startswith("decimal("):
            raise NotTranslated(f"UDF {udf.name} takes column {a.name} of type {a.type}")
    wanted = RESULT_TYPES if shape.kind != "explode" else tuple(f"array<{t}>" for t in RESULT_TYPES)
    if shape.kind != "filter" and udf.return_type not in wanted:
        raise NotTranslated(f"UDF {udf.name} returns {udf.return_type}")
    if shape.kind == "filter" and udf.return_type != "boolean":
        raise NotTranslated(f"UDF {udf.name} filters with a {udf.return_type}")


def _portable(natives) -> None:
    for n in natives or ():
        if not n.portable:
            raise NotTranslated(f"the native expression {n.sql} between Python UDFs has no SQL text to re-read "
                                "(a Spark Connect Column)")


def _read_by_others(outputs: tuple, this: cat.Out, name) -> set:
    """The fields (`name(attr)`) the projection's other outputs read."""
    names = set()
    for o in outputs:
        if o is this:
            continue
        e = o.expr
        attrs = [e] if isinstance(e, cat.Attr) else [a for a in getattr(e, "args", ()) if isinstance(a, cat.Attr)]
        names |= {name(a) for a in attrs + list(getattr(e, "refs", ()))}
    return names


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _unique(flow, label: str) -> str:
    taken = {n.label for n in flow.root.walk()}
    n = 2
    unique = label
    while unique in taken:
        unique, n = f"{label}#{n}", n + 1
    return unique


def _types(natives) -> tuple:
    """((column, Spark type), ...) of the columns the native expressions read, each once."""
    seen = {}
    for n in natives:
        for a in n.refs:
            seen.setdefault(a.name, a.type)
    return tuple(seen.items())


def _declared(return_type: str, shape: Shape) -> str:
    return return_type[len("array<"):-1] if shape.kind == "explode" else return_type


def _duplicates(columns: list) -> str:
    return ", ".join(sorted({c for c in columns if columns.count(c) > 1}))

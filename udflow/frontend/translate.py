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
from typing import Optional, Union

from udflow import spark_results
from udflow.frontend import catalyst as cat
from udflow.frontend import native_steps
from udflow.frontend.synthesize import Shape, condition_filter, projection, record_function, reduce_function

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
    udfs: tuple = ()  # (name, how it was opened) per Python UDF translated


@dataclass
class Translation:
    reader: cat.Reader
    keys: dict
    foreign_keys: dict
    names: dict = field(default_factory=dict)  # source name -> count
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
        try:
            return handler(node)
        except NotTranslated as why:
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
        return udflow.source(name, dataframe=df, key=self.keys.get(name),
                             foreign_keys=self.foreign_keys.get(name))

    def name_of(self, node: cat.Node, df) -> str:
        base = "source"
        try:
            files = df.inputFiles() if node.kind in ("LogicalRelation", "Relation") else []
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

    def project(self, node: cat.Project):
        child = node.child
        natives = [o for o in node.outputs if isinstance(o.expr, cat.Native)]
        nested = [o for o in natives if o.expr.has_udf]
        if nested:
            raise NotTranslated(f"the column {nested[0].name} = {nested[0].expr} calls a Python UDF inside a "
                                "native expression")
        flow = self.flow(child)
        fields = [a.name for a in child.output]
        written, renames = {}, {}
        if natives:  # computed from the input's columns, before any UDF writes one of them
            for o in natives:
                written[o.id] = o.name if o.name not in fields else f"__udflow_{o.id}"
            flow = flow.apply(native_steps.SPARK_COLUMNS, columns=tuple((written[o.id], o.expr.sql) for o in natives),
                              types=_types(o.expr for o in natives),
                              name=_unique(flow, "Spark columns " + ", ".join(o.name for o in natives)))
        for o in node.outputs:
            if isinstance(o.expr, cat.Udf):
                taken = o.name in fields or o.name in written.values()
                target = f"__udflow_{o.id}" if taken else o.name
                flow = flow.map(self.udf_function(o.expr, Shape("map", target), o.id), name=self._label(flow, o))
                written[o.id] = target
        columns = []
        for o in node.outputs:
            current = written.get(o.id, o.expr.name if isinstance(o.expr, cat.Attr) else o.name)
            columns.append(current)
            if current != o.name:
                renames[current] = o.name
        return self.project_to(flow, columns, renames, node)

    def project_to(self, flow, columns: list, renames: dict, node: cat.Node):
        if len(set(renames.get(c, c) for c in columns)) != len(columns):
            raise NotTranslated("two output columns have one name")
        if flow.fields is not None and set(flow.fields) == set(columns) and not renames:
            return flow
        return flow.map(projection(tuple(columns), renames, f"project {_tag(node)}"))

    def filter(self, node: cat.Filter):
        natives = [c for c in node.conjuncts if not isinstance(c, cat.Udf)]
        if any(c.has_udf for c in natives):
            raise NotTranslated(f"the condition {natives[0]} calls a Python UDF inside a native expression")
        flow = self.flow(node.child)
        atoms = [c.atom for c in natives if c.atom is not None]
        for i, atom in enumerate(atoms):  # first: cheap, and Spark promises no order between conjuncts
            # one filter per conjunct: each moves on its own
            flow = flow.filter(condition_filter((atom,), f"{_tag(node)}.{i}"), name=_unique(flow, f"where {atom}"))
        natives = [c for c in natives if c.atom is None]
        if natives:
            condition = " AND ".join(c.sql if len(natives) == 1 else f"({c.sql})" for c in natives)
            flow = flow.apply(native_steps.SPARK_FILTER, condition=condition, types=_types(natives),
                              name=_unique(flow, f"Spark filter {_short(condition)}"))
        for i, c in enumerate(c for c in node.conjuncts if isinstance(c, cat.Udf)):
            flow = flow.filter(self.udf_function(c, Shape("filter"), f"{_tag(node)}.{i}"))
        return flow

    def generate(self, node: cat.Generate):
        if node.generator not in GENERATORS or node.outer or node.out is None:
            raise NotTranslated(f"{node.generator}{' (outer)' if node.outer else ''} is not translated")
        if not isinstance(node.arg, cat.Udf):
            raise NotTranslated(f"explode of {node.arg}, not of a Python UDF")
        child_fields = [a.name for a in node.child.output]
        if node.out.name in child_fields:
            raise NotTranslated(f"the element column {node.out.name} is also a column of the input")
        flow = self.flow(node.child)
        flow = flow.map(self.udf_function(node.arg, Shape("explode", node.out.name), node.out.id))
        columns = [a.name for a in node.kept] + [node.out.name]
        return self.project_to(flow, columns, {}, node)

    def join(self, node: cat.Join):
        if node.join_type != "Inner" or not node.pairs or node.rest:
            what = node.rest if node.rest else f"a {node.join_type} join" if node.join_type != "Inner" else "no equality"
            raise NotTranslated(f"the join has {what}; udflow translates inner equi-joins")
        left, right = self.flow(node.left), self.flow(node.right)
        on = (tuple(a.name for a, _ in node.pairs), tuple(b.name for _, b in node.pairs))
        try:
            return left.match(right, on=on)
        except Exception as err:  # noqa: BLE001 - a join udflow cannot state stays Spark's
            raise NotTranslated(f"the join cannot be a Match: {err}") from None

    def aggregate(self, node: cat.Aggregate):
        if not node.keys or not all(isinstance(k, cat.Attr) for k in node.keys):
            raise NotTranslated("an aggregate without grouping columns, or grouped by an expression")
        keys = tuple(k.name for k in node.keys)
        aggregates, columns = [], []
        for o in node.outputs:
            e = o.expr
            if isinstance(e, cat.Attr) and e.name in keys:
                columns.append((e.name, o.name))
            elif isinstance(e, cat.Agg) and not e.distinct and not e.filtered:
                aggregates.append((o.name, e.function, e.arg.name if e.arg is not None else None))
                columns.append((o.name, o.name))
            else:
                raise NotTranslated(f"the aggregate column {o.name} = {e} is not one of sum, count, avg, min, max")
        flow = self.flow(node.child).reduce(list(keys), reduce_function(keys, tuple(aggregates), _tag(node)))
        renames = {a: b for a, b in columns if a != b}
        return self.project_to(flow, [a for a, _ in columns], renames, node)

    # -- UDFs ----------------------------------------------------------------------

    def udf_function(self, udf: cat.Udf, shape: Shape, tag):
        check_udf(udf, shape)
        regime = "arrow" if udf.eval_type == cat.ARROW_BATCHED else "pickled"
        declared = _declared(udf.return_type, shape)
        shape = dataclasses.replace(shape, convert=spark_results.conversion(regime, declared))
        columns = tuple(a.name for a in udf.args)
        fn = record_function(udf.fn, columns, shape, f"{udf.name} {tag}")
        self.udfs.append((udf.name, getattr(fn, "__code__", None) and fn.__code__.co_filename))
        return fn

    @staticmethod
    def _label(flow, out: cat.Out) -> Optional[str]:
        return None


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
        if a.type not in PLAIN_TYPES:
            raise NotTranslated(f"UDF {udf.name} takes column {a.name} of type {a.type}")
    wanted = RESULT_TYPES if shape.kind != "explode" else tuple(f"array<{t}>" for t in RESULT_TYPES)
    if shape.kind != "filter" and udf.return_type not in wanted:
        raise NotTranslated(f"UDF {udf.name} returns {udf.return_type}")
    if shape.kind == "filter" and udf.return_type != "boolean":
        raise NotTranslated(f"UDF {udf.name} filters with a {udf.return_type}")


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


def _tag(node: cat.Node) -> str:
    return str(node.output[0].id) if node.output else "0"


def _duplicates(columns: list) -> str:
    return ", ".join(sorted({c for c in columns if columns.count(c) > 1}))

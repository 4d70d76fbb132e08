"""A PySpark DataFrame's analysed plan, read into plain data.

Spark's analyser has already resolved every name of a DataFrame to an attribute
(`name#id`) and every `F.udf(...)(...)` call to a `PythonUDF` expression that
holds the function's pickled code. This module walks that tree (over py4j, on
a classic session) once and keeps what the translation needs, as frozen
dataclasses that print like Spark's own plan:

    Aggregate [name], [name, sum(y) AS s]          Aggregate(keys=('name',), ...)
      Join Inner, (id = oid)                          Join(left_keys=('id',), right_keys=('oid',))
        Project [id, double_it(x) AS y]                 Project(outputs=(Out('id', Attr), Out('y', Udf)))
          LogicalRDD [id, x]                              Plan(node=<the JVM node>)

A node the translation may keep as it is (a source, or a part it does not
translate) is a `Plan` holding the JVM node, from which `dataframe()` makes a
DataFrame again. Expressions are `Attr` (a column), `Udf` (a Python UDF over
argument expressions) and `Native` (any other Spark expression, kept as its SQL).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from udflow.errors import UdflowError
from udflow.frontend.conditions import atom_of
from udflow.spark_backend import jvm_plan
from udflow.spark_backend.frame_files import frame_files
from udflow.spark_backend.memo import jvm_handle

# PythonUDF eval types whose function is called once per row with plain values
# (pyspark.util.PythonEvalType: SQL_BATCHED_UDF, SQL_ARROW_BATCHED_UDF)
BATCHED, ARROW_BATCHED = 100, 101
ROW_AT_A_TIME = (BATCHED, ARROW_BATCHED)


class FrontendError(UdflowError):
    """A DataFrame `from_spark` cannot open at all (not a part of it: those stay in place)."""


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Attr:
    """A column of the node's input, `name#id` in Spark's plan."""

    name: str
    id: int
    type: str  # Spark's simpleString of its type

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Udf:
    """`name(args)`: a Python UDF. `fn` is the function Spark runs (unpickled from the plan),
    `return_type` its declared type (simpleString), `eval_type` pyspark's PythonEvalType."""

    name: str
    fn: Callable = field(compare=False, repr=False)
    return_type: str
    args: tuple
    eval_type: int
    deterministic: bool

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Native:
    """Any other Spark expression: Spark's semantics, kept as Spark wrote it."""

    sql: str
    has_udf: bool = False
    jvm: Any = field(default=None, compare=False, repr=False)
    refs: tuple = ()  # (Attr, ...) the columns it reads
    atom: Any = None  # `conditions.Atom`: a condition with an exact Python form
    portable: bool = True  # `sql` is text Spark reads back (not so on Connect: no SQL of a Column)

    def __str__(self) -> str:
        return self.sql


@dataclass(frozen=True)
class Agg:
    """`function(arg)` of an Aggregate: sum, count, avg, min, max (`arg` None: count(*))."""

    function: str
    arg: Optional[Attr]
    distinct: bool
    filtered: bool

    def __str__(self) -> str:
        inner = str(self.arg) if self.arg is not None else "*"
        return f"{self.function}({'DISTINCT ' if self.distinct else ''}{inner})"


@dataclass(frozen=True)
class Out:
    """One output column of a projection or aggregate: its name, id and expression."""

    name: str
    id: int
    expr: Any  # Attr | Udf | Native | Agg
    type: str


# ---------------------------------------------------------------------------
# Plan nodes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    jvm: Any = field(compare=False, repr=False)
    output: tuple = ()  # (Attr, ...) the node's output columns

    @property
    def children(self) -> tuple:
        return ()

    @property
    def has_udf(self) -> bool:
        return any(c.has_udf for c in self.children)

    def title(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class Plan(Node):
    """A node not read further: a relation, or any operator without a Python UDF below it
    that the translation does not need to see into."""

    kind: str = ""
    udf_below: bool = False

    @property
    def has_udf(self) -> bool:
        return self.udf_below

    def title(self) -> str:
        return self.kind


@dataclass(frozen=True)
class Project(Node):
    child: Node = None
    outputs: tuple = ()  # (Out, ...)

    @property
    def children(self):
        return (self.child,)

    @property
    def has_udf(self) -> bool:
        return self.child.has_udf or any(isinstance(o.expr, Udf) or getattr(o.expr, "has_udf", False)
                                         for o in self.outputs)


@dataclass(frozen=True)
class Filter(Node):
    child: Node = None
    conjuncts: tuple = ()  # (Udf | Native, ...)

    @property
    def children(self):
        return (self.child,)

    @property
    def has_udf(self) -> bool:
        return self.child.has_udf or any(isinstance(c, Udf) or c.has_udf for c in self.conjuncts)


@dataclass(frozen=True)
class Generate(Node):
    """`explode(generator)` with `out` its element column; `outer`: explode_outer."""

    child: Node = None
    generator: str = ""
    arg: Any = None  # Udf | Native | Attr
    out: Optional[Attr] = None
    outer: bool = False
    kept: tuple = ()  # the child's columns kept beside the element

    @property
    def children(self):
        return (self.child,)

    @property
    def has_udf(self) -> bool:
        return self.child.has_udf or isinstance(self.arg, Udf)


@dataclass(frozen=True)
class Join(Node):
    left: Node = None
    right: Node = None
    join_type: str = ""
    pairs: tuple = ()  # ((left Attr, right Attr), ...): the condition's equalities
    rest: Optional[str] = None  # the condition's other conjuncts (SQL), None if none

    @property
    def children(self):
        return (self.left, self.right)


@dataclass(frozen=True)
class Aggregate(Node):
    child: Node = None
    keys: tuple = ()  # (Attr | Native, ...)
    outputs: tuple = ()  # (Out, ...), expr Attr (a key) | Agg | Native

    @property
    def children(self):
        return (self.child,)


# ---------------------------------------------------------------------------
# Reading the JVM tree
# ---------------------------------------------------------------------------


# Every py4j call is a round trip to the JVM, and every JVM object it hands back costs one more
# when Python frees it: the walk below asks for strings where it can (`jvm_plan`).

_seq, _cls = jvm_plan.seq, jvm_plan.node_name


def _type(j) -> str:
    return str(j.dataType().simpleString())


def _attr(j) -> Attr:
    return Attr(str(j.name()), int(j.exprId().id()), _type(j))


def _output(j) -> tuple:
    """The plan node's output attributes in two round trips to the JVM (their `name#id`, and
    the schema's names and types), where one per attribute field takes four each."""
    read = jvm_plan.output(j)
    if read is None:
        return tuple(_attr(a) for a in _seq(j.output()))
    return tuple(Attr(name, attribute, simple) for name, attribute, simple in read)


INTEGRAL = ("tinyint", "smallint", "int", "bigint")


def _widened(j):
    """A join key Spark cast from a narrower integral type (`CAST(movie_id AS BIGINT)`, an int
    column joined with a bigint one): the column itself, whose values the cast keeps exactly
    (and udflow compares ints as ints); anything else as it is."""
    if _cls(j) == "Cast" and _cls(j.child()) == "AttributeReference":
        if _type(j) in INTEGRAL and _type(j.child()) in INTEGRAL:
            return j.child()
    return j


def _walked_has_udf(j) -> bool:
    if _cls(j) == "PythonUDF":
        return True
    try:
        expressions = _seq(j.expressions())  # a plan's; an expression has none
    except Exception:  # noqa: BLE001 - py4j: no such method
        expressions = []
    return any(_walked_has_udf(e) for e in expressions) or any(_walked_has_udf(c) for c in _seq(j.children()))


class Reader:
    """Reads one DataFrame's analysed plan (`read(df)`): a classic session's JVM tree.

    Every node's output attributes are read in one batch (`_output`) and kept by id
    (`known`), so that an attribute inside an expression costs one round trip (its
    `name#id` text) instead of one per field, and a projection's plain columns none."""

    def __init__(self, spark):
        self.spark = spark
        self.python_udf = jvm_handle(spark, "org.apache.spark.sql.catalyst.trees.TreePattern", "PYTHON_UDF")
        self.byte_tag = jvm_handle(spark, "scala.reflect.ClassTag", "Byte")
        self.known: dict[int, Attr] = {}  # attribute id -> Attr, from the outputs read so far

    def output(self, j) -> tuple:
        attrs = _output(j)
        self.known.update((a.id, a) for a in attrs)
        return attrs

    def attr(self, j) -> Attr:
        """The Attr of AttributeReference `j`: by its `name#id` text where that id is known."""
        text = str(j.toString())
        known = self.known.get(jvm_plan.attribute_id(text))
        if known is not None and jvm_plan.prints_as(text, known.name, known.id):
            return known
        return _attr(j)

    def has_udf(self, j) -> bool:
        """Whether the tree `j` (an expression, or a plan with its expressions) holds a Python
        UDF: Catalyst keeps the patterns of a tree's nodes as bits (`containsPattern`), one
        round trip to the JVM where a walk over py4j takes one per node."""
        try:
            return bool(j.containsPattern(self.python_udf))
        except Exception:  # noqa: BLE001 - a tree without pattern bits: walk it
            return _walked_has_udf(j)

    def read(self, df) -> Node:
        return self.node(df._jdf.queryExecution().analyzed())

    # -- nodes ---------------------------------------------------------------

    def node(self, j) -> Node:
        kind = _cls(j)
        if kind == "SubqueryAlias":
            return self.node(j.child())
        output = self.output(j)
        reader = getattr(self, f"read_{kind.lower()}", None)
        has_udf = self.has_udf(j)
        if reader is not None and has_udf:
            return reader(j, output)
        return Plan(j, output, kind=kind, udf_below=has_udf)

    def read_project(self, j, output) -> Node:
        child = self.node(j.child())  # first: its output is what the projection's columns read
        return Project(j, output, child=child, outputs=self.outs(j.projectList(), output))

    def read_filter(self, j, output) -> Node:
        return Filter(j, output, child=self.node(j.child()),
                      conjuncts=tuple(self.expr(c) for c in self.conjuncts(j.condition())))

    def read_generate(self, j, output) -> Node:
        gen = j.generator()
        args = _seq(gen.children())
        outs = _seq(j.generatorOutput())
        return Generate(j, output, child=self.node(j.child()), generator=_cls(gen),
                        arg=self.expr(args[0]) if len(args) == 1 else Native(str(gen.sql())),
                        out=self.attr(outs[0]) if len(outs) == 1 else None, outer=bool(j.outer()),
                        kept=tuple(self.attr(a) for a in _seq(j.requiredChildOutput())))

    def read_join(self, j, output) -> Node:
        left, right = self.node(j.left()), self.node(j.right())
        left_ids = {a.id for a in left.output}
        pairs, rest = [], []
        cond = j.condition()
        for c in self.conjuncts(cond.get()) if cond.isDefined() else []:
            pair = self.equality(c, left_ids)
            (pairs.append(pair) if pair else rest.append(str(c.sql())))
        return Join(j, output, left=left, right=right, join_type=str(j.joinType().toString()),
                    pairs=tuple(pairs), rest=" AND ".join(rest) or None)

    def read_aggregate(self, j, output) -> Node:
        child = self.node(j.child())
        keys = tuple(self.expr(k) for k in _seq(j.groupingExpressions()))
        return Aggregate(j, output, child=child, keys=keys, outputs=self.outs(j.aggregateExpressions(), output))

    # -- expressions -----------------------------------------------------------

    def conjuncts(self, j) -> list:
        if _cls(j) == "And":
            return self.conjuncts(j.left()) + self.conjuncts(j.right())
        return [j]

    def equality(self, j, left_ids) -> Optional[tuple]:
        if _cls(j) != "EqualTo":
            return None
        a, b = _widened(j.left()), _widened(j.right())
        if _cls(a) != "AttributeReference" or _cls(b) != "AttributeReference":
            return None
        a, b = self.attr(a), self.attr(b)
        if a.id in left_ids and b.id not in left_ids:
            return a, b
        if b.id in left_ids and a.id not in left_ids:
            return b, a
        return None

    def outs(self, jlist, output: tuple) -> tuple:
        """The Outs of a projection's (or aggregate's) expression list, whose node output is
        `output`, position by position (Catalyst's `output` is `list.map(_.toAttribute)`).

        A column that is only its input column passed on is known from its text alone: an
        attribute prints exactly as `name#id` (plus its type's letter), which no other
        expression with that output attribute can (an alias prints `child AS name#id`)."""
        texts = jvm_plan.texts(jlist)
        if len(texts) != len(output):
            return tuple(self.out(e) for e in _seq(jlist))
        outs = []
        for i, (text, attr) in enumerate(zip(texts, output)):
            outs.append(Out(attr.name, attr.id, attr, attr.type) if jvm_plan.prints_as(text, attr.name, attr.id)
                        else self.out(jlist.apply(i), attr))
        return tuple(outs)

    def out(self, j, attr: Optional[Attr] = None) -> Out:
        """One Out; `attr` its output attribute where already read."""
        kind = _cls(j)
        if attr is None:
            attr = Attr(str(j.name()), int(j.exprId().id()), _type(j))
        expr = self.expr(j.child()) if kind == "Alias" else self.expr(j, kind)
        return Out(attr.name, attr.id, expr, attr.type)

    def expr(self, j, kind: Optional[str] = None):
        kind = kind or _cls(j)
        if kind == "AttributeReference":
            return self.attr(j)
        if kind == "PythonUDF":
            return self.udf(j)
        if kind == "AggregateExpression":
            return self.aggregate(j)
        refs = tuple(self.attr(a) for a in _seq(j.references().toSeq()))
        return Native(str(j.sql()), has_udf=self.has_udf(j), jvm=j, refs=refs, atom=atom_of(j, _cls, self.attr))

    def udf(self, j) -> Udf:
        command = j.func().command().toArray(self.byte_tag)
        fn = _unpickle(bytes(command), str(j.name()))
        return Udf(str(j.name()), fn, _type(j), tuple(self.expr(a) for a in _seq(j.children())),
                   int(j.evalType()), bool(j.udfDeterministic()))

    def aggregate(self, j):
        fn = j.aggregateFunction()
        name = {"Sum": "sum", "Count": "count", "Average": "avg", "Min": "min", "Max": "max"}.get(_cls(fn))
        args = _seq(fn.children())
        if name is None or len(args) != 1:
            return Native(str(j.sql()), has_udf=self.has_udf(j))
        arg = args[0]
        if name == "count" and _cls(arg) == "Literal" and not bool(arg.nullable()):
            return Agg("count", None, bool(j.isDistinct()), bool(j.filter().isDefined()))
        if _cls(arg) != "AttributeReference":
            return Native(str(j.sql()), has_udf=self.has_udf(j))
        return Agg(name, self.attr(arg), bool(j.isDistinct()), bool(j.filter().isDefined()))

    # -- back to a DataFrame -----------------------------------------------------

    def input_files(self, node: Node, df) -> list:
        """The files `node` (a relation) reads: a file relation's own listing (`df.inputFiles()`
        would optimize the plan first: ten round trips and Spark's optimizer)."""
        if node.kind != "LogicalRelation":
            return []
        found = frame_files(df)  # the walk the optimizer and the lowering read again
        if found is not None and found.relations:
            return list(found.relations[0].files)
        return list(df.inputFiles())  # a relation without a file index: its DataFrame's answer

    def dataframe(self, node: Node):
        """The DataFrame of `node`'s JVM plan, as the user's DataFrame computes it."""
        from pyspark.sql import DataFrame

        dataset = jvm_handle(self.spark, "org.apache.spark.sql.classic.Dataset")
        jdf = dataset.ofRows(self.spark._jsparkSession, node.jvm)
        return DataFrame(jdf, self.spark)


def _unpickle(command: bytes, name: str) -> Callable:
    """The function of a PythonUDF's command, as Spark's workers load it: `(func, returnType)`,
    pickled by cloudpickle (a function of `__main__` by value, with the globals it reads)."""
    import pyspark.cloudpickle  # noqa: F401 - what the payload's functions are rebuilt with

    try:
        loaded = pickle.loads(command)
    except Exception as err:  # noqa: BLE001 - a payload udflow cannot load stays Spark's
        raise FrontendError(f"UDF {name}: its pickled function does not load here ({err})") from None
    fn = loaded[0] if isinstance(loaded, tuple) else loaded
    return fn

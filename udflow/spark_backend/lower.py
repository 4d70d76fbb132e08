"""Lowering a plan to PySpark DataFrames, each operator as its physical plan's step says.

Which row of this table an operator takes is decided by its step
(`udflow.physical`, decided from the models by `udflow.engine.steps`); the
lowering carries it out and decides again only where the data must: a native
step whose input's types have no exact native form, or a scalar Map whose
written fields a sample cannot type, takes its Python fallback
(`Lowering.python_reasons` says why).

    Source (parquet / CSV)      spark.read (a CSV with its types; read.py), columns renamed with the prefix
    Source (DataFrame / table)  the DataFrame itself, columns renamed with the prefix
    Source (rows)               a LocalRelation through Arrow, its schema inferred from every value
    Match, fn=None              native inner equi-join (a None key matches nothing)
    Cross, fn=None              native crossJoin
    Map, Reduce, Match/Cross    with a model: Spark Columns (native_ops, native_groups)
    with fn
    Filter                      an Arrow scalar UDF over its read set inside the plan (scalar);
                                reads unknown: mapInArrow, the batch filtered by the mask
    Map copying its records,    an Arrow scalar UDF returning a struct of its written fields,
    at most one per call        the rest of the row native (scalar)
    Map forwarding its records  mapInArrow: fn per record, each row taken as often as fn emits it
    Map copying its records     mapInArrow: fn per record shown its fields read or written,
                                each record emitted completed from its input row
    Map                         mapInArrow: fn per record
    Match / Cross with fn       the native join, then fn per joined row (mapInArrow)
    Reduce                      groupBy(key).applyInArrow: fn once per group (None keys group together)
    CoGroup                     groupBy(key).cogroup(groupBy(key)).applyInArrow
    Custom                      its type's own `spark(...)`, or its `reference` per batch

Two forms of a lowered node:

A filter, and a Map whose records are its input record with some fields
written (analysis: pure, implicit copy, `{**r, ...}`), build Python values only
for the columns the function reads or writes (`Step.reads`, from `UdfProperties.read_projection`).
A filter, or such a Map writing nothing, keeps or repeats the batch's own rows;
a Map that writes fields has each emitted record completed from its input row.

- typed: one Spark column per field. Sources and native joins are typed; a
  Python operator is typed when analysis shows it writes no field (it filters
  or projects), so its schema is its input's.
- pickled: one binary column holding each record pickled ("blob"). Any other
  Python operator produces this: Spark needs a schema before it runs, and the
  types of the fields a function creates are not known until it has run. Python
  operators read pickled input as easily as typed input, and a Reduce groups
  pickled records on a column of their key's canonical bytes
  (`udf.group_key`), so a chain of Python operators never needs a schema.

Only a consumer that needs columns (a native join, a CoGroup, `to_dataframe`,
`write`) turns a pickled node into a typed one (`typed`). A pure Map over typed
input runs again with its records typed by a sample of its output
(`Lowered.run_typed`: one pass); otherwise the node's output is persisted, a
sample of it gives the schema (`schema.output_schema`; carried-over fields keep
their Spark type), and a decoding step reads the cached records into typed
columns; nothing upstream is computed twice. `collect` reads the
pickled records directly. `Lowering` remembers what it persisted so that
`collect`/`write` can release it.
"""

from __future__ import annotations

import pickle
from typing import Callable, Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BinaryType, StructField, StructType

from udflow.diagnostics import warn_at
from udflow.errors import NativeFallbackWarning, UdflowError
from udflow.fields import only_fields
from udflow.physical import PhysicalPlan, Step
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Reduce, Source, function_location
from udflow.spark_backend import file_stats, general_case, native_groups, native_ops, scalar
from udflow.spark_backend import udf as executor
from udflow.spark_backend.grouping import determined_fields
from udflow.spark_backend.hints import check_reduce_hint
from udflow.spark_backend.nullness import data_types, magnitudes_of, nonnull_of, passed_on
from udflow.spark_backend.memo import select_expr
from udflow.spark_backend.read import read_source
from udflow.spark_backend.native import NotNative, col
from udflow.spark_backend.sql import ident
from udflow.spark_backend.schema import declared_types, missing_type_error, output_schema
from udflow.spark_backend.udf import BLOB, KEY, Encoder, Udf, translated
from udflow.spark_backend.lower_pairs import PairLowering
from udflow.spark_backend.lowered import Lowered

SAMPLE_SIZE = 1000
BLOB_SCHEMA = StructType([StructField(BLOB, BinaryType(), False)])
KEYED_BLOB_SCHEMA = StructType([StructField(KEY, BinaryType(), False), StructField(BLOB, BinaryType(), False)])


class Lowering(PairLowering):
    """One lowering of one plan, as its physical plan (`udflow.physical`) says each operator
    runs: its session, its samples, and what it persisted."""

    def __init__(self, spark: SparkSession, physical: PhysicalPlan, samples: Optional[dict] = None):
        self.spark = spark
        self.physical = physical
        self.samples = dict(samples or {})  # label -> `udflow.samples.OutputSample`, taken on the driver
        self.native = physical.native  # run operators whose functions have a model as Spark Columns
        self.native_labels: set = set()  # the operators lowered natively
        # label -> why an operator ran otherwise than its step says (a native step whose input's
        # types have no exact native form, a scalar Map whose output could not be typed)
        self.python_reasons: dict = {}
        self.general_cases: dict = {}  # label -> which rows of a native Map run in Python (`general_case`)
        self._sources: dict = {}  # id(source) -> (source, its fields' types), read once (`_source_types`)
        self.hints = {s.label: s.strategy for s in physical.steps if s.strategy}
        self.persisted: list[DataFrame] = []
        self._done: dict[tuple[int, Optional[tuple]], Lowered] = {}
        self._typed: dict[int, DataFrame] = {}
        self._reads: set = set()  # the file reads this lowering took from the session (`read_source`)

    def release(self) -> None:
        for df in self.persisted:
            df.unpersist()
        self.persisted.clear()

    def lower(self, node: Node, key: Optional[tuple[str, ...]] = None) -> Lowered:
        """`node` lowered; `key` asks a pickled node to carry its records' group key too."""
        memo = (id(node), key)
        if memo not in self._done:
            self._done[memo] = self._lower(node, key)
        return self._done[memo]

    def records(self, node: Node, fields: Optional[tuple[str, ...]] = None) -> list[dict]:
        """Run the plan; its records on the driver (only `fields`, when given)."""
        low = self.lower(node)
        df = low.df if low.pickled else _only(node, low.df, fields)
        with translated():
            table = df.toArrow()
        rows = executor.read_rows(table, low.pickled)
        return only_fields(rows, fields) if low.pickled else rows

    def typed(self, node: Node, fields: Optional[tuple[str, ...]] = None) -> DataFrame:
        """`node` as one Spark column per field (only `fields`, when given)."""
        low = self.lower(node)
        if not low.pickled:
            return _only(node, low.df, fields)
        if id(node) not in self._typed:
            retyped = low.run_typed() if low.run_typed is not None else None
            self._typed[id(node)] = retyped if retyped is not None else self._decode(node, low)
        return _only(node, self._typed[id(node)], fields)

    def _lower(self, node: Node, key: Optional[tuple]) -> Lowered:
        if isinstance(node, Source):
            return Lowered(read_source(self.spark, node, self._reads), pickled=False)
        if isinstance(node, Map):
            return self.map(node, key)
        if isinstance(node, Reduce):
            check_reduce_hint(node.label, self.hints.get(node.label))
            return self.reduce(node, key)
        if isinstance(node, Match):
            return self.match(node, key)
        if isinstance(node, Cross):
            return self.cross(node, key)
        if isinstance(node, CoGroup):
            return self.cogroup(node, key)
        if isinstance(node, Custom):
            return self.custom(node, key)
        raise UdflowError(f"{node.label}: the Spark backend cannot lower a {type(node).__name__}")

    # -- unary ---------------------------------------------------------------

    def map(self, node: Map, key: Optional[tuple]) -> Lowered:
        step = self.physical[node.label]
        native = self._native(node, step, key)
        if native is not None:
            return native
        step = step.as_python
        how = step.how
        udf = Udf(node.label, function_location(node.fn), node.fn, "map",
                  input_fields=tuple(sorted(self.physical[node.input.label].columns or ())))
        if node.is_filter:  # records pass unchanged, so they keep the group key their input gives them
            inp = self.lower(node.input, key)
            columns = _shown(step, inp)
            if how == "scalar" and columns:
                return Lowered(inp.df.filter(scalar.predicate(node, udf, columns)), pickled=False, nonnull=inp.nonnull,
                               magnitudes=inp.magnitudes, nonzero=inp.nonzero)
            df = inp.df.mapInArrow(executor.filter_partitions(udf, inp.pickled, columns), inp.df.schema)
            return Lowered(df, inp.pickled, inp.input_schema, inp.nonnull)
        inp = self.lower(node.input)
        if how == "scalar" and not inp.pickled:
            struct = scalar.struct_map(node, udf, inp.df, step.reads, self._timezone(), self.samples.get(node.label))
            if struct is not None:
                return Lowered(struct, pickled=False)
            self.python_reasons[node.label] = "its written fields could not be typed from a sample: projected"
            how = "projected"
        columns = _shown(step, inp)
        if how == "forwarding" and columns is not None:
            return Lowered(inp.df.mapInArrow(executor.forward_partitions(udf, columns), inp.df.schema), pickled=False)
        if how in ("scalar", "projected") and columns is not None:
            run = executor.projected_map_partitions
            return self._python(
                node, udf, inp, key, lambda enc, schema: inp.df.mapInArrow(run(udf, columns, step.reads, enc), schema)
            )
        return self._python(
            node, udf, inp, key, lambda enc, schema: inp.df.mapInArrow(executor.map_partitions(udf, inp.pickled, enc), schema)
        )

    def _native(self, node: Map | Reduce, step: Step, key: Optional[tuple]) -> Optional[Lowered]:
        """The operator run as Spark SQL from its function's model (`native_ops`,
        `native_groups`) where its step is native and every term has an exact native form for
        its input's types; else None (the reason kept in `python_reasons`)."""
        if not step.native:
            return None
        keeps_key = isinstance(node, Map) and node.is_filter
        inp = self.lower(node.input, key if keeps_key else None)
        if inp.pickled:  # the step below ran otherwise than planned
            self.python_reasons[node.label] = "its input is pickled Python records (no columns)"
            return None
        data = data_types(node.input, self._source_types)
        nonnull = nonnull_of(data) | inp.nonnull
        magnitudes = {**inp.magnitudes, **magnitudes_of(data)}
        if isinstance(node, Reduce):
            udf = Udf(node.label, function_location(node.fn), node.fn, "reduce",
                      input_fields=tuple(sorted(self.physical[node.input.label].columns or ())))
            return self._natively(node, lambda where: general_case.split_groups(
                node, inp.df, lambda df, assumed=None: native_groups.run(
                    df, node.key, step.model, where, nonnull, determined_fields(node.input, node.key),
                    self.hints.get(node.label), magnitudes, assumed), udf, lambda schema: self._encoder(udf, schema)))
        sample = self.samples.get(node.input.label)
        records = sample.records if sample is not None else ()
        udf = Udf(node.label, function_location(node.fn), node.fn, "map")
        return self._natively(node, lambda where: general_case.split(
            node, inp.df, lambda df, assumed=None: native_ops.run(df, step.model, where, nonnull, records, magnitudes,
                                                                  inp.nonzero, assumed), udf,
            lambda schema: self._encoder(udf, schema), (step.model, where)), inp.magnitudes, inp.nonzero)

    def _source_types(self, source: Source) -> dict:
        """A source's fields' types and magnitudes, read (footers, a DataFrame's plan) once per
        lowering; the entry keeps the source alive, so that no other object takes its id."""
        if id(source) not in self._sources:
            self._sources[id(source)] = (source, file_stats.source_types(source))
        return self._sources[id(source)][1]

    def _natively(self, node: Node, run: Callable[[str], native_ops.Ran], below: Optional[dict] = None,
                  below_nonzero: frozenset = frozenset()) -> Optional[Lowered]:
        """`run(where)`'s DataFrame, fields known never None, magnitudes and fields never 0 proven
        (a `native_ops.Ran`; and those of `below` and `below_nonzero`, its input's, that it leaves
        as they are), or None
        where it is `NotNative`. An operator whose rows (or groups) outside its normal case run
        in Python (`general_case`) says so in `general_cases`."""
        try:
            ran = run(f"{node.label}: {function_location(node.fn)}")
        except NotNative as why:
            self.python_reasons[node.label] = str(why)
            _warn_fallback(node, self.physical[node.label].as_python, why)
            return None
        self.native_labels.add(node.label)
        if ran.normal is not None:
            self.general_cases[node.label] = ran.normal.describe()
        below = below or {}
        kept = {f: below[f] for f in passed_on(node, below, ran.frame.columns)}
        nonzero = passed_on(node, below_nonzero, ran.frame.columns) | ran.nonzero
        return Lowered(ran.frame, pickled=False, nonnull=ran.nonnull, magnitudes={**kept, **ran.magnitudes},
                       nonzero=nonzero)

    def reduce(self, node: Reduce, key: Optional[tuple]) -> Lowered:
        step = self.physical[node.label]
        native = self._native(node, step, key)
        if native is not None:
            return native
        step = step.as_python
        udf = Udf(node.label, function_location(node.fn), node.fn, "reduce",
                  input_fields=tuple(sorted(self.physical[node.input.label].columns or ())))
        inp = self.lower(node.input)
        if inp.pickled:
            inp = self.lower(node.input, node.key)
            grouped = inp.df.groupBy(col(KEY))
        else:
            inp = _grouped_fields_only(step, inp)
            grouped = inp.df.groupBy(*[col(k) for k in node.key])
        run = executor.reduce_groups
        return self._python(
            node, udf, inp, key, lambda enc, schema: grouped.applyInArrow(run(udf, node.key, inp.pickled, enc), schema)
        )

    def custom(self, node: Custom, key: Optional[tuple]) -> Lowered:
        op = node.op_type
        if op.spark is not None:
            return Lowered(op.spark([self.typed(c) for c in node.inputs], node.param_dict), pickled=False)
        if not (op.arity == 1 and op.record_at_a_time):
            raise UdflowError(
                f"{node.label}: operator type {op.name!r} has no Spark lowering; give it `spark=`, "
                "or declare it `record_at_a_time=True` to run its `reference` on each batch"
            )
        params, reference = node.param_dict, op.reference
        udf = Udf(node.label, function_location(reference), lambda bags: reference(bags, params), "custom")
        inp = self.lower(node.inputs[0])
        run = executor.custom_partitions
        return self._python(
            node, udf, inp, key, lambda enc, schema: inp.df.mapInArrow(run(udf, inp.pickled, enc), schema)
        )

    def _python(
        self,
        node: Node,
        udf: Udf,
        inp: Lowered,
        key: Optional[tuple],
        apply: Callable[[Encoder, StructType], DataFrame],
    ) -> Lowered:
        """Typed when the input is typed and analysis shows the output keeps its columns; else
        pickled (a Map over typed input can be run typed by a sample, `Lowered.run_typed`)."""
        schema = inp.input_schema or inp.df.schema
        kept = self._carried_schema(node, inp)
        if kept is not None:
            return Lowered(apply(self._encoder(udf, kept), kept), pickled=False)
        blob_schema = BLOB_SCHEMA if key is None else KEYED_BLOB_SCHEMA
        run_typed = None
        if isinstance(node, Map) and not inp.pickled and self.native:
            run_typed = lambda: self._sampled(node, udf, inp.df, apply)  # noqa: E731
        return Lowered(apply(Encoder(udf, None, key), blob_schema), pickled=True, input_schema=schema, run_typed=run_typed)

    def _carried_schema(self, node: Node, inp: Lowered) -> Optional[StructType]:
        """The input's columns, projected, where the step keeps its input's columns (its
        function writes no field)."""
        step = self.physical[node.label].as_python
        if inp.pickled or step.pickled or step.columns is None or isinstance(node, Custom):
            return None
        if not step.columns <= set(inp.df.schema.names):
            return None
        return StructType([f for f in inp.df.schema.fields if f.name in step.columns])

    def _sampled(self, node: Map, udf: Udf, df: DataFrame, apply) -> Optional[DataFrame]:
        """The Map run again, its records typed by a sample of its output (`scalar`), or None."""
        schema = scalar.sampled_output_schema(node, udf, df, self.samples.get(node.label))
        return None if schema is None else apply(self._encoder(udf, schema), schema)

    def _decode(self, node: Node, low: Lowered) -> DataFrame:
        """Pickled records -> typed columns. The schema comes from what the operator emitted on
        the driver's sample (`udflow.samples`: no Spark job); failing that, from a sample of
        its records on Spark, persisted first so that nothing upstream runs twice."""
        fn = node.function
        location = function_location(fn) if not isinstance(node, Custom) else node.op_type.name
        on_driver = self.samples.get(node.label)
        records = low.df
        schema = None if on_driver is None else self._output_schema(node, location, low, list(on_driver.records),
                                                                      on_driver.complete)
        if schema is None:
            records = self._persist(low.df)
            with translated():
                sample = [pickle.loads(r[0]) for r in records.select(BLOB).limit(SAMPLE_SIZE).collect()]
            schema = self._output_schema(node, location, low, sample, len(sample) < SAMPLE_SIZE, required=True)
        udf = Udf(node.label, location, fn, node.kind)
        return records.mapInArrow(executor.map_partitions(_identity(udf), True, self._encoder(udf, schema)), schema)

    def _output_schema(self, node: Node, location: str, low: Lowered, sample: list, complete: bool,
                       required: bool = False) -> Optional[StructType]:
        """The schema of `node`'s records from a sample of them; None where a field is None
        throughout an incomplete sample (an error when `required`)."""
        fn = node.function
        schema, missing = output_schema(
            node.label,
            location,
            sample,
            complete=complete,
            input_schema=low.input_schema or StructType([]),
            known_fields=self.physical[node.label].columns,
            declared=declared_types(fn) if fn is not None else {},
        )
        if schema is None and required:
            raise missing_type_error(node.label, location, missing, len(sample))
        return schema

    def _persist(self, df: DataFrame) -> DataFrame:
        """`df` cached; its plan may still coalesce partitions adaptively (it is small or pickled)."""
        conf = self.spark.conf
        flag = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"
        before = conf.get(flag, None)
        conf.set(flag, "true")
        try:
            cached = df.persist()
        finally:
            conf.unset(flag) if before is None else conf.set(flag, before)
        self.persisted.append(cached)
        return cached

    def _encoder(self, udf: Udf, schema: StructType) -> Encoder:
        return Encoder(udf, to_arrow_schema(schema, timezone=self._timezone()))

    def _timezone(self) -> str:
        return self.spark.conf.get("spark.sql.session.timeZone") or "UTC"


def _warn_fallback(node: Node, fallback: Step, why: NotNative) -> None:
    warn_at(node.fn, NativeFallbackWarning(f"{node.label}: {function_location(node.fn)} was planned native, but "
                                           f"runs as Python ({fallback.how}) on its input's types: {why}"))


def _identity(udf: Udf) -> Udf:
    return Udf(udf.label, udf.location, lambda r: r, "map")


def _grouped_fields_only(step: Step, inp: Lowered) -> Lowered:
    """The Reduce's typed input cut to the fields its function uses (`Step.reads`: its key and
    what it reads): the shuffle and the Arrow batches carry those columns only."""
    if step.reads is None:
        return inp
    return Lowered(inp.df.select(*[col(n) for n in inp.df.schema.names if n in step.reads]), pickled=False,
                   nonnull=inp.nonnull)


def _shown(step: Step, inp: Lowered) -> Optional[list[str]]:
    """The columns a Python function is shown (`Step.reads`), None for all (or pickled input).
    Building Python values for the other columns is what such a function mostly costs
    (TPC-H's lineitem: 16 columns, one read by Q7's date filter)."""
    if inp.pickled or step.reads is None:
        return None
    return [name for name in inp.df.schema.names if name in step.reads]


def _only(node: Node, df: DataFrame, fields: Optional[tuple[str, ...]]) -> DataFrame:
    """`df` cut to `fields` (a projection Spark prunes below: columns computed only for the
    others are never computed, nor read from a file)."""
    if fields is None:
        return df
    missing = [f for f in fields if f not in df.columns]
    if missing:
        raise UdflowError(f"{node.label}: fields={list(fields)!r}: its records have no {missing[0]!r}")
    if list(df.columns) == list(fields):
        return df  # a projection of every column in order would cost an analysis and do nothing
    return select_expr(df, [ident(f) for f in fields])

"""What a DataFrame's analysed plan says about the files it reads: one walk per DataFrame.

The optimizer and the lowering ask a DataFrame source several things about its files:
its name (`from_spark` names a source after its file), its rows (Parquet footers), its
first records (read by pyarrow, not a Spark job), its columns' magnitudes (footer
statistics). Each asking used to walk the plan over py4j again; `frame_files(df)` walks it
once, in few round trips (`jvm_plan`), and is kept per DataFrame object (a DataFrame is
immutable: a plan over files that change is read again by a new DataFrame, as
`frames.head` already assumes).

    spark.read.parquet(p).withColumnRenamed("a", "b")
        FrameFiles(output=(("b", 7), ...),
                   relations=(FileRelation("Parquet", ("file:/.../part-0.parquet",), ((3, "a"), ...)),),
                   plain=(("b", "a"), ...))          exactly one relation's rows, a column renamed

A Spark Connect DataFrame has no JVM handle: it has no FrameFiles (None), and every
question falls back to Spark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from udflow.spark_backend import connect, jvm_plan
from udflow.spark_backend.memo import jvm_handle


@dataclass(frozen=True)
class FileRelation:
    """A leaf of the plan that reads files (a `HadoopFsRelation`)."""

    file_format: str  # the relation's FileFormat as Spark prints it: "Parquet", "CSV", "JSON", ...
    files: tuple  # the files it lists, as Spark names them (`file:/...` URIs)
    attributes: tuple  # ((attribute id, file column), ...): the leaf's output
    partitioned: bool  # it has partition columns (values from directory names, not the files)
    options: tuple = ()  # a CSV read's options, lowercased keys, sorted
    data_columns: tuple = ()  # a CSV read's ((file column, Spark type), ...), in the files' order

    def local_files(self) -> Optional[tuple]:
        """The files as local paths, or None where one is not a local file."""
        local = tuple(local_path(p) for p in self.files)
        return local if local and all(p is not None for p in local) else None


def local_path(uri: str) -> Optional[str]:
    """`/a/b` of `file:/a/b`, `file:///a/b` or `/a/b`; None for any other scheme or a host."""
    if uri.startswith("file:///"):
        return uri[len("file://"):]
    if uri.startswith("file:/") and not uri.startswith("file://"):
        return uri[len("file:"):]
    return uri if uri.startswith("/") else None


@dataclass(frozen=True)
class FrameFiles:
    """What a DataFrame's analysed plan says about the files it reads."""

    output: tuple  # ((column, attribute id), ...) of the DataFrame, in order
    relations: tuple  # (FileRelation, ...) of the plan's leaves that read files
    # ((DataFrame column, file column), ...) where the DataFrame is exactly one relation's rows
    # under projections that keep or rename its columns (no filter, no computed column); else None
    plain: Optional[tuple] = None

    @property
    def plain_relation(self) -> Optional[FileRelation]:
        """The one relation whose rows the DataFrame exactly is, or None."""
        return self.relations[0] if self.plain is not None else None


@lru_cache(maxsize=64)
def frame_files(df) -> Optional[FrameFiles]:
    """The FrameFiles of `df`, or None where the plan cannot be read (a Connect DataFrame)."""
    if connect.is_connect(df):
        return None
    try:
        wrap = jvm_handle(df.sparkSession, "scala.collection.immutable.ArraySeq")
        return _walked(df._jdf.queryExecution().analyzed(), wrap)
    except Exception:  # noqa: BLE001 - a plan this walk does not read proves nothing
        return None


def _walked(plan, wrap) -> Optional[FrameFiles]:
    """`wrap`: Scala's ArraySeq, whose `unsafeWrapArray` makes a Java array a Seq."""
    top = jvm_plan.output(plan)
    if top is None:
        return None
    output = tuple((name, attribute) for name, attribute, _ in top)
    renamed: Optional[dict] = {}  # attribute id -> the id of the child attribute it passes on
    node, node_output = plan, top
    while renamed is not None and jvm_plan.node_name(node) == "Project":
        child = node.child()
        child_output = jvm_plan.output(child)
        renamed = _passed_on(node, node_output, child_output, renamed)
        node, node_output = child, child_output
    leaves = jvm_plan.seq(plan.collectLeaves())
    relations = tuple(found for found in (_relation(leaf, wrap) for leaf in leaves) if found is not None)
    plain = None
    if renamed is not None and relations and jvm_plan.node_name(node) == "LogicalRelation":
        in_relation = dict(relations[0].attributes)
        columns = tuple((name, in_relation.get(_followed(renamed, attribute))) for name, attribute in output)
        plain = columns if all(c is not None for _, c in columns) else None
    return FrameFiles(output, relations, plain)


def _passed_on(project, output: tuple, child_output: Optional[tuple], renamed: dict) -> Optional[dict]:
    """`renamed` with the projection's renames added, or None where one of its columns is
    anything but a child's column kept or renamed (read from the projection list's text)."""
    texts = jvm_plan.texts(project.projectList())
    if child_output is None or len(texts) != len(output):
        return None
    child_names = {attribute: name for name, attribute, _ in child_output}
    out = dict(renamed)
    for text, (name, attribute, _) in zip(texts, output):
        if jvm_plan.prints_as(text, name, attribute) and child_names.get(attribute) == name:
            continue  # the child's column itself
        alias = re.fullmatch(rf"(.*) AS {re.escape(name)}#{attribute}[A-Za-z]*", text, re.S)
        source = jvm_plan.attribute_id(alias.group(1)) if alias else None
        if source is None or source not in child_names or not jvm_plan.prints_as(
                alias.group(1), child_names[source], source):
            return None  # a computed column
        out[attribute] = source
    return out


def _followed(renamed: dict, attribute: int) -> int:
    while attribute in renamed:
        attribute = renamed[attribute]
    return attribute


def _relation(leaf, wrap) -> Optional[FileRelation]:
    """The leaf's FileRelation, or None where it reads no files Spark lists (any other leaf)."""
    if jvm_plan.node_name(leaf) != "LogicalRelation":
        return None
    relation = leaf.relation()
    if str(relation.getClass().getSimpleName()) != "HadoopFsRelation":
        return None
    file_format = str(relation.fileFormat().toString())
    # the file list as one text: a Java array wrapped as a Scala Seq (py4j matches no varargs
    # method such as String.join to it), where reading it element by element costs a round trip each
    listed = wrap.unsafeWrapArray(relation.location().inputFiles())
    files = tuple(jvm_plan.texts(listed))
    attributes = jvm_plan.output(leaf)
    if attributes is None:
        attributes = tuple((str(a.name()), int(a.exprId().id()), "") for a in jvm_plan.seq(leaf.output()))
    options, data_columns = (), ()
    if file_format == "CSV":
        options = tuple(sorted((str(k).lower(), str(v)) for k, v in _scala_map(relation.options()).items()))
        data_columns = tuple((f.name, f.dataType.simpleString()) for f in _struct(relation.dataSchema()).fields)
    return FileRelation(file_format, files, tuple((attribute, name) for name, attribute, _ in attributes),
                        not bool(relation.partitionSchema().isEmpty()), options, data_columns)


def _struct(jschema):
    from pyspark.sql.types import _parse_datatype_json_string

    return _parse_datatype_json_string(str(jschema.json()))


def _scala_map(jmap) -> dict:
    out, entries = {}, jmap.iterator()
    while entries.hasNext():
        entry = entries.next()
        out[entry._1()] = entry._2()
    return out

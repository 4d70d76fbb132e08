"""`frame_files` reads what a DataFrame's plan says about its files in a few round trips,
by texts; it must say what a walk field by field over the same plan says."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from udflow.spark_backend.frame_files import FileRelation, FrameFiles, frame_files

pytestmark = pytest.mark.spark


def _parquet(path, columns: dict) -> str:
    pq.write_table(pa.table(columns), str(path))
    return str(path)


def _csv(path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _seq(jseq) -> list:
    return [jseq.apply(i) for i in range(jseq.size())]


def _class(j) -> str:
    return str(j.getClass().getSimpleName())


def walked_field_by_field(df) -> FrameFiles:
    """The reference: every attribute, class and file asked for one by one."""
    plan = df._jdf.queryExecution().analyzed()
    output = tuple((str(a.name()), int(a.exprId().id())) for a in _seq(plan.output()))
    relations = tuple(r for r in (_relation(leaf) for leaf in _seq(plan.collectLeaves())) if r is not None)
    renamed, node = {}, plan
    while _class(node) == "Project" and renamed is not None:
        for e in _seq(node.projectList()):
            if _class(e) == "Alias" and _class(e.child()) == "AttributeReference":
                renamed[int(e.exprId().id())] = int(e.child().exprId().id())
            elif _class(e) != "AttributeReference":
                renamed = None
                break
        node = node.child()
    plain = None
    if renamed is not None and _class(node) == "LogicalRelation" and relations:
        columns = dict(relations[0].attributes)
        found = []
        for name, attribute in output:
            while attribute in renamed:
                attribute = renamed[attribute]
            found.append((name, columns.get(attribute)))
        plain = tuple(found) if all(c is not None for _, c in found) else None
    return FrameFiles(output, relations, plain)


def _relation(leaf):
    if _class(leaf) != "LogicalRelation" or _class(leaf.relation()) != "HadoopFsRelation":
        return None
    relation = leaf.relation()
    file_format = str(relation.fileFormat())
    attributes = tuple((int(a.exprId().id()), str(a.name())) for a in _seq(leaf.output()))
    options, data = (), ()
    if file_format == "CSV":
        entries, pairs = relation.options().iterator(), []
        while entries.hasNext():
            entry = entries.next()
            pairs.append((str(entry._1()).lower(), str(entry._2())))
        options = tuple(sorted(pairs))
        data = tuple((str(f.name()), str(f.dataType().simpleString())) for f in relation.dataSchema().fields())
    return FileRelation(file_format, tuple(str(f) for f in relation.location().inputFiles()), attributes,
                        not relation.partitionSchema().isEmpty(), options, data)


ODD = "a#1 AS b#2 é"  # a column name that reads like an attribute's and an alias's text


def _shapes(spark, tmp_path):
    trips = _parquet(tmp_path / "trips.parquet", {"k": [1, 2, 3], "fare": [1.5, None, 2.0], ODD: ["x", "y", "z"]})
    zones = _csv(tmp_path / "zones.csv", "zone_id;name\n1;a\n2;\n")
    parted = tmp_path / "parted"
    for day in (1, 2):
        (parted / f"day={day}").mkdir(parents=True)
        _parquet(parted / f"day={day}" / "part-0.parquet", {"k": [day], "v": [day * 10]})
    read = spark.read.parquet(trips)
    csv = spark.read.options(header="true", sep=";").schema("zone_id bigint, name string").csv(zones)
    return {
        "read": read,
        "renamed": read.withColumnRenamed("fare", "amount").withColumnRenamed(ODD, "odd"),
        "renamed twice": read.withColumnRenamed("k", "j").select("j", "fare").withColumnRenamed("j", "i"),
        "odd name kept": read.select(ODD, "k"),
        "renamed to the odd name": read.select(read["k"].alias(ODD + "2"), "fare"),
        "computed": read.withColumn("fare", read["fare"] * 2),
        "filtered": read.filter("k > 1"),
        "csv": csv,
        "csv renamed": csv.withColumnRenamed("name", "zone"),
        "join": read.join(csv, read["k"] == csv["zone_id"]),
        "partitioned": spark.read.parquet(str(parted)),
        "in memory": spark.createDataFrame([(1, "a")], "k bigint, s string"),
    }


def test_the_walk_by_texts_reads_what_the_walk_field_by_field_reads(spark, tmp_path):
    shapes = _shapes(spark, tmp_path)
    for name, df in shapes.items():
        assert frame_files(df) == walked_field_by_field(df), name
    plain = {name for name, df in shapes.items() if frame_files(df).plain is not None}
    assert plain == {"read", "renamed", "renamed twice", "odd name kept", "renamed to the odd name", "csv",
                     "csv renamed", "partitioned"}
    assert frame_files(shapes["renamed"]).plain == (("k", "k"), ("amount", "fare"), ("odd", ODD))
    assert frame_files(shapes["partitioned"]).relations[0].partitioned
    assert [r.file_format for r in frame_files(shapes["join"]).relations] == ["Parquet", "CSV"]


def test_local_files_are_read_from_the_uris_spark_lists(spark, tmp_path):
    relation = frame_files(spark.read.parquet(_parquet(tmp_path / "t.parquet", {"k": [1]}))).relations[0]
    assert relation.local_files() == (str(tmp_path / "t.parquet"),)
    remote = FileRelation("Parquet", ("file:/a/b.parquet", "hdfs://host/c.parquet"), (), False)
    assert remote.local_files() is None
    assert FileRelation("CSV", ("file:/a/b.csv", "file:///c/d.csv"), (), False).local_files() == ("/a/b.csv", "/c/d.csv")
    assert FileRelation("CSV", ("file://host/a.csv",), (), False).local_files() is None

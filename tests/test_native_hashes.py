"""`hashlib.md5(s.encode()).hexdigest()` and its sha1/sha2 siblings run natively (issue 29,
item 3): Spark's string is the UTF-8 bytes Python's `encode()` gives, and Spark's md5, sha1
and sha2 write the digest in the lower-case hex `hexdigest()` writes. Checked on every
string below, empty, non-ASCII and beyond the Basic Multilingual Plane included; None raises
Python's AttributeError; another codec, or a digest used otherwise, keeps its call out of the
model, and a call of a number's `encode` raises as Python on both engines."""

import hashlib
from hashlib import sha256

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.expr import Call, Field, evaluate
from udflow.expr_functions import HEX_DIGESTS
from tests.both_engines import native_records_on_both_engines, raised_on_both_engines
from tests.test_native_differential import native_error
from tests.frames import jvm_frame

pytestmark = pytest.mark.spark

TEXTS = ["", "a", "hello world", "Ünïcödé", "日本語テキスト", "emoji 🎉 and 𝔘", "tab\tnew\nline", "x" * 1000,
         "\u00a0nbsp", "null\x00byte"]


def keyed(r):
    return {**r, "key": hashlib.md5(r["s"].encode()).hexdigest(), "short": sha256(r["s"].encode("utf8")).hexdigest()[:8]}


def latin(r):
    return {**r, "key": hashlib.md5(r["s"].encode("latin-1")).hexdigest()}


def in_bucket(r):
    return hashlib.sha1(r["s"].encode("UTF-8")).hexdigest() < "8"


def ab_bucket(r):
    return {**r, "bucket": int(hashlib.md5(r["s"].encode()).hexdigest(), 16) % 100,
            "shard": int(hashlib.sha256(r["s"].encode()).hexdigest(), 16) % 2147483647}


def test_each_digest_is_a_call_of_the_text_and_other_codecs_have_no_model():
    model = analyze(keyed, ["s"]).model
    written = dict(model.cases[0].emit.fields)
    assert written["key"] == Call("hashlib.md5", (Field("s"),)), model
    assert str(written["short"]).startswith("hashlib.sha256(r['s'].encode()).hexdigest()"), model
    assert analyze(latin, ["s"]).model is None


@pytest.fixture(scope="module")
def texts(spark):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    rows = [(i, s) for i, s in enumerate(TEXTS + [None])]
    schema = StructType([StructField("id", LongType(), False), StructField("s", StringType(), True)])
    return rows, jvm_frame(spark, rows, schema)


def test_every_digest_is_pythons_on_every_text_and_none_raises_attribute_error(texts):
    from pyspark.sql import functions as F

    from udflow.spark_backend.native import NativeLowering

    rows, frame = texts
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    terms = {name: Call(f"hashlib.{name}", (Field("s"),)) for name in HEX_DIGESTS}
    columns = [F.expr(lowering.lower(t).sql).alias(name) for name, t in terms.items()]
    got = {r["id"]: r for r in frame.where("s IS NOT NULL").select("id", *columns).collect()}
    for i, s in rows[:-1]:
        for name, term in terms.items():
            assert got[i][name] == evaluate(term, {"s": s}) == getattr(hashlib, name)(s.encode()).hexdigest()
    none_row = rows[-1][0]
    for column in columns:
        assert "AttributeError: 'NoneType' object has no attribute 'encode'" in native_error(frame, column, none_row)


ROWS = [{"id": i, "s": s} for i, s in enumerate(TEXTS)]


def test_a_digests_bucket_is_pythons_for_every_digest_and_count(texts):
    """`int(h, 16) % n` of a digest's 32 to 128 hex digits, folded seven digits at a time."""
    from pyspark.sql import functions as F

    from udflow.expr import Arith, Lit
    from udflow.spark_backend.native import NativeLowering

    rows, frame = texts
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    terms = {(name, n): Arith("%", Call("int", (Call(f"hashlib.{name}", (Field("s"),)), Lit(16))), Lit(n))
             for name in HEX_DIGESTS for n in (1, 7, 100, 2**31 - 1)}
    columns = [F.expr(lowering.lower(t).sql).alias(f"{name}_{n}") for (name, n), t in terms.items()]
    assert all("conv(" in str(c) for c in columns)
    got = {r["id"]: r for r in frame.where("s IS NOT NULL").select("id", *columns).collect()}
    for i, s in rows[:-1]:
        for (name, n), term in terms.items():
            assert got[i][f"{name}_{n}"] == evaluate(term, {"s": s}) == int(getattr(hashlib, name)(s.encode()).hexdigest(), 16) % n
    assert "AttributeError: 'NoneType' object has no attribute 'encode'" in native_error(frame, columns[0], rows[-1][0])


@pytest.mark.parametrize("build", [lambda s: s.map(keyed), lambda s: s.filter(in_bucket), lambda s: s.map(ab_bucket)])
def test_a_flow_of_digests_runs_natively_with_pythons_records(spark, build):
    flow = build(uf.source("texts", rows=ROWS))
    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert spark_rows == python_rows


def test_a_number_has_no_encode_on_either_engine():
    rows = [{"id": 1, "s": 3}, {"id": 2, "s": 7}]
    said = raised_on_both_engines(uf.source("texts", rows=rows).map(keyed))
    assert said[0] == said[1] and said[0].startswith("AttributeError: 'int' object has no attribute 'encode'"), said

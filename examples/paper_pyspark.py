"""The paper's tasks written as PySpark users write them: DataFrames and `F.udf` (issue 30).

Each function builds, over the same files as the udflow flow of the same task, the
query a data engineer writes in PySpark: the Python logic of each operator in a
`F.udf` (a filter UDF, a column UDF), joins with `join`, aggregates with
`groupBy().agg(...)`. `uf.from_spark` opens them; tests/test_frontend_paper.py
checks they give the paper flows' rows and that the optimizer finds the same
reorderings in them.

    q7_udf(spark, data_dir)            TPC-H Q7 (examples/tpch_q7.py)
    q15_udf(spark, data_dir)           TPC-H Q15 (examples/tpch_q15.py)
    text_mining_udf(spark, data_dir)   the text-mining pipeline (examples/text_mining.py)

The clickstream task has no Python function a PySpark user would write as a UDF (its
session logic is a group filter and an aggregate: native window and `agg` code, or
`applyInPandas`, which from_spark keeps as written); it is not here.
"""

from __future__ import annotations

import os
from datetime import date

from examples import text_mining
from examples.tpch_data import SCHEMA, table_path
from examples.tpch_q15 import add_months

Q7_NATIONS = ("FRANCE", "GERMANY")
Q7_START, Q7_END = date(1995, 1, 1), date(1996, 12, 31)
Q15_START = date(1996, 1, 1)


def tpch_keys(tables) -> tuple[dict, dict]:
    """`keys` and `foreign_keys` for `from_spark` over TPC-H `tables` (by source name: the file's)."""
    keys = {t: list(SCHEMA[t][0]) for t in tables}
    foreign = {t: {cols: target for cols, target in SCHEMA[t][1].items() if target[0] in tables} for t in tables}
    return keys, {t: fk for t, fk in foreign.items() if fk}


# ---------------------------------------------------------------------------
# TPC-H Q7
# ---------------------------------------------------------------------------


def shipped_in_period(shipdate):
    return Q7_START <= shipdate <= Q7_END


def between_nations(supp, cust):
    nation1, nation2 = Q7_NATIONS
    return (supp == nation1 and cust == nation2) or (supp == nation2 and cust == nation1)


def year_of(shipdate):
    return shipdate.year


def volume(price, discount):
    return float(price) * (1 - float(discount))


def q7_udf(spark, data_dir: str):
    from pyspark.sql import functions as F

    read = lambda t: spark.read.parquet(table_path(data_dir, t))  # noqa: E731
    nation = read("nation")
    supp_nation = nation.select(*(F.col(c).alias(f"supp_{c}") for c in nation.columns))
    cust_nation = nation.select(*(F.col(c).alias(f"cust_{c}") for c in nation.columns))
    return (read("lineitem").filter(F.udf(shipped_in_period, "boolean")("l_shipdate"))
            .join(read("supplier"), F.col("l_suppkey") == F.col("s_suppkey"))
            .join(read("orders"), F.col("l_orderkey") == F.col("o_orderkey"))
            .join(read("customer"), F.col("o_custkey") == F.col("c_custkey"))
            .join(cust_nation, F.col("c_nationkey") == F.col("cust_n_nationkey"))
            .join(supp_nation, F.col("s_nationkey") == F.col("supp_n_nationkey"))
            .filter(F.udf(between_nations, "boolean")("supp_n_name", "cust_n_name"))
            .withColumn("l_year", F.udf(year_of, "int")("l_shipdate"))
            .withColumn("volume", F.udf(volume, "double")("l_extendedprice", "l_discount"))
            .withColumnRenamed("supp_n_name", "supp_nation").withColumnRenamed("cust_n_name", "cust_nation")
            .groupBy("supp_nation", "cust_nation", "l_year")
            .agg(F.sum("volume").alias("revenue")))


# ---------------------------------------------------------------------------
# TPC-H Q15
# ---------------------------------------------------------------------------


def shipped_in_quarter(shipdate):
    return Q15_START <= shipdate < add_months(Q15_START, 3)


def q15_udf(spark, data_dir: str):
    from pyspark.sql import functions as F

    read = lambda t: spark.read.parquet(table_path(data_dir, t))  # noqa: E731
    return (read("lineitem").filter(F.udf(shipped_in_quarter, "boolean")("l_shipdate"))
            .join(read("supplier"), F.col("l_suppkey") == F.col("s_suppkey"))
            .withColumn("volume", F.udf(volume, "double")("l_extendedprice", "l_discount"))
            .groupBy("s_suppkey", "s_name", "s_address", "s_phone")
            .agg(F.sum("volume").alias("total_revenue")))


# ---------------------------------------------------------------------------
# Text mining
# ---------------------------------------------------------------------------


def tokenize(text):
    return " ".join(text_mining.tokenize_text(text))


def split_sentences(tokens):
    return " ".join(map(str, text_mining.sentence_ends(tokens.split())))


def pos_tag(tokens):
    return " ".join(text_mining.viterbi(tokens.split()))


GENES = text_mining.automaton("genes")  # built once, as the pipeline's dictionaries are
DRUGS = text_mining.automaton("drugs")


def find_genes(tokens):
    genes = text_mining.dictionary_mentions(GENES, tokens.split())
    return " ".join(genes) if genes else None


def find_drugs(tokens):
    drugs = text_mining.dictionary_mentions(DRUGS, tokens.split())
    return " ".join(drugs) if drugs else None


def find_relations(tokens, ends, pos, genes, drugs):
    relations = text_mining.relations_in(tokens, ends, pos, genes, drugs)
    return " ".join(relations) if relations else None


def text_mining_udf(spark, data_dir: str):
    from pyspark.sql import functions as F

    udf = lambda f: F.udf(f, "string")  # noqa: E731
    return (spark.read.parquet(os.path.join(data_dir, text_mining.CORPUS))
            .withColumn("tokens", udf(tokenize)("text"))
            .withColumn("sentence_ends", udf(split_sentences)("tokens"))
            .withColumn("pos", udf(pos_tag)("tokens"))
            .withColumn("genes", udf(find_genes)("tokens")).filter(F.col("genes").isNotNull())
            .withColumn("drugs", udf(find_drugs)("tokens")).filter(F.col("drugs").isNotNull())
            .withColumn("relations", udf(find_relations)("tokens", "sentence_ends", "pos", "genes", "drugs"))
            .filter(F.col("relations").isNotNull()))

"""The paper's tasks as a PySpark user writes them by hand, for `bench/native.py`.

Native DataFrame functions wherever PySpark has them, `F.udf` for the rest:

- TPC-H Q7 and Q15 (the paper's variants: Q7 without the final sort, Q15
  without the "= max(total_revenue)" filter): DataFrame joins, filters and
  aggregates, and the same queries as Spark SQL text over the same parquet;
- clickstream (examples/clickstream.py, Figure 4(a)): sessions with a buy are a
  semi-join with the sessions that have one, a session is condensed with
  `groupBy(...).agg(...)` (the landing click is the smallest (time, url, action)
  struct), then the two joins;
- text mining (examples/text_mining.py): every step is the example's own Python
  (regular-expression tokenizer, Aho-Corasick dictionaries, an HMM tagger), so
  each is an `F.udf` over the annotation layer it writes, in the order written;
  an extractor that finds nothing returns None and the row is filtered out.
"""

from __future__ import annotations

import os

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

Q7_SQL = """
SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
FROM (
    SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation, year(l_shipdate) AS l_year,
           l_extendedprice * (1 - l_discount) AS volume
    FROM supplier, lineitem, orders, customer, nation n1, nation n2
    WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
      AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
      AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
      AND l_shipdate BETWEEN date '1995-01-01' AND date '1996-12-31'
) AS shipping
GROUP BY supp_nation, cust_nation, l_year
"""

Q15_SQL = """
SELECT s_suppkey, s_name, s_address, s_phone, sum(l_extendedprice * (1 - l_discount)) AS total_revenue
FROM supplier, lineitem
WHERE s_suppkey = l_suppkey AND l_shipdate >= date '1996-01-01' AND l_shipdate < date '1996-04-01'
GROUP BY s_suppkey, s_name, s_address, s_phone
"""


def _parquet(spark: SparkSession, data_dir: str, table: str) -> DataFrame:
    return spark.read.parquet(os.path.join(data_dir, f"{table}.parquet"))


def tpch_sql(spark: SparkSession, data_dir: str, query: str) -> DataFrame:
    """`query` over temporary views of the TPC-H parquet files in `data_dir`."""
    for table in ("lineitem", "orders", "customer", "supplier", "nation"):
        _parquet(spark, data_dir, table).createOrReplaceTempView(table)
    return spark.sql(query)


def q7_sql(spark, data_dir):
    return tpch_sql(spark, data_dir, Q7_SQL)


def q15_sql(spark, data_dir):
    return tpch_sql(spark, data_dir, Q15_SQL)


def q7_hand(spark: SparkSession, data_dir: str) -> DataFrame:
    lineitem = _parquet(spark, data_dir, "lineitem").where(
        F.col("l_shipdate").between(F.lit("1995-01-01").cast("date"), F.lit("1996-12-31").cast("date")))
    n1 = _parquet(spark, data_dir, "nation").select(F.col("n_nationkey").alias("n1_key"),
                                                      F.col("n_name").alias("supp_nation"))
    n2 = _parquet(spark, data_dir, "nation").select(F.col("n_nationkey").alias("n2_key"),
                                                      F.col("n_name").alias("cust_nation"))
    pair = (((F.col("supp_nation") == "FRANCE") & (F.col("cust_nation") == "GERMANY"))
            | ((F.col("supp_nation") == "GERMANY") & (F.col("cust_nation") == "FRANCE")))
    return (lineitem.join(_parquet(spark, data_dir, "supplier"), F.col("l_suppkey") == F.col("s_suppkey"))
            .join(_parquet(spark, data_dir, "orders"), F.col("l_orderkey") == F.col("o_orderkey"))
            .join(_parquet(spark, data_dir, "customer"), F.col("o_custkey") == F.col("c_custkey"))
            .join(n2, F.col("c_nationkey") == F.col("n2_key"))
            .join(n1, F.col("s_nationkey") == F.col("n1_key"))
            .where(pair)
            .groupBy("supp_nation", "cust_nation", F.year("l_shipdate").alias("l_year"))
            .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue")))


def q15_hand(spark: SparkSession, data_dir: str) -> DataFrame:
    lineitem = _parquet(spark, data_dir, "lineitem").where(
        (F.col("l_shipdate") >= F.lit("1996-01-01").cast("date")) & (F.col("l_shipdate") < F.lit("1996-04-01").cast("date")))
    return (lineitem.join(_parquet(spark, data_dir, "supplier"), F.col("l_suppkey") == F.col("s_suppkey"))
            .groupBy("s_suppkey", "s_name", "s_address", "s_phone")
            .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("total_revenue")))


def clickstream_hand(spark: SparkSession, data_dir: str) -> DataFrame:
    click = _parquet(spark, data_dir, "click")
    buying = click.where(F.col("action") == "buy").select("session_id").distinct()
    landing = F.min(F.struct("timestamp", "url", "action"))
    sessions = (click.join(buying, "session_id", "left_semi")
                .groupBy("session_id")
                .agg(F.min("ip").alias("ip"), landing.alias("landing"), F.count("*").alias("clicks"),
                     F.sum(F.when(F.col("action") == "buy", 1).otherwise(0)).cast("long").alias("buys"),
                     F.max("timestamp").alias("session_end"))
                .select("session_id", "ip", "landing.timestamp", "landing.url", "landing.action",
                        "clicks", "buys", "session_end"))
    return (sessions.join(_parquet(spark, data_dir, "login"), F.col("session_id") == F.col("login_sid"))
            .join(_parquet(spark, data_dir, "user_info"), F.col("user_id") == F.col("uid")))


def text_mining_hand(spark: SparkSession, data_dir: str) -> DataFrame:
    from examples import text_mining as tm

    def joined_or_none(items):
        return " ".join(items) if items else None

    @F.udf(StringType())
    def tokenize(text):
        return " ".join(tm.tokenize_text(text))

    @F.udf(StringType())
    def split_sentences(tokens):
        return " ".join(map(str, tm.sentence_ends(tokens.split())))

    @F.udf(StringType())
    def pos_tag(tokens):
        return " ".join(tm.viterbi(tokens.split()))

    @F.udf(StringType())
    def find_genes(tokens):
        return joined_or_none(tm.dictionary_mentions(tm.automaton("genes"), tokens.split()))

    @F.udf(StringType())
    def find_drugs(tokens):
        return joined_or_none(tm.dictionary_mentions(tm.automaton("drugs"), tokens.split()))

    @F.udf(StringType())
    def find_relations(tokens, ends, pos, genes, drugs):
        return joined_or_none(tm.relations_in(tokens, ends, pos, genes, drugs))

    abstracts = spark.read.parquet(os.path.join(data_dir, tm.CORPUS))
    return (abstracts.withColumn("tokens", tokenize("text"))
            .withColumn("sentence_ends", split_sentences("tokens"))
            .withColumn("pos", pos_tag("tokens"))
            .withColumn("genes", find_genes("tokens")).where(F.col("genes").isNotNull())
            .withColumn("drugs", find_drugs("tokens")).where(F.col("drugs").isNotNull())
            .withColumn("relations", find_relations("tokens", "sentence_ends", "pos", "genes", "drugs"))
            .where(F.col("relations").isNotNull()))

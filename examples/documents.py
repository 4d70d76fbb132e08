"""Documents scored with a sentiment lexicon (a user pipeline, issue 12).

Two inputs:

    documents.parquet  doc_id, source, text      (text None or empty for some posts)
    lexicon.csv        word, score               (AFINN-style integer scores -5..5, over word stems)

The flow, as a data engineer writes it:

    Reduce[doc_id](document_score)     words found, total and mean score, a label
      Match(token=word)                the lexicon's score of each word
        Map(words)                     one record per word: lowercased, punctuation stripped,
                                       stop words dropped, stemmed
          Map(has_text)
            Source(documents)
        Source(lexicon)

`stem` is the user's own light suffix stripper: PySpark has no stemmer, so the
hand-written PySpark version (`hand_pyspark`) splits, lowercases and strips
natively and calls `stem` through `F.udf`, once per word.

Run it:  python -m examples.documents --data data/documents --scale 0.01
"""

from __future__ import annotations

import os
import random
import string

import udflow
from examples.user_data import write_csv, write_parquet, zipf_picker

DOCS_PER_SCALE = 100_000  # scale 1: 100k documents, about 4M words
SOURCES = ("review", "forum", "tweet")
PUNCTUATION = string.punctuation
STOP_WORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been it its this that "
    "these those i you he she we they me my your our their not no so very just too".split())
SUFFIXES = ("ingly", "edly", "ing", "ed", "ly", "es", "s")


def stem(word: str) -> str:
    """A light suffix stripper: the longest listed suffix that leaves a stem of 3 letters or more."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


# ---------------------------------------------------------------------------
# The flow
# ---------------------------------------------------------------------------


def build_flow(data_dir: str) -> udflow.Flow:
    """Per document with at least one lexicon word: words found, total and mean score, label."""

    def has_text(r):
        return r["text"] is not None and len(r["text"].strip()) > 0

    def words(r):
        for raw in r["text"].split():
            word = raw.strip(PUNCTUATION).lower()
            if word and word not in STOP_WORDS:
                yield {"doc_id": r["doc_id"], "source": r["source"], "token": stem(word)}

    def document_score(rows):
        rows = list(rows)
        total = sum(r["score"] for r in rows)
        mean = total / len(rows)
        yield {
            "doc_id": rows[0]["doc_id"],
            "source": rows[0]["source"],
            "words": len(rows),
            "score": total,
            "mean_score": mean,
            "label": "positive" if mean > 0.5 else "negative" if mean < -0.5 else "neutral",
        }

    documents = udflow.source("documents", path=os.path.join(data_dir, "documents.parquet"), key=["doc_id"])
    lexicon = udflow.source("lexicon", path=os.path.join(data_dir, "lexicon.csv"), key=["word"])
    return (
        documents.filter(has_text)
        .map(words)
        .match(lexicon, on=("token", "word"))
        .reduce(["doc_id"], document_score)
    )


# Python's str.strip(string.punctuation), as a regular expression over both ends
EDGE_PUNCTUATION = "^[{0}]+|[{0}]+$".format("".join("\\" + c for c in PUNCTUATION))


def hand_pyspark(spark, data_dir: str):
    """The same query as a PySpark user writes it: native split, lower and strip; `stem` as a UDF."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    stem_udf = F.udf(stem, StringType())
    documents = spark.read.parquet(os.path.join(data_dir, "documents.parquet"))
    lexicon = spark.read.option("header", "true").option("inferSchema", "true").csv(
        os.path.join(data_dir, "lexicon.csv"))
    words = (documents.where(F.col("text").isNotNull() & (F.length(F.trim("text")) > 0))
             .select("doc_id", "source", F.explode(F.split("text", r"\s+")).alias("raw"))
             .select("doc_id", "source", F.lower(F.regexp_replace("raw", EDGE_PUNCTUATION, "")).alias("word"))
             .where((F.col("word") != "") & ~F.col("word").isin(*sorted(STOP_WORDS)))
             .select("doc_id", "source", stem_udf("word").alias("token")))
    mean = F.col("score") / F.col("words")
    return (words.join(lexicon, F.col("token") == F.col("word"))
            .groupBy("doc_id", "source")
            .agg(F.count("*").alias("words"), F.sum("score").alias("score"))
            .withColumn("mean_score", mean)
            .withColumn("label", F.when(F.col("mean_score") > 0.5, "positive")
                        .when(F.col("mean_score") < -0.5, "negative").otherwise("neutral")))


# ---------------------------------------------------------------------------
# The same query as a PySpark user writes it with Python UDFs (issue 30)
# ---------------------------------------------------------------------------


LEXICON_SCHEMA = "word string, score bigint"  # lexicon.csv


def has_text(text: str) -> bool:
    return text is not None and len(text.strip()) > 0


def tokens(text: str) -> list:
    """The text's words: lowercased, punctuation stripped, stop words dropped, stemmed."""
    out = []
    for raw in text.split():
        word = raw.strip(PUNCTUATION).lower()
        if word and word not in STOP_WORDS:
            out.append(stem(word))
    return out


def mean_score(score: int, words: int) -> float:
    return score / words


def sentiment_label(mean: float) -> str:
    return "positive" if mean > 0.5 else "negative" if mean < -0.5 else "neutral"


def udf_pyspark(spark, data_dir: str, use_arrow=None):
    """`build_flow(data_dir)` as a PySpark user writes it with `F.udf` for the Python logic (for
    `udflow.from_spark`); `use_arrow=False` declares plain pickled UDFs (Spark's transpiler only
    reads those), None leaves it to the session."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BooleanType, DoubleType, StringType

    def udf(fn, kind):
        return F.udf(fn, kind, useArrow=use_arrow)

    texts, words = udf(has_text, BooleanType()), udf(tokens, ArrayType(StringType()))
    mean, label = udf(mean_score, DoubleType()), udf(sentiment_label, StringType())
    documents = spark.read.parquet(os.path.join(data_dir, "documents.parquet"))
    # the schema as written, not inferred: no pass over the file
    lexicon = spark.read.option("header", "true").schema(LEXICON_SCHEMA).csv(os.path.join(data_dir, "lexicon.csv"))
    found = (documents.filter(texts("text"))
             .select("doc_id", "source", F.explode(words("text")).alias("token"))
             .join(lexicon, F.col("token") == F.col("word")))
    return (found.groupBy("doc_id", "source")
            .agg(F.count("*").alias("words"), F.sum("score").alias("score"))
            .withColumn("mean_score", mean("score", "words"))
            .withColumn("label", label("mean_score")))


def duckdb_sql(data_dir: str) -> str:
    """The same query in DuckDB's SQL; `stem` is registered as the Python function `user_stem` (see the test)."""
    documents = os.path.join(data_dir, "documents.parquet")
    lexicon = os.path.join(data_dir, "lexicon.csv")
    stop = ", ".join(f"'{w}'" for w in sorted(STOP_WORDS))
    return f"""
        WITH raw AS (
            SELECT doc_id, source, unnest(string_split_regex(text, '\\s+')) AS raw FROM read_parquet('{documents}')
            WHERE text IS NOT NULL AND length(trim(text)) > 0),
        words AS (
            SELECT doc_id, source, lower(regexp_replace(raw, '{EDGE_PUNCTUATION.replace("'", "''")}', '', 'g')) AS word
            FROM raw),
        tokens AS (SELECT doc_id, source, user_stem(word) AS token FROM words WHERE word <> '' AND word NOT IN ({stop})),
        scored AS (
            SELECT t.doc_id, t.source, count(*)::BIGINT AS words, sum(l.score)::BIGINT AS score
            FROM tokens t JOIN read_csv('{lexicon}', header=true) l ON t.token = l.word
            GROUP BY t.doc_id, t.source)
        SELECT *, score / words AS mean_score,
               CASE WHEN score / words > 0.5 THEN 'positive' WHEN score / words < -0.5 THEN 'negative'
                    ELSE 'neutral' END AS label
        FROM scored"""


# ---------------------------------------------------------------------------
# The data generator
# ---------------------------------------------------------------------------

SENTIMENT = {
    "love": 3, "like": 2, "enjoy": 2, "great": 3, "good": 3, "excellent": 3, "amazing": 4, "wonderful": 4,
    "happy": 3, "recommend": 2, "perfect": 3, "fun": 4, "brilliant": 4, "charm": 3, "delight": 3, "fresh": 1,
    "solid": 2, "smooth": 2, "friendly": 2, "helpful": 2, "hate": -3, "bad": -3, "terrible": -3, "awful": -3,
    "boring": -3, "disappoint": -2, "broken": -1, "waste": -1, "annoy": -2, "poor": -2, "slow": -2,
    "rude": -2, "worst": -3, "fail": -2, "crash": -2, "refund": -2, "complain": -2, "sad": -2, "angry": -3,
    "ugly": -3, "horrible": -3, "cheap": -1, "confuse": -2, "regret": -2, "miss": -2, "wait": 0,
}
NEUTRAL = ("product movie service phone app food staff hotel room price delivery order screen battery "
           "camera story plot actor team update version week month day time people place thing way "
           "experience quality size color design feature support store package box city trip night "
           "morning friend family kid car seat menu table dish coffee drink café naïve résumé").split()
FILLER = sorted(STOP_WORDS) + ["really", "quite", "also", "still", "again", "maybe", "only", "overall"]
INFLECTIONS = ("", "", "", "s", "ed", "ing", "ly")
ENDINGS = (".", ".", ".", "!", "!!", "?", "...", ",", ";")


def _word(rng, pick_sentiment, pick_neutral) -> str:
    roll = rng.random()
    if roll < 0.12:
        word = list(SENTIMENT)[pick_sentiment()] + rng.choice(INFLECTIONS)
    elif roll < 0.55:
        word = NEUTRAL[pick_neutral()] + rng.choice(INFLECTIONS[:4])
    else:
        word = rng.choice(FILLER)
    if rng.random() < 0.05:
        word = word.capitalize()
    if rng.random() < 0.02:
        word = word.upper()
    if rng.random() < 0.01:
        word = "#" + word
    if rng.random() < 0.01:
        word = word + "'s"
    return word


def _text(rng, pick_sentiment, pick_neutral) -> str | None:
    roll = rng.random()
    if roll < 0.01:
        return None
    if roll < 0.015:
        return rng.choice(("", "   ", "\n"))
    sentences = []
    for _ in range(rng.choice((1, 2, 3, 4, 5, 6, 8))):
        words = [_word(rng, pick_sentiment, pick_neutral) for _ in range(rng.randint(3, 12))]
        words[0] = words[0].capitalize()
        sentences.append(" ".join(words) + rng.choice(ENDINGS))
    return rng.choice((" ", "  ", "\n")).join(sentences)


def lexicon_entries() -> dict[str, int]:
    """The lexicon over stems: every inflection's stem of a sentiment word gets its score."""
    entries: dict[str, int] = {}
    for word, score in SENTIMENT.items():
        for ending in INFLECTIONS:
            entries.setdefault(stem(word + ending), score)
    return entries


def generate_data(data_dir: str, scale: float, seed: int = 0) -> str:
    """Write `documents.parquet` and `lexicon.csv` into `data_dir` (deterministic for a seed).

    Documents are 1 to 8 sentences of Zipf-skewed words, 12% of them sentiment
    words (inflected, sometimes capitalized, shouted, hashtagged or possessive),
    with punctuation attached; 1% have no text, 0.5% only whitespace.
    Whitespace is ASCII (spaces and newlines) only.
    """
    import pyarrow as pa

    rng = random.Random(seed)
    n = max(20, round(DOCS_PER_SCALE * scale))
    pick_sentiment = zipf_picker(rng, len(SENTIMENT), 0.9)
    pick_neutral = zipf_picker(rng, len(NEUTRAL), 1.0)
    documents = {"doc_id": [], "source": [], "text": []}
    for doc_id in range(n):
        documents["doc_id"].append(doc_id)
        documents["source"].append(SOURCES[0] if rng.random() < 0.6 else rng.choice(SOURCES[1:]))
        documents["text"].append(_text(rng, pick_sentiment, pick_neutral))
    lexicon = lexicon_entries()
    write_parquet(os.path.join(data_dir, "documents.parquet"), documents,
                  pa.schema([("doc_id", pa.int64()), ("source", pa.string()), ("text", pa.string())]))
    write_csv(os.path.join(data_dir, "lexicon.csv"), {"word": list(lexicon), "score": list(lexicon.values())},
              pa.schema([("word", pa.string()), ("score", pa.int64())]))
    return data_dir


def main(argv=None) -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Documents scored with a sentiment lexicon via udflow")
    parser.add_argument("--data", default="data/documents")
    parser.add_argument("--scale", type=float, default=0.01)
    args = parser.parse_args(argv)
    generate_data(args.data, args.scale)
    flow = build_flow(args.data)
    print(flow, "\n")
    t0 = time.perf_counter()
    rows = udflow.optimize(flow).chosen.collect()
    print(f"{len(rows)} documents scored ({time.perf_counter() - t0:.2f} s)")
    for r in sorted(rows, key=lambda r: r["doc_id"])[:10]:
        print(" ", r)


if __name__ == "__main__":
    main()

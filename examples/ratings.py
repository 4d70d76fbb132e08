"""Movie ratings: average rating per movie and per genre (a user pipeline, issue 12).

Two inputs, as a ratings service exports them (MovieLens' layout):

    ratings.csv      user_id, movie_id, rating, ts     (ts: epoch seconds; an empty rating
                                                         is a rating that was withdrawn)
    movies.parquet   movie_id, title, genres, year     (genres "Comedy|Drama"; "(no genres
                                                         listed)" for a few; year None when
                                                         the title carries none)

Two flows over them, written the way a data engineer writes them:

    by movie                                   by genre
    Filter(popular)                            Reduce[genre](genre_average)
      Reduce[movie_id](movie_average)            Map(one_record_per_genre)
        Match(movie_id=m_movie_id)                 Match(movie_id=m_movie_id)
          Map(valid_rating)                          Map(valid_rating)
            Source(ratings)                            Source(ratings)
          Source(movies)                             Source(movies)

`valid_rating` keeps ratings on the 0.5..5 star scale given since 2000;
`movie_average` and `genre_average` are `rows = list(rows)` with sum and len;
`one_record_per_genre` splits the genre list. `ratings.movie_id` is a foreign
key to `movies.movie_id`, so the optimizer may average per movie before the
join (invariant grouping, paper section 4.3.2): the title comes from any
record of the group.

`hand_pyspark(spark, data_dir, by)` is the same query as a PySpark user
writes it without udflow: every step has a native PySpark function.

Run it:  python -m examples.ratings --data data/ratings --scale 0.01
"""

from __future__ import annotations

import os
import random

import udflow
from examples.user_data import write_csv, write_parquet, zipf_picker

RATINGS_PER_SCALE = 2_000_000  # scale 1: 2M ratings of 20k movies by 60k users
GENRES = ("Drama", "Comedy", "Thriller", "Action", "Romance", "Adventure", "Crime", "Sci-Fi", "Horror",
          "Fantasy", "Children", "Animation", "Mystery", "Documentary", "War", "Musical", "Western",
          "Film-Noir")
NO_GENRES = "(no genres listed)"
SINCE = 946_684_800  # 2000-01-01 00:00:00 UTC
MIN_RATINGS = 5  # a movie's average is shown from this many ratings on
BY = ("movie", "genre")


# ---------------------------------------------------------------------------
# The flows
# ---------------------------------------------------------------------------


def sources(data_dir: str) -> tuple[udflow.Flow, udflow.Flow]:
    ratings = udflow.source("ratings", path=os.path.join(data_dir, "ratings.csv"),
                            foreign_keys={("movie_id",): ("movies", ("movie_id",))})
    movies = udflow.source("movies", path=os.path.join(data_dir, "movies.parquet"), key=["movie_id"], prefix="m_")
    return ratings, movies


def build_flow(data_dir: str, by: str = "movie") -> udflow.Flow:
    """Average rating per movie (`by="movie"`) or per genre (`by="genre"`)."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, not {by!r}")

    def valid_rating(r):
        if r["rating"] is not None and 0.5 <= r["rating"] <= 5.0 and r["ts"] >= SINCE:
            yield r

    def movie_average(rows):
        rows = list(rows)
        first = rows[0]
        yield {
            "movie_id": first["movie_id"],
            "title": first["m_title"],
            "ratings": len(rows),
            "avg_rating": sum(r["rating"] for r in rows) / len(rows),
        }

    def popular(r):
        return r["ratings"] >= MIN_RATINGS

    def one_record_per_genre(r):
        for genre in r["m_genres"].split("|"):
            yield {**r, "genre": genre}

    def genre_average(rows):
        rows = list(rows)
        yield {
            "genre": rows[0]["genre"],
            "ratings": len(rows),
            "avg_rating": sum(r["rating"] for r in rows) / len(rows),
        }

    ratings, movies = sources(data_dir)
    joined = ratings.map(valid_rating).match(movies, on=("movie_id", "m_movie_id"))
    if by == "movie":
        return joined.reduce(["movie_id"], movie_average).filter(popular)
    return joined.map(one_record_per_genre).reduce(["genre"], genre_average)


def hand_pyspark(spark, data_dir: str, by: str = "movie"):
    """The same query as a PySpark user writes it: all native."""
    from pyspark.sql import functions as F

    ratings = (spark.read.option("header", "true").option("inferSchema", "true")
               .csv(os.path.join(data_dir, "ratings.csv")))
    movies = spark.read.parquet(os.path.join(data_dir, "movies.parquet"))
    valid = ratings.where(F.col("rating").between(0.5, 5.0) & (F.col("ts") >= SINCE))
    joined = valid.join(movies.withColumnRenamed("movie_id", "m_movie_id"),
                        F.col("movie_id") == F.col("m_movie_id"))
    if by == "movie":
        return (joined.groupBy("movie_id", "title")
                .agg(F.count("*").alias("ratings"), F.avg("rating").alias("avg_rating"))
                .where(F.col("ratings") >= MIN_RATINGS))
    return (joined.withColumn("genre", F.explode(F.split("genres", r"\|", -1)))
            .groupBy("genre")
            .agg(F.count("*").alias("ratings"), F.avg("rating").alias("avg_rating")))


# ---------------------------------------------------------------------------
# The same query as a PySpark user writes it with Python UDFs (issue 30)
# ---------------------------------------------------------------------------


RATINGS_SCHEMA = "user_id bigint, movie_id bigint, rating double, ts bigint"  # ratings.csv


def is_valid_rating(rating: float, ts: int) -> bool:
    """A rating on the 0.5..5 star scale, given since 2000 (an empty rating is withdrawn)."""
    return rating is not None and 0.5 <= rating <= 5.0 and ts >= SINCE


def is_popular(ratings: int) -> bool:
    """A movie's average is shown from MIN_RATINGS ratings on."""
    return ratings >= MIN_RATINGS


# a movie's genres, one element each: "Comedy|Drama" -> ["Comedy", "Drama"]
def genre_list(genres: str) -> list:
    return genres.split("|")


def udf_pyspark(spark, data_dir: str, by: str = "movie", use_arrow=None):
    """`build_flow(data_dir, by)` as a PySpark user writes it with `F.udf` for the Python logic
    (for `udflow.from_spark`); `use_arrow=False` declares plain pickled UDFs (Spark's transpiler
    only reads those), None leaves it to the session."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BooleanType, StringType

    if by not in BY:
        raise ValueError(f"by must be one of {BY}, not {by!r}")
    valid = F.udf(is_valid_rating, BooleanType(), useArrow=use_arrow)
    # the schema as written, not inferred: no pass over the file, and movie_id is a bigint on both sides
    ratings = spark.read.option("header", "true").schema(RATINGS_SCHEMA).csv(os.path.join(data_dir, "ratings.csv"))
    movies = spark.read.parquet(os.path.join(data_dir, "movies.parquet")).withColumnRenamed("movie_id", "m_movie_id")
    joined = ratings.filter(valid("rating", "ts")).join(movies, F.col("movie_id") == F.col("m_movie_id"))
    if by == "movie":
        popular = F.udf(is_popular, BooleanType(), useArrow=use_arrow)
        return (joined.groupBy("movie_id", "title")
                .agg(F.count("*").alias("ratings"), F.avg("rating").alias("avg_rating"))
                .filter(popular("ratings")))
    genres = F.udf(genre_list, ArrayType(StringType()), useArrow=use_arrow)
    return (joined.select("rating", F.explode(genres("genres")).alias("genre"))
            .groupBy("genre")
            .agg(F.count("*").alias("ratings"), F.avg("rating").alias("avg_rating")))


def duckdb_sql(data_dir: str, by: str = "movie") -> str:
    """The same query in DuckDB's SQL (an independent oracle for the tests)."""
    ratings = os.path.join(data_dir, "ratings.csv")
    movies = os.path.join(data_dir, "movies.parquet")
    joined = (f"FROM read_csv('{ratings}', header=true) r JOIN read_parquet('{movies}') m "
              f"ON r.movie_id = m.movie_id WHERE r.rating BETWEEN 0.5 AND 5.0 AND r.ts >= {SINCE}")
    if by == "movie":
        return (f"SELECT r.movie_id, m.title, count(*)::BIGINT AS ratings, avg(r.rating)::DOUBLE AS avg_rating "
                f"{joined} GROUP BY r.movie_id, m.title HAVING count(*) >= {MIN_RATINGS}")
    return (f"SELECT genre, count(*)::BIGINT AS ratings, avg(rating)::DOUBLE AS avg_rating FROM "
            f"(SELECT unnest(string_split(m.genres, '|')) AS genre, r.rating {joined}) GROUP BY genre")


# ---------------------------------------------------------------------------
# The data generator
# ---------------------------------------------------------------------------

WORDS = ("Night Day Love War Star Dark Last Lost City Man Woman Girl Boy Story House Road King Queen "
         "Blood Fire Ice Shadow Dream Heart Secret River Moon Sun Ghost Return Rise Fall Game Island").split()


def _title(rng: random.Random) -> tuple[str, int | None]:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.03:
        return words, None  # no year in the title
    year = rng.randint(1920, 2023)
    return f"{words} ({year})", year


def generate_data(data_dir: str, scale: float, seed: int = 0) -> str:
    """Write `ratings.csv` and `movies.parquet` into `data_dir` (deterministic for a seed).

    Movies are rated with Zipf skew (a few blockbusters get most ratings), users
    too; ratings are half stars around a per-movie mean; 0.5% of the ratings are
    empty (withdrawn) and 0.2% are 0 (a legacy "not seen" marker), both dropped
    by `valid_rating`; timestamps span 1996-2023.
    """
    import pyarrow as pa

    rng = random.Random(seed)
    n_ratings = max(50, round(RATINGS_PER_SCALE * scale))
    n_movies = max(20, n_ratings // 100)
    n_users = max(10, n_ratings // 33)

    movies = {"movie_id": [], "title": [], "genres": [], "year": []}
    quality = []
    for movie_id in range(1, n_movies + 1):
        title, year = _title(rng)
        genres = NO_GENRES if rng.random() < 0.01 else "|".join(
            sorted(rng.sample(GENRES, rng.choice((1, 1, 2, 2, 2, 3, 4)))))
        movies["movie_id"].append(movie_id)
        movies["title"].append(title)
        movies["genres"].append(genres)
        movies["year"].append(year)
        quality.append(rng.uniform(2.0, 4.5))

    pick_movie = zipf_picker(rng, n_movies, 1.0)
    pick_user = zipf_picker(rng, n_users, 0.8)
    ratings = {"user_id": [], "movie_id": [], "rating": [], "ts": []}
    for _ in range(n_ratings):
        m = pick_movie()
        roll = rng.random()
        if roll < 0.005:
            rating = None
        elif roll < 0.007:
            rating = 0.0
        else:
            rating = min(5.0, max(0.5, round(rng.gauss(quality[m], 0.9) * 2) / 2))
        ratings["user_id"].append(pick_user() + 1)
        ratings["movie_id"].append(m + 1)
        ratings["rating"].append(rating)
        ratings["ts"].append(rng.randrange(820_454_400, 1_703_980_800))  # 1996 .. 2023

    write_csv(os.path.join(data_dir, "ratings.csv"), ratings,
              pa.schema([("user_id", pa.int64()), ("movie_id", pa.int64()), ("rating", pa.float64()),
                         ("ts", pa.int64())]))
    write_parquet(os.path.join(data_dir, "movies.parquet"), movies,
                  pa.schema([("movie_id", pa.int64()), ("title", pa.string()), ("genres", pa.string()),
                             ("year", pa.int64())]))
    return data_dir


def main(argv=None) -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Average rating per movie and per genre via udflow")
    parser.add_argument("--data", default="data/ratings")
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--by", default="genre", choices=BY)
    args = parser.parse_args(argv)
    generate_data(args.data, args.scale)
    flow = build_flow(args.data, args.by)
    print(flow, "\n")
    t0 = time.perf_counter()
    rows = udflow.optimize(flow).chosen.collect()
    print(f"{len(rows)} rows ({time.perf_counter() - t0:.2f} s)")
    for r in sorted(rows, key=lambda r: -r["ratings"])[:10]:
        print(" ", r)


if __name__ == "__main__":
    main()

"""The four user pipelines of examples/ (ratings per movie and per genre, taxi, documents) as a
PySpark user writes them with `F.udf` (each example's `udf_pyspark`), opened by `uf.from_spark`
(issue 30): the DataFrame as Spark runs it is the udflow flow's bag on the reference interpreter,
every part of it opens, and `optimize_dataframe` returns the same bag with the same columns."""

import pytest

import udflow
from examples import documents, ratings, taxi
from examples.user_data import bag_mismatch, rows_of
from udflow.frontend import open_dataframe

pytestmark = pytest.mark.spark

SCALE = 0.002  # as tests/test_user_pipelines.py: 4,000 ratings, 4,000 trips, 200 documents

# pipeline -> (example module, its build_flow, its udf_pyspark, the UDFs from_spark opens, in plan order)
PIPELINES = {
    "ratings_movie": (ratings, lambda d: ratings.build_flow(d, "movie"),
                      lambda s, d, a: ratings.udf_pyspark(s, d, "movie", a), ["is_valid_rating", "is_popular"]),
    "ratings_genre": (ratings, lambda d: ratings.build_flow(d, "genre"),
                      lambda s, d, a: ratings.udf_pyspark(s, d, "genre", a), ["is_valid_rating", "genre_list"]),
    "taxi": (taxi, taxi.build_flow, taxi.udf_pyspark,
             ["is_complete", "parse_minutes", "speed_mph", "fare_per_mile", "is_plausible"]),
    "documents": (documents, documents.build_flow, documents.udf_pyspark,
                  ["has_text", "tokens", "mean_score", "sentiment_label"]),
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("from-spark-pipelines")
    for module in (ratings, taxi, documents):
        module.generate_data(str(root / module.__name__.rsplit(".", 1)[1]), SCALE)
    return root


def data_dir(data, module) -> str:
    return str(data / module.__name__.rsplit(".", 1)[1])


@pytest.mark.parametrize("name", PIPELINES)
def test_the_udf_dataframe_opens_whole_and_its_optimized_form_gives_the_flows_rows(spark, data, name):
    module, build_flow, udf_pyspark, udfs = PIPELINES[name]
    d = data_dir(data, module)
    df = udf_pyspark(spark, d, None)
    columns = df.columns
    expected = rows_of(build_flow(d).collect(engine="reference"), columns)
    assert expected, "the pipeline returned nothing: the data should give rows"
    assert (why := bag_mismatch(expected, rows_of(df.collect(), columns))) is None, f"F.udf vs the flow: {why}"

    opened = open_dataframe(df)
    assert not opened.kept, [str(k) for k in opened.kept]
    assert [udf for udf, _ in opened.udfs] == udfs

    # every UDF runs natively, documents' tokenizer too: Python computes each document's list
    # of tokens, as the user's UDF did, and Spark explodes it
    physical = udflow.optimize(opened.flow).best.physical()
    assert not any(step.in_python for step in physical.steps), str(physical)

    optimized = udflow.optimize_dataframe(df)
    assert optimized.columns == columns
    assert (why := bag_mismatch(expected, rows_of(optimized.collect(), columns))) is None, f"optimized: {why}"

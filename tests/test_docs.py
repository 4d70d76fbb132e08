"""The documents that are made from the code, or show code, agree with it (issue 31, item 6)."""

import pathlib
from collections import Counter

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_native_cheat_sheet_is_the_one_the_code_makes():
    from udflow.spark_backend.cheatsheet import markdown

    page = (ROOT / "docs" / "native-cheatsheet.md").read_text()
    assert page == markdown(), "regenerate: python -m udflow.spark_backend.cheatsheet > docs/native-cheatsheet.md"


@pytest.mark.spark
def test_the_quickstart_pipeline_runs_and_agrees_with_the_reference(spark, tmp_path, capsys):
    from examples import quickstart

    rows = quickstart.main(str(tmp_path), spark=spark)
    written = quickstart.build_flow(str(tmp_path)).collect(engine="reference")

    def bag(records):
        return Counter(tuple(sorted((k, round(v, 6) if isinstance(v, float) else v) for k, v in r.items()))
                       for r in records)

    assert bag(rows) == bag(written) and len(rows) == 3
    said = capsys.readouterr().out
    assert "Filter(completed)" in said and "How the chosen plan runs on Spark" in said
    page = (ROOT / "docs" / "quickstart.md").read_text()
    for name in ("completed", "with_quantity", "line_total", "per_category"):  # the page shows this code
        assert f"def {name}(" in page

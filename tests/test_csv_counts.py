"""A CSV source's statistics counted by pyarrow (`engine.csv_counts`): the records and the key
fields' distinct values udflow's own reader finds, in a fraction of its time."""

from __future__ import annotations

import csv
import gzip
import os

import pytest

import udflow as uf
from udflow import reference
from udflow.engine.csv_counts import csv_counts
from udflow.engine.statistics import source_statistics
from udflow.sources import SourceValueError, listing

ROWS = [
    ["id", "city", "note"],
    ["1", "Paris", "a, quoted comma"],
    ["2", "", 'say "hi"'],
    ["3", "Zürich", "two\nlines"],
    [],
    ["4", "Paris", ""],
    ["5", "Łódź", "x"],
]


def _write(path, rows, opener=open):
    with opener(path, "wt", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return str(path)


def _counted_by_reference(path, key):
    rows = reference.run(uf.source("t", path=path).root)
    return len(rows), len({r[key] for r in rows} - {None})


def test_rows_and_distinct_values_are_those_udflows_reader_finds(tmp_path):
    path = _write(tmp_path / "t.csv", ROWS)
    stats = source_statistics(uf.source("t", path=path).root, ["city", "id"])
    rows, cities = _counted_by_reference(path, "city")
    assert (stats.rows, stats.distinct_of("city"), stats.distinct_of("id")) == (rows, cities, rows) == (5, 3, 5)


def test_a_folder_of_files_each_with_its_header_gzipped_or_not(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    _write(folder / "a.csv", ROWS[:4])
    _write(folder / "b.csv.gz", [ROWS[0]] + ROWS[4:], opener=gzip.open)
    stats = source_statistics(uf.source("t", path=str(folder), schema={"id": "bigint"}).root, ["city"])
    assert (stats.rows, stats.distinct_of("city")) == (5, 3)


def test_a_file_pyarrow_refuses_is_counted_by_udflows_reader_which_names_the_fault(tmp_path):
    path = _write(tmp_path / "t.csv", ROWS[:3] + [["9", "Rome", "x", "one field too many"]])
    assert csv_counts(path, ("id", "city", "note"), ("city",), listing(path)) is None
    with pytest.raises(SourceValueError, match=r"t.csv:4 has 4 field\(s\)"):
        source_statistics(uf.source("t", path=path, schema={"id": "bigint", "city": "string",
                                                            "note": "string"}).root, ["city"])


def test_the_count_follows_the_file_as_it_changes(tmp_path):
    path = _write(tmp_path / "t.csv", ROWS)
    assert source_statistics(uf.source("t", path=path).root).rows == 5
    _write(path, ROWS + [["6", "Oslo", "y"]])
    os.utime(path, (os.path.getmtime(path) + 5,) * 2)
    assert source_statistics(uf.source("t", path=path).root).rows == 6

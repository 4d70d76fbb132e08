"""The driver finds a marked failure's message in Spark's error text (`udf.marked_message`):
base64 chunks encoded on the driver, and a native error's record as the JSON `to_json` wrote,
whatever the record's strings hold."""

from __future__ import annotations

import base64
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from udflow.spark_backend.udf import MarkedFailure, marked_message


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _native(head: str, record: dict, pin: str = "") -> str:
    """A native error's text as `native_errors` builds it, inside Spark's words around it."""
    written = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return f"[USER_RAISED_EXCEPTION] <<udflow:{_b64(head)}.{written}:udflow>>{pin} SQLSTATE: P0001\n\tat ..."


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(["a", "b.c", "<<udflow:"]),
                       st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text())))
def test_a_records_json_is_found_whatever_its_strings_hold(record):
    head = "Map(f): f (x.py:3) raised ZeroDivisionError: division by zero (line 4)\n  record: "
    written = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    assert marked_message(_native(head, record)) == head + written
    assert marked_message(_native(head, record, pin="?")) == head + written


def test_tricky_strings_and_the_python_paths_marker():
    record = {"s": "x :udflow>> y", "t": "<<udflow:e30=:udflow>>", "u": "a.b", "v": "é\n\"", "n": None}
    written = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    assert marked_message(_native("head ", record)) == "head " + written
    assert marked_message("Traceback...\n" + str(MarkedFailure("boom: é"))) == "boom: é"
    chunked = "<<udflow:" + _b64("a long message " * 10)[:60] + "\r\n" + _b64("a long message " * 10)[60:] + ":udflow>>"
    assert marked_message(chunked) == "a long message " * 10  # Spark breaks a long base64 text into lines


def test_no_marked_message():
    assert marked_message("java.lang.RuntimeException: something else") is None
    assert marked_message("<<udflow:not base64!:udflow>>") is None
    assert marked_message("<<udflow:e30=.{unclosed:udflow>>") is None

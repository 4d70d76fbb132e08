"""Errors point at the user's code (issue 15, item 4): a function failing while the optimizer
samples it is named with its file and line, a read of a field the input cannot have is
reported when the operator is built (with the closest field). That Spark's executor log
lines never reach the terminal before the UdfRuntimeError: tests/test_quiet_terminal.py."""

import warnings

import pytest

import udflow as uf
from udflow.errors import FieldWarning, UdfRuntimeError

TRIPS = [{"trip_distance": float(i), "fare": 2.5 * i, "zone": i % 3} for i in range(20)]


def trips():
    return uf.source("trips", rows=TRIPS)


def long_trips(r):
    distance = r["trip_distanse"]  # the typo the tests are about
    return distance > 3


def with_tip(r):
    return {**r, "tip": r.get("fares", 0) * 0.1}


def _line_of(fn, text: str) -> int:
    """The absolute line of `text` in `fn`'s source, found here independently of udflow."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_key_error_while_the_optimizer_samples_names_the_users_function_and_line():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FieldWarning)
        flow = trips().filter(long_trips)
    with pytest.raises(UdfRuntimeError) as info:
        uf.optimize(flow)
    message = str(info.value)
    assert f"{__name__}.long_trips ({__file__}:{long_trips.__code__.co_firstlineno})" in message
    assert f"(line {_line_of(long_trips, 'trip_distanse')})" in message
    assert "did you mean 'trip_distance'?" in message
    assert "statistics" not in message and "counted" not in message


def test_a_reference_run_names_the_line_that_raised_and_the_closest_field():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FieldWarning)
        flow = trips().filter(long_trips)
    with pytest.raises(UdfRuntimeError, match=r"no field 'trip_distanse'; did you mean 'trip_distance'\?"):
        flow.collect(engine="reference")


@pytest.mark.parametrize("fn, field, nearest", [
    (long_trips, "trip_distanse", "trip_distance"),
    (with_tip, "fares", "fare"),
])
def test_reading_a_field_the_input_cannot_have_is_reported_when_the_flow_is_built(fn, field, nearest):
    with pytest.warns(FieldWarning) as record:
        trips().map(fn) if fn is with_tip else trips().filter(fn)
    (warning,) = [w for w in record if issubclass(w.category, FieldWarning)]
    text = str(warning.message)
    assert f"reads field {field!r} (line {_line_of(fn, field)})" in text
    assert f"did you mean {nearest!r}?" in text
    assert f"{fn.__name__} ({__file__}:{fn.__code__.co_firstlineno})" in text
    assert warning.filename == __file__  # the warning points at the line that built the operator


def test_fields_the_input_has_raise_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FieldWarning)
        trips().filter(lambda r: r["trip_distance"] > 3).map(lambda r: {**r, "x": r.get("zone")})


def test_a_field_tested_for_presence_raises_no_warning():
    """`"x" in r`: the function knows the field may be absent."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", FieldWarning)
        trips().filter(lambda r: "surcharge" not in r or r["surcharge"] < 1)


def test_a_field_a_join_brings_is_not_reported():
    zones = uf.source("zones", rows=[{"z_id": 0, "z_name": "a"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error", FieldWarning)
        trips().match(zones, on=("zone", "z_id")).filter(lambda r: r["z_name"] == "a")

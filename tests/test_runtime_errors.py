"""Run-time errors in user functions, on both engines: the message names operator, function and record."""

import pytest

import udflow as uf
from udflow.errors import UdfRuntimeError

ROWS = [{"k": 1, "v": "one"}, {"k": 2, "v": "two"}, {"k": 2, "v": "deux"}]
OTHER = [{"ok": 2, "w": "right side"}]


def rows():
    return uf.source("rows", rows=ROWS)


def other():
    return uf.source("other", rows=OTHER)


def fails_on_two(r):
    if r["k"] == 2:
        raise ValueError(f"bad value {r['k']}")
    return r


def returns_a_list(r):
    return [r]


def reduce_returns(rows_):
    return list(rows_)


def join_fails(l, r):
    raise KeyError("no_such_field")


def cogroup_fails_while_yielding(ls, rs):
    yield {"n": len(ls)}
    raise ZeroDivisionError("division by zero in the middle")


def yields_a_tuple(r):
    yield (r["k"], r["v"])


def fails_on_long(r):
    raise RuntimeError("too long")


def where(fn):
    """What the message must say about the function, worked out here independently."""
    return f"{fn.__module__}.{fn.__qualname__}", f"test_runtime_errors.py:{fn.__code__.co_firstlineno}"


# Where several records fail, either engine may report any of them: the expected
# parts name what every failing record shows.
CASES = {
    "map raises": (
        lambda: rows().map(fails_on_two),
        fails_on_two,
        ["Map(fails_on_two)", "ValueError: bad value 2", "'k': 2"],
    ),
    "map returns a non-dict": (
        lambda: rows().map(returns_a_list),
        returns_a_list,
        ["Map(returns_a_list)", "returned list, expected a dict (or yield records)", "record: {'k': "],
    ),
    "reduce returns instead of yielding": (
        lambda: rows().reduce("k", reduce_returns),
        reduce_returns,
        ["Reduce[k](reduce_returns)", "must yield", "record: group {'k': "],
    ),
    "match function raises": (
        lambda: rows().match(other(), on=("k", "ok"), f=join_fails),
        join_fails,
        ["Match(join_fails)", "KeyError", "no_such_field", "right {'ok': 2, 'w': 'right side'}", "left {'k': 2"],
    ),
    "cogroup raises while yielding": (
        lambda: rows().cogroup(other(), on=("k", "ok"), f=cogroup_fails_while_yielding),
        cogroup_fails_while_yielding,
        ["CoGroup(cogroup_fails_while_yielding)", "ZeroDivisionError: division by zero in the middle", "left [{'k': "],
    ),
    "map yields a non-dict": (
        lambda: rows().map(yields_a_tuple),
        yields_a_tuple,
        ["Map(yields_a_tuple)", "yielded tuple, expected a dict", "record: {'k': "],
    ),
}


def _check(message: str, fn, expected: list[str]) -> None:
    qualified, location = where(fn)
    assert qualified in message
    assert location in message
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"
    assert "py4j" not in message.lower() and "Traceback" not in message
    assert len(message) < 2500


@pytest.mark.parametrize("name", list(CASES))
def test_reference_reports_operator_function_and_record(name):
    build, fn, expected = CASES[name]
    with pytest.raises(UdfRuntimeError) as err:
        build().collect(engine="reference")
    _check(str(err.value), fn, expected)


@pytest.mark.parametrize("name", list(CASES))
def test_spark_reports_operator_function_and_record(spark, name):
    build, fn, expected = CASES[name]
    with pytest.raises(UdfRuntimeError) as err:
        build().collect(engine="spark", spark=spark)
    _check(str(err.value), fn, expected)
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize("engine", ["reference", "spark"])
def test_a_long_record_is_shown_truncated(spark, engine):
    flow = uf.source("long", rows=[{"k": 1, "text": "x" * 5000}]).map(fails_on_long)
    with pytest.raises(UdfRuntimeError) as err:
        flow.collect(engine=engine, spark=spark)
    message = str(err.value)
    assert "Map(fails_on_long)" in message and "RuntimeError: too long" in message
    assert "xxxxxxxx" in message and "..." in message
    assert len(message) < 1200


def order_total(r):
    return {**r, "total": r["qty"] * r["unit_prise"]}


@pytest.mark.spark
def test_a_misspelt_field_gets_the_same_did_you_mean_on_both_engines(spark):
    """the scalar UDF on Spark is shown only the columns its function reads; the hint comes
    from the whole input record, as on the reference interpreter (issue 31, item 1)"""
    flow = uf.source("orders", rows=[{"qty": 2, "unit_price": 3.0, "sku": "a"}]).map(order_total)
    said = []
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError) as err:
            flow.collect(engine=engine, spark=spark if engine == "spark" else None)
        said.append(str(err.value).splitlines()[0].split(" raised ", 1)[1])
    assert said[0] == said[1]
    assert "the record has no field 'unit_prise'; did you mean 'unit_price'?" in said[1]


def div_float(r):
    return {**r, "x": r["f"] / r["z"]}


def floordiv_int(r):
    return {**r, "x": r["i"] // r["j"]}


def mod_int(r):
    return {**r, "x": r["i"] % r["j"]}


def truediv_int(r):
    return {**r, "x": r["i"] / r["j"]}


def div_decimal(r):
    return {**r, "x": r["d"] / r["d0"]}


def plus_none(r):
    return {**r, "x": r["n"] + 1}


def less_none(r):
    return {**r, "x": r["n"] < r["i"]}


def strip_none(r):
    return {**r, "x": r["sn"].strip()}


def plus_none_first(r):
    x = r["n"] + 1  # Python raises here, not on the lines that read x
    if x > 0:
        return {**r, "x": x}
    return {**r, "x": -x}


def less_none_in_a_filter(r):
    small = r["n"] < r["i"]
    return small or r["i"] > 100


def raised_on_both_engines(flow, spark) -> list[str]:
    """What the flow raised on the reference interpreter and on Spark, after `raised `."""
    texts = []
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError) as err:
            flow.collect(engine=engine, spark=spark if engine == "spark" else None)
        texts.append(str(err.value).splitlines()[0].split(" raised ", 1)[1])
    return texts


@pytest.mark.spark
@pytest.mark.parametrize("fn, said", [
    (div_float, "ZeroDivisionError: float division by zero"),
    (floordiv_int, "ZeroDivisionError: integer division or modulo by zero"),
    (mod_int, "ZeroDivisionError: integer modulo by zero"),
    (truediv_int, "ZeroDivisionError: division by zero"),
    (div_decimal, "DivisionByZero: [<class 'decimal.DivisionByZero'>]"),
    (plus_none, "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"),
    (less_none, "TypeError: '<' not supported between instances of 'NoneType' and 'int'"),
    (strip_none, "AttributeError: 'NoneType' object has no attribute 'strip'"),
    (plus_none_first, "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"),
    (less_none_in_a_filter, "TypeError: '<' not supported between instances of 'NoneType' and 'int'"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_native_error_is_said_in_pythons_words_on_both_engines(spark, fn, said):
    """issue 31, item 1: a guard of the native form raises with Python's exception type and text"""
    import decimal

    row = {"f": 1.5, "z": 0.0, "i": 7, "j": 0, "d": decimal.Decimal("1.5"), "d0": decimal.Decimal(0),
           "n": None, "sn": None}
    source = uf.source("t", rows=[row, {**row, "n": 1, "sn": "a"}])
    flow = source.filter(fn) if fn is less_none_in_a_filter else source.map(fn)
    assert flow.physical().root.native, "the function should run as Spark expressions"
    texts = raised_on_both_engines(flow, spark)
    assert texts[0] == texts[1]  # the line too: the statement that computes the failing term
    assert texts[1].startswith(said + " (line ")


@pytest.mark.parametrize("engine", ["reference", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_functions_error_shows_the_users_frame_first_and_hides_udflows(engine, spark):
    """issue 31, item 1: the traceback opens with the user's code; of udflow's frames only the
    public entry point that re-raises remains"""
    import pathlib
    import traceback

    flow = uf.source("t", rows=[{"f": 1.5, "z": 0.0}]).map(div_float)
    with pytest.raises(UdfRuntimeError) as err:
        flow.collect(engine=engine, spark=spark if engine == "spark" else None)
    text = "".join(traceback.format_exception(err.value))
    frames = [line.split('"')[1] for line in text.splitlines() if line.startswith('  File "')]
    assert frames[0].endswith("test_runtime_errors.py"), text
    package = str(pathlib.Path(uf.__file__).resolve().parent) + "/"  # udflow's own code, wherever checked out
    assert sum(str(pathlib.Path(f).resolve()).startswith(package) for f in frames) <= 1, text


def summed_then_scaled(rows):
    rows = list(rows)
    total = sum(r["n"] for r in rows)  # Python raises here: 2 + None
    yield {"k": rows[0]["k"], "t": total * 2}


def largest_then_used(rows):
    rows = list(rows)
    top = max(r["n"] for r in rows)  # None > 2
    yield {"k": rows[0]["k"], "t": top + 1}


def mean_of_nothing(rows):
    rows = list(rows)
    mean = sum(r["x"] for r in rows) / sum(r["w"] for r in rows)
    yield {"k": rows[0]["k"], "m": mean}


@pytest.mark.spark
@pytest.mark.parametrize("fn, said", [
    (summed_then_scaled, "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"),
    (largest_then_used, "TypeError: '>' not supported between instances of 'NoneType' and 'int'"),
    (mean_of_nothing, "ZeroDivisionError: float division by zero"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_native_reduces_error_has_pythons_words_and_line_on_both_engines(spark, fn, said):
    """A None among a group's values, after the first (Python's words depend on where the order
    puts it: these are the words for a None after a value), and an error of a term over the
    aggregates: the same type, text and line (the statement computing it) on both engines."""
    flow = uf.source("t", rows=[{"k": 1, "n": 2, "x": 1.0, "w": 0}, {"k": 1, "n": None, "x": 2.0, "w": 0}]) \
        .reduce(["k"], fn)
    assert flow.physical().root.native, "the Reduce should run as Spark expressions"
    texts = raised_on_both_engines(flow, spark)
    assert texts[0] == texts[1]
    assert texts[1] == f"{said} (line {fn.__code__.co_firstlineno + 2})"


def split_statement(r):
    x = (r["i"] +
         10 // r["j"])  # Python names this line: the operation's, not the statement's first
    return {**r, "x": x}


def later_operand(r):
    return (r["i"] > 0 and
            10 / r["z"] > 1)


def field_below(r):
    return {"i": r["i"],
            "x": 10 / r["z"]}


def piece_then_field(r):
    for w in r["s"].split(" "):
        yield {"i": r["i"], "w": w, "x": 10 / len(w)}


@pytest.mark.spark
@pytest.mark.parametrize("fn, how, below", [
    (split_statement, "map", 2), (later_operand, "filter", 2), (field_below, "map", 2),
    (piece_then_field, "map", 2),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_error_names_the_line_of_the_operation_python_raises_at(spark, fn, how, below):
    """issue 31, item 1: a statement over several lines, a later operand of `and`, and an
    explosion's emitted record: both engines name the line of the failing operation"""
    rows = [{"i": 1, "j": 0, "z": 0.0, "s": "a  b"}]
    flow = getattr(uf.source("t", rows=rows), how)(fn)
    assert flow.physical().root.native, "the function should run as Spark expressions"
    texts = raised_on_both_engines(flow, spark)
    assert texts[0] == texts[1]
    assert texts[1].endswith(f"(line {fn.__code__.co_firstlineno + below})")

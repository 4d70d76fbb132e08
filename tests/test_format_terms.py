"""f-strings with a format spec or a conversion (`analysis.format_terms`): `{x:spec}` is
`format(x, spec)`, `{x!r}` is `repr(x)`. An int's `d` specs are native (Java's `%d`
writes a long as Python does); every other spec, and `repr`, is Python's call inside the
native plan: Java's Formatter rounds a float's tie half up where Python rounds the exact
binary value half to even (`f"{0.125:.2f}"` is '0.12'), and its repr is not Python's."""

import pytest

import udflow as uf
from udflow.analysis.format_terms import joined_term
from tests.both_engines import raised_on_both_engines


def labels(r):
    return {**r, "code": f"{r['i']:03d}", "padded": f"[{r['i']:5d}]", "plain": f"{r['i']:d}",
            "price": f"{r['x']:.2f} EUR", "quoted": f"{r['t']!r}", "hex": format(r["i"], "x"),
            "ascii": f"{r['t']!a}", "right": f"{r['x']:>8.1f}"}


def month_key(r):
    return {**r, "cohort": f"{r['d'].year}-{r['d'].month:02d}"}


def computed_spec(r):
    return {**r, "w": f"{r['i']:{r['n']}d}"}


ROWS = [{"i": 5, "x": 2.675, "t": "ab'c"}, {"i": -42, "x": -0.0, "t": "\u00e9\n"},
        {"i": 2**63 - 1, "x": float("nan"), "t": ""}, {"i": -(2**63), "x": 1e300, "t": '"'},
        {"i": 0, "x": 0.125, "t": "\u2028"}]


def test_a_replacement_field_is_format_of_its_conversion():
    props = uf.analyze(labels, {"i", "x", "t"})
    shown = str(props.model)
    assert "format(r['i'], '03d')" in shown and "repr(r['t'])" in shown and "ascii(r['t'])" in shown, shown
    assert uf.analyze(computed_spec, {"i", "n"}).model is None  # a computed spec: no term


def test_an_ints_d_spec_is_native_and_the_rest_pythons_call(spark):
    flow = uf.source("t", rows=ROWS).map(labels)
    said = flow.physical().root.describe()
    assert said.startswith("native, with Python for format") and "repr" in said, said
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, flow.collect(engine="reference")))
    import datetime as dt
    months = uf.source("t", rows=[{"d": dt.date(2024, m, 1)} for m in (1, 9, 12)]).map(month_key)
    assert months.physical().root.describe() == "native"
    assert sorted(r["cohort"] for r in months.collect(spark=spark)) == ["2024-01", "2024-09", "2024-12"]


@pytest.mark.parametrize("row", [{"i": None, "x": 1.0, "t": "a"}, {"i": 1, "x": None, "t": "a"},
                                 {"i": True, "x": 1.5, "t": "a"}], ids=["none-int", "none-float", "bool"])
def test_errors_and_bools_are_pythons_on_both_engines(row):
    flow = uf.source("t", rows=[row]).map(labels)
    if row["i"] is True:  # format(True, "03d") is '001': Python's call, the same on both
        assert [r["code"] for r in flow.collect(engine="reference")] == [r["code"] for r in flow.collect()] == ["001"]
        return
    said = raised_on_both_engines(flow)
    assert said[0] == said[1] and "unsupported format string passed to NoneType" in said[0], said

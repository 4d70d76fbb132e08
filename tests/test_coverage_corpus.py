"""The coverage corpus of issue 29 (`bench/coverage_corpus`, `bench/coverage.py`): its size,
that every function runs on the reference interpreter over clean rows, and that a few
representative functions run the way docs/native.md and docs/native-cheatsheet.md say.
No Spark: the classification reads the physical plan only."""

from __future__ import annotations

import inspect
import warnings

import pytest

from bench import coverage
from bench import coverage_corpus

FUNCTIONS = coverage_corpus.functions()
BY_NAME = {f"{m}.{fn.__name__}": (fn, kind, fields) for m, fn, kind, fields in FUNCTIONS}
FAMILIES = ("int", "float", "str", "date", "datetime", "bool", "decimal")
# What a function of the corpus may raise on edge values without None (bad digits, log(0), 1e308 * 100
# past an int, a code missing from a table, a list where a dict was expected): not coding mistakes.
EXPECTED_ON_EDGES = (ValueError, ZeroDivisionError, OverflowError, KeyError, IndexError, TypeError,
                     AttributeError, ArithmeticError)


def test_the_corpus_holds_at_least_300_functions_in_several_modules():
    assert len(FUNCTIONS) >= 300
    assert len(coverage_corpus.MODULES) >= 8
    assert len(BY_NAME) == len(FUNCTIONS), "function names are unique across modules"
    kinds = {kind for _, _, kind, _ in FUNCTIONS}
    assert kinds == {"map", "filter"}
    assert sum(kind == "filter" for _, _, kind, _ in FUNCTIONS) >= 60


def test_every_entry_is_a_function_of_its_module_with_known_families():
    for module, fn, kind, fields in FUNCTIONS:
        assert inspect.isfunction(fn) and fn.__module__.endswith(f".{module}"), fn
        assert kind in ("map", "filter")
        assert fields, fn
        for field, family in fields.items():
            assert family.partition(":")[0] in FAMILIES, (fn, field, family)


def test_rows_are_seeded_and_keep_one_type_per_field():
    name = "mixed.enrich_order"
    fields = BY_NAME[name][2]
    sets = coverage.rows_for(name, fields)
    assert sets == coverage.rows_for(name, fields)
    assert {k: len(v) for k, v in sets.items()} == {"edge": 40, "clean": 40, "plain": 40}
    assert any(v is None for r in sets["edge"] for v in r.values())
    assert not any(v is None for r in sets["clean"] for v in r.values())
    for f in fields:
        for rows in sets.values():
            assert len({type(r[f]) for r in rows if r[f] is not None}) == 1, f


def test_every_function_runs_on_the_reference_interpreter_over_clean_rows():
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy on NaN, as Python computes it
    for name, (fn, kind, fields) in BY_NAME.items():
        sets = coverage.rows_for(name, fields)
        # plain values: no error at all
        out = coverage.build(fn, kind, sets["plain"]).collect(engine="reference")
        assert kind == "filter" or len(out) >= 1, name
        # edge values without None: only the errors such values cause, never a coding mistake
        for row in sets["clean"]:
            try:
                result = fn(dict(row))
                if inspect.isgenerator(result):
                    list(result)
            except KeyError as exc:
                assert exc.args and exc.args[0] in row.values(), (name, row, exc)  # a value looked up, not a field
            except EXPECTED_ON_EDGES:
                pass


REPRESENTATIVE = {
    # arithmetic over floats and ints, comparisons, conditional expressions: fully native
    "arithmetic.line_total": "fully native",
    "arithmetic.net_price": "fully native",
    "arithmetic.ctr": "fully native",
    "arithmetic.duration_hms": "fully native",
    "arithmetic.decimal_line_total": "fully native",
    "conditionals.size_class": "fully native",
    "conditionals.discount_or_zero": "fully native",
    "conditionals.valid_order": "fully native",
    "dates.order_year": "fully native",
    "dates.ts_minute_bucket": "fully native",  # ts.replace(second=0, microsecond=0): moved by the difference
    "dates.first_of_month": "fully native",
    # constant tables, bitwise flags, f-strings of plain fields, str() of an int
    "lookups.region": "fully native",
    "lookups.in_eu": "fully native",
    "lookups.flag_bit": "fully native",
    "lookups.vat_by_category": "fully native",  # a dict of dicts: a CASE per inner dict
    "strings.city_country": "fully native",
    "strings.str_id": "fully native",
    "strings.is_https": "fully native",
    # case mappings of str fields: native on ASCII rows, the others in Python (the general case)
    "strings.clean_email": "fully native",
    "strings.name_upper": "fully native",
    # calls with no exact native form (the JVM's case tables are not Python's) and your own helpers
    # run as Python inside the native plan
    "strings.name_title": "partly native",
    "helpers.net_amount": "fully native",  # the helper inlined (`analysis.helper_models`)
    "helpers.parsed_date": "fully native",  # date.fromisoformat of YYYY-MM-DD natively, Python's on other rows
    "helpers.titled_name": "partly native",
    "cleaning.zip_regex_inline": "partly native",  # Python's re in the plan: Java's reads \d otherwise
    # a try of one expression: native on a strictly spelled number, Python's float() on the others
    "cleaning.amount_float_or_none": "fully native",
    "cleaning.zip_valid": "partly native",  # a compiled pattern's method: re's function of its text
    "math_numpy.np_isnan": "fully native",
    "math_numpy.isclose_total": "fully native",
    "cleaning.only_digits_join": "fully native",  # one regexp_replace on ASCII rows, Python's on the others
    "cleaning.no_punctuation": "fully native",  # membership: exact on every string
    "cleaning.strip_accents": "partly native",
    "cleaning.extract_number": "partly native",  # the match's test and its group: Python's re in the plan  # NFKD is Python's call; the combining marks dropped natively
    "mixed.order_key": "fully native",  # md5 of an f-string's UTF-8 bytes, in hex
    "mixed.decimal_rounded": "fully native",  # Decimal.quantize: bround at the exponent's places
    # round(x, 2): the plan cannot tell a Decimal (native, as quantize) from a float (Python's
    # call on the rows near a tie) before the lowering reads the column's type
    "mixed.decimal_with_tax": "partly native",
    # no model: Python, with the construct named
    "cleaning.only_digits_loop": "python",
    "strings.price_label": "partly native",  # format(price, ".2f"): Python's call (Java rounds ties up)
    "math_numpy.np_sqrt": "partly native",  # numpy's own sqrt, as Python in the plan
}


@pytest.mark.parametrize("name", sorted(REPRESENTATIVE))
def test_representative_functions_run_as_the_docs_say(name):
    fn, kind, fields = BY_NAME[name]
    cls, detail = coverage.classify(coverage.build(fn, kind, coverage.rows_for(name, fields)["edge"]))
    assert cls == REPRESENTATIVE[name], (name, detail)


@pytest.mark.parametrize("name, words", [
    ("strings.name_title", "str.title"),
    ("helpers.titled_name", "your helper _title"),
    ("cleaning.zip_regex_inline", "re.fullmatch"),
    ("cleaning.zip_valid", "re.match"),
    ("cleaning.only_digits_loop", "a loop"),
    ("strings.price_label", "format"),
])
def test_the_detail_names_the_construct(name, words):
    fn, kind, fields = BY_NAME[name]
    _, detail = coverage.classify(coverage.build(fn, kind, coverage.rows_for(name, fields)["edge"]))
    assert words in detail


def test_the_table_counts_every_function_once():
    """Every function classified once, by its physical plan (the lowering of each native step
    is the next test's, on the functions it reclassifies)."""
    results = coverage.classify_all(lowered=False)
    assert len(results) == len(FUNCTIONS)
    assert not [r for r in results if r["class"] == "error"]
    per = coverage.counts(results)
    assert sum(per["total"].values()) == len(FUNCTIONS)
    text = coverage.markdown(results, None, "", None, 0.0)
    assert "| total |" in text and "Why functions stay in Python" in text


# the corpus functions planned native whose lowering runs them whole in Python on their
# input's types (coverage.md, "planned native"), and what the lowering says
PLANNED_NATIVE = {
    "arithmetic.decimal_split": "/ on decimal values",
    "dates.utc_hour": "field event_ts has type timestamp",
    "dates.utc_date": "field event_ts has type timestamp",
    "mixed.decimal_to_float": "float on decimal has no native form",
}


@pytest.mark.spark
@pytest.mark.parametrize("name", [*PLANNED_NATIVE, "arithmetic.kg_to_lb"])
def test_a_native_step_that_lowers_to_python_counts_as_python(spark, name):
    """`lowered_as_python` lowers the step (no job): Python with the lowering's reason where
    the whole function runs in Python on its types, None where it runs as planned."""
    fn, kind, fields = BY_NAME[name]
    assert coverage.classify(coverage.build(fn, kind, coverage.rows_for(name, fields)["edge"]))[0] != "python"
    found = coverage.lowered_as_python(coverage.build(fn, kind, coverage.rows_for(name, fields)["clean"]))
    if name == "arithmetic.kg_to_lb":
        assert found is None
    else:
        assert found.startswith("(scalar) planned native, runs as Python on its input's types: ")
        assert found.endswith(PLANNED_NATIVE[name])


def test_records_compare_values_and_types():
    same = [{"a": 1, "b": float("nan"), "c": None}]
    assert coverage.bag_diff(same, [{"c": None, "b": float("nan"), "a": 1}]) is None
    assert coverage.bag_diff([{"a": 1}], [{"a": 1.0}]) is not None
    assert coverage.bag_diff([{"a": 1}], [{"a": True}]) is not None
    assert coverage.bag_diff([{"a": 0.0}], [{"a": -0.0}]) is not None
    assert coverage.bag_diff([{"a": 1}, {"a": 1}], [{"a": 1}]) is not None


def test_polars_compare_gives_polars_a_functions_one_field_form_and_finds_where_it_differs():
    """`bench.polars_compare`: a function of one expression over one field is handed to Polars'
    parser as `lambda x: ...`; a function of two fields is not of that kind; a translation that
    gives None where Python raises is a difference."""
    from bench import polars_compare

    field, source, one = polars_compare.one_field_form(*BY_NAME["arithmetic.kg_to_lb"][:2])
    assert (field, source, one(2.0)) == ("weight_kg", "lambda x: x * 2.20462", 2.0 * 2.20462)
    assert polars_compare.one_field_form(*BY_NAME["arithmetic.line_total"][:2]) is None
    expression = polars_compare.polars_expression(one, field)
    assert expression == 'pl.col("weight_kg") * 2.20462'
    values = [1.5, None]
    got, why = polars_compare.polars_values(expression, field, values, BY_NAME["arithmetic.kg_to_lb"][0])
    found = polars_compare.differences("map", polars_compare.python_outcomes(one, values), got, values)
    assert found == [(None, "raises TypeError", None)], (found, why)

"""Regular expressions (`analysis.regex_terms`): `re.sub` and the tests of `re.fullmatch`,
`re.match` and `re.search` of a constant pattern are terms, run as Python's call inside
the native plan; Python's `re` reads patterns otherwise than Java's (`\\d` matches
Unicode digits, `$` matches before a final newline), so Spark must give Python's answer
on texts where the two differ."""

import re

import pytest

import udflow as uf
from udflow.expr import Call, Lit, Not
from tests.both_engines import raised_on_both_engines

TEXTS = ["12345", "1234", "\u0661\u0662\u0663\u0664\u0665", "12345\n", "", "abc", "a1x", "xxbxx", "\u00df", " 7 "]
PATTERN = re.compile(r"\d{5}")  # compiled: its methods are re's functions of its text


def zip_code(r):
    return re.fullmatch(r"\d{5}$", r["s"]) is not None


def cleaned(r):
    return {**r, "digits": re.sub(r"\D", "", r["s"]), "words": re.sub(r"\s+", " ", r["s"]).strip()}


def classified(r):
    if re.search(r"\d", r["s"]):
        return {**r, "kind": "numbered", "starts": re.match("a", r["s"]) is None}
    return {**r, "kind": "plain", "starts": bool(re.match("a", r["s"]))}


def extracted(r):
    m = re.search(r"(\d+)(x)?", r["s"])
    return {**r, "n": int(m.group(1)) if m else -1, "x": m.group(2) if m else "none", "all": m.group() if m else ""}


def first_group(r):
    return {**r, "n": re.match(r"a?(\d)", r["s"]).group(1)}


def compiled(r):
    return PATTERN.fullmatch(r["s"]) is not None


def _props(fn, kind="map"):
    return uf.analyze(fn, {"s"}, kind=kind)


def test_a_match_is_a_term_only_through_its_test():
    model = _props(zip_code, "filter").model
    assert "(re.fullmatch('\\\\d{5}$', r['s']) is not None)" in str(model), str(model)
    assert _props(classified).model is not None
    assert "re.sub" in str(_props(cleaned).model)
    assert str(_props(compiled, "filter").model) == str(_props(lambda r: re.fullmatch(r"\d{5}", r["s"]) is not None,
                                                             "filter").model)
    from udflow.analysis.regex_terms import matched, regex_call
    assert regex_call("sub", [Lit("a"), Call("str.lower", (Lit("b"),)), Lit("c")]) is None  # a computed replacement
    assert regex_call("findall", [Lit("a"), Lit("b")]) is None
    found = matched(Call("re.search", (Lit("a"), Lit("b"))), negated=False)
    assert isinstance(found, Not) and found.operand.name == "re.matched"


@pytest.mark.parametrize("fn, kind", [(zip_code, "filter"), (cleaned, "map"), (classified, "map"),
                                      (extracted, "map")])
def test_spark_gives_pythons_answer_where_java_reads_the_pattern_otherwise(spark, fn, kind):
    source = uf.source("t", rows=[{"s": t} for t in TEXTS])
    flow = source.filter(fn) if kind == "filter" else source.map(fn)
    assert flow.physical().root.describe().startswith("native, with Python for re."), flow.physical().root.describe()
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, flow.collect(engine="reference")))


@pytest.mark.parametrize("fn", [cleaned, classified])
def test_none_raises_pythons_type_error_on_both_engines(fn):
    said = raised_on_both_engines(uf.source("t", rows=[{"s": "a1"}, {"s": None}]).map(fn))
    assert said[0] == said[1] and said[0].startswith("TypeError: expected string"), said


def test_explain_names_the_function_the_user_called():
    flow = uf.source("t", rows=[{"s": "a"}]).map(classified)
    assert "re.search" in flow.physical().root.describe() and "re.matched" not in flow.physical().root.describe()


def test_a_group_of_a_found_match_is_a_term_and_none_where_its_group_took_no_part(spark):
    model = str(_props(extracted).model)
    assert "re.search('(\\\\d+)(x)?', r['s']).group(2)" in model, model
    rows = [{"s": t} for t in TEXTS]
    flow = uf.source("t", rows=rows).map(extracted)
    got = {r["s"]: (r["n"], r["x"]) for r in flow.collect(spark=spark)}
    assert got["a1x"] == (1, "x") and got["12345"] == (12345, None) and got["abc"] == (-1, "none")


def test_a_group_of_no_match_raises_pythons_attribute_error_on_both_engines():
    said = raised_on_both_engines(uf.source("t", rows=[{"s": "a1"}, {"s": "b"}]).map(first_group))
    assert said[0] == said[1] and said[0].startswith("AttributeError: 'NoneType' object has no attribute 'group'"), said

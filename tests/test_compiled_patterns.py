"""A module's compiled regular expression, called by its methods (`ZIP.match(s) is not None`,
`ZIP.sub("#", s)`), is `re`'s function of its pattern text, its flags spelled at its start (`re.I` as `(?i)`;
`analysis.resolved.compiled_pattern`): Python's call inside the native plan, the rest of the
function native, as for `re.match(p, s)` written out. A method given a position has no term;
rebinding the pattern after the plan was made is a stale plan."""

import re
import sys

import pytest

import udflow as uf
from udflow.errors import StalePlanError

pytestmark = pytest.mark.spark

ZIP = re.compile(r"^\d{5}$")
SPELLED = re.compile(r"(?i)^ab")
CASED = re.compile(r"^a b  # the start (", re.IGNORECASE | re.VERBOSE)  # compiles only with re.X


def zip_valid(r):
    return ZIP.match(r["zip"]) is not None


def zip_masked(r):
    return {**r, "masked": ZIP.sub("#####", r["zip"]), "short": len(r["zip"]) < 5}


def starts_ab(r):
    return SPELLED.search(r["code"]) is None


def cased(r):
    return CASED.search(r["code"]) is not None


def from_position(r):
    return ZIP.match(r["zip"], 1) is not None


ROWS = [{"id": i, "zip": z, "code": c} for i, (z, c) in enumerate(
    [("12345", "AB1"), ("1234", "ab2"), ("١٢٣٤٥", "xab"), ("12345\n", "Ab"), ("", ""), ("abcde", "aB"),
     ("123456", "zz")])]


def by_id(rows):
    return sorted(rows, key=lambda r: r["id"])


@pytest.mark.parametrize("fn,kind", [(zip_valid, "filter"), (zip_masked, "map"), (starts_ab, "filter"),
                                     (cased, "filter")])
def test_a_compiled_patterns_method_is_res_call_inside_the_native_plan(spark, fn, kind):
    source = uf.source("t", rows=ROWS)
    flow = source.filter(fn) if kind == "filter" else source.map(fn)
    step = flow.physical().root
    assert step.how == "native" and any(t.startswith("re.") for t in step.python_terms), step
    got, wanted = by_id(flow.collect(spark=spark)), by_id(flow.collect(engine="reference"))
    assert got == wanted
    assert 0 < len(wanted) <= len(ROWS)


def test_flags_given_apart_are_spelled_at_the_patterns_start():
    (term,) = [t for t in uf.analyze(cased, ["id", "zip", "code"], kind="filter").model.predicate.walk()
               if getattr(t, "name", "") == "re.matched"]
    assert term.args[1].value == "(?ix)^a b  # the start (", term
    assert re.compile(term.args[1].value).flags == CASED.flags


def test_a_position_leaves_no_term(spark):
    fn = from_position
    props = uf.analyze(fn, ["id", "zip", "code"], kind="filter")
    assert props.pure and props.model is None
    flow = uf.source("t", rows=ROWS).filter(fn)
    assert by_id(flow.collect(spark=spark)) == by_id(flow.collect(engine="reference"))


def test_a_pattern_rebound_after_a_run_is_read_anew(spark, monkeypatch):
    """The pattern text is part of the model, and the model of what the function computes
    now: the analysis is keyed by the values it reads from outside (`analysis.outside`)."""
    flow = uf.source("t", rows=ROWS).filter(zip_valid)
    assert len(flow.collect(spark=spark)) == 3  # Python's \d: Arabic digits too; $ before a "\n"
    monkeypatch.setattr(sys.modules[__name__], "ZIP", re.compile(r"^\d+$"))
    assert by_id(flow.collect(spark=spark)) == by_id(flow.collect(engine="reference"))
    assert len(flow.collect(spark=spark)) == 5


def test_a_reordering_proven_for_a_pattern_is_stale_once_it_is_rebound(monkeypatch):
    @uf.hint(cost=1e-3)
    def tagged(r):
        return {**r, "tag": r["code"].center(12)}

    flow = uf.source("t", rows=ROWS).map(tagged).filter(zip_valid)
    (pushed,) = [alt.flow for alt in uf.optimize(flow).alternatives if alt.flow.root.label != "Filter(zip_valid)"]
    assert len(pushed.collect(engine="reference")) == 3
    monkeypatch.setattr(sys.modules[__name__], "ZIP", re.compile(r"^\d+$"))
    with pytest.raises(StalePlanError, match="ZIP, rebound since this plan was optimised"):
        pushed.collect(engine="reference")

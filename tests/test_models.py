"""A function's model computes what the function computes (issue 12, item 2).

For every map and filter of the analysis corpus, the soundness pool and the
examples that gets a model, the model (`udflow.analysis.model.apply`) and the
function itself are run on generated records full of None, zeros, negative
numbers, NaN, empty and non-ASCII strings and dates: the same records come
out, or both raise. Functions that must not get a model get none, with the
reason naming the construct and its line.
"""

import datetime
import inspect
import math
import re
import unicodedata
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis.model import apply

from tests.analysis_corpus import entries
from tests import soundness_pool as pool

values = st.one_of(
    st.none(), st.integers(-3, 3), st.sampled_from([2**63 - 1, -(2**63)]),
    st.sampled_from([0.0, -0.5, 2.5, float("nan")]),
    st.sampled_from([Decimal("0"), Decimal("1.25"), Decimal("-0.05")]),
    st.sampled_from(["", "a", "FRANCE", "GERMANY", "\u00df x"]),
    st.sampled_from([datetime.date(1995, 6, 1), datetime.date(1997, 1, 1)]),
)


def python_outcome(fn, kind, record):
    try:
        out = fn(dict(record))
        if kind == "filter":
            return [dict(record)] if out else []
        if inspect.isgenerator(out):
            return list(out)
        if isinstance(out, dict):
            return [out]
        return "raises"
    except Exception:  # noqa: BLE001 - any error
        return "raises"


def model_outcome(model, record):
    try:
        return apply(model, record)
    except Exception:  # noqa: BLE001
        return "raises"


def same(a, b) -> bool:
    if a == "raises" or b == "raises":
        return a == b
    return len(a) == len(b) and all(_same_record(x, y) for x, y in zip(a, b))


def _same_record(x, y) -> bool:
    if list(x) != list(y):  # the same fields, in the same order
        return False
    return all(x[k] == y[k] or (isinstance(x[k], float) and math.isnan(x[k]) and math.isnan(y[k])) for k in x)


def modelled_functions():
    out = []
    for entry in entries():
        if entry.spec.category is None and entry.spec.kind in ("map", "filter"):
            out.append((entry.id, entry.fn, entry.spec.kind, sorted(entry.spec.input_fields())))
    for p in "ab":
        for fn in pool.maps(p):
            kind = "filter" if fn.__name__.rsplit("_", 1)[0] in pool.FILTERS else "map"
            out.append((fn.__name__, fn, kind, [f"{p}_k", f"{p}_v", f"{p}_s"]))
    return out


# Functions of this wider models that raise on the ints the analysis corpus is
# checked with (`test_analysis_properties`): a date's ISO week, a regex of a str, a local table


def iso_week(r):
    return {**r, "w": r["a"].isocalendar()[1], "y": r["a"].isocalendar().year}


def squeezed(r):
    return {**r, "sq": re.sub(r"\s+", " ", r["b"]), "num": re.search(r"\d", r["b"]) is not None}


def local_ranks(r):
    ranks = {"a": 1, "FRANCE": 2, 0: 3, None: 4, 2.5: 5}
    return {**r, "rank": ranks.get(r["a"], -1), "hit": r["b"] in ("x", -1), "third": ranks[r["c"]]}


def normalized_day(r):
    return {**r, "n": unicodedata.normalize("NFKC", r["b"]), "doy": r["a"].timetuple().tm_yday}


WIDER = [(fn.__name__, fn, "map", ["a", "b", "c"]) for fn in (iso_week, squeezed, local_ranks, normalized_day)]
CASES = modelled_functions() + WIDER


@pytest.mark.parametrize("name,fn,kind,fields", CASES, ids=[c[0] for c in CASES])
def test_the_model_computes_what_the_function_computes(name, fn, kind, fields):
    props = uf.analyze(fn, set(fields), kind=kind)
    if props.model is None:
        assert props.model_reason, name
        return

    @settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(record=st.fixed_dictionaries({f: values for f in fields}))
    def agree(record):
        assert same(python_outcome(fn, kind, record), model_outcome(props.model, record)), (name, record)

    agree()


def test_the_wider_models_apply():
    assert all(uf.analyze(fn, set(fields)).model is not None for _, fn, _, fields in WIDER)


def test_enough_functions_get_a_model():
    modelled = [c[0] for c in CASES if uf.analyze(c[1], set(c[3]), kind=c[2]).model is not None]
    assert len(modelled) >= 15, modelled


def test_constants_are_equal_terms_only_with_the_same_type_and_text():
    """`x * 1` and `x * 1.0` (or `* -0.0`) compute different things; equal terms are shared."""
    from udflow.expr import Arith, Field, Lit

    assert len({Lit(1), Lit(True), Lit(1.0), Lit(Decimal("1")), Lit(Decimal("1.0")), Lit(0.0), Lit(-0.0)}) == 7
    assert Arith("*", Field("x"), Lit(1)) != Arith("*", Field("x"), Lit(1.0))
    assert Arith("*", Field("x"), Lit(2)) == Arith("*", Field("x"), Lit(2))
    assert Lit(float("nan")) == Lit(float("nan"))  # the same computation, though nan != nan


def test_a_return_is_one_case():
    """`return {...}` was once recorded twice (as a return and as an emit): a second,
    unreachable case that doubled every written field's SQL."""
    def with_minutes(r):
        return {**r, "minutes": (r["dropoff"] - r["pickup"]) / 60}

    def either(r):
        if r["a"] > 0:
            return {**r, "s": 1}
        return {**r, "s": -1}

    assert len(uf.analyze(with_minutes, {"dropoff", "pickup"}, kind="map").model.cases) == 1
    assert len(uf.analyze(either, {"a"}, kind="map").model.cases) == 2


def test_q7_maps_and_reduce_are_modelled(tpch_dir):
    from examples import tpch_q7
    from udflow.flow import properties_of

    flow = tpch_q7.build_flow(tpch_dir)
    functions = [n for n in flow.root.walk() if n.kind in ("map", "reduce")]
    assert len(functions) == 3 and all(properties_of(n).model is not None for n in functions)


def test_a_value_computed_on_every_path_but_used_on_some_is_the_first_guard():
    """`x = 1 // r["d"]` raises on every path where d == 0, also where `x` is not used: the
    model computes it in its first guard (`Evaluated`), so it raises where Python raises."""

    def f(r):
        x = 1 // r["d"]
        if r["c"]:
            return r
        return {**r, "x": x}

    model = uf.analyze(f, {"c", "d"}).model
    assert model is not None and str(model.cases[0].guard).startswith("(computed((1 // r['d']))")
    for record in ({"c": True, "d": 0}, {"c": False, "d": 0}):
        with pytest.raises(ZeroDivisionError):
            f(dict(record))
        with pytest.raises(ZeroDivisionError):
            apply(model, dict(record))
    assert apply(model, {"c": True, "d": 2}) == [{"c": True, "d": 2}]


@pytest.mark.parametrize("source,reason", [
    # under a branch: not computed on every path, so not the first guard's (`Evaluated`)
    ("def f(r):\n    if r['s']:\n        x = 1 // r['d']\n        if r['c']:\n            return r\n"
     "        return {**r, 'x': x}\n    return r\n",
     "which may raise, on a path that does not use it"),
    ("def f(r):\n    for k in ['a']:\n        r[k] = 1\n    return r\n", "a loop"),  # over a tuple: unrolled
    ("def f(r):\n    return {**r, 'y': r['s'].center(9)}\n", "with the method .center(), which has no model yet"),
    # issue 31, item 4: the construct in the user's terms
    ("def f(r):\n    return {**r, 'y': f\"{r['s']}-{r['d']:{r['c']}}\"}\n",
     "computes field y with an f-string with a computed format spec"),
    ("import math\ndef f(r):\n    return {**r, 'y': math.gamma(r['d'])}\n", "with a call of math.gamma"),
    ("T = {'a': [1]}\ndef f(r):\n    return {**r, 'y': T.get(r['s'], 0)}\n", "with dict.get on T"),  # not a table of literals
    ("def h(x):\n    return x['d'] * 2\ndef f(r):\n    return {**r, 'y': h(r)}\n",
     "with a call of your helper h"),
    ("def f(r):\n    try:\n        return {**r, 'y': int(r['s'])}\n    except ValueError:\n        return r\n",
     "a try statement"),
])
def test_almost_whitelisted_functions_have_no_model_and_say_why(tmp_path, source, reason):
    import importlib.util

    path = tmp_path / "m.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("m_model_reason", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    props = uf.analyze(module.f, {"c", "d", "s"})
    assert props.model is None
    assert reason in props.model_reason and "line" in props.model_reason, props.model_reason


def test_an_unguarded_filter_model_prints_as_its_test():
    """issue 31, item 4: no `if True else None` in a printed model"""
    def completed(r):
        return r["status"] == "completed"

    model = uf.analyze(completed, ["status"], kind="filter").model
    assert str(model) == "keep if (r['status'] == 'completed')"

"""Terms compiled to Python code (`udflow.term_code`) mean what `expr.evaluate` means.

The compiled function is what a Python call inside a native plan runs on every row, so
it must return the same value, of the same type, or raise the same error, on every
record: the rows where Python and SQL part ways (tests/test_native_differential.py),
over every construct of the IR those tests draw. No Spark here: both sides are Python.
"""

import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_native_differential import RECORDS, bit_terms, python_outcome, same, table_terms, terms, typed_terms
from udflow.expr import Arith, BoolOp, Call, Contains, Elem, Field, IfElse, InValues, Lit, Tuple
from udflow.helper_calls import HelperCall
from udflow.pieces import Pieces
from udflow.term_code import ATTRIBUTES, METHODS, python_function


def compiled_outcome(term, record):
    names = sorted(term.fields())
    run = python_function(term, names)
    try:
        return ("value", run(*(record[n] for n in names)))
    except Exception as exc:  # noqa: BLE001 - any error must be the one evaluate raises
        return ("raises", f"{type(exc).__name__}: {exc}")


def agree(python, compiled) -> bool:
    if python[0] != compiled[0]:
        return False
    return python[1] == compiled[1] if python[0] == "raises" else same(python[1], compiled[1])


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(term=st.one_of(terms, typed_terms, table_terms, bit_terms))
def test_compiled_terms_agree_with_evaluate(term):
    for record in RECORDS:
        python, compiled = python_outcome(term, record), compiled_outcome(term, record)
        assert agree(python, compiled), (str(term), record, python, compiled)


def test_short_circuits_are_pythons():
    """`and`/`or` return an operand and stop at the deciding one; a conditional runs one branch."""
    term = BoolOp("or", (Field("a"), IfElse(Field("b"), Lit("yes"), Arith("/", Lit(1), Field("a")))))
    run = python_function(term, ["a", "b"])
    assert run("x", None) == "x"  # the division is never reached
    assert run(0, 1) == "yes"
    with pytest.raises(ZeroDivisionError, match="^division by zero$"):
        run(0, 0)


def test_a_node_it_does_not_spell_is_evaluated():
    """A node without code of its own (`in` on strings) runs through `evaluate`: same value,
    same error."""
    term = BoolOp("and", (Field("ok"), Contains(Lit("a"), Field("s"))))
    run = python_function(term, ["ok", "s"])
    assert run(True, "cat") is True and run(True, "dog") is False and run(0, None) == 0
    with pytest.raises(TypeError, match="requires a str"):
        run(True, None)


SAMPLES = ("  Mixed Case ", "", "\u00df\u0130", None, 3, datetime.date(2024, 2, 29),
           datetime.datetime(2025, 3, 1, 13, 45, 7), datetime.timedelta(days=2, seconds=5))


@pytest.mark.parametrize("name", sorted({**METHODS, **ATTRIBUTES}))
def test_a_method_spelled_as_code_is_the_function_evaluate_calls(name):
    """`s.upper()` in the code is `FUNCTIONS["str.upper"](s)`: same value, same error."""
    term = Call(name, (Field("x"),))
    for value in SAMPLES:
        assert agree(python_outcome(term, {"x": value}), compiled_outcome(term, {"x": value})), (name, value)


def _twice(term):
    """Terms holding `term` twice or more, in the places where a copy may or may not reuse
    the first computation: both operands, a later operand of `or`, both branches."""
    return st.sampled_from([
        Tuple((term, term)),
        BoolOp("or", (term, term)),
        Tuple((BoolOp("and", (Field("a"), term)), term)),
        IfElse(term, Tuple((term,)), term),
        IfElse(Field("a"), term, Tuple((term, term))),
    ])


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(term=st.one_of(terms, typed_terms, table_terms).flatmap(_twice))
def test_a_repeated_subterm_computed_once_agrees_with_evaluate(term):
    """A subterm held twice is computed once where its first computation surely came first,
    and again where it may not have (a later operand of `and`, one branch of a conditional)."""
    for record in RECORDS:
        python, compiled = python_outcome(term, record), compiled_outcome(term, record)
        assert agree(python, compiled), (str(term), record, python, compiled)


def test_a_repeated_subterm_is_computed_once():
    calls = []

    def seen(x):
        calls.append(x)
        return x * 2

    doubled = HelperCall("seen", seen, (Field("a"),))
    run = python_function(Tuple((doubled, Arith("+", doubled, Lit(1)))), ["a"])
    assert run(3) == (6, 7) and calls == [3]
    calls.clear()
    only_if = python_function(Tuple((BoolOp("and", (Field("a"), doubled)), doubled)), ["a"])
    assert only_if(0) == (0, 0) and calls == [0]  # `and` stopped before the first copy: the second computes it


PUNCTUATION = Lit("!?.,")
WORD = Call("str.lower", (Call("str.strip", (Elem(), PUNCTUATION)),))
TOKENS = Pieces(Field("text"), None, True, BoolOp("and", (WORD, InValues(WORD, ("the", "a"), negated=True))),
                Tuple((WORD, Call("len", (WORD,)))))


@pytest.mark.parametrize("text", ["The cat, the HAT!", "", "  ", "a\u2028b\x1cc", None, 7, "İ."])
def test_an_explosions_pieces_compile_to_the_list_evaluate_builds(text):
    """`udflow.pieces.Pieces`: a list comprehension with Python's split, the guard before
    the item on each piece, the word computed once per piece; None or an int raise
    AttributeError before any piece, as `.split` does."""
    record = {"text": text}
    assert agree(python_outcome(TOKENS, record), compiled_outcome(TOKENS, record)), text
    over_items = Pieces(Field("text"), None, False, None, Call("len", (Elem(split=False),)))
    assert agree(python_outcome(over_items, record), compiled_outcome(over_items, record)), text

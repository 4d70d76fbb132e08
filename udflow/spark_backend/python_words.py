"""Python's own words for the errors a native term raises where Python raises.

A native guard fires where Python raises (None in arithmetic, a division by zero); the
user should read what Python would have said, with Python's exception type. Rather than
transcribe CPython's messages, each is taken from Python itself: the operation is run
once on a representative value of each operand's type family (None where the operand is
None), and the error it raises is the text.

    words(operator.add, None, "int")         "TypeError: unsupported operand type(s) for +:
                                               'NoneType' and 'int'"
    words(operator.truediv, "float", ZERO)   "ZeroDivisionError: float division by zero"
    words(str.strip, None)                   "AttributeError: 'NoneType' object has no
                                               attribute 'strip'"
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import operator
from functools import lru_cache
from typing import Callable, Optional

# a family's representative value, and its zero (the divisor of a division by zero)
SAMPLES = {"int": 1, "float": 1.0, "decimal": decimal.Decimal(1), "str": "a", "bool": True,
           "date": datetime.date(2000, 1, 1), "datetime": datetime.datetime(2000, 1, 1)}
ZEROS = {"int": 0, "float": 0.0, "decimal": decimal.Decimal(0), "bool": False}
ZERO = "zero"  # an operand that is its family's zero: words(op, "decimal", (ZERO, "decimal"))

BINARY: dict[str, Callable] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def value(operand) -> object:
    """An operand given as None, a family name, or (ZERO, family)."""
    if operand is None:
        return None
    if isinstance(operand, tuple):
        return ZEROS[operand[1]]
    return SAMPLES[operand]


@lru_cache(maxsize=None)
def words(run: Callable, *operands) -> Optional[str]:
    """`Type: message` of the error `run(*values)` raises on the operands' representative
    values; None when it raises nothing, or a family has no representative value."""
    try:
        values = [value(o) for o in operands]
    except KeyError:
        return None
    return raised_by(run, *values)


def raised_by(run: Callable, *values) -> Optional[str]:
    """`Type: message` of the error `run(*values)` raises on these very values (`1 << -1`:
    "ValueError: negative shift count"); None when it raises nothing."""
    with decimal.localcontext(decimal.Context()):  # Python's default context, as a function sees it
        try:
            run(*values)
        except Exception as exc:  # noqa: BLE001 - whatever Python raises is the text
            return f"{type(exc).__name__}: {exc}"
    return None


def none_cases(run: Callable, families: tuple, nullable: tuple) -> list[tuple[tuple, str]]:
    """For an operation over operands of `families`, those marked `nullable` possibly None:
    (the operands that are None, Python's words) for every such combination, most None first
    (so that, tested in order, the first that holds is the right one); [] where Python's
    words are not known for one of them."""
    may = [i for i, n in enumerate(nullable) if n]
    cases = []
    for size in range(len(may), 0, -1):
        for nones in itertools.combinations(may, size):
            text = words(run, *(None if i in nones else f for i, f in enumerate(families)))
            if text is None:
                return []
            cases.append((nones, text))
    return cases


# Operations written as a user writes them, for `words` (module-level: `words` is cached by them)
def contained(needle, haystack):
    return needle in haystack


def starts(s, prefix):
    return s.startswith(prefix)


def ends(s, suffix):
    return s.endswith(suffix)


def smallest(*values):
    return min(values)


def largest(*values):
    return max(values)


def attribute(name: str) -> Callable:
    return operator.attrgetter(name)  # equal getters for one name: `words` finds it again

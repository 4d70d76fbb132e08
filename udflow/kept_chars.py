"""The characters of a str kept by a test of each one: `"".join(c for c in s if test(c))`.

The IR writes it `Call("chars.keep", (s, Lit(op), Lit(test1), Lit(arg1), ...))`: the tests
of one character joined by `op` ("and", "or"), each a str method of the character
(`"isdigit"`, arg "") or membership in a constant str (`"in"`, arg the characters), either
one negated by a leading "not ":

    "".join(c for c in s if c.isdigit())                 ("and", "isdigit", "")
    "".join(ch for ch in s if ch.isalnum() or ch in "-_") ("or", "isalnum", "", "in", "-_")
    "".join(c for c in s if c not in string.punctuation)  ("and", "not in", "!\"#$%...")
    "".join(c for c in s if not unicodedata.combining(c)) ("and", "not combining", "")

Membership is exact for every code point, and so is `unicodedata.combining(c)` (true where
the canonical combining class is not 0), read as membership in the characters Python's
own table gives (`combining_chars`); a method follows Python's Unicode tables, which the
JVM's do not match, so its native form holds on ASCII text only (`native_case`).
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Optional

CHAR_TESTS = ("isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace", "isupper", "islower", "isascii")
ASCII = "".join(chr(c) for c in range(128))


@functools.lru_cache(maxsize=1)
def combining_chars() -> str:
    """Every code point whose canonical combining class is not 0, by Python's table (912 in
    Python 3.11's Unicode 14; 0.13 s to scan, once per process)."""
    return "".join(chr(c) for c in range(0x110000) if unicodedata.combining(chr(c)))


def _pairs(tests: tuple) -> list[tuple[bool, str, str]]:
    """(negated, test, arg) for each test of the flat arguments."""
    return [(t.startswith("not "), t.removeprefix("not "), arg) for t, arg in zip(tests[::2], tests[1::2])]


def passes(c: str, op: str, tests: tuple) -> bool:
    """Whether the character `c` passes the tests joined by `op` (each pure, none raises)."""
    outcomes = (negated != _test(c, test, arg) for negated, test, arg in _pairs(tests))
    return all(outcomes) if op == "and" else any(outcomes)


def _test(c: str, test: str, arg: str) -> bool:
    if test == "in":
        return c in arg
    if test == "combining":
        return unicodedata.combining(c) != 0
    return getattr(c, test)()


def keep(s, op: str, *tests) -> str:
    """Python's `"".join(c for c in s if ...)`: a None or a number is not iterable (TypeError)."""
    return "".join(c for c in s if passes(c, op, tests))


def well_formed(op, tests: tuple) -> bool:
    if op not in ("and", "or") or not tests or len(tests) % 2:
        return False
    return all(isinstance(t, str) and isinstance(a, str) and t.removeprefix("not ") in CHAR_TESTS + ("in", "combining")
               and (a == "" or t.removeprefix("not ") == "in") for t, a in zip(tests[::2], tests[1::2]))


def by_membership(op: str, tests: tuple) -> Optional[tuple[frozenset, bool]]:
    """Where every test is membership: the characters kept, as (chars, False), or all but
    some, as (chars, True); None where a test is a method."""
    kept = None
    for negated, test, arg in _pairs(tests):
        if test not in ("in", "combining"):
            return None
        clause = (frozenset(arg if test == "in" else combining_chars()), negated)
        kept = clause if kept is None else _combine(op, kept, clause)
    return kept


def _combine(op: str, a: tuple, b: tuple) -> tuple:
    """Two sets, each a set or the complement of one, by `op`."""
    (x, x_not), (y, y_not) = a, b
    if op == "or":  # de Morgan: the complement of the intersection of the complements
        inverted = _combine("and", (x, not x_not), (y, not y_not))
        return inverted[0], not inverted[1]
    if not x_not and not y_not:
        return x & y, False
    if x_not and y_not:
        return x | y, True
    return (y - x, False) if x_not else (x - y, False)


def ascii_kept(op: str, tests: tuple) -> str:
    """The ASCII characters the tests keep."""
    return "".join(c for c in ASCII if passes(c, op, tests))


def spelled(s: str, op: str, tests: tuple) -> str:
    """The comprehension as Python spells it."""
    def clause(negated, test, arg):
        if test == "in":
            return f"c {'not in' if negated else 'in'} {arg!r}"
        call = "unicodedata.combining(c)" if test == "combining" else f"c.{test}()"
        return f"{'not ' if negated else ''}{call}"

    clauses = [clause(*p) for p in _pairs(tests)]
    return f"''.join(c for c in {s} if {f' {op} '.join(clauses)})"

"""Regular expressions as terms: `re.sub` and the tests of `re.fullmatch`, `re.match` and
`re.search`, with a constant pattern (and replacement).

Python's `re` and the JVM's `java.util.regex` read the same pattern differently (`\\d` is
any Unicode digit in a Python str pattern, 0-9 in Java's; `$` matches before a final
newline in both, but `\\Z` means the end only in Python), so these have no native form:
each runs as Python's call inside the native plan (`python_calls`), the rest of the
function natively. A match is a value no column holds, so only its test is a term:

    re.sub(r"\\D", "", s)                  Call('re.sub', (Lit('\\\\D'), Lit(''), s))
    re.fullmatch(r"\\d{5}", s) is not None  Call('re.matched', (Lit('fullmatch'), Lit('\\\\d{5}'), s))
    re.search(p, s) is None               Not(Call('re.matched', (Lit('search'), Lit(p), s)))

and a group of the match, read where it is found (`m.group(1) if m else None`), raising
Python's AttributeError where there is none:

    re.search(r"(\\d+)", s).group(1)       Call('re.group', (Lit('search'), Lit('(\\d+)'), s, Lit(1)))
"""

from __future__ import annotations

from typing import Optional

from udflow.expr import Call, Expr, Lit, Not
from udflow.expr_functions import RE_MATCHES

MATCHES = tuple(RE_MATCHES)  # the module functions whose value is a match or None


def regex_call(name: str, args: list) -> Optional[Call]:
    """`re.<name>(*args)` as a term: `re.sub` of a constant pattern and replacement (a str: a
    function as the replacement may do anything), and the match functions of a constant
    pattern, whose value only `matched` reads; None for the others (flags, counts)."""
    if name == "sub" and len(args) == 3 and all(_text(a) for a in args[:2]):
        return Call("re.sub", tuple(args))
    if name in MATCHES and len(args) == 2 and _text(args[0]):
        return Call(f"re.{name}", tuple(args))
    return None


def matched(term: Expr, negated: bool) -> Optional[Expr]:
    """`term is not None` (`is None` where `negated`) where `term` is a match call: the test
    as one term; None for any other term."""
    if not (isinstance(term, Call) and term.name.startswith("re.") and term.name[len("re."):] in MATCHES):
        return None
    found = Call("re.matched", (Lit(term.name[len("re."):]), *term.args))
    return found if negated else Not(found)


def group_of(receiver: Expr, method: str, args: list) -> Optional[Call]:
    """`<a match call>.group()` or `.group(k)`, k a constant int or name: the group's text
    (None where the group took no part), as one term; None for anything else."""
    if method != "group" or len(args) > 1 or not (isinstance(receiver, Call) and receiver.name.startswith("re.")
                                                   and receiver.name[len("re."):] in MATCHES):
        return None
    (k,) = args or [Lit(0)]
    if not (isinstance(k, Lit) and (type(k.value) is int and k.value >= 0 or isinstance(k.value, str))):
        return None
    return Call("re.group", (Lit(receiver.name[len("re."):]), *receiver.args, k))


def computable(term: Expr) -> Expr:
    """A term computed for its errors only (`Evaluated`): a match call as its test, which
    raises exactly where the call does and whose value a column holds; any other term as it is."""
    if isinstance(term, Call) and term.name.startswith("re.") and term.name[len("re."):] in MATCHES:
        return Call("re.matched", (Lit(term.name[len("re."):]), *term.args))
    return term


def _text(term: Expr) -> bool:
    return isinstance(term, Lit) and isinstance(term.value, str)


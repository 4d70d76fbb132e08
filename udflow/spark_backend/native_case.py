"""`s.lower()`, `s.upper()` and the other methods of Unicode's tables (`s.casefold()`,
`s.swapcase()`, `s.isdigit()`, `s.isalpha()`, `s.isupper()`, ...: `ASCII_FORMS`) natively,
on the rows where `s` is ASCII.

Python maps case by its own Unicode tables (`"ǅ".lower()`, `"ß".upper() == "SS"`, Unicode
14 in Python 3.11); the JVM by Java's (Unicode 13 in Java 17), and Spark's `lower` of a
string that is not all ASCII goes through `String.toLowerCase()` in the JVM's default
locale (`"I"` is `"ı"` in a Turkish one). On ASCII the three agree: Spark maps an
all-ASCII string byte by byte with `Character.toLowerCase` (no locale), and every case
mapping of an ASCII letter is the other ASCII letter. So the call is native where its
receiver is ASCII, and the rows where it may not be computed in Python.

Whether the receiver is ASCII is read from the fields it is made of (`ascii_leaves`): a
value built from str fields by operations whose result holds only characters of their
operands or ASCII (`strip`, `lower`, `replace` with ASCII text, slices, a split's piece, `+`, a conditional)
is ASCII where those fields are. The other rows get the call computed by Python in the
plan (`python_calls`), which is handed the fields on those rows only (nulls elsewhere):

    r["status"].strip().lower()       CASE WHEN status IS NULL THEN <AttributeError>
                                           ELSE CASE WHEN length(status) <> octet_length(status)
                                                THEN <Python's status.strip().lower()>
                                                ELSE lower(TRIM(... FROM status)) END END

(`length` counts code points, `octet_length` UTF-8 bytes: equal exactly on ASCII.) The
test reads the fields, not the receiver, so the receiver is computed once. One pass over
the input: the rows beyond ASCII are usually few, and a second scan of the input (a CSV
file's is most of a query) cost more than handing Python a column of nulls.

Over an explosion's pieces a Python call would cross to Python once per piece, so there
the test is the normal case of the operator (`native_spans.RowCondition`): its rows
beyond ASCII run the whole function in Python (Tuplex's general case,
`general_case.split`), and where no general case splits the rows the guard raises rather
than give the JVM's mapping. The pieces of a split are ASCII where the split string is,
so a piece reads as the fields of that string (`elem_ascii`). A case mapping inside an
aggregate's argument, where no Python call can run, takes the normal case too.

A receiver not shown ASCII this way (a non-ASCII constant, a value from a call whose
characters udflow does not follow) runs the call alone as Python in the plan, as before.
"""

from __future__ import annotations

from typing import Optional

from udflow.expr import Arith, Call, Elem, Expr, Field, IfElse, Lit, Slice
from udflow.splits import SplitItem
from udflow import kept_chars
from udflow.spark_backend import native_spans, python_words, sql
from udflow.spark_backend.native_strings import receiver_guards
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import ident

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _matches(pattern: str):
    return lambda v: f"rlike({v}, {sql.string(pattern)})"


# each method's native form on an ASCII receiver, and its value's family. On ASCII, casefold
# is lower; the digits (isdigit, isdecimal, isnumeric) are 0-9; Python's whitespace is
# \t-\r and \x1c-\x20; a string is upper where it holds an upper letter and no lower one
ASCII_FORMS = {
    "str.lower": (lambda v: f"lower({v})", "str"),
    "str.upper": (lambda v: f"upper({v})", "str"),
    "str.casefold": (lambda v: f"lower({v})", "str"),
    "str.swapcase": (lambda v: f"translate({v}, '{_LETTERS}{_LETTERS.upper()}', '{_LETTERS.upper()}{_LETTERS}')",
                     "str"),
    **{f"str.{name}": (_matches(r"\A[0-9]+\z"), "bool") for name in ("isdigit", "isdecimal", "isnumeric")},
    "str.isalpha": (_matches(r"\A[A-Za-z]+\z"), "bool"),
    "str.isalnum": (_matches(r"\A[A-Za-z0-9]+\z"), "bool"),
    "str.isspace": (_matches(r"\A[\t-\r\x1c- ]+\z"), "bool"),
    "str.isupper": (lambda v: f"(rlike({v}, '[A-Z]') AND NOT rlike({v}, '[a-z]'))", "bool"),
    "str.islower": (lambda v: f"(rlike({v}, '[a-z]') AND NOT rlike({v}, '[A-Z]'))", "bool"),
}
CASE_MAPPINGS = tuple(ASCII_FORMS)
# calls whose value holds only characters of their receiver (and of the str arguments named)
_SUBSTRINGS = ("str.strip", "str.lstrip", "str.rstrip", "str.removeprefix", "str.removesuffix", "chars.keep") + tuple(
    name for name, (_, family) in ASCII_FORMS.items() if family == "str")
HIDDEN = "__udflow_"  # the prefix of the columns a lowering adds itself (a hidden term, a piece)
CANNOT_HOLD = "a case mapping of a non-ASCII string (the Unicode tables of Python and of the JVM differ)"


def ascii_leaves(term: Expr) -> Optional[frozenset]:
    """The fields (and `Elem()`, an explosion's piece) whose values being ASCII (or None)
    makes `term`'s value ASCII; None where that does not follow from its form."""
    if isinstance(term, (Field, Elem)):
        return frozenset({term})
    if isinstance(term, Lit):
        return frozenset() if isinstance(term.value, str) and term.value.isascii() else None
    parts = _ascii_parts(term)
    if parts is None:
        return None
    leaves = [ascii_leaves(p) for p in parts]
    return None if any(x is None for x in leaves) else frozenset().union(*leaves)


def _ascii_parts(term: Expr) -> Optional[tuple]:
    """The parts of `term` whose characters its value is made of, where it is made of no others."""
    if isinstance(term, Call):
        if term.name in _SUBSTRINGS and term.args:
            return term.args[:1]
        if term.name == "str.replace" and len(term.args) == 3:
            return (term.args[0], term.args[2])
        return None
    if isinstance(term, (Slice, SplitItem)):  # a substring
        return (term.operand,)
    if isinstance(term, Arith) and term.op == "+":
        return (term.left, term.right)
    if isinstance(term, IfElse):
        return (term.body, term.orelse)
    return None


def case_mapped(call: Expr, elem_source: Optional[Expr]) -> bool:
    """Whether `call` is a case mapping the lowering runs natively (on ASCII rows): its
    receiver is shown ASCII by input fields, a piece counting where `elem_source`, the
    string an explosion splits, is."""
    if getattr(call, "name", None) == "chars.keep":
        if kept_chars.by_membership(call.args[1].value, tuple(a.value for a in call.args[2:])) is not None:
            return True  # exact on every string
    elif getattr(call, "name", None) not in CASE_MAPPINGS or len(call.args) != 1:
        return False
    leaves = ascii_leaves(call.args[0])
    if leaves is None:
        return False
    if any(isinstance(x, Elem) for x in leaves):
        source = ascii_leaves(elem_source) if elem_source is not None else None
        if source is None or any(isinstance(x, Elem) for x in source):
            return False
    return not any(isinstance(x, Field) and x.name.startswith(HIDDEN) for x in leaves)


def lower_case_mapping(low, args: list[Typed], call) -> Typed:
    """`s.lower()`, `s.isdigit()`, ... (`ASCII_FORMS`) natively where `s` is ASCII (module docstring); NotNative
    where its being ASCII does not follow from input fields."""
    method = call.name[len("str."):]
    (x,) = args
    if x.family != "str":
        raise NotNative(f"str.{method} of a {x.family}")
    guards = receiver_guards(low, x, method)  # None: Python's AttributeError, as the other str methods
    form, family = ASCII_FORMS[call.name]
    return _on_ascii(low, x, call, f"str.{method}", form(x.sql), family, guards)


def lower_kept_chars(low, args: list[Typed], call) -> Typed:
    """`"".join(c for c in s if <tests>)` (`udflow.kept_chars`): the characters the tests drop
    removed by one regexp_replace. Membership alone is exact on every string; a method of
    the character (isdigit, isalpha, ...) follows Python's Unicode tables, so that form holds
    where `s` is ASCII, as a case mapping's does."""
    x, (op, *tests) = args[0], [a.value for a in call.args[1:]]
    if x.family != "str":
        raise NotNative(f"a join of the characters of a {x.family}")
    guards = []
    if x.nullable:  # iterating over None: Python's TypeError
        words = python_words.raised_by(kept_chars.keep, None, op, *tests)
        guards.append((f"({x.sql} IS NULL)", low.error(words)))
    exact = kept_chars.by_membership(op, tuple(tests))
    if exact is not None:
        return Typed(low.guarded(guards, _dropped(x.sql, *exact)), "str", False)
    kept = kept_chars.ascii_kept(op, tuple(tests))
    return _on_ascii(low, x, call, "a join of tested characters", _dropped(x.sql, frozenset(kept), False), "str",
                     guards)


def _dropped(text: str, chars: frozenset, complemented: bool) -> str:
    """`text` without the characters not kept: kept are `chars`, or all but them."""
    if not chars:  # all kept, or none: `text` is still read, for its own errors
        return text if complemented else f"substring({text}, 1, 0)"
    codes, ranges = sorted(map(ord, chars)), []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    body = "".join(f"\\x{{{a:x}}}" + (f"-\\x{{{b:x}}}" if b > a else "") for a, b in ranges)
    return f"regexp_replace({text}, {sql.string(('[' if complemented else '[^') + body + ']')}, '')"


def _on_ascii(low, x: Typed, call, what: str, mapped: str, family: str, guards: list) -> Typed:
    """`mapped`, the native form of `call` on an ASCII receiver `x`, on the rows where the
    fields `x` is made of are ASCII; Python's call on the others (or, over pieces, the
    general case's rows)."""
    leaves = ascii_leaves(call.args[0])
    if leaves is None:
        raise NotNative(f"{what} of a value not shown ASCII by its fields")
    columns, reads = _leaf_columns(low, leaves)
    if columns:
        beyond = " OR ".join(f"(length({c}) <> octet_length({c}))" for c in columns)
        if low.python_calls is not None and not any(isinstance(leaf, Elem) for leaf in leaves):
            python = low.python_calls.lower(low, call, [x], only_where=beyond)
            mapped = f"CASE WHEN {beyond} THEN {python.sql} ELSE {mapped} END"
        else:
            condition = native_spans.RowCondition(
                " AND ".join(f"(length({ident(c)}) = octet_length({ident(c)}))" for c in reads), reads,
                f"{', '.join(reads)} {'holds' if len(reads) == 1 else 'hold'} characters beyond ASCII")
            error = low.cannot_hold(CANNOT_HOLD, native_spans.Limit.where(condition))
            if error is not None:  # None: every row given is ASCII (the native side of a split)
                guards = guards + [(f"({beyond})", error)]
    return Typed(low.guarded(guards, mapped), family, False)


def _leaf_columns(low, leaves: frozenset) -> tuple[list, tuple]:
    """The SQL of the leaves' columns here, and the operator's input columns whose being ASCII
    makes them so (a piece: its split string's fields, `low.elem_ascii`)."""
    columns, reads = [], []
    for leaf in sorted(leaves, key=str):
        if isinstance(leaf, Elem):
            if low.elem is None or low.elem_ascii is None:
                raise NotNative("a case mapping of a piece not shown ASCII by its split string")
            columns.append(ident(low.elem))
            reads += low.elem_ascii
            continue
        if leaf.name.startswith(HIDDEN) or leaf.name not in low.fields:
            raise NotNative(f"a case mapping of {leaf.name}, not an input column")
        if low.lower(leaf).family != "str":
            raise NotNative(f"a case mapping over {leaf.name}, not a str column")
        columns.append(ident(leaf.name))
        reads.append(leaf.name)
    return columns, tuple(dict.fromkeys(reads))


def elem_ascii(source: Expr) -> Optional[tuple]:
    """The input fields whose being ASCII makes every piece of splitting `source` ASCII, or
    None (a piece of an ASCII string is ASCII)."""
    leaves = ascii_leaves(source)
    if leaves is None or any(not isinstance(x, Field) or x.name.startswith(HIDDEN) for x in leaves):
        return None
    return tuple(sorted(x.name for x in leaves))

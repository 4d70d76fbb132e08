"""The native forms of str methods (and a datetime's `.date()`) whose arguments are constants.

Each is exact against Python for every str (code points, not UTF-16 units, and Python's
own whitespace); a receiver None raises Python's AttributeError. `FORMS` says which
argument terms a native form takes; a call in another form (a computed `chars`, a
`count`, an empty `old`) runs as Python in the plan (`python_calls`).

    s.strip(chars), s.lstrip(chars),   TRIM(BOTH | LEADING | TRAILING chars FROM s): Spark trims
    s.rstrip(chars)                    the code points found in chars from the ends, looking at
                                       the ends only (a regexp_replace of \\A[..]+|[..]+\\z tried
                                       every position: 1.6 s over 100,000 texts where the scan
                                       takes 0.2 s)
    s.strip(), s.lstrip(), s.rstrip()  the same over Python's whitespace (`WHITESPACE`)
    s.replace(old, new)                Spark's replace: left to right, non-overlapping, as
                                       Python's (an empty old inserts new between characters
                                       in Python, Spark returns s: not native)
    s.zfill(width)                     zeros after a leading sign, up to width code points
    s.find(sub)                        instr(s, sub) - 1: the first code point index or -1
    s.count(sub)                       (len(s) - len(s.replace(sub, ''))) div len(sub): Spark's
                                       replace finds the same non-overlapping occurrences; an
                                       empty sub occurs len(s) + 1 times
    s.isascii()                        length(s) = octet_length(s): code points against UTF-8 bytes
    s.removeprefix(p), .removesuffix   startswith / endswith, then the rest by code points
    s.ljust(n, c), s.rjust(n, c)       rpad / lpad to n code points, s itself where it is longer
                                       (Spark's pad would cut it)
    d.date()                           CAST(d AS DATE) of a naive datetime (TIMESTAMP_NTZ)
    hashlib.md5(s.encode()).hexdigest()  md5(CAST(s AS BINARY)): Spark's string is its UTF-8
                                       bytes, the bytes Python's encode() gives; sha1, and
                                       sha224/256/384/512 as sha2(bytes, n), in lower-case hex
                                       as hexdigest() writes it
    format(i, "05d"), f"{i:3d}"        format_string('%05d', i) of an int: Java's Formatter pads
                                       a long with zeros after its sign, or spaces before, as
                                       Python does (other specs, and a float's, are Python's
                                       call: Java rounds a tie half up, Python half to even)
"""

from __future__ import annotations

import hashlib
import re

from udflow.expr import Arith, Call, Lit
from udflow.expr_functions import HEX_DIGESTS
from udflow.spark_backend import python_words
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import call, cast, literal, string

# what Python calls whitespace (str.strip(), str.split()); Spark's trim() and split on \s
# know fewer characters: TRIM names them, a split's regex class spells them (`PY_WHITESPACE`)
# (none lies beyond the Basic Multilingual Plane: scanning its 65,536 code points at import
# takes 3 ms, all 1,114,112 of them 47 ms; `tests/test_native_strings.py` checks the rest)
WHITESPACE = "".join(chr(c) for c in range(0x10000) if chr(c).isspace())


def _class_of(chars: str) -> str:
    """The body of a Java regex class of exactly these code points (of the Basic Multilingual
    Plane), consecutive ones as a range: Java tests a class's singles one by one, and a split
    over Python's whitespace written as 25 singles took 1.4 s where its 10 ranges take 1.1 s."""
    codes, parts = sorted(map(ord, chars)), []
    while codes:
        last = next(k for k in range(len(codes)) if k + 1 == len(codes) or codes[k + 1] != codes[k] + 1)
        parts.append(f"\\u{codes[0]:04x}" + (f"-\\u{codes[last]:04x}" if last else ""))
        codes = codes[last + 1:]
    return "".join(parts)


PY_WHITESPACE = _class_of(WHITESPACE)
WIDEST_FILL = 2**16  # a zfill wider than this builds strings no column should hold: Python's


def _str_constant(term, empty: bool = True) -> bool:
    return isinstance(term, Lit) and isinstance(term.value, str) and (empty or term.value != "")


# the native forms, as the cheat sheet shows them (`cheatsheet.py`)
SHOWN = {"str.strip": "s.strip(), s.strip(chars) with constant chars", "str.lstrip": "s.lstrip(), s.lstrip(chars)",
         "str.rstrip": "s.rstrip(), s.rstrip(chars)", "str.replace": "s.replace(old, new), both constants, old not ''",
         "str.zfill": "s.zfill(n), n a constant", "str.find": "s.find(sub), sub a constant",
         "str.count": "s.count(sub), sub a constant", "str.isascii": "s.isascii()",
         "str.removeprefix": "s.removeprefix(p), p a constant", "str.removesuffix": "s.removesuffix(p), p a constant",
         "str.ljust": "s.ljust(n), s.ljust(n, c), constants", "str.rjust": "s.rjust(n), s.rjust(n, c), constants",
         "date.date": "d.date() of a naive datetime",
         "date.replace": "d.replace(day=1), ts.replace(second=0, microsecond=0): constant parts that make no invalid date",
         **{f"hashlib.{name}": f"hashlib.{name}(s.encode()).hexdigest()" for name in HEX_DIGESTS}}
INT_SPEC = re.compile(r"(0?[1-9][0-9]?)?d")  # format specs of an int that Java's %d writes as Python does
FORMS = {  # name -> whether a call's argument terms (receiver first) have the native form
    "format": lambda args: len(args) == 2 and _str_constant(args[1]) and bool(INT_SPEC.fullmatch(args[1].value)),
    "str.lstrip": lambda args: len(args) == 1 or len(args) == 2 and (_str_constant(args[1]) or args[1] == Lit(None)),
    "str.rstrip": lambda args: len(args) == 1 or len(args) == 2 and (_str_constant(args[1]) or args[1] == Lit(None)),
    "str.strip": lambda args: len(args) == 1 or len(args) == 2 and (_str_constant(args[1]) or args[1] == Lit(None)),
    "str.replace": lambda args: len(args) == 3 and _str_constant(args[1], empty=False) and _str_constant(args[2]),
    "str.zfill": lambda args: len(args) == 2 and isinstance(args[1], Lit) and type(args[1].value) is int
    and args[1].value <= WIDEST_FILL,
    "str.find": lambda args: len(args) == 2 and _str_constant(args[1]),
    "str.count": lambda args: len(args) == 2 and _str_constant(args[1]),
    "str.isascii": lambda args: len(args) == 1,
    **{f"str.{name}": lambda args: len(args) == 2 and _str_constant(args[1]) for name in ("removeprefix", "removesuffix")},
    **{f"str.{name}": lambda args: 2 <= len(args) <= 3 and _width(args[1])
       and (len(args) == 2 or _str_constant(args[2]) and len(args[2].value) == 1) for name in ("ljust", "rjust")},
    "date.date": lambda args: len(args) == 1,
}


def _width(term) -> bool:
    return isinstance(term, Lit) and type(term.value) is int and term.value <= WIDEST_FILL


def receiver_guards(low, x: Typed, method: str) -> list:
    """The receiver's family checked, and Python's AttributeError where it is None."""
    if x.family != "str" and method != "date":
        raise NotNative(f"str.{method} of a {x.family}")
    return none_receiver_guards(low, x, method)


def none_receiver_guards(low, x: Typed, attribute: str) -> list:
    """Python's AttributeError where the receiver `x` of `.attribute` (a method or a date's
    part) is None; no guard where it never is."""
    if not x.nullable:
        return []
    message = python_words.words(python_words.attribute(attribute), None) or \
        f"AttributeError: 'NoneType' object has no attribute '{attribute}'"
    return [(f"({x.sql} IS NULL)", low.error(message))]


def _strip(method: str):
    def make(low, args):
        x, *rest = args
        guards = receiver_guards(low, x, method)
        chars = rest[0].known[0] if rest else None
        if chars == "":  # strips nothing
            return Typed(low.guarded(guards, x.sql), "str", False)
        side = {"strip": "BOTH", "lstrip": "LEADING", "rstrip": "TRAILING"}[method]
        stripped = f"TRIM({side} {literal(WHITESPACE if chars is None else chars)} FROM {x.sql})"
        return Typed(low.guarded(guards, stripped), "str", False)
    return make


def _replace(low, args):
    x, old, new = args
    guards = receiver_guards(low, x, "replace")
    return Typed(low.guarded(guards, call("replace", x.sql, old.sql, new.sql)), "str", False)


def _zfill(low, args):
    x, width = args
    guards = receiver_guards(low, x, "zfill")
    n, first = call("char_length", x.sql), call("substr", x.sql, "1", "1")
    zeros = call("repeat", "'0'", f"{literal(width.known[0])} - {n}")
    value = (f"CASE WHEN {n} >= {literal(width.known[0])} THEN {x.sql} "
             f"WHEN {first} IN ('+', '-') THEN concat({first}, {zeros}, {call('substr', x.sql, '2')}) "
             f"ELSE concat({zeros}, {x.sql}) END")
    return Typed(low.guarded(guards, value), "str", False)


def _find(low, args):
    x, sub = args
    guards = receiver_guards(low, x, "find")
    return Typed(low.guarded(guards, f"({cast(call('instr', x.sql, sub.sql), 'BIGINT')} - 1)"), "int", False)


def _count(low, args):
    """Non-overlapping, left to right, as Spark's replace finds them; '' occurs len(s) + 1 times."""
    x, sub = args
    guards = receiver_guards(low, x, "count")
    n = call("char_length", x.sql)
    if sub.known[0] == "":
        value = f"({cast(n, 'BIGINT')} + 1)"
    else:
        removed = call("char_length", call("replace", x.sql, sub.sql, "''"))
        value = f"(({cast(n, 'BIGINT')} - {removed}) div {len(sub.known[0])})"
    return Typed(low.guarded(guards, value), "int", False)


def _isascii(low, args):
    (x,) = args
    guards = receiver_guards(low, x, "isascii")
    return Typed(low.guarded(guards, f"(length({x.sql}) = octet_length({x.sql}))"), "bool", False)


def _hexdigest(name: str):
    def make(low, args):
        (x,) = args
        return Typed(low.guarded(receiver_guards(low, x, "encode"), _digest(name, x.sql)), "str", False)
    return make


def _digest(name: str, text: str) -> str:
    data = cast(text, "BINARY")
    return {"md5": f"md5({data})", "sha1": f"sha1({data})"}.get(name) or f"sha2({data}, {name[3:]})"


DIGEST_DIGITS = {name: 2 * hashlib.new(name).digest_size for name in HEX_DIGESTS}  # md5: 32
BUCKETS = 2**31  # a bucket count below it keeps every step of the fold within 64 bits
CHUNK = 7  # hex digits read per step: 28 bits


def hex_digest(term) -> bool:
    """Whether `term` is a digest's hex digits (`hashlib.md5(s.encode()).hexdigest()`): 32 or
    more, so that its int() passes 64 bits on every row."""
    return isinstance(term, Call) and term.name.removeprefix("hashlib.") in DIGEST_DIGITS and len(term.args) == 1


def digest_bucket(t) -> bool:
    """Whether `t` is `int(<a digest's hex>, 16) % n` with n a constant int of 1 to 2**31 - 1:
    the hashing idiom of A/B buckets and samples (`int(hashlib.md5(k).hexdigest(), 16) % 100`)."""
    return (isinstance(t, Arith) and t.op == "%" and isinstance(t.right, Lit) and type(t.right.value) is int
            and 1 <= t.right.value < BUCKETS and isinstance(t.left, Call) and t.left.name == "int"
            and len(t.left.args) == 2 and t.left.args[1] == Lit(16) and hex_digest(t.left.args[0]))


def lower_digest_bucket(low, t) -> Typed:
    """`int(h, 16) % n` of a digest's hex h (`digest_bucket`), natively: the digits read CHUNK
    at a time from the left, r = (r * 16**k + chunk) % n. Python's value, exactly: h is 32 or
    more lowercase hex digits (a non-negative int past 64 bits, whose % n is in [0, n)), and
    r < n < 2**31, so r * 16**7 + chunk stays below 2**59."""
    digest, n = t.left.args[0], t.right.value
    name = digest.name.removeprefix("hashlib.")
    x = low.lower(digest.args[0])
    if x.family != "str":
        raise NotNative(f"a digest of a {x.family}")
    hexed, digits, folded = _digest(name, x.sql), DIGEST_DIGITS[name], "0"
    for start in range(0, digits, CHUNK):
        width = min(CHUNK, digits - start)
        chunk = f"CAST(conv(substr({hexed}, {start + 1}, {width}), 16, 10) AS BIGINT)"
        folded = f"(({folded} * {16 ** width} + {chunk}) % {n})" if start else f"({chunk} % {n})"
    return Typed(low.guarded(receiver_guards(low, x, "encode"), folded), "int", False)


def _remove_affix(method: str):
    def make(low, args):
        x, affix = args
        guards = receiver_guards(low, x, method)
        text, n = affix.known[0], len(affix.known[0])
        if text == "":
            return Typed(low.guarded(guards, x.sql), "str", False)
        if method == "removeprefix":
            value = f"CASE WHEN startswith({x.sql}, {affix.sql}) THEN substr({x.sql}, {n + 1}) ELSE {x.sql} END"
        else:
            value = (f"CASE WHEN endswith({x.sql}, {affix.sql}) "
                     f"THEN substr({x.sql}, 1, char_length({x.sql}) - {n}) ELSE {x.sql} END")
        return Typed(low.guarded(guards, value), "str", False)
    return make


def _justified(method: str):
    """Padded with the fill (a space by default) up to the width in code points; never cut."""
    def make(low, args):
        x, width, *fill = args
        guards = receiver_guards(low, x, method)
        pad = call("rpad" if method == "ljust" else "lpad", x.sql, literal(width.known[0]),
                   fill[0].sql if fill else "' '")
        value = f"CASE WHEN char_length({x.sql}) >= {literal(width.known[0])} THEN {x.sql} ELSE {pad} END"
        return Typed(low.guarded(guards, value), "str", False)
    return make


def _date(low, args):
    (x,) = args
    if x.family != "datetime":  # a date has no date() (AttributeError): Python's, in the plan
        raise NotNative(f".date() of a {x.family}")
    return Typed(low.guarded(receiver_guards(low, x, "date"), cast(x.sql, "DATE")), "date", False)


def _format(low, args):
    """format(i, spec) of an int, spec an `INT_SPEC` (FORMS); a bool or another type: Python's."""
    x, spec = args
    if x.family != "int":
        raise NotNative(f"format() of a {x.family}")
    text = spec.known[0]
    message = python_words.raised_by(format, None, text)
    guards = [(f"({x.sql} IS NULL)", low.error(message))] if x.nullable else []
    return Typed(low.guarded(guards, call("format_string", string(f"%{text}"), x.sql)), "str", False)


CALLS = {
    "format": _format,
    "str.strip": _strip("strip"),
    "str.lstrip": _strip("lstrip"),
    "str.rstrip": _strip("rstrip"),
    "str.replace": _replace,
    "str.zfill": _zfill,
    "str.find": _find,
    "str.count": _count,
    "str.isascii": _isascii,
    "str.removeprefix": _remove_affix("removeprefix"),
    "str.removesuffix": _remove_affix("removesuffix"),
    "str.ljust": _justified("ljust"),
    "str.rjust": _justified("rjust"),
    "date.date": _date,
    **{f"hashlib.{name}": _hexdigest(name) for name in HEX_DIGESTS},
}

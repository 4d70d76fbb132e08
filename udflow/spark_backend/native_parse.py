"""`float(s)`, `int(s)` and `datetime.strptime(s, fmt)` of a str natively, on the rows whose text
has one plain spelling.

Python accepts more than any one native parser: `float(" 1_000.5\\n")`, `int("٣")` (an
Arabic-Indic digit), `strptime("2025-1-5 3:04:05", "%Y-%m-%d %H:%M:%S")` (one-digit fields,
runs of any Unicode whitespace for a space of the format). So each parse has a *strict*
spelling, a regular expression over ASCII that Python accepts with the value the native form
computes; the rows whose text is not spelled so are computed by Python in the plan
(`python_calls`, handed those rows only), which gives the value or raises Python's error:

    float(s)      [+-]? digits with at most one '.', 15 digits at most (no exponent, no
                  whitespace, no 'inf'): a decimal of at most 15 digits is a double
                  rounded once from an exact integer and power of ten, which every
                  parser does exactly (Java's `parseDouble` included)
                  -> CAST(s AS DOUBLE)
    int(s)        [+-]? 1 to 18 ASCII digits -> CAST(s AS BIGINT)
    int(s, b)     a constant base b of 2 to 36: [+-]?, the prefix 0x, 0o or 0b of bases 16, 8
                  and 2 (optional, as Python reads it), then 1 to `int_width(b)` ASCII digits
                  of the base in either case -> its sign and conv(digits, b, 10) AS BIGINT.
                  A text of n characters has at most n digits, so Python's value of one
                  of `int_width(b)` characters at most fits 64 bits (15 for base 16, 18 for
                  base 10); a longer one that is not strict may not, and no column holds
                  it: such rows are outside the native form (`native_spans.RowCondition`),
                  computed by the function in Python where the operator splits
    strptime      a format of %Y %m %d %H %M %S (each once) and ASCII characters; strict:
                  each field its full width (%Y 4 digits, the others 2, within their
                  ranges), a run of whitespace in the format one space, the other
                  characters as written. The first alternative of each of Python's
                  field patterns is the two-digit one, so Python reads the same fields
                  -> make_timestamp_ntz(...) where the date exists (year >= 1, the day
                  within its month; Python's defaults for a field the format lacks:
                  1900-01-01 00:00:00); elsewhere Python (ValueError)
    date.fromisoformat(s)   strptime's strict YYYY-MM-DD -> its date

`STRICT[name](x, args)` gives (the SQL condition that `x` is spelled strictly, the value's
SQL there), or None where the call has no strict form (another format). The condition is
total: it reads the text's digits only where the pattern matched, so no cast can fail.

`lower_parse` is the native form of the call alone: `CASE WHEN <strict> THEN <value> ELSE
<Python's call> END` (a None argument is not strict: Python raises its TypeError).
`native_caught` uses the same strict forms inside `try`/`except`.
"""

from __future__ import annotations

import re
from typing import Optional

from udflow.expr import Call, Field, Lit, Slice
from udflow.spark_backend import native_spans
from udflow.spark_backend.native_case import HIDDEN
from udflow.spark_backend.native_strings import hex_digest
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import string

FLOAT = r"^[+-]?(?:[0-9]{1,15}|(?=[0-9.]{2,16}\z)(?:[0-9]+[.][0-9]*|[.][0-9]+))\z"
INT = r"^[+-]?[0-9]{1,18}\z"

# directive -> (width, strict pattern, Python's default where the format lacks it)
FIELDS = {"Y": (4, "[0-9]{4}", 1900), "m": (2, "(?:0[1-9]|1[0-2])", 1), "d": (2, "(?:0[1-9]|[12][0-9]|3[01])", 1),
          "H": (2, "(?:[01][0-9]|2[0-3])", 0), "M": (2, "[0-5][0-9]", 0), "S": (2, "[0-5][0-9]", 0)}
_PIECE = re.compile(r"%(.)|(\s+)|([^%\s])")


def matches(x: str, pattern: str) -> str:
    return f"({x} RLIKE {string(pattern)})"


def strict_float(x: str, args: tuple) -> Optional[tuple]:
    return (matches(x, FLOAT), f"CAST({x} AS DOUBLE)") if not args else None


def int_base(args: tuple) -> Optional[int]:
    """int()'s base: 10 without one, else a constant int of 2 to 36 (not 0: Python then reads
    the base off the prefix and refuses leading zeros), else None."""
    if not args:
        return 10
    if len(args) == 1 and isinstance(args[0], Lit) and type(args[0].value) is int and 2 <= args[0].value <= 36:
        return args[0].value
    return None


def int_width(base: int) -> int:
    """The most digits of `base` whose value always fits 64 bits: base**n <= 2**63."""
    n = 0
    while base ** (n + 1) <= 2**63:
        n += 1
    return n


PREFIXES = {2: "0[bB]", 8: "0[oO]", 16: "0[xX]"}


def _digit_class(base: int) -> str:
    digits = f"0-{min(base, 10) - 1}"
    if base <= 10:
        return digits
    last = chr(ord("a") + base - 11)
    return f"{digits}a-{last}A-{last.upper()}"


def strict_int(x: str, args: tuple) -> Optional[tuple]:
    base = int_base(args)
    if base is None:
        return None
    if base == 10:
        return matches(x, INT), f"CAST({x} AS BIGINT)"
    prefix = f"(?:{PREFIXES[base]})?" if base in PREFIXES else ""
    digits = f"[{_digit_class(base)}]"
    pattern = f"^[+-]?{prefix}({digits}{{1,{int_width(base)}}})\\z"
    value = f"CAST(conv(regexp_extract({x}, {string(pattern)}, 1), {base}, 10) AS BIGINT)"
    return matches(x, pattern), f"({value} * CASE WHEN startswith({x}, '-') THEN -1 ELSE 1 END)"


def strptime_layout(fmt: str) -> Optional[tuple]:
    """(the strict pattern, {directive: 1-based position}) of a format, or None where it has a
    directive other than FIELDS, one twice, or a character beyond ASCII."""
    if not fmt.isascii():
        return None
    pattern, at, position = [], {}, 1
    for directive, space, char in _PIECE.findall(fmt):
        if directive:
            if directive not in FIELDS or directive in at:
                return None
            width, strict, _ = FIELDS[directive]
            at[directive] = position
            pattern.append(strict)
            position += width
        else:
            pattern.append(" " if space else re.escape(char))
            position += 1
    return "^" + "".join(pattern) + r"\z", at


def strict_strptime(x: str, args: tuple) -> Optional[tuple]:
    if len(args) != 1 or not isinstance(args[0], Lit) or not isinstance(args[0].value, str):
        return None
    layout = strptime_layout(args[0].value)
    if layout is None:
        return None
    pattern, at = layout

    def part(directive: str) -> str:
        if directive not in at:
            return str(FIELDS[directive][2])
        return f"CAST(substr({x}, {at[directive]}, {FIELDS[directive][0]}) AS INT)"

    y, m, d = part("Y"), part("m"), part("d")
    leap = f"(({y} % 4 = 0 AND {y} % 100 <> 0) OR {y} % 400 = 0)"
    month_days = f"CASE WHEN {m} = 2 THEN (CASE WHEN {leap} THEN 29 ELSE 28 END) WHEN {m} IN (4, 6, 9, 11) THEN 30 ELSE 31 END"
    exists = f"({y} >= 1 AND ({d} <= 28 OR {d} <= {month_days}))"
    condition = f"CASE WHEN {matches(x, pattern)} THEN {exists} ELSE FALSE END"
    value = f"make_timestamp_ntz({y}, {m}, {d}, {part('H')}, {part('M')}, {part('S')})"
    return condition, value


def strict_isodate(x: str, args: tuple) -> Optional[tuple]:
    """`date.fromisoformat(s)` of YYYY-MM-DD (Python 3.11 reads more: YYYYMMDD, week dates),
    the date `strptime(s, "%Y-%m-%d")` reads."""
    if args:
        return None
    condition, value = strict_strptime(x, (Lit("%Y-%m-%d"),))
    return condition, f"CAST({value} AS DATE)"


STRICT = {"float": strict_float, "int": strict_int, "datetime.strptime": strict_strptime,
          "datetime.date.fromisoformat": strict_isodate}
FAMILY = {"float": "float", "int": "int", "datetime.strptime": "datetime", "datetime.date.fromisoformat": "date"}


# the parses whose other rows Python computes in the plan as a call alone (`int()` on the rows
# whose text is short enough for its value to fit 64 bits: `_width_limit`)
ALONE = ("float", "int", "datetime.strptime", "datetime.date.fromisoformat")


def parses(call, alone: bool = False) -> bool:
    """Whether `call` (a Call term) is a parse with a strict form for its constant arguments
    (`alone`: also as a call by itself, `lower_parse`)."""
    name = getattr(call, "name", None)
    strict = STRICT.get(name)
    return strict is not None and (name in ALONE or not alone) and len(call.args) >= 1 and \
        strict("x", call.args[1:]) is not None and not (name == "int" and hex_digest(call.args[0]))


def _null_strict(text) -> bool:
    """A field's text through str methods of constant arguments and slices: None raises."""
    if isinstance(text, Field):
        return True
    if isinstance(text, Slice):
        return _null_strict(text.operand)
    return isinstance(text, Call) and text.name.startswith("str.") and bool(text.args) \
        and _null_strict(text.args[0]) and all(isinstance(a, Lit) for a in text.args[1:])


def lower_parse(low, args: list, call) -> Typed:
    """The call natively where its text is strict, by Python in the plan elsewhere. The flag
    that hands Python its rows is computed on every row below the operator, also where the
    model never reads the call: so the text must raise nothing there, or the call runs as
    Python whole. A text of str methods and slices over a field raises only where the field
    is None (Python's AttributeError or TypeError, in the CASE): the flag reads it without
    those guards, null there."""
    x = args[0]
    if x.family != "str":
        raise NotNative(f"{call.name} of a {x.family}")
    strict_fields = frozenset(call.args[0].fields()) if _null_strict(call.args[0]) else frozenset()
    with low.on_every_row(), low.assuming(strict_fields):  # as the flag computes it, on every row below
        anywhere, raises = low.lower_raising(call.args[0])
    if raises:
        raise NotNative(f"{call.name} of a text that may raise (its strict test is computed on every row)")
    strict, flag = STRICT[call.name](x.sql, call.args[1:]), STRICT[call.name](anywhere.sql, call.args[1:])
    if strict is None or flag is None or low.python_calls is None:
        raise NotNative(f"{call.name} with these arguments has no strict spelling here")
    condition, value = strict
    if x.nullable:
        condition = f"({x.sql} IS NOT NULL AND {condition})"
    flagged = f"({anywhere.sql} IS NOT NULL AND {flag[0]})"
    only_where, guards = f"(NOT coalesce({flagged}, FALSE))", []
    if call.name == "int":
        short, guards = _width_limit(low, call, anywhere.sql, flag[0])
        only_where = f"({only_where} AND coalesce({short}, TRUE))"
    python = low.python_calls.lower(low, call, args, only_where=only_where)
    return Typed(low.guarded(guards, f"CASE WHEN {condition} THEN {value} ELSE {python.sql} END"),
                 FAMILY[call.name], False)


def _width_limit(low, call, anywhere: str, strict: str) -> tuple[str, list]:
    """SQL true where the text is short enough for Python's int() of it to fit 64 bits, and
    the guard of the other rows that are not strict either: outside the native form, computed
    by the function in Python where the operator splits (`general_case`), else an error. The
    row condition reads the input columns the text is made of, so a text of other columns
    (a Python call's, a hidden term's) is not native."""
    width = int_width(int_base(call.args[1:]))
    short = f"(char_length({anywhere}) <= {width})"
    reads = tuple(sorted(call.args[0].fields()))
    if HIDDEN in anywhere or not reads or any(name not in low.fields for name in reads):
        raise NotNative("int() of a text not made of the operator's input columns (its value may pass 64 bits)")
    within = native_spans.RowCondition(f"({strict} OR {short})", reads,
                                       f"{', '.join(reads)} gives int() a text longer than {width} characters "
                                       "(its value may pass 64 bits)")
    error = low.cannot_hold(f"an int() of a text longer than {width} characters may pass 64 bits",
                            native_spans.Limit.where(within))
    return short, [] if error is None else [(f"(NOT coalesce({within.sql}, TRUE))", error)]

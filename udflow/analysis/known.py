"""What the analysis knows about the Python it cannot read: which library
callables and methods are pure (no side effect, result a function of the
arguments). Everything not listed here is unknown, hence impure when called.
"""

from __future__ import annotations

import builtins
import datetime
import decimal
import hashlib
import math
import operator
import re
import statistics
import string
import unicodedata

from udflow import spark_results

# Built-ins whose result depends only on their arguments and which touch no state.
PURE_BUILTINS = frozenset(
    getattr(builtins, n)
    for n in (
        "abs all any ascii bin bool bytes callable chr complex dict divmod enumerate "
        "filter float format frozenset hex int isinstance issubclass iter len list map "
        "max min next oct ord pow range repr reversed round set slice sorted str sum tuple zip"
    ).split()
)

# Calls whose result does not depend on the order of the elements of their argument.
ORDER_INSENSITIVE = frozenset(
    getattr(builtins, n) for n in "sum len min max any all set frozenset sorted".split()
) | {math.fsum, math.prod, statistics.mean, statistics.median, statistics.fmean}

# Whole modules of pure functions.
PURE_MODULES = (math, operator, statistics, string, unicodedata)

PURE_CALLABLES = frozenset(
    {
        datetime.date,
        datetime.datetime,
        datetime.timedelta,
        datetime.time,
        decimal.Decimal,
        re.match,
        re.search,
        re.fullmatch,
        re.sub,
        re.split,
        re.findall,
        re.compile,
        re.escape,
        # a digest's constructor: a new object, changed by its own `update` only
        *(getattr(hashlib, name) for name in sorted(hashlib.algorithms_guaranteed)),
        *spark_results.CONVERSIONS.values(),
        *spark_results.ITEMS.values(),
    }
)

# Names of callables that are impure for a reason worth saying.
IMPURE_REASONS = {
    "random": "uses randomness",
    "time": "reads the clock",
    "uuid": "makes unique ids",
    "os": "does I/O",
    "sys": "does I/O",
    "io": "does I/O",
    "logging": "logs (I/O)",
    "print": "does I/O (print)",
    "open": "does I/O (open)",
    "input": "does I/O (input)",
    "eval": "calls eval",
    "exec": "calls exec",
    "compile": "compiles code",
    "getattr": "calls getattr with a computed name",
    "setattr": "calls setattr",
    "delattr": "calls delattr",
    "vars": "inspects __dict__ (vars)",
    "globals": "inspects globals()",
    "locals": "inspects locals()",
    "__import__": "imports a module",
    "id": "depends on object identity (id)",
    "hash": "depends on the process's hash seed (hash)",
}

# Methods that only read their receiver (str, numbers, dates, lists, dicts, sets).
READ_METHODS = frozenset(
    (
        "lower upper strip lstrip rstrip split rsplit splitlines startswith endswith replace "
        "join format format_map isdigit isalpha isalnum isnumeric isdecimal isspace islower "
        "isupper title capitalize casefold center ljust rjust zfill partition rpartition find "
        "rfind index rindex count encode decode removeprefix removesuffix expandtabs swapcase "
        "translate isascii "
        "isoformat weekday isoweekday strftime date time timestamp toordinal isocalendar timetuple "
        "total_seconds quantize normalize to_integral_value is_nan is_integer as_integer_ratio "
        "conjugate bit_length hex hexdigest digest "
        "get keys values items copy union intersection difference symmetric_difference "
        "issubset issuperset isdisjoint "
        "match search fullmatch findall sub group groups groupdict start end span"
    ).split()
)

# Methods that change their receiver.
MUTATING_METHODS = frozenset(
    "append extend insert remove pop popitem clear sort reverse add discard update setdefault "
    "difference_update intersection_update symmetric_difference_update __setitem__ __delitem__".split()
)

# Methods whose result keeps no order of a group (`set.add` order never shows).
UNORDERED_MUTATIONS = frozenset("add discard update".split())


# numpy's functions of one value (`udflow.expr_functions.NUMPY_FUNCTIONS`), by their ufunc's name
NUMPY_UFUNCS = frozenset("sqrt exp log log1p log10 log2 expm1 absolute fabs sign floor ceil sin cos tan tanh "
                         "arctan maximum minimum isnan".split())
# numpy's functions that are not ufuncs, and its float type, of values (`NUMPY_MORE`)
NUMPY_PURE = frozenset("clip round around float64".split())


def is_pure_callable(obj) -> bool:
    try:
        if obj in PURE_BUILTINS or obj in PURE_CALLABLES:
            return True
    except TypeError:  # unhashable
        return False
    if type(obj).__name__ == "ufunc" and type(obj).__module__ == "numpy":
        return getattr(obj, "__name__", "") in NUMPY_UFUNCS
    if getattr(obj, "__module__", None) == "numpy" and getattr(obj, "__name__", "") in NUMPY_PURE:
        return callable(obj)
    module = getattr(obj, "__module__", None)
    if module in {m.__name__ for m in PURE_MODULES} and callable(obj):
        return True
    if isinstance(getattr(obj, "__self__", None), re.Pattern):  # a compiled pattern's own method: PAT.match
        return getattr(obj, "__name__", "") in READ_METHODS
    # methods of immutable built-in types taken unbound, e.g. str.lower
    owner = getattr(obj, "__objclass__", None)
    if owner in (str, int, float, bytes, tuple, frozenset, datetime.date, datetime.datetime):
        return getattr(obj, "__name__", "") in READ_METHODS
    if isinstance(obj, datetime.date.fromisoformat.__class__) and getattr(obj, "__self__", None) in (
        datetime.date,
        datetime.datetime,
    ):
        return getattr(obj, "__name__", "") in ("fromisoformat", "fromordinal", "combine", "strptime")
    return False


def impure_reason(obj, name: str) -> str:
    module = getattr(obj, "__module__", None) or ""
    root = module.split(".")[0]
    if root in IMPURE_REASONS:
        return IMPURE_REASONS[root]
    if getattr(obj, "__name__", None) in IMPURE_REASONS and root == "builtins":
        return IMPURE_REASONS[obj.__name__]
    for part in (name, name.split(".")[0]):
        if part in IMPURE_REASONS:
            return IMPURE_REASONS[part]
    return f"calls {name}, which the analysis cannot see into"


IMMUTABLE_TYPES = (str, int, float, bool, bytes, complex, type(None), datetime.date, datetime.time,
                   datetime.timedelta, decimal.Decimal)


def is_constant(value) -> bool:
    """True for values that can never change: scalars and tuples/frozensets of them."""
    if isinstance(value, IMMUTABLE_TYPES):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(is_constant(v) for v in value)
    return False

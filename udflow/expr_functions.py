"""The functions and methods a term may call (`expr.Call`), each with a pinned-down meaning.

    FUNCTIONS["str.lower"]       the callable `evaluate` runs for `Call("str.lower", (x,))`
    FUNCTIONS["math.sqrt"]       math.sqrt itself
    FUNCTIONS["date.weekday"]    lambda d: d.weekday()

A call is modelled only if its name is here; what it computes is Python's own function,
so a term that calls it raises where the user's code raises. The lowerings say, per name,
whether Spark computes the same value (`spark_backend.native_calls`) or the call alone runs
as Python inside the native plan (`spark_backend.python_calls`).
"""

from __future__ import annotations

import datetime
import hashlib
import math
import re
import unicodedata

from udflow import kept_chars, spark_results

# The functions of `math` that are modelled, called as `math.f(x)` (one argument; `log` also
# with a base): each computes a float from a number (`floor`, `ceil`, `trunc`: an int;
# `isnan`, `isinf`, `isfinite`: a bool)
MATH_FUNCTIONS = ("sqrt", "exp", "log", "log10", "log2", "fabs", "floor", "ceil", "sin", "cos", "tan",
                  "atan", "sinh", "cosh", "tanh", "log1p", "expm1", "radians", "degrees", "asin", "acos",
                  "trunc", "isnan", "isinf", "isfinite")
# ... and of two numbers: a float (`gcd`: an int of two ints)
MATH_BINARY = ("hypot", "atan2", "pow", "copysign", "gcd")
MATH_INTEGRAL = ("floor", "ceil", "trunc")
MATH_TESTS = ("isnan", "isinf", "isfinite")

# numpy's functions of one value that users call on a field (`np.sqrt(r["x"])`), as numpy
# computes them (a numpy scalar, np.float64 for a float); no native form (numpy's own rules
# for None, negative roots and overflow), so the call alone runs as Python in a native plan
NUMPY_FUNCTIONS = ("sqrt", "exp", "log", "log1p", "log10", "log2", "expm1", "abs", "fabs", "sign", "floor",
                   "ceil", "sin", "cos", "tan", "tanh", "arctan")
# ... and of more values, by their arguments' count (None: one or two): np.float64 for floats
NUMPY_MORE = {"maximum": 2, "minimum": 2, "clip": 3, "round": None, "float64": 1}
# ... and its tests of one value: an np.bool_ (native for numbers, `spark_backend.native_math`)
NUMPY_TESTS = ("isnan",)


# the digests of `hashlib` whose hex of a str's UTF-8 bytes is modelled (Spark computes each)
HEX_DIGESTS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")


# the functions of `re` whose value is a match object or None
RE_MATCHES = {"fullmatch": re.fullmatch, "match": re.match, "search": re.search}


# the str methods that are modelled, called on their receiver (`x.lower()`)
STR_METHODS = ("lower", "upper", "strip", "startswith", "endswith", "lstrip", "rstrip", "replace", "zfill", "find",
               "title", "capitalize", "casefold", "swapcase", "isdigit", "isdecimal", "isnumeric", "isalpha",
               "isalnum", "isspace", "isupper", "islower", "isascii", "count", "removeprefix", "removesuffix",
               "ljust", "rjust")


def _method(name: str):
    """`receiver.name(*args)`: the method looked up on its receiver, as `x.lower()` does
    (None.lower() is an AttributeError; str.lower(None) would be a TypeError)."""
    def run(receiver, *args):
        return getattr(receiver, name)(*args)

    run.__name__ = f"str.{name}"
    return run


def _isclose(a, b, rel_tol, abs_tol):
    """`math.isclose(a, b, rel_tol=..., abs_tol=...)`, its keyword-only tolerances given in
    place (the analysis fills in the defaults, 1e-09 and 0.0)."""
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def _hexdigest(name: str):
    """`hashlib.name(s.encode()).hexdigest()`: the hex of the digest of the UTF-8 bytes of `s`
    (`analysis.resolved.hexdigest_call`); `s` None or not a str raises AttributeError, as
    `s.encode()` does, and a lone surrogate UnicodeEncodeError."""
    def run(text):
        return getattr(hashlib, name)(text.encode()).hexdigest()

    run.__name__ = f"hashlib.{name}"
    return run


def _numpy_function(name: str):
    def run(*args):
        import numpy

        return getattr(numpy, name)(*args)

    run.__name__ = f"numpy.{name}"
    return run

# Functions and methods with a pinned-down meaning: name -> the Python callable `evaluate` runs.
# A call is modelled only if its name is here (anything else: no model).
FUNCTIONS = {
    "abs": abs,
    "min": min,
    "max": max,
    "len": len,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    **{f"str.{name}": _method(name) for name in STR_METHODS},
    "date.date": lambda d: d.date(),  # a datetime's day; a date has no date() (AttributeError)
    "date.strftime": lambda d, *args: d.strftime(*args),
    "datetime.strptime": datetime.datetime.strptime,
    "datetime.date.fromisoformat": datetime.date.fromisoformat,
    "date.year": lambda d: d.year,
    "date.month": lambda d: d.month,
    "date.day": lambda d: d.day,
    "date.hour": lambda d: d.hour,  # a datetime's; a date has none (AttributeError)
    "date.minute": lambda d: d.minute,
    "date.second": lambda d: d.second,
    "date.weekday": lambda d: d.weekday(),  # Monday 0 .. Sunday 6
    "date.isoweekday": lambda d: d.isoweekday(),  # Monday 1 .. Sunday 7
    "date.isoformat": lambda d: d.isoformat(),
    "date.isocalendar": lambda d, k: d.isocalendar()[k],  # k: 0 the ISO year, 1 its week, 2 the weekday
    "date.dayofyear": lambda d: d.timetuple().tm_yday,
    # d.replace(day=1, ...) of constant parts, given as (d, name, value, name, value, ...)
    "date.replace": lambda d, *parts: d.replace(**dict(zip(parts[::2], parts[1::2]))),
    "unicodedata.normalize": unicodedata.normalize,  # of a constant form: "NFC", "NFKD", ...
    # an f-string's replacement fields (`analysis.format_terms`): format(x, spec), x!r, x!a
    "format": format,
    "repr": repr,
    "ascii": ascii,
    # `re`, with constant patterns (`analysis.regex_terms`): a substitution, and whether a
    # match function finds a match (its match object is a value no column holds)
    "re.sub": re.sub,
    **{f"re.{name}": getattr(re, name) for name in RE_MATCHES},
    "re.matched": lambda kind, pattern, text: RE_MATCHES[kind](pattern, text) is not None,
    # a group of the match (None where it took no part); no match: AttributeError, as m.group(k)
    "re.group": lambda kind, pattern, text, k: RE_MATCHES[kind](pattern, text).group(k),
    "timedelta": lambda unit, n: datetime.timedelta(**{unit: n}),  # of one unit (`analysis.constants.timedelta_of`)
    "timedelta.total_seconds": lambda td: td.total_seconds(),
    "timedelta.days": lambda td: td.days,
    # `math.f(x)`: Python's own function (no native form: the call alone runs as Python in the
    # native plan, `spark_backend.python_calls`)
    **{f"math.{name}": getattr(math, name) for name in MATH_FUNCTIONS + MATH_BINARY},
    "math.isclose": _isclose,
    **{f"hashlib.{name}": _hexdigest(name) for name in HEX_DIGESTS},
    # "".join(c for c in s if <tests of c>) (`udflow.kept_chars`)
    "chars.keep": kept_chars.keep,
    # x.quantize(exp, rounding): a rounding None is the context's (`analysis.resolved.quantize_call`)
    "decimal.quantize": lambda x, exp, rounding: x.quantize(exp, rounding=rounding),
    **{f"numpy.{name}": _numpy_function(name) for name in NUMPY_FUNCTIONS + tuple(NUMPY_MORE) + NUMPY_TESTS},
    # what Spark makes of a PySpark UDF's value (`uf.from_spark`): `spark.<regime>.<type>`
    **spark_results.CONVERSIONS,
}


DATE_METHODS = ("weekday", "isoweekday", "date", "strftime", "isoformat")  # the "date." calls that are methods

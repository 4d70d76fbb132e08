"""Key semantics: which values a Match or CoGroup may compare, the same on both engines.

The reference interpreter compares keys with Python's `==`; Spark compares columns after
casting one side to the other's type. They agree exactly when the two key fields are of
one *family*, or are integers and decimals:

    family      Python values              Spark / Arrow types
    int         int (not bool)             tinyint .. bigint
    float       float                      float, double
    decimal     decimal.Decimal            decimal(p, s)
    str         str                        string
    bool        bool                       boolean
    date        datetime.date              date
    timestamp   datetime.datetime, aware   timestamp
    timestamp_ntz  datetime.datetime, naive  timestamp_ntz
    bytes       bytes, bytearray           binary

Every other pair is refused (`FlowConstructionError` when the flow is built and both types
are known, `KeyTypeError` when the keys meet at run time), because the engines disagree on
it: `0 == "0"` is False in Python while Spark casts the string and matches; `Decimal("0.1")
== 0.1` is False in Python while Spark compares doubles; `True == 1` in Python; a date equals
a timestamp at midnight on Spark only. None never matches in a Match and is a group of its
own in a Reduce or CoGroup, on both engines. See docs/backend.md, "Keys".
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any, Iterable, Optional

FAMILIES = ("int", "float", "decimal", "str", "bool", "date", "timestamp", "timestamp_ntz", "bytes")
_COMPATIBLE = {frozenset({"int", "decimal"})}


def of_value(value: Any) -> Optional[str]:
    """The family of a Python value; None for None or a type keys cannot hold."""
    if isinstance(value, datetime.datetime):  # a naive one never equals an aware one in Python
        return "timestamp" if value.tzinfo is not None else "timestamp_ntz"
    return _of_type(type(value))


def of_arrow(dtype: Any) -> Optional[str]:
    """The family of an Arrow type (a parquet column); None when it is none of them."""
    import pyarrow.types as t

    checks = (
        (t.is_boolean, "bool"), (t.is_integer, "int"), (t.is_floating, "float"), (t.is_decimal, "decimal"),
        (lambda d: t.is_string(d) or t.is_large_string(d), "str"), (t.is_date, "date"),
        (lambda d: t.is_timestamp(d) and d.tz is not None, "timestamp"),
        (lambda d: t.is_timestamp(d) and d.tz is None, "timestamp_ntz"), (lambda d: t.is_binary(d) or t.is_large_binary(d), "bytes"),
    )
    return next((family for check, family in checks if check(dtype)), None)


def compatible(a: str, b: str) -> bool:
    return a == b or frozenset({a, b}) in _COMPATIBLE


def of_values(values: Iterable[Any]) -> frozenset[str]:
    """The families of the non-None values (an unknown type counts as its own name). A value's
    family depends on its type alone, but for a datetime's zone: each other type is asked
    once (the reference interpreter asks this of every key value it joins)."""
    values = [v for v in values if v is not None]
    families = set()
    for kind in set(map(type, values)):
        if issubclass(kind, datetime.datetime):
            families |= {of_value(v) for v in values if type(v) is kind}
        else:
            families.add(_of_type(kind) or kind.__name__)
    return frozenset(families)


def _of_type(kind: type) -> Optional[str]:
    """The family of every value of type `kind` (not a datetime: its zone decides; see `of_value`)."""
    for family_type, family in ((bool, "bool"), (int, "int"), (float, "float"), (decimal.Decimal, "decimal"),
                                (str, "str"), (datetime.date, "date"), ((bytes, bytearray), "bytes")):
        if issubclass(kind, family_type):
            return family
    return None


def column_family(families: frozenset[str]) -> Optional[str]:
    """The one family a column of values of `families` is stored as; None when there is no
    value; raises ValueError when the values cannot share one column (ints and floats
    included: a double column would give the ints back as floats, docs/backend.md)."""
    if not families:
        return None
    if len(families) > 1:  # ints and floats too: a double column would give the ints back as floats
        raise ValueError(", ".join(sorted(families)))
    (only,) = families
    return only


def advice(a: str, b: str) -> str:
    """How to make two key families comparable: convert one side in a map."""
    target = {"str": "str(...)", "int": "int(...)", "float": "float(...)", "decimal": "Decimal(...)"}
    how = target.get(a) or target.get(b) or "a conversion"
    return f"convert one side in a map (e.g. with {how}) so both keys hold the same type"

"""Look-ups in constant tables (`udflow.tables`) as Spark expressions.

    REGIONS.get(r["country"], "other")
      ->  CASE country WHEN 'FR' THEN 'EU' WHEN 'DE' THEN 'EU' ... ELSE 'other' END
    r["coupon"] in COUPONS
      ->  coalesce(coupon IN ('WELCOME10', 'SPRING5', 'VIP20'), FALSE)
    RATES[r["k"]]
      ->  CASE k WHEN 'a' THEN 0.5 ... ELSE raise_error(KeyError: 'z') END
    DAYS[d.weekday()]                       (a tuple or list: both ends' positions)
      ->  CASE weekday WHEN 0 THEN 'Mon' ... WHEN -7 THEN 'Mon' ... ELSE raise_error(IndexError) END
    SHIP.get(r["c"], {}).get(r["s"], 0.0)   (a dict of dicts: one CASE per inner dict)
      ->  CASE c WHEN 'FR' THEN CASE s WHEN 'std' THEN 4.9 ... ELSE 0.0 END ... ELSE 0.0 END

A key matches as Python's dict matches it: by `==` (hash and equality agree on the
literal types), so `1`, `1.0` and `True` find the same entry and None finds a None key.
Where every key is of the looked-up value's own family (str, int, date) Spark's own `=`
is that equality, and a value None matches no key: the simple `CASE x WHEN` and `IN`
forms (Spark turns a long `IN` into a hash set). Otherwise each key is compared with the
native lowering's `==` (`NativeLowering._equality`: ints with floats exactly, NaN equal
to nothing), for tables of at most MIXED_ENTRIES keys.

The values of a `get` or `[]` and the default must share one family (or be None): a
column holds one type, and a table of ints and floats would return both. A table that
changed since the analysis (`Table.unchanged`) has no native form: the operator runs its
function in Python, which reads the table as it is now.
"""

from __future__ import annotations

import dataclasses

from udflow.spark_backend import python_words, sql
from udflow.spark_backend.native_types import NotNative, Typed, one_family, wider_decimal
from udflow.tables import InTable, NestedGet, Table, TableGet, TableItem
from udflow.expr import Lit

SIMPLE_FAMILIES = ("str", "int", "date")
MIXED_ENTRIES = 256


def table_get(low, t: TableGet) -> Typed:
    x, keys = _key_and_keys(low, t.table, t.key)
    values = [low.lower(Lit(v)) for v in t.table.values]
    default = low.lower(t.default)
    return _select(low, x, keys, values, default, default.sql)


def table_item(low, t: TableItem) -> Typed:
    if t.table.kind == "sequence":
        return _sequence_item(low, t)
    x, keys = _key_and_keys(low, t.table, t.key)
    values = [low.lower(Lit(v)) for v in t.table.values]
    return _select(low, x, keys, values, None, _key_error(low, x))


def nested_get(low, t: NestedGet) -> Typed:
    """The outer key's CASE, each branch its inner dict's CASE (`udflow.tables.NestedGet`):
    a missing inner key gives the default (`get`) or KeyError of the inner key (`[]`); a
    missing outer key the empty dict's (`get`) or KeyError of the outer key."""
    if not t.table.unchanged():
        raise NotNative(f"{t.table.name} changed since the function was analysed (Python reads it as it is now)")
    x, y = low.lower(t.outer_key), low.lower(t.inner_key)
    default = low.lower(t.default) if t.inner == "get" else None
    inner_missing = default.sql if default is not None else _key_error(low, y)
    outer_keys, branches = [low.lower(Lit(k)) for k in t.table.keys], []
    for inner in t.table.values:
        if isinstance(t.inner_key, Lit):  # found on the driver: inner dicts of different value types agree
            branches.append(_constant_key_value(low, inner, t.inner_key.value, default, y))
            continue
        keys = _comparable_keys(y, [low.lower(Lit(k)) for k in inner.keys], inner.name)
        branches.append(_select(low, y, keys, [low.lower(Lit(v)) for v in inner.values], default, inner_missing))
    _comparable_keys(x, outer_keys, t.table.name)
    if t.outer == "get":  # a missing outer key: the empty dict's look-up
        missing = Typed(inner_missing, default.family, default.nullable, decimal=default.decimal) \
            if default is not None else None
        return _select(low, x, outer_keys, branches, missing, inner_missing)
    return _select(low, x, outer_keys, branches, None, _key_error(low, x))


def _constant_key_value(low, inner: Table, key, default, y: Typed) -> Typed:
    """One inner dict's value of a constant key, as Python finds it: the value, else the
    default (`get`) or a KeyError (`[]`, typed None: it has no value)."""
    found = inner.python()
    if key in found:
        return low.lower(Lit(found[key]))
    return default if default is not None else Typed(_key_error(low, y), "none", True)


def _key_error(low, x: Typed) -> str:
    """SQL raising Python's KeyError of the key `x`."""
    return low.raised(sql.call("base64", sql.call("encode", sql.call("concat", "'KeyError: '", _repr(x)), "'UTF-8'")))


def _sequence_item(low, t: TableItem) -> Typed:
    """`T[i]` of a constant tuple or list: the member at i, counted from the end where i < 0
    (a CASE over both spellings of each position); past either end Python's IndexError, None
    its TypeError. An index of another type (a str: TypeError) is not native."""
    if not t.table.unchanged():
        raise NotNative(f"{t.table.name} changed since the function was analysed (Python reads it as it is now)")
    x = low.lower(t.key)
    if x.family not in ("int", "bool"):
        raise NotNative(f"an index of {x.family} into {t.table.name}")
    members = t.table.python()
    n = len(members)
    guards = low.none_guard(f"{t.table.name}[...]", x, run=lambda i: members[i])
    values = [low.lower(Lit(v)) for v in members]
    keys = [low.lower(Lit(i)) for i in range(n)] + [low.lower(Lit(i - n)) for i in range(n)]
    index = Typed(sql.cast(x.sql, "BIGINT"), "int", x.nullable)  # True is 1
    missing = low.error(python_words.raised_by(lambda i: members[i], n))
    selected = _select(low, index, keys, values + values, None, missing)
    return dataclasses.replace(selected, sql=low.guarded(guards, selected.sql))


def in_table(low, t: InTable) -> Typed:
    x, keys = _key_and_keys(low, t.table, t.operand)
    if _simple(x, keys):
        found = f"coalesce({x.sql} IN ({', '.join(k.sql for k in keys)}), FALSE)" if keys else "FALSE"
    else:
        found = sql.conjunction("OR", [low._equality("==", x, k).sql for k in keys]) if keys else "FALSE"
    return Typed(f"(NOT {found})" if t.negated else found, "bool", False)


def _key_and_keys(low, table: Table, key) -> tuple[Typed, list]:
    if not table.unchanged():
        raise NotNative(f"{table.name} changed since the function was analysed (Python reads it as it is now)")
    x = low.lower(key)
    return x, _comparable_keys(x, [low.lower(Lit(k)) for k in table.keys], table.name)


def _comparable_keys(x: Typed, keys: list, name: str) -> list:
    """`keys`, where a look-up of `x` compares them natively: each of x's own family (Spark's
    `=`), or at most MIXED_ENTRIES of others (a chain of the native `==`)."""
    if not _simple(x, keys) and len(keys) > MIXED_ENTRIES:
        raise NotNative(f"a look-up of a {x.family} in {name}, {len(keys)} keys of other types")
    return keys


def _simple(x: Typed, keys: list) -> bool:
    """Every key of the looked-up value's own family, which Spark's `=` compares as Python does."""
    return x.family in SIMPLE_FAMILIES and all(k.family == x.family for k in keys)


def _select(low, x: Typed, keys: list, values: list, default, otherwise: str) -> Typed:
    """The value of the first key equal to x, else `otherwise`."""
    results = values + ([default] if default is not None else [])
    family = one_family(results, "a look-up whose values are") if results else "none"
    decimal = None
    for r in (r for r in results if r.family == "decimal"):
        decimal = r.decimal if decimal is None else wider_decimal(family, Typed("", family, False, decimal=decimal), r)
    nullable = any(r.nullable or r.family == "none" for r in results)
    if _simple(x, keys):
        whens = " ".join(f"WHEN {k.sql} THEN {v.sql}" for k, v in zip(keys, values))
        text = f"CASE {x.sql} {whens} ELSE {otherwise} END" if keys else otherwise
    else:
        text = sql.case([(low._equality("==", x, k).sql, v.sql) for k, v in zip(keys, values)], otherwise)
    return Typed(text, family, nullable, decimal=decimal)


def _repr(x: Typed) -> str:
    """SQL of Python's repr(x) for the key of a KeyError: exact for None, ints, and strs of
    printable ASCII without quotes or backslashes (Python escapes the others; those show
    between double quotes as they are)."""
    if x.family == "bool":  # Spark's cast writes true/false
        return sql.case([(f"({x.sql} IS NULL)", "'None'"), (x.sql, "'True'")], "'False'")
    if x.family == "int":
        text = sql.cast(x.sql, "STRING")
    elif x.family == "str":
        plain = f"({x.sql} RLIKE '^[ -&(-\\\\[\\\\]-~]*$')"
        text = sql.case([(plain, f"concat('''', {x.sql}, '''')")], f"concat('\"', {x.sql}, '\"')")
    else:
        text = sql.cast(x.sql, "STRING")
    return f"coalesce({text}, 'None')" if x.nullable else text

"""Spark types for Python values, and the output schema of a Python operator.

Spark needs the schema of a Python operator's output before it runs. Fields an
operator carries over keep their Spark type; fields it creates (or retypes)
get the type of the values it produced on a sample of its real input:

    bool -> boolean   int -> bigint   float -> double    str -> string
    Decimal -> decimal(38,18) (more scale if the sample needs it)   date -> date   datetime -> timestamp
    bytes -> binary   int and float mixed -> double

A field whose sampled values are all None has no type to infer; unless the
sample is the whole output (then no row can carry a value), that is an error
telling the user to declare the type with `@output_types(field="ddl type")`.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any, Callable, Iterable, Mapping, Optional

from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    _parse_datatype_string,
)

from udflow import keytypes
from udflow.errors import KeyTypeError, UdflowError

NEW_DECIMAL = DecimalType(38, 18)
_INT_RANGE = {
    LongType: 63,
    IntegerType: 31,
    ShortType: 15,
    ByteType: 7,
}


def output_types(**types: str) -> Callable:
    """Decorator: declare the Spark types of fields a function creates, e.g.

        @output_types(discount="decimal(15,2)", note="string")
        def f(r): ...

    Needed only when a sample of the input cannot show a value of the field.
    """

    def mark(fn: Callable) -> Callable:
        fn.__udflow_output_types__ = dict(types)
        return fn

    return mark


def declared_types(fn: Any) -> dict[str, str]:
    return dict(getattr(fn, "__udflow_output_types__", None) or {})


def type_of(value: Any) -> Optional[DataType]:
    """The Spark type a Python value is stored as; None for None or an unsupported type."""
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        return LongType()
    if isinstance(value, float):
        return DoubleType()
    if isinstance(value, str):
        return StringType()
    if isinstance(value, decimal.Decimal):
        return NEW_DECIMAL
    if isinstance(value, datetime.datetime):
        return TimestampNTZType() if value.tzinfo is None else TimestampType()
    if isinstance(value, datetime.date):
        return DateType()
    if isinstance(value, (bytes, bytearray)):
        return BinaryType()
    return None


def holds_instant(value: datetime.datetime) -> bool:
    """Whether an aware datetime comes back from a timestamp column as it went in: Spark keeps
    the instant and gives it back in the session's time zone, UTC in udflow's own session."""
    return value.utcoffset() == datetime.timedelta(0)


def decimal_type_of(values: Iterable[decimal.Decimal]) -> DecimalType:
    """The narrowest decimal(p, s) that holds every value exactly (for in-memory sources)."""
    scale = digits = 0
    for v in values:
        sign, ds, exp = v.as_tuple()
        scale = max(scale, -exp if isinstance(exp, int) else 0)
        digits = max(digits, len(ds) + exp if isinstance(exp, int) else 0)
    precision = max(1, digits + scale)
    if precision > 38:
        return NEW_DECIMAL
    return DecimalType(precision, scale)


def created_decimal_type(values: Iterable[decimal.Decimal]) -> DecimalType:
    """decimal(38, 18), with more fraction digits when a sampled value needs them (and the
    integer digits still fit): Decimal arithmetic easily produces 28 significant digits."""
    exact = decimal_type_of(values)
    int_digits = exact.precision - exact.scale
    return DecimalType(38, max(NEW_DECIMAL.scale, min(exact.scale, 38 - int_digits)))


def fits(value: Any, dtype: DataType) -> bool:
    """Whether `value` can be stored in a column of `dtype` without changing it."""
    if value is None:
        return True
    for int_type, bits in _INT_RANGE.items():
        if isinstance(dtype, int_type):
            return isinstance(value, int) and not isinstance(value, bool) and -(2**bits) <= value < 2**bits
    if isinstance(dtype, (DoubleType, FloatType)):
        return isinstance(value, float)
    if isinstance(dtype, DecimalType):
        if not isinstance(value, decimal.Decimal) or not value.is_finite():
            return False
        _, ds, exp = value.as_tuple()
        return -exp <= dtype.scale and len(ds) + exp <= dtype.precision - dtype.scale
    if isinstance(dtype, TimestampNTZType):
        return isinstance(value, datetime.datetime) and value.tzinfo is None
    if isinstance(dtype, TimestampType):
        return isinstance(value, datetime.datetime) and value.tzinfo is not None and holds_instant(value)
    if isinstance(dtype, DateType):
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
    expected = {BooleanType: bool, StringType: str, BinaryType: (bytes, bytearray)}
    for t, py in expected.items():
        if isinstance(dtype, t):
            return isinstance(value, py)
    return False


def unify(label: str, field: str, values: list[Any], decimals: Callable = lambda vs: NEW_DECIMAL) -> DataType:
    """One Spark type for the non-None `values` of `field`, or an error naming both."""
    kinds: dict[str, DataType] = {}
    for v in values:
        t = type_of(v)
        if t is None:
            raise UdflowError(
                f"{label}: field {field!r} holds a {type(v).__name__} ({v!r:.80}); the Spark backend "
                "stores bool, int, float, str, Decimal, date, datetime and bytes"
            )
        if isinstance(t, TimestampType) and not holds_instant(v):
            raise UdflowError(
                f"{label}: field {field!r} holds an aware datetime at UTC{v:%z} ({v!r:.80}); a Spark "
                "timestamp keeps the instant and gives it back in UTC, so convert it with "
                ".astimezone(datetime.timezone.utc), or keep it naive"
            )
        kinds[t.simpleString()] = t
    names = set(kinds)
    if names == {"timestamp", "timestamp_ntz"}:
        raise UdflowError(
            f"{label}: field {field!r} holds naive and aware datetimes; Python cannot compare them and "
            "a Spark column has one type, so make them all naive or all aware"
        )
    if names == {"bigint", "double"}:
        an_int = next(v for v in values if type_of(v) == LongType())
        a_float = next(v for v in values if isinstance(v, float))
        raise UdflowError(
            f"{label}: field {field!r} holds ints and floats ({an_int!r} and {a_float!r}); a Spark column "
            "has one type, and a double column would give the ints back as floats: make them all floats "
            "(float(x)) or all ints"
        )
    if len(names) > 1:
        raise UdflowError(
            f"{label}: field {field!r} holds values of different types ({', '.join(sorted(names))}); "
            "a Spark column has one type, so convert them to one"
        )
    (only,) = kinds.values()
    if isinstance(only, DecimalType):
        return decimals([v for v in values if v is not None])
    return only


def rows_schema(label: str, fields: tuple[str, ...], rows: list[Mapping]) -> StructType:
    """The schema of in-memory rows: every value is seen, so an all-None field may be a string."""
    out = []
    for f in fields:
        values = [r.get(f) for r in rows if r.get(f) is not None]
        dtype = unify(label, f, values, decimal_type_of) if values else StringType()
        past = next((v for v in values if not fits(v, dtype)), None) if isinstance(dtype, LongType) else None
        if past is not None:
            raise UdflowError(
                f"{label}: field {f!r} holds {past!r:.80}, an int past 64 bits; a Spark bigint column "
                "holds -2**63 .. 2**63 - 1, so store it as a Decimal or a str, or run the flow with "
                "engine='reference'"
            )
        out.append(StructField(f, dtype, True))
    return StructType(out)


def output_schema(
    label: str,
    location: str,
    sample: list[dict],
    complete: bool,
    input_schema: StructType,
    known_fields: Optional[frozenset[str]],
    declared: Mapping[str, str],
) -> tuple[Optional[StructType], Optional[str]]:
    """The schema of an operator's output from a sample of it, or (None, a field it cannot type).

    `complete` says the sample is the operator's whole output (so an all-None
    field cannot hold anything else). A field of the input keeps its type when
    every sampled value fits it.
    """
    inherited = {f.name: f.dataType for f in input_schema.fields}
    names: dict[str, None] = {}
    for r in sample:
        names.update(dict.fromkeys(r))
    names.update(dict.fromkeys(sorted(known_fields or ())))
    names.update(dict.fromkeys(declared))
    if complete and not sample and known_fields is None:
        # no record at all: any columns are right, and the input's let the operators above
        # find the fields a function that copies its input would have passed on
        names.update(dict.fromkeys(inherited))
    out = []
    for name in names:
        values = [r[name] for r in sample if r.get(name) is not None]
        if name in declared:
            dtype = _parse_datatype_string(declared[name])
        elif name in inherited and all(fits(v, inherited[name]) for v in values):
            dtype = inherited[name]
        elif values:
            dtype = unify(label, name, values, created_decimal_type)
        elif complete:
            dtype = StringType()  # no record carries a value: any type holds them
        else:
            return None, name
        out.append(StructField(name, dtype, True))
    return StructType(out), None


def missing_type_error(label: str, location: str, field: str, sample_size: int) -> UdflowError:
    return UdflowError(
        f"{label}: cannot infer the Spark type of field {field!r} created by {location}: "
        f"it is None in every one of {sample_size} sampled output record(s). Declare its type on the "
        f"function, e.g. `@udflow.spark_backend.output_types({field}=\"double\")`"
    )


def key_family(dtype: DataType) -> Optional[str]:
    """The key family (`udflow.keytypes`) of a Spark column type; None for other types."""
    for types, family in (
        ((BooleanType,), "bool"), (tuple(_INT_RANGE), "int"), ((DoubleType, FloatType), "float"),
        ((DecimalType,), "decimal"), ((StringType,), "str"), ((DateType,), "date"),
        ((TimestampType,), "timestamp"), ((TimestampNTZType,), "timestamp_ntz"), ((BinaryType,), "bytes"),
    ):
        if isinstance(dtype, types):
            return family
    return None


def clashing_keys(left: StructType, left_key: tuple, right: StructType, right_key: tuple) -> list[tuple[str, str]]:
    """The key pairs whose column types Spark would cast to compare where Python finds the
    values unequal (`udflow.keytypes`)."""
    out = []
    for lk, rk in zip(left_key, right_key):
        lf, rf = key_family(left[lk].dataType), key_family(right[rk].dataType)
        if lf is not None and rf is not None and not keytypes.compatible(lf, rf):
            out.append((lk, rk))
    return out


def key_type_error(label: str, lk: str, lf: DataType, rk: str, rf: DataType) -> KeyTypeError:
    lf, rf = key_family(lf), key_family(rf)
    return KeyTypeError(
        f"{label}: key field {lk!r} holds {lf} values and key field {rk!r} holds {rf} values; "
        f"the engines would compare them differently, so {keytypes.advice(lf, rf)}"
    )


def common_key_type(a: DataType, b: DataType) -> Optional[DataType]:
    """The type two comparable key columns of different types are both cast to, so that a
    co-group puts equal values in one group (a join casts by itself; a co-group does not):
    the wider integer, double, or a decimal that holds both exactly. None: already equal."""
    if a == b:
        return None
    fa, fb = key_family(a), key_family(b)
    if fa == fb == "int":
        return LongType()
    if fa == fb == "float":
        return DoubleType()
    if {fa, fb} <= {"int", "decimal"}:
        def digits(t: DataType) -> tuple[int, int]:  # (integer digits, scale)
            return (t.precision - t.scale, t.scale) if isinstance(t, DecimalType) else (19, 0)

        (ia, sa), (ib, sb) = digits(a), digits(b)
        scale = max(sa, sb)
        return DecimalType(min(38, max(ia, ib) + scale), scale)
    return None

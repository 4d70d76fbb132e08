"""What a name in a user's function holds, as the analysis resolves it: a module, a class.

    np.sqrt(r["x"])              names_module(frame, <np>, "numpy")       -> True
    math.floor(r["x"])           names_object(frame, <math>, math)        -> True
    dt.datetime.strptime(...)    names_object(frame, <dt.datetime>, datetime.datetime)

and the calls of a module's or a class's function that the IR names (`module_call`):

    math.hypot(r["x"], r["y"])   Call('math.hypot', (Field('x'), Field('y')))
    date.fromisoformat(s)        Call('datetime.date.fromisoformat', (...,))

a digest's hex of a str's UTF-8 bytes (`hexdigest_call`), and a Decimal quantized to a
constant exponent (`quantize_call`):

    hashlib.md5(s.encode()).hexdigest()    Call('hashlib.md5', (s,))
    x.quantize(CENTS, ROUND_HALF_UP)       Call('decimal.quantize', (x, Lit(Decimal('0.01')), Lit('ROUND_HALF_UP')))
"""

from __future__ import annotations

import ast
import codecs
import datetime
import decimal
import hashlib
import math
import re
import types
import unicodedata
from typing import Optional

from udflow.analysis.constants import ROUNDINGS, constant_number
from udflow.analysis.regex_terms import regex_call
from udflow.expr import Call, Lit
from udflow.expr_functions import FUNCTIONS, HEX_DIGESTS, NUMPY_MORE

# (the method's name, its arguments) -> (the class it is called on, the IR's name for it)
CLASS_CALLS = {("strptime", 2): (datetime.datetime, "datetime.strptime"),
               ("fromisoformat", 1): (datetime.date, "datetime.date.fromisoformat")}


def module_call(frame, func: ast.Attribute, args: list) -> Optional[Call]:
    """`math.f(...)`, numpy's `np.f(x)`, `re.sub(...)`, `datetime.strptime(s, fmt)` or `date.fromisoformat(s)`
    (`func` is the called attribute, `args` the arguments' terms): its term, or None where
    the name before the dot is not that module or class, or the IR has no such function."""
    if names_object(frame, func.value, math) and func.attr == "isclose":
        return None  # its forms with a term are `isclose_call`'s; a positional tolerance has none
    if names_object(frame, func.value, math) and f"math.{func.attr}" in FUNCTIONS and args:
        return Call(f"math.{func.attr}", tuple(args))
    if names_module(frame, func.value, "numpy") and f"numpy.{func.attr}" in FUNCTIONS and _numpy_arity(func.attr, args):
        return Call(f"numpy.{func.attr}", tuple(args))
    if names_object(frame, func.value, re):
        return regex_call(func.attr, args)
    if (pattern := compiled_pattern(frame, func.value)) is not None:
        return regex_call(func.attr, [Lit(pattern), *args])
    if names_object(frame, func.value, unicodedata) and func.attr == "normalize" and len(args) == 2 \
            and isinstance(args[0], Lit) and isinstance(args[0].value, str):
        return Call("unicodedata.normalize", tuple(args))
    owner, name = CLASS_CALLS.get((func.attr, len(args)), (None, None))
    if owner is not None and names_object(frame, func.value, owner):
        return Call(name, tuple(args))
    return None


# the flags a pattern may spell at its start, `(?imsxa)`, as `re.compile(p, flags)` gives them
INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"), (re.ASCII, "a"))


def compiled_pattern(frame, node) -> Optional[str]:
    """The pattern text of the compiled regular expression `node` names (`ZIP =
    re.compile(r"\\d{5}")`, read as `ZIP.match(s)`), its flags spelled at its start
    (`re.compile(p, re.I)` is `(?i)p`), so that its methods are `re`'s functions of that text.
    None where that text compiles with other flags than the pattern (re.DEBUG, a bytes
    pattern); a `PAT.match(s, pos)` has no term either (`regex_call` takes `re.match(p, s)`)."""
    objects = _objects(frame, node)
    if not objects or not all(isinstance(o, re.Pattern) and isinstance(o.pattern, str) for o in objects):
        return None
    spelled = {(o.pattern, o.flags) for o in objects}
    if len(spelled) != 1:
        return None
    pattern, flags = spelled.pop()
    letters = "".join(letter for flag, letter in INLINE_FLAGS if flags & flag)  # again if the text spells it
    spelt = f"(?{letters}){pattern}" if letters else pattern
    try:
        return spelt if re.compile(spelt).flags == flags else None
    except re.error:  # not a text `re` reads alike with its flags at the start
        return None


ISCLOSE_DEFAULTS = (Lit(1e-09), Lit(0.0))  # math.isclose's rel_tol and abs_tol


def isclose_call(frame, node: ast.Call, child) -> Optional[Call]:
    """`math.isclose(a, b, rel_tol=0.01, abs_tol=0.5)`, its tolerances (keyword-only in Python)
    constants that are finite and not negative (`child` gives each argument's term): the call
    with both tolerances in place, as floats. None for any other call, and for a tolerance
    Python refuses on every call (a negative one: ValueError), or one whose NaN or infinite
    products Spark would compare otherwise (`spark_backend.native_math`)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "isclose" and names_object(frame, func.value, math)
            and len(node.args) == 2 and not any(isinstance(a, ast.Starred) for a in node.args)):
        return None
    given = {k.arg: child(frame, k.value) for k in node.keywords}
    if not set(given) <= {"rel_tol", "abs_tol"}:
        return None
    tolerances = []
    for name, default in zip(("rel_tol", "abs_tol"), ISCLOSE_DEFAULTS):
        value = constant_number(given.get(name, default))
        if value is None or not math.isfinite(value) or value < 0:
            return None
        tolerances.append(Lit(float(value)))
    args = [child(frame, a) for a in node.args]
    return None if None in args else Call("math.isclose", (*args, *tolerances))


def hexdigest_call(frame, node: ast.Call, child) -> Optional[Call]:
    """`hashlib.sha256(s.encode()).hexdigest()` (also `.encode("utf-8")`, any spelling of
    UTF-8, and `md5`, `sha1`, `sha224`, `sha384`, `sha512`): the digest's hex of the UTF-8
    bytes of `s` (`child` gives its term), as one call. None for any other call: another
    codec or error handler, a digest updated or used twice, keyword arguments."""
    digest = node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr == "hexdigest" else None
    if node.args or node.keywords or not isinstance(digest, ast.Call) or digest.keywords or len(digest.args) != 1:
        return None
    name = getattr(digest.func, "attr", getattr(digest.func, "id", None))
    if name not in HEX_DIGESTS or not names_object(frame, digest.func, getattr(hashlib, name)):
        return None
    encoded = digest.args[0]
    if not (isinstance(encoded, ast.Call) and isinstance(encoded.func, ast.Attribute)
            and encoded.func.attr == "encode" and _utf8_strict(encoded)):
        return None
    text = child(frame, encoded.func.value)
    return None if text is None else Call(f"hashlib.{name}", (text,))


def _utf8_strict(encode: ast.Call) -> bool:
    """`.encode()` names UTF-8 and strict errors: no arguments, or constants that say so."""
    given = dict(zip(("encoding", "errors"), encode.args))
    given.update((k.arg, k.value) for k in encode.keywords)
    if len(encode.args) > 2 or not set(given) <= {"encoding", "errors"} \
            or not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in given.values()):
        return False
    try:
        named = codecs.lookup(given["encoding"].value).name if "encoding" in given else "utf-8"
    except LookupError:  # Python raises it on every call: no model
        return False
    return named == "utf-8" and given.get("errors", ast.Constant("strict")).value == "strict"


def quantize_call(frame, node: ast.Call, child) -> Optional[Call]:
    """`x.quantize(exp)` or `x.quantize(exp, rounding)` (also by keyword), `exp` a constant
    Decimal and `rounding` one of decimal's ROUND_ constants: the call with its rounding in
    place (Lit(None): the context's, as Python reads it). None for any other call (a context
    given, a computed exponent): the receiver may be any term, its type decides later."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "quantize") \
            or any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) > 2:
        return None
    given = dict(zip(("exp", "rounding"), node.args))
    given.update((k.arg, k.value) for k in node.keywords)
    if not set(given) <= {"exp", "rounding"} or len(given) != len(node.args) + len(node.keywords) or "exp" not in given:
        return None
    terms = {name: child(frame, value) for name, value in given.items()}
    exponent, rounding = terms["exp"], terms.get("rounding", Lit(None))
    receiver = child(frame, func.value)
    if receiver is None or not (isinstance(exponent, Lit) and isinstance(exponent.value, decimal.Decimal)):
        return None
    if not (isinstance(rounding, Lit) and (rounding.value is None or rounding.value in ROUNDINGS)):
        return None
    return Call("decimal.quantize", (receiver, exponent, rounding))


def names_module(frame, node, name: str) -> bool:
    """`node` names the module called `name` (`np` for numpy), without importing it."""
    objects = _objects(frame, node)
    return bool(objects) and all(isinstance(o, types.ModuleType) and o.__name__ == name for o in objects)


def _numpy_arity(name: str, args: list) -> bool:
    wanted = NUMPY_MORE.get(name, 1)
    return len(args) in (1, 2) if wanted is None else len(args) == wanted


def names_object(frame, node, obj) -> bool:
    """`node` names `obj` (as the function's globals bind it): `math`, or the `datetime`
    class, also as `dt.datetime`."""
    if isinstance(node, ast.Attribute):
        owners = _objects(frame, node.value)
        return bool(owners) and all(getattr(o, node.attr, None) is obj for o in owners)
    objects = _objects(frame, node)
    return bool(objects) and all(o is obj for o in objects)


def _objects(frame, node) -> list:
    """The objects a name may hold, or [] where the analysis does not resolve it to objects."""
    if not isinstance(node, ast.Name):
        return []
    try:
        found = frame.lookup(node.id, node)
    except Exception:  # noqa: BLE001 - not a name the analysis resolves
        return []
    objects = [getattr(a, "obj", _NOT_AN_OBJECT) for a in found.atoms]
    return [] if any(o is _NOT_AN_OBJECT for o in objects) else objects


_NOT_AN_OBJECT = object()  # an atom that is not an object (a field's value, a computed one)

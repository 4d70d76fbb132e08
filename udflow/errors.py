"""Errors a user can cause.

Every message names the operator (and the field or record) involved, so that
nothing a user can cause ends in a bare traceback from pyspark, pyDatalog or z3.
"""


class UdflowError(Exception):
    """Base class of every error udflow raises on purpose."""


class FlowConstructionError(UdflowError):
    """The operator tree is malformed: refused when the Flow is built."""


class UdfRuntimeError(UdflowError):
    """A user function raised, or returned something of the wrong shape, at run time."""


class FieldCollisionError(UdfRuntimeError):
    """The two records a concatenation (`match`/`cross` with `f=None`) puts together both
    carry a field that construction could not see on both sides (one of them comes from a
    function the analysis cannot read): `{**left, **right}` would silently keep one value.
    Raised by both engines, with the same message (`collision_message`)."""


def collision_message(label: str, name: str) -> str:
    return (f"{label}: the left and the right record both carry field {name!r}, so the concatenation "
            f"{{**left, **right}} would silently keep one of the two values; give the field another "
            f"name in one input (source(..., prefix=...), or in the function that writes it), or pass "
            f"f=lambda left, right: ... to say which to keep")


class AnalysisError(UdflowError):
    """A function could not be analysed in a way the caller asked for."""


class OptimizationError(UdflowError):
    """The optimizer could not do what it was asked."""


class StalePlanError(UdflowError):
    """A reordered plan's proofs assumed values its functions read from outside their code
    (module globals, closure cells, defaults) that have been rebound since it was optimised."""


class KeyTypeError(UdflowError):
    """Two key fields compared by a join or co-group hold values of incompatible types
    (see docs/backend.md, "Keys"): found at run time, where construction could not see the types."""


class FieldWarning(UserWarning):
    """A function reads a field its input cannot have (most likely a typo)."""


class NativeFallbackWarning(UserWarning):
    """An operator planned native (its model has an exact native form for some input types)
    runs as Python on its input's actual types: `physical()` and `explain()` read the model
    before the types, so this names the operator, the user's function and the construct."""


def closest(name: str, candidates) -> str:
    """` did you mean 'x'?` for the candidate closest to `name` (difflib), or ''."""
    import difflib

    found = difflib.get_close_matches(name, sorted(map(str, candidates)), n=1, cutoff=0.6)
    return f" did you mean {found[0]!r}?" if found else ""


def user_failure(exc: BaseException, fn, fields=None) -> str:
    """`raised KeyError: 'x' (line 12); the record has no field 'x'; did you mean 'y'?`:
    what a user function raised, the line of its own code that raised it, and for a
    missing field the closest field the record has."""
    import inspect

    text = f"raised {type(exc).__name__}: {exc}"
    code = getattr(inspect.unwrap(fn), "__code__", None) if callable(fn) else None
    lines = [tb.tb_lineno for tb in _frames(exc.__traceback__) if code is not None and tb.tb_frame.f_code is code]
    if lines:
        text += f" (line {lines[-1]})"
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str) and fields is not None:
        fields = list(fields)
        if exc.args[0] not in fields:
            text += f"; the record has no field {exc.args[0]!r};{closest(exc.args[0], fields) or ' its fields: ' + ', '.join(sorted(fields))}"
    return text


def from_user_frame(exc: BaseException, fn) -> BaseException:
    """`exc` with its traceback starting at the user's function (udflow's frames that called
    it dropped), so that the user's code is the first thing its traceback shows."""
    import inspect

    code = getattr(inspect.unwrap(fn), "__code__", None) if callable(fn) else None
    for tb in _frames(exc.__traceback__):
        if code is not None and tb.tb_frame.f_code is code:
            return exc.with_traceback(tb)
    return exc


def surfaced(method):
    """A public entry point whose UdflowErrors reach the user without udflow's frames: the
    traceback starts at the user's call, and only a cause of the user's own (their function's
    exception, from its own frame on) is chained, not udflow's internal handling."""
    import functools

    @functools.wraps(method)
    def entry(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except UdflowError as exc:
            exc.__suppress_context__ = True
            raise exc.with_traceback(None)  # noqa: B904 - the cause, if any, stays chained
    return entry


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next

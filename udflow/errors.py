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


class AnalysisError(UdflowError):
    """A function could not be analysed in a way the caller asked for."""


class OptimizationError(UdflowError):
    """The optimizer could not do what it was asked."""

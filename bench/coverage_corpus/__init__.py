"""A corpus of one-record pipeline functions written the way data engineers write them
(issue 29, "What must be shown": the coverage table). `bench/coverage.py` classifies each
by how udflow runs it (fully native, partly native, Python) and, with `--check`, runs it
on Spark and on the reference interpreter and compares the records.

Each module lists its functions in `FUNCTIONS = [(fn, kind, fields)]`: `kind` is "map"
(`def f(r): return {**r, "out": ...}`) or "filter" (`def p(r): return <bool>`), `fields`
the input schema the function expects, field -> value family. A family is one of "int",
"float", "str", "date", "datetime", "bool", "decimal", optionally narrowed by a variant
after a colon ("str:email", "int:qty", "float:rate", "datetime:utc"...) that says what
realistic values look like (`bench.coverage.VALUES`); the Python type is the family's.
"""

from __future__ import annotations

import importlib

MODULES = ("arithmetic", "strings", "dates", "math_numpy", "lookups", "helpers", "conditionals",
           "cleaning", "mixed")


def modules():
    """(module name, module) for every corpus module, in order."""
    return [(name, importlib.import_module(f"{__name__}.{name}")) for name in MODULES]


def functions():
    """(module name, fn, kind, fields) for every function of the corpus."""
    return [(name, fn, kind, fields) for name, mod in modules() for fn, kind, fields in mod.FUNCTIONS]

"""Broken on purpose: the module cannot be imported (a dependency that does not exist)."""

import udflow as uf
import udflow_no_such_dependency  # noqa: F401

flow = uf.source("t", rows=[{"a": 1}]).filter(lambda r: r["a"] > 0)

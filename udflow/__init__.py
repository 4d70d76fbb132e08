"""udflow: reorder data pipelines of black-box Python functions, safely, and run them on Spark.

The public API is loaded on first use (PEP 562): Spark's executors import
`udflow.spark_backend.udf` to run a flow's functions, and should need nothing
of the optimizer (networkx, pyDatalog, z3) to do it.
"""

from importlib import import_module

from udflow.errors import (
    AnalysisError,
    FieldCollisionError,
    FlowConstructionError,
    OptimizationError,
    UdflowError,
    UdfRuntimeError,
)

_PUBLIC = {
    "Flow": "udflow.flow",
    "source": "udflow.flow",
    "analyze": "udflow.analysis",
    "annotate": "udflow.analysis",
    "optimize": "udflow.engine",
    "hint": "udflow.engine",
    "pipeline": "udflow.batch.discovery",
    "from_spark": "udflow.frontend",
    "optimize_dataframe": "udflow.frontend",
    "suggest": "udflow.frontend",
}

__all__ = [
    "Flow",
    "source",
    "analyze",
    "optimize",
    "hint",
    "annotate",
    "pipeline",
    "from_spark",
    "optimize_dataframe",
    "suggest",
    "UdflowError",
    "FlowConstructionError",
    "UdfRuntimeError",
    "FieldCollisionError",
    "AnalysisError",
    "OptimizationError",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'udflow' has no attribute {name!r}")
    value = getattr(import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

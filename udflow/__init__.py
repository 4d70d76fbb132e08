"""udflow: reorder data pipelines of black-box Python functions, safely, and run them on Spark."""

from udflow.errors import (
    AnalysisError,
    FlowConstructionError,
    OptimizationError,
    UdflowError,
    UdfRuntimeError,
)
from udflow.flow import Flow, source
from udflow.analysis import analyze

__all__ = [
    "Flow",
    "source",
    "analyze",
    "UdflowError",
    "FlowConstructionError",
    "UdfRuntimeError",
    "AnalysisError",
    "OptimizationError",
]
__version__ = "0.1.0"

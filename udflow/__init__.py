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
from udflow.engine import hint, optimize
from udflow.analysis import annotate
from udflow.batch.discovery import pipeline

__all__ = [
    "Flow",
    "source",
    "analyze",
    "optimize",
    "hint",
    "annotate",
    "pipeline",
    "UdflowError",
    "FlowConstructionError",
    "UdfRuntimeError",
    "AnalysisError",
    "OptimizationError",
]
__version__ = "0.1.0"

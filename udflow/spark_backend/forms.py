"""Spark's native forms (`udflow.native_forms`), handed to the engine that plans for Spark."""

from __future__ import annotations

from udflow.native_forms import NativeForms
from udflow.spark_backend.native_calls import NATIVE_CALLS, arity_fits
from udflow.spark_backend.native_case import case_mapped
from udflow.spark_backend.native_caught import native_form
from udflow.spark_backend.native_math import field_contracts
from udflow.spark_backend.native_parse import parses
from udflow.spark_backend.native_strings import digest_bucket
from udflow.spark_backend.python_calls import BOUNDED, RESULTS

SPARK_FORMS = NativeForms(
    name="spark",
    calls=NATIVE_CALLS,
    arity_fits=arity_fits,
    case_mapped=case_mapped,
    caught_native=native_form,
    parses=parses,
    digest_bucket=digest_bucket,
    field_contracts=field_contracts,
    python_results=RESULTS,
    bounded=BOUNDED,
)


def forms_of(native: bool):
    """Spark's forms, or None (every function in Python) where `native` is False."""
    return SPARK_FORMS if native else None

"""What a backend runs natively: the questions the physical plan asks of it, as data.

`engine.steps` decides, per operator, whether its function's model runs natively, and
which of its calls run as Python inside the native plan. The answers belong to the
backend that will run the plan (which calls have an exact native form there), so the
backend hands them to the engine as one `NativeForms` value instead of the engine
importing the backend's tables. No forms (None) plans every function as Python, as
`collect(native=False)` runs it.

    from udflow.spark_backend.forms import SPARK_FORMS
    physical_plan(root, forms=SPARK_FORMS)    # Spark's native forms
    physical_plan(root, forms=None)           # every function in Python
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional


@dataclass(frozen=True, eq=False)  # compared and hashed as the one object it is
class NativeForms:
    """A backend's native forms.

    calls           the call names with a native form for some arguments
    arity_fits      (name, argument terms) -> whether that call's form takes these arguments
    case_mapped     (call, the string an explosion splits or None) -> whether a case mapping
                    runs natively (on the rows where its receiver is ASCII)
    caught_native   (a `Caught` term) -> whether its try statement has a native form
    parses          (call, alone=...) -> whether a parse of text has a strict native form
    digest_bucket   (term) -> whether it is `int(<hex digest>, 16) % n`, native whole
    field_contracts (a model's case) -> (field, term, the calls run natively under a stated
                    contract there) for each field it writes
    python_results  call name -> its result families: the calls that run as Python terms
                    inside the native plan (a scalar UDF over the columns they read)
    bounded         the calls among `python_results` kept whole in Python where no bound
                    keeps their value inside a native column (name -> why)
    """

    name: str
    calls: frozenset
    arity_fits: Callable[[str, tuple], bool]
    case_mapped: Callable[[Any, Optional[Any]], bool]
    caught_native: Callable[[Any], bool]
    parses: Callable[..., bool]
    digest_bucket: Callable[[Any], bool]
    field_contracts: Callable[[Any], list]
    python_results: Mapping[str, Any]
    bounded: Mapping[str, str]

    def has_form(self, name: str, args: tuple) -> bool:
        """Whether a call of `name` over `args` has a native form."""
        return name in self.calls and self.arity_fits(name, args)

    def __repr__(self) -> str:
        return f"NativeForms({self.name})"

"""How each operator of a plan runs on Spark, predicted from the models (no Spark needed).

    native             Spark Columns from the function's model (`docs/native.md`): one
                       Catalyst plan with its neighbours, predicates pushed into scans
    Python (scalar)    a filter without a model: an Arrow scalar UDF over its read set,
                       a predicate inside Catalyst's plan; a Map copying its record and
                       emitting at most one: a scalar UDF returning its written fields
    Python (batches)   everything else: the function per record or group over Arrow batches

For a Python operator the reason is the construct that kept it there, with its
line (`UdfProperties.model_reason`), or the call in its model that has no exact
native form. A modelled operator may still fall back to Python at run time when
a term has no exact native form for its input's types (float mixed with
Decimal, say) or its input is pickled Python records; the lowering records why
(`Lowering.python_reasons`).

    >>> print("\\n".join(execution_lines(flow.root)))
    Reduce[k](revenue)          native
    Map(parse)                  Python (batches): calls re.match, not modelled (line 12)
    Source(orders)              native scan
"""

from __future__ import annotations

from udflow.analysis.model import ExplodeModel, GroupFilterModel, ReduceModel, case_terms
from udflow.expr import Agg, Call
from udflow.helper_calls import HelperCall
from udflow.fields import properties_of, read_projection
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Source


def execution_lines(root: Node) -> list[str]:
    """One line per operator, top down: how it runs and, if in Python, why."""
    nodes = list(root.walk())
    width = max(len(n.label) for n in nodes)
    return [f"{n.label:<{width}}  {how_it_runs(n)}" for n in nodes]


def model_lines(root: Node) -> list[str]:
    """Each modelled function's model (what it computes, `docs/native.md`), indented under its
    operator's label."""
    out = []
    for node in root.walk():
        if getattr(node, "fn", None) is None:
            continue
        try:
            model = properties_of(node).model
        except Exception:  # noqa: BLE001 - not analysed: no model to show
            continue
        if model is not None:
            out.append(f"{node.label}:")
            out += [f"  {line}" for line in str(model).splitlines()]
    return out


def runs_natively(node: Node) -> bool:
    """Whether the backend runs the operator's function natively (predicted from its model)."""
    return getattr(node, "fn", None) is not None and how_it_runs(node).startswith("native")


def native_model(node: Node):
    """The model the backend runs natively (a `ReduceModel`, `GroupFilterModel`, ...), or None."""
    return properties_of(node).model if runs_natively(node) else None


def how_it_runs(node: Node) -> str:
    if isinstance(node, Source):
        return "native scan"
    if isinstance(node, (Match, Cross)) and node.fn is None:
        return "native join"
    if isinstance(node, Custom):
        return "its operator type's own lowering" if node.op_type.spark is not None else "Python (batches): custom operator"
    if isinstance(node, CoGroup):
        return "Python (batches): CoGroup functions have no model"
    try:
        props = properties_of(node)
    except Exception as exc:  # noqa: BLE001 - not analysed: it runs as written, in Python
        return f"Python (batches): not analysed ({type(exc).__name__})"
    if props.model is not None:
        blocked, in_python = _python_only_calls(props.model)
        if blocked is None:
            return "native" if not in_python else f"native, with Python for {'; '.join(in_python)}"
        why = blocked
    else:
        why = props.model_reason or "no model"
    if isinstance(node, Map) and _reads_known(node) and (node.is_filter or _one_record_copy(props)):
        return f"Python (scalar UDF): {why}"
    return f"Python (batches): {why}"


def _python_only_calls(model) -> tuple[str | None, list[str]]:
    """(the call that keeps the operator in Python, with its line; None when there is none) and
    the calls that run as Python inside the native plan (`spark_backend.python_calls`): a call
    the model has but no native form gives exactly (e.g. str.lower: Python's and the JVM's
    case tables differ). Inside an explosion or an aggregate's argument every such call
    keeps the operator in Python."""
    from udflow.spark_backend.native_calls import NATIVE_CALLS, arity_fits
    from udflow.spark_backend.python_calls import RESULTS

    in_python = []
    for line, term in case_terms(model):
        for t, in_aggregate in _calls(term):
            if isinstance(t, HelperCall):
                if in_aggregate or isinstance(model, (ExplodeModel, GroupFilterModel, ReduceModel)):
                    return f"calls your helper {t.name} where it cannot run as Python (line {line})", []
                in_python.append(f"your helper {t.name} (line {line})")
                continue
            if t.name in NATIVE_CALLS and arity_fits(t.name, t.args):
                continue
            if t.name in RESULTS and not in_aggregate and not isinstance(model, (ExplodeModel, GroupFilterModel)):
                in_python.append(f"{t.name} (line {line})")
            elif t.name not in NATIVE_CALLS:
                return f"calls {t.name}, which has no exact native form (line {line})", []
            else:
                return f"calls {t}, a form of {t.name} with no exact native form (line {line})", []
    return None, list(dict.fromkeys(in_python))


def _calls(term, in_aggregate: bool = False):
    """(call, whether it is inside an aggregate's argument) for every call in `term`."""
    if isinstance(term, (Call, HelperCall)):
        yield term, in_aggregate
    for child in term.children():
        yield from _calls(child, in_aggregate or isinstance(term, Agg))


def _one_record_copy(props) -> bool:
    """A Map the scalar path takes: `{**r, ...}` changing fields, removing none, at most one
    record per call (`spark_backend.scalar`; its written fields' types come from a sample)."""
    return bool(props.writes) and props.changed == props.writes and props.emits[1] is not None \
        and props.emits[1] <= 1


def _reads_known(node: Map) -> bool:
    try:
        return bool(read_projection(node))
    except Exception:  # noqa: BLE001 - unknown reads: the batch path
        return False

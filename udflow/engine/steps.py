"""Deciding the physical plan (`udflow.physical`): how each operator runs, from the models.

Decided bottom-up, once per operator and the steps of its inputs: whether an
operator can run natively depends on its input leaving as columns (a model over
pickled Python records has no columns to be Spark expressions of).

    operator                                      step
    --------------------------------------------  -------------------------------------------
    Source                                        scan
    Match / Cross without a function              join
    Custom with a Spark lowering                  operator
    a function whose model has an exact native    native (its Python fallback beside it)
    form, over columns
    filter over columns, its reads known          scalar
    Map over columns, reads known, copying its    scalar
    record ({**r, ...}), at most one record
    Map over columns, reads known, emitting its   forwarding
    input records unchanged
    Map over columns, reads known                 projected
    anything else                                 batches

A Python step's records leave it as columns when the function writes no field
and keeps only fields its input has (a filter, a projection); otherwise pickled.

A model's call with no exact native form runs as Python inside the native plan
where it stands in a row function's field (`spark_backend.python_calls`); on an
explosion's pieces, the list of what the pieces give is built by Python once per
record and exploded natively (`pieces_in_python`); inside a group filter or an
aggregate's argument it keeps the whole operator in Python.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

from udflow.analysis.model import ExplodeModel, GroupFilterModel, RecordModel, ReduceModel, case_terms
from udflow.expr import Agg, Call, Elem
from udflow.fields import group_projection, output_fields, properties_of, read_projection
from udflow.engine.pieces_in_python import pieces_in_python
from udflow.caught import Caught
from udflow.helper_calls import HelperCall
from udflow.physical import PhysicalPlan, Step
from udflow.pieces import Pieces
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Reduce, Source
from udflow.native_forms import NativeForms

PICKLED_INPUT = "its input is pickled Python records (no columns)"


def physical_plan(root: Node, hints: Optional[dict] = None, forms: Optional[NativeForms] = None) -> PhysicalPlan:
    """Every operator's step, parents before children. `hints`: label -> the join or
    grouping strategy chosen for it; `forms`: what the backend runs natively
    (`udflow.native_forms`; None runs every function as Python)."""
    hints = dict(hints or {})
    steps: dict[str, Step] = {}

    def visit(node: Node) -> Step:
        if node.label not in steps:
            inputs = [visit(child) for child in node.inputs]
            steps[node.label] = step_of(node, inputs, hints.get(node.label, ""), forms)
        return steps[node.label]

    visit(root)
    return PhysicalPlan(tuple(steps[n.label] for n in root.walk()), forms is not None)


def step_of(node: Node, inputs: Sequence[Step], strategy: str = "", forms: Optional[NativeForms] = None) -> Step:
    """How `node` runs, given how its inputs run, on a backend with `forms`."""
    try:
        columns = output_fields(node)
    except Exception:  # noqa: BLE001 - not analysed: its fields are unknown
        columns = None
    step = _step(node, inputs, strategy, forms)
    if step.fallback is not None:
        step = replace(step, fallback=replace(step.fallback, columns=columns))
    return replace(step, columns=columns)


def _step(node: Node, inputs: Sequence[Step], strategy: str, forms: Optional[NativeForms]) -> Step:
    label = node.label
    if isinstance(node, Source):
        return Step(label, "scan")
    if isinstance(node, (Match, Cross)) and node.fn is None:
        return Step(label, "join", strategy=strategy)
    if isinstance(node, Custom):
        if node.op_type.spark is not None:
            return Step(label, "operator")
        return Step(label, "batches", "custom operator", pickled=True)
    if isinstance(node, CoGroup):
        return Step(label, "batches", "CoGroup functions have no model", pickled=not _keeps_columns(node, False))
    fallback = _python_step(node, inputs, strategy)
    try:
        props = properties_of(node)
    except Exception as exc:  # noqa: BLE001 - not analysed: it runs as written, in Python
        return _because(fallback, f"not analysed ({type(exc).__name__})")
    if props.model is None:
        return _because(fallback, props.model_reason or "no model")
    if forms is None:
        return _because(fallback, "native lowering is off")
    model = props.model
    blocked, in_python = python_only_calls(model, forms)
    if blocked is not None and isinstance(model, ExplodeModel):
        rewritten = pieces_in_python(model)
        if rewritten is not None and python_only_calls(rewritten, forms)[0] is None:
            model, (blocked, in_python) = rewritten, python_only_calls(rewritten, forms)
    if blocked is not None:
        return _because(fallback, blocked)
    if not isinstance(node, (Match, Cross)) and inputs[0].pickled:
        return _because(fallback, PICKLED_INPUT)
    absent = _absent_fields(model, inputs, forms)
    if absent:
        return _because(fallback, f"reads field {absent[0]!r}, which its input does not have")
    return Step(label, "native", python_terms=tuple(in_python), fallback=fallback, strategy=strategy,
                model=model)


def _absent_fields(model, inputs: Sequence[Step], forms: NativeForms) -> list[str]:
    """The fields the model reads that no input has (a typo, `diagnostics.unknown_reads`),
    where every input's fields are known: Python raises its KeyError (or gives `.get`'s
    default) there, and no column holds such a field, so the step is Python from the start."""
    if any(i.columns is None for i in inputs):
        return []
    available = frozenset().union(*(i.columns for i in inputs))
    read = frozenset().union(*(term.fields() for _, term, _ in _terms_and_contracts(model, forms)))
    return sorted(read - available)


def _because(step: Step, reason: str) -> Step:
    return replace(step, reason=reason)


def _python_step(node: Node, inputs: Sequence[Step], strategy: str) -> Step:
    """How the operator's function runs as Python (module docstring)."""
    label = node.label
    if isinstance(node, Map):
        over_columns = not inputs[0].pickled
        reads = read_projection(node) if over_columns else None
        if node.is_filter:
            how = "scalar" if reads else "batches"
            return Step(label, how, reads=reads, pickled=inputs[0].pickled)
        if reads and _one_record_copy(node):
            return Step(label, "scalar", reads=reads)
        if reads is not None and _forwards_records(node):
            return Step(label, "forwarding", reads=reads)
        how = "projected" if reads is not None else "batches"
        return Step(label, how, reads=reads, pickled=not _keeps_columns(node, inputs[0].pickled))
    if isinstance(node, Reduce):
        reads = group_projection(node) if not inputs[0].pickled else None
        return Step(label, "batches", reads=reads, pickled=not _keeps_columns(node, inputs[0].pickled),
                    strategy=strategy)
    return Step(label, "batches", pickled=not _keeps_columns(node, False), strategy=strategy)


def _keeps_columns(node: Node, input_pickled: bool) -> bool:
    """A Python function over columns that writes no field and keeps only fields its input
    has: its output keeps its input's columns (projected), so it leaves as columns."""
    if input_pickled:
        return False
    try:
        props = properties_of(node)
    except Exception:  # noqa: BLE001 - no analysis result: pickled
        return False
    out = props.output_fields
    carried = [output_fields(child) for child in node.inputs]
    if props.writes or out is None or any(c is None for c in carried):
        return False
    return out <= frozenset().union(*carried)


def _one_record_copy(node: Map) -> bool:
    """A Map the scalar path takes: `{**r, ...}` changing fields, removing none, at most one
    record per call (`spark_backend.scalar`)."""
    props = properties_of(node)
    return bool(props.writes) and props.changed == props.writes and props.emits[1] is not None \
        and props.emits[1] <= 1


def _forwards_records(node: Map) -> bool:
    """Every record the function emits is its input record unchanged (pure, implicit copy,
    nothing written): `if cond: yield r`, `yield r; yield r`."""
    return not properties_of(node).writes


def python_only_calls(model, forms: NativeForms) -> tuple[Optional[str], list[str]]:
    """(the call that keeps the operator in Python, with its line; None when there is none) and
    the calls that run as Python inside the native plan (`spark_backend.python_calls`): a call
    the model has but no native form gives exactly (e.g. str.lower: Python's and the JVM's
    case tables differ), an explosion's source included. Inside an aggregate's argument,
    and over an explosion's pieces, every such call keeps the operator in Python: each
    piece would cross to Python and back once per call, which measured slower than the
    whole function in Python (documents' tokenizer: 9.4 s against 5.2 s); the caller
    then tries the pieces' list as one Python term (`pieces_in_python`), which this
    counts as Python inside the plan."""
    in_python = []
    split = model.source if isinstance(model, ExplodeModel) and model.split else None
    for line, term, contract in _terms_and_contracts(model, forms):
        for t, in_aggregate in _calls(term, forms):
            if isinstance(t, Pieces):
                in_python.append(f"the pieces of the explosion, as one list per record (line {line})")
                continue
            helper = isinstance(t, (HelperCall, Caught))
            on_pieces = any(isinstance(e, Elem) for e in t.walk())
            if t in contract or not helper and (forms.has_form(t.name, t.args) or forms.case_mapped(t, split)):
                continue
            if not helper and forms.parses(t, alone=True) and not (in_aggregate or on_pieces or isinstance(model, GroupFilterModel)):
                continue  # native where its text is strictly spelled, Python on the other rows
            name = "a try statement" if isinstance(t, Caught) else f"your helper {t.name}" if helper else t.name
            if isinstance(model, ExplodeModel) and on_pieces:
                return f"calls {name} on each piece of the explosion (line {line}), which runs as Python", []
            if helper:
                if in_aggregate or isinstance(model, (GroupFilterModel, ReduceModel)):
                    return f"calls {name} where it cannot run as Python (line {line})", []
                in_python.append(f"{name} (line {line})")
                continue
            if (t.name in forms.python_results and t.name not in forms.bounded and not in_aggregate
                    and not isinstance(model, GroupFilterModel)):
                in_python.append(f"{_public_name(t)} (line {line})")
            elif t.name not in forms.calls:
                return f"calls {t.name}, which has no exact native form (line {line})", []
            else:
                return f"calls {t}, a form of {t.name} with no exact native form (line {line})", []
    return None, list(dict.fromkeys(in_python))


def _public_name(call) -> str:
    """The function a user wrote for a call term: `re.fullmatch` for the test of its match."""
    return f"re.{call.args[0].value}" if call.name == "re.matched" else call.name


def _terms_and_contracts(model, forms: NativeForms):
    """(line, term, the calls the backend runs natively there under a stated contract,
    `NativeForms.field_contracts`) for every guard and written field of the model, as
    `case_terms` gives them."""
    if not isinstance(model, (RecordModel, ReduceModel)):
        return [(line, term, frozenset()) for line, term in case_terms(model)]
    out = []
    for c in model.cases:
        out.append((c.line, c.guard, frozenset()))
        out += [(c.line, term, calls) for _, term, calls in forms.field_contracts(c)]
    return out


def _calls(term, forms: NativeForms, in_aggregate: bool = False):
    """(call, whether it is inside an aggregate's argument) for every call in `term`."""
    if isinstance(term, Caught):  # native where its body is strict, else whole in Python
        if in_aggregate or not forms.caught_native(term):
            yield term, in_aggregate
        return
    if forms.digest_bucket(term):  # int(<hex digest>, 16) % n: native whole, its int() included
        yield from _calls(term.left.args[0], forms, in_aggregate)
        return
    if isinstance(term, (Call, HelperCall, Pieces)):
        yield term, in_aggregate
    if isinstance(term, Pieces):  # computed whole by Python (`pieces_in_python`)
        return
    for child in term.children():
        yield from _calls(child, forms, in_aggregate or isinstance(term, Agg))

"""Field inference over plans: which fields an operator's output records may carry, and
the properties of an operator's function over its inputs' fields.

These are questions about a plan (`udflow.plan`) answered by analysis
(`udflow.analysis`); the Flow builder, the optimizer and the Spark backend all
ask them, so they live here, below all three: the backend depends on plans and
analysis only, never on `flow.py`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from udflow.errors import FlowConstructionError
from udflow.plan import Cross, Custom, Map, Match, Node, Reduce, Source



def _analysis_kind(node: Node) -> str:
    return "filter" if isinstance(node, Map) and node.is_filter else node.kind


def properties_of(node: Node, manual: bool = False):
    """The `UdfProperties` of an operator's function over its inputs' fields."""
    from udflow import analysis

    if isinstance(node, Source):
        raise TypeError("sources have no function")
    if isinstance(node, Custom):
        fields = tuple(output_fields(child) or frozenset() for child in node.inputs)
        return node.op_type.properties(fields, node.param_dict)
    fields = tuple(output_fields(child) for child in node.inputs)
    if any(f is None for f in fields):
        fields = tuple(f if f is not None else frozenset() for f in fields)
    spec = fields if node.arity == 2 else fields[0]
    if manual and hasattr(analysis, "manual_properties"):
        return analysis.manual_properties(node.fn, spec, kind=_analysis_kind(node))
    return analysis.analyze(node.fn, spec, kind=_analysis_kind(node))


@lru_cache(maxsize=4096)
def output_fields(node: Node) -> Optional[frozenset[str]]:
    """The fields a record leaving `node` may carry; None when the analysis cannot tell."""
    if isinstance(node, Source):
        return frozenset(node.fields)
    inputs = [output_fields(child) for child in node.inputs]
    if any(f is None for f in inputs):
        return None
    if isinstance(node, (Match, Cross)) and node.fn is None:
        return inputs[0] | inputs[1]
    if isinstance(node, Custom):
        return node.op_type.output_fields(tuple(inputs), node.param_dict)
    return properties_of(node).output_fields


def read_projection(node: Node) -> Optional[frozenset[str]]:
    """The fields the Spark backend shows a Map's function per record, and what the cost
    model charges it for: `UdfProperties.read_projection` of its analysis. None: the whole
    record (not a Map, its input's fields unknown, or no analysis result)."""
    if not isinstance(node, Map):
        return None
    try:
        if output_fields(node.input) is None:
            return None
        return properties_of(node).read_projection()
    except Exception:  # noqa: BLE001 - no analysis result: the whole record
        return None


def group_projection(node: Node) -> Optional[frozenset[str]]:
    """The fields a Reduce's groups must carry to the Python function: its key and what it
    reads, where `UdfProperties.group_projection` says that is all it uses; None: every field."""
    if not isinstance(node, Reduce):
        return None
    try:
        reads = properties_of(node).group_projection()
    except Exception:  # noqa: BLE001 - no analysis result: every field
        return None
    return None if reads is None else frozenset(reads) | frozenset(node.key)


def global_record(node: Node) -> frozenset[str]:
    """Definition 1: every base attribute and every attribute an operator creates."""
    attrs: set[str] = set()
    for n in node.walk():
        out = output_fields(n)
        if out is not None:
            attrs |= out
    return frozenset(attrs)


def selected_fields(node: Node, fields: Optional[Sequence[str]]) -> Optional[tuple[str, ...]]:
    """`fields=` of collect/to_spark/write, checked against `node`'s output fields (when the
    analysis knows them): each named once, none unknown."""
    if fields is None:
        return None
    selected = (fields,) if isinstance(fields, str) else tuple(fields)
    carried = output_fields(node)
    unknown = [f for f in selected if carried is not None and f not in carried]
    if unknown or len(set(selected)) != len(selected) or not selected:
        what = (f"{', '.join(map(repr, unknown))} not among the flow's fields" if unknown
                else "name at least one field" if not selected else "name each field once")
        raise FlowConstructionError(f"fields={list(selected)!r}: {what} (fields: {', '.join(sorted(carried or ()))})")
    return selected


def only_fields(records: list, fields: Optional[tuple[str, ...]]) -> list:
    """Each record cut to `fields`, in that order; a record without one is an error, not a None."""
    if fields is None:
        return records
    out = []
    for record in records:
        missing = [f for f in fields if f not in record]
        if missing:
            raise FlowConstructionError(f"fields={list(fields)!r}: a record has no {missing[0]!r}: {record!r}")
        out.append({f: record[f] for f in fields})
    return out

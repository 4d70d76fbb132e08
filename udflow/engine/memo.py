"""Hash-consing of plan trees: every distinct subtree gets one small integer.

Plan nodes are frozen dataclasses whose `__hash__` walks the whole tree on
every call; the search asks "have I seen this subtree?" hundreds of thousands
of times, so it asks the `Interner` instead, which hashes one level (the
operator's own attributes and its children's ids) once per node object.

Two subtrees get the same id iff they are structurally equal: same operator
(label and attributes, functions by identity) over inputs with the same ids.
"""

from __future__ import annotations

import dataclasses
import time
from functools import lru_cache

from udflow.plan import Node, Source

_INPUT_FIELDS = frozenset({"input", "left", "right", "args"})


@lru_cache(maxsize=None)
def _own_fields(cls: type) -> tuple[str, ...]:
    """The attributes of an operator class that are not its inputs (and take part in equality)."""
    return tuple(
        f.name for f in dataclasses.fields(cls) if f.compare and f.name not in _INPUT_FIELDS
    )


def operator_key(node: Node) -> tuple:
    """The operator without its inputs, as a hashable value (functions by identity)."""
    if isinstance(node, Source):
        return (Source, node.label)
    values = []
    for name in _own_fields(type(node)):
        value = getattr(node, name)
        values.append(id(value) if callable(value) else value)
    return (type(node), *values)


@lru_cache(maxsize=None)
def _input_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name in ("input", "left", "right"))


def with_inputs(node: Node, inputs: tuple[Node, ...]) -> Node:
    """`node.with_inputs(*inputs)` without `dataclasses.replace`'s re-validation (hot path)."""
    names = _input_names(type(node))
    if len(names) != len(inputs) or type(node).__init__ is not _init_of(type(node)):
        return node.with_inputs(*inputs)
    copy = object.__new__(type(node))
    copy.__dict__.update(node.__dict__)
    copy.__dict__.update(zip(names, inputs))
    return copy


@lru_cache(maxsize=None)
def _init_of(cls: type):
    """The dataclass-generated __init__, i.e. the class adds no construction logic of its own."""
    return cls.__init__ if dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__") else None


class Interner:
    """Gives each distinct subtree an id; keeps the nodes alive so `id()` stays valid."""

    def __init__(self) -> None:
        self._by_object: dict[int, int] = {}
        self._by_structure: dict[tuple, int] = {}
        self.nodes: list[Node] = []
        self._pinned: list[Node] = []
        self._operators: dict[int, tuple] = {}

    def id_of(self, node: Node) -> int:
        found = self._by_object.get(id(node))
        if found is not None:
            return found
        structure = (self.operator_of(node), tuple([self.id_of(c) for c in node.inputs]))
        found = self._by_structure.get(structure)
        if found is None:
            found = len(self.nodes)
            self._by_structure[structure] = found
            self.nodes.append(node)
        else:
            self._pinned.append(node)  # another object with the same structure: keep id() unique
        self._by_object[id(node)] = found
        return found

    def operator_of(self, node: Node) -> tuple:
        """`operator_key(node)`, computed once per node object."""
        found = self._operators.get(id(node))
        if found is None:
            found = operator_key(node)
            self._operators[id(node)] = found
            self._pinned.append(node)
        return found

    def rebuild(self, node: Node, inputs: tuple[Node, ...]) -> Node:
        """`node.with_inputs(*inputs)`, returning the interned tree when it exists already."""
        structure = (self.operator_of(node), tuple([self.id_of(c) for c in inputs]))
        found = self._by_structure.get(structure)
        if found is not None:
            return self.nodes[found]
        tree = with_inputs(node, inputs)
        found = len(self.nodes)
        self._by_structure[structure] = found
        self.nodes.append(tree)  # kept alive here, so its id is its own
        self._by_object[id(tree)] = found
        self._operators[id(tree)] = structure[0]  # the same operator as `node`
        return tree

    def node(self, node_id: int) -> Node:
        return self.nodes[node_id]

    def __len__(self) -> int:
        return len(self.nodes)


class ExchangeMemo:
    """`RuleBook.exchanges` asked once per distinct subtree, counting calls and time spent."""

    def __init__(self, exchanges, interner: Interner):
        self._exchanges = exchanges
        self._interner = interner
        self._found: dict[int, tuple] = {}
        self.calls = 0
        self.seconds = 0.0  # time spent inside the RuleBook

    def __call__(self, tree: Node) -> tuple:
        key = self._interner.id_of(tree)
        found = self._found.get(key)
        if found is None:
            self.calls += 1
            started = time.perf_counter()
            found = tuple(self._exchanges(tree))
            self.seconds += time.perf_counter() - started
            self._found[key] = found
        return found

"""The plans of a certificate, read back from their text.

A certificate records the plans before and after the move as `udflow.plan.draw`
text. The checker reads that text itself (`parse`) rather than trust a plan the
rule built, finds operators and subtrees in it, names the operators a move
carries across an operator (`crossed_labels`), and rebuilds plan nodes from it
(`rebuild`) where the flow's own analysis must look at them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from udflow.plan import Node


@dataclass
class Tree:
    label: str
    children: list
    key: Optional[tuple] = None  # a Reduce key rewritten by a move: `  [key a,b]`

    def labels(self) -> set:
        out = {self.label}
        for c in self.children:
            out |= c.labels()
        return out

    def all_labels(self) -> list:
        out = [self.label]
        for c in self.children:
            out += c.all_labels()
        return out


def parse(text: str) -> Tree:
    """Invert `udflow.plan.draw`: two spaces of indentation per level."""
    stack: list[tuple[int, Tree]] = []
    root = None
    for line in text.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        label, _, annotation = line.strip().partition("  [key ")
        key = tuple(annotation.rstrip("]").split(",")) if annotation else None
        node = Tree(label, [], key)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        else:
            root = node
        stack.append((depth, node))
    return root


def _first(tree: Tree, wanted) -> Optional[Tree]:
    """The first subtree, parents before children, for which `wanted(subtree)` holds."""
    if wanted(tree):
        return tree
    for c in tree.children:
        hit = _first(c, wanted)
        if hit is not None:
            return hit
    return None


def find(tree: Tree, label: str) -> Optional[Tree]:
    return _first(tree, lambda t: t.label == label)


def subtree_with(tree: Tree, labels: set) -> Optional[Tree]:
    return _first(tree, lambda t: t.labels() == labels)


def crossed_labels(op_label: str, other: str, before: Tree, after: Tree) -> set:
    """Labels that are below `op` on one side of the move and not on the other."""
    below_before = find(before, op_label).labels() - {op_label}
    below_after = find(after, op_label).labels() - {op_label}
    return (below_before ^ below_after) - {other}


def rebuild(tree: Tree, nodes: dict) -> Node:
    import dataclasses

    node = nodes[tree.label]
    if tree.key is not None:
        node = dataclasses.replace(node, key=tree.key)
    if not tree.children:
        return node
    return node.with_inputs(*[rebuild(c, nodes) for c in tree.children])

"""Plan trees drawn as inline SVG, laid out here (no Graphviz needed).

Each box is an operator (its label; hover for its kind and keys), with the
optimizer's estimate of the records it emits beside it. The drawing follows the paper's figures: data flows upwards, sources at the
bottom, the plan's root at the top; an edge goes from an input to the operator
that consumes it.

Layout (a simple tidy tree): leaves take consecutive slots left to right, each
as wide as its box; a parent is centred over its children; a level is one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

_CHAR = 7.2  # px per character of the 12px monospace label
_BOX_H = 26
_ROW = 58
_GAP = 16
_PAD = 10

COLORS = {
    "source": "#e8eef7",
    "map": "#e6f4ea",
    "filter": "#e6f4ea",
    "reduce": "#fdf1dc",
    "match": "#f3e8fd",
    "cross": "#fde8e8",
    "cogroup": "#e8f7f6",
}


@dataclass(frozen=True)
class _Placed:
    tree: dict
    x: float  # centre
    depth: int
    width: float
    children: tuple["_Placed", ...]


def _width(tree: dict) -> float:
    return max(60.0, _CHAR * len(tree["label"]) + 16)


def _place(tree: dict, depth: int, cursor: list[float]) -> _Placed:
    children = tuple(_place(c, depth + 1, cursor) for c in tree["children"])
    width = _width(tree)
    if children:
        x = (children[0].x + children[-1].x) / 2
        cursor[0] = max(cursor[0], x + width / 2 + _GAP)
    else:
        x = cursor[0] + width / 2
        cursor[0] += width + _GAP
    return _Placed(tree, x, depth, width, children)


def _shift(p: _Placed, dx: float) -> _Placed:
    return _Placed(p.tree, p.x + dx, p.depth, p.width, tuple(_shift(c, dx) for c in p.children))


def _all(p: _Placed):
    yield p
    for c in p.children:
        yield from _all(c)


def _tooltip(tree: dict) -> str:
    keys = [f"{k}={','.join(tree[k])}" for k in ("key", "left_key", "right_key") if k in tree]
    rows = [f"~{tree['rows']:.3g} rows"] if tree.get("rows") is not None else []
    return " ".join([tree["kind"], *keys, *rows])


def _count(x: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= size:
            return f"{x / size:.3g}{unit}"
    return f"{x:.3g}"


def plan_svg(tree: dict, title: str = "", highlight: frozenset[str] = frozenset(), uid: str = "p") -> str:
    """An `<svg>` element drawing `tree` (see udflow.batch.outcome.plan_tree); `highlight`: labels to stress."""
    placed = _place(tree, 0, [0.0])
    nodes = list(_all(placed))
    left = min(n.x - n.width / 2 for n in nodes)
    placed = _shift(placed, _PAD - left)
    nodes = list(_all(placed))
    depth = max(n.depth for n in nodes)
    width = max(n.x + n.width / 2 for n in nodes) + _PAD + 70
    height = depth * _ROW + _BOX_H + 2 * _PAD + 14  # room for the last row notes

    def y(p: _Placed) -> float:  # root on top
        return _PAD + p.depth * _ROW

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plan" role="img" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" aria-label="{escape(title)}">',
        f'<defs><marker id="arrow-{uid}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#667"/>'
        "</marker></defs>",
    ]
    for p in nodes:
        for c in p.children:  # input (below) -> consumer (above)
            parts.append(
                f'<line x1="{c.x:.1f}" y1="{y(c):.1f}" x2="{p.x:.1f}" y2="{y(p) + _BOX_H:.1f}" '
                f'stroke="#667" stroke-width="1.2" marker-end="url(#arrow-{uid})"/>'
            )
    for p in nodes:
        label = p.tree["label"]
        stroke = ' stroke="#c0392b" stroke-width="2.2"' if label in highlight else ' stroke="#556" stroke-width="1"'
        fill = COLORS.get(p.tree["kind"], "#eeeeee")
        rows = p.tree.get("rows")
        note = (f'<text class="rows" x="{p.x + p.width / 2 + 4:.1f}" y="{y(p) + _BOX_H + 12:.1f}">'
                f"~{_count(rows)} rows</text>") if rows is not None else ""
        parts.append(
            f'<g class="node"><title>{escape(_tooltip(p.tree))}</title>'
            f'<rect x="{p.x - p.width / 2:.1f}" y="{y(p):.1f}" width="{p.width:.1f}" height="{_BOX_H}" '
            f'rx="5" fill="{fill}"{stroke}/>'
            f'<text x="{p.x:.1f}" y="{y(p) + _BOX_H / 2 + 4:.1f}" text-anchor="middle">{escape(label)}</text>'
            f"{note}</g>"
        )
    parts.append("</svg>")
    return "".join(parts)

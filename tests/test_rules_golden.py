"""Golden before/after plan texts, one file per rule family (tests/golden/rules/<family>.txt).

Regenerate after a deliberate change with UDFLOW_REGEN_GOLDEN=1 and review the diff."""

import os
import pathlib

import pytest

from udflow.rules import RuleBook
from tests import rules_flows as F

GOLDEN = pathlib.Path(__file__).parent / "golden" / "rules"

FAMILIES = {
    "theorem1_map_map": lambda: (F.section3_flow(), "Filter(f2)"),
    "theorem2_map_reduce": lambda: (F.counterexample_flow(F.odd_a), None),
    "theorem3_product": lambda: (F.filter_over_match(F.big_price), None),
    "lemma1_join_join": lambda: (F.three_way_join(), None),
    "theorem4_reduce_cross": lambda: (F.theorem4_flow(), None),
    "invariant_grouping": lambda: (F.q15_flow(), None),
    "cogroup_map": lambda: (F.cogroup_flow(F.tag_price), None),
    "cogroup_reduce": lambda: (F.cogroup_reduce_flow(), None),
}


def render(family: str) -> str:
    flow, label = FAMILIES[family]()
    at = flow.operator(label) if label else flow.root
    book = RuleBook(flow.root)
    parts = []
    for ex in book.exchanges(at):
        if ex.rule != family:
            continue
        parts.append(f"rule: {ex.rule}\noperators: {' over '.join(ex.certificate.operators)}\n"
                     f"-- before\n{ex.certificate.before}\n-- after\n{ex.certificate.after}\n")
    return "\n".join(parts)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_golden_plan(family):
    text = render(family)
    assert text, f"{family} produced no exchange"
    path = GOLDEN / f"{family}.txt"
    if os.environ.get("UDFLOW_REGEN_GOLDEN"):
        path.write_text(text)
    assert path.read_text() == text

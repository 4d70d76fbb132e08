"""Map/Reduce pairs (Theorem 2): filters that may or may not move below a grouping."""

import udflow as uf
from tests.pipelines._data import clicks, orders


def per_customer(rows):
    rows = list(rows)
    yield {"o_cust": rows[0]["o_cust"], "total": sum(r["o_price"] for r in rows), "n": len(rows)}


def big_customer(r):
    return r["o_cust"] % 3 == 0


def costly_total(r):
    return r["total"] > 400


@uf.pipeline
def filter_on_group_key():
    """The filter reads only the group key: it may run before the Reduce (fewer records grouped)."""
    return orders().reduce(["o_cust"], per_customer).filter(big_customer)


@uf.pipeline
def filter_on_aggregate():
    """Section 4.2.2's counterexample shape: a filter on the sum must stay above the Reduce."""
    return orders().reduce(["o_cust"], per_customer).filter(costly_total)


def keep_buying_sessions(rows):
    rows = list(rows)
    if any(r["k_url"] == "/buy" for r in rows):
        yield from rows


def condense(rows):
    rows = list(rows)
    yield {"k_session": rows[0]["k_session"], "clicks": len(rows), "ms": sum(r["k_ms"] for r in rows)}


@uf.pipeline
def sessions():
    """Two Reduces on the same key (the clickstream task in miniature)."""
    return clicks().reduce(["k_session"], keep_buying_sessions).reduce(["k_session"], condense)


def even_session(r):
    return r["k_session"] % 2 == 0


sessions_filtered = clicks().reduce(["k_session"], condense).filter(even_session)


def first_with_total(rows):
    rows = list(rows)
    yield {**rows[0], "total": sum(r["o_price"] for r in rows)}


def pricey(r):
    return r["o_price"] > 250


@uf.pipeline
def filter_on_member_field():
    """Section 4.2.2's counterexample: the filter reads o_price, which the Reduce keeps from one
    record of the group; below the Reduce it would change which records are summed."""
    return orders().reduce(["o_cust"], first_with_total).filter(pricey)

"""Joins, products and co-groups (Theorems 3 and 4, Lemma 1, invariant grouping, tagged union)."""

import udflow as uf
from tests.pipelines._data import customers, orders, words


def french(r):
    return r["c_nation"] == "FRANCE"


def adult(r):
    return r["c_age"] >= 30


def large_order(r):
    return r["o_price"] > 250


@uf.pipeline
def filter_above_join():
    """A filter on customer fields written above the join: it can be pushed into the customer side."""
    return orders().match(customers(), on=("o_cust", "c_id")).filter(french)


@uf.pipeline
def filters_both_sides():
    return (orders().match(customers(), on=("o_cust", "c_id"))
            .filter(large_order).filter(adult))


def revenue(rows):
    rows = list(rows)
    yield {**rows[0], "revenue": sum(r["o_price"] * r["o_qty"] for r in rows)}


@uf.pipeline
def reduce_above_join():
    """Invariant grouping: group orders per customer before the PK-FK join."""
    return orders().match(customers(), on=("o_cust", "c_id")).reduce(["o_cust"], revenue)


@uf.pipeline
def three_way_join():
    """A join chain (reassociation): orders x customers x a second customer table."""
    friends = customers(prefix="f_")
    return (orders().match(customers(), on=("o_cust", "c_id"))
            .match(friends, on=("c_id", "f_c_id")).filter(french))


def short_doc(r):
    return len(r["w_text"]) < 30


@uf.pipeline
def cross_then_filter():
    """A filter over a Cartesian product that reads one side only (Theorem 3)."""
    few = customers(5)
    return words(20).cross(few).filter(short_doc)


def pair_up(orders_rows, customer_rows):
    orders_rows, customer_rows = list(orders_rows), list(customer_rows)
    for c in customer_rows:
        yield {**c, "orders": len(orders_rows)}


@uf.pipeline
def cogroup_then_filter():
    return orders().cogroup(customers(), on=("o_cust", "c_id"), f=pair_up).filter(adult)


def long_doc(r):
    return len(r["w_text"]) > 40


def old(r):
    return r["c_age"] > 70


@uf.pipeline
def cross_filters_both_sides():
    """Two filters over a product, one per side: each can move into its own input."""
    return words(15).cross(customers(8)).filter(long_doc).filter(old)

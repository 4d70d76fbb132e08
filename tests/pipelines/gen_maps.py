"""Map and filter chains on in-memory rows (the paper's section 3 and Theorem 1 cases)."""

import udflow as uf
from tests.pipelines._data import clicks, orders


def expensive(r):
    return r["o_price"] > 100


def discounted(r):
    return {**r, "o_net": r["o_price"] * 0.9}


def bulky(r):
    return r["o_qty"] >= 5


def tag_status(r):
    return {**r, "o_flag": r["o_status"] == "F"}


# Module-level Flows are pipelines too (the intermediate `_priced` is not: leading underscore).
filter_after_map = orders().map(discounted).filter(expensive)
two_filters = orders().map(tag_status).filter(bulky).filter(expensive)


@uf.pipeline
def filter_on_new_field():
    """The filter reads o_net, which the map creates: it must stay above the map."""
    return orders().map(discounted).filter(lambda r: r["o_net"] > 50)


@uf.pipeline
def long_chain():
    return (orders().map(discounted).map(tag_status).filter(bulky)
            .filter(lambda r: r["o_status"] != "P").filter(expensive))


def slow_url(r):
    return r["k_ms"] > 2500


def page_kind(r):
    return {**r, "k_kind": "shop" if r["k_url"] in ("/cart", "/buy") else "browse"}


@uf.pipeline
def clicks_chain():
    return clicks().map(page_kind).filter(slow_url)


def rename_price(r):
    return {"o_id": r["o_id"], "o_cust": r["o_cust"], "amount": r["o_price"], "o_qty": r["o_qty"]}


def single_item(r):
    return r["o_qty"] == 1


@uf.pipeline
def projection_then_filter():
    """A projection (fresh dict) under a filter that reads a field it keeps."""
    return orders().map(rename_price).filter(single_item)

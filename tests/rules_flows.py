"""Small flows for the rule tests, drawn from the paper (sections 3, 4.2.2, 4.3 and Q15).

Every function here is analysable (plain `r["A"]` reads and writes, yield
filters), so the tests run on the real analysis.
"""

import udflow as uf

# -- section 3: f1 replaces B by |B|, f2 keeps A >= 0, f3 sets A := A + B ------------


def f1(r):
    return {**r, "B": abs(r["B"])}


def f2(r):
    return r["A"] >= 0


def f3(r):
    return {**r, "A": r["A"] + r["B"]}


def section3_flow():
    rows = [{"A": 2, "B": -3}, {"A": -2, "B": -3}, {"A": 0, "B": 5}, {"A": 2, "B": -3}]
    return uf.source("I", rows=rows).map(f1).filter(f2).map(f3)


# -- section 4.2.2: f keeps records with odd A and odd B; g appends the sum of B per A --


def odd_a_and_b(r):
    if r["A"] % 2 == 1 and r["B"] % 2 == 1:
        yield r


def odd_a(r):
    if r["A"] % 2 == 1:
        yield r


def sum_b(rows):
    rows = list(rows)
    total = sum(r["B"] for r in rows)
    for r in rows:
        yield {**r, "C": total}


def counterexample_flow(filter_fn=odd_a_and_b):
    rows = [{"A": 1, "B": 1}, {"A": 1, "B": 2}, {"A": 2, "B": 1}, {"A": 2, "B": 2}]
    return uf.source("I", rows=rows).map(filter_fn).reduce(["A"], sum_b)


# -- joins --------------------------------------------------------------------------------


def big_price(r):
    return r["p_price"] is not None and r["p_price"] > 10


def cheap_or_rich(r):
    return r["p_price"] is not None and r["p_price"] < r["c_budget"]


def double_price(r):
    return {**r, "p_price": r["p_price"] * 2 if r["p_price"] is not None else None}


def only_id(r):
    return {"p_id": r["p_id"]}


PARTS = [{"p_id": i, "p_price": p, "p_cat": i % 2} for i, p in enumerate([5, 12, 30, 12, None])]
CATS = [{"c_id": 0, "c_budget": 20}, {"c_id": 1, "c_budget": 8}, {"c_id": None, "c_budget": 1}]
ORDERS = [{"o_id": i, "o_part": i % 4, "o_qty": i} for i in range(6)]


def parts(**kw):
    return uf.source("part", rows=PARTS, **kw)


def cats(**kw):
    return uf.source("cat", rows=CATS, **kw)


def orders(**kw):
    return uf.source("orders", rows=ORDERS, **kw)


def filter_over_match(fn=big_price):
    return parts().match(cats(), on=("p_cat", "c_id")).filter(fn)


def three_way_join():
    """Match(o_part=p_id)(Match(p_cat=c_id)(part, cat), orders)."""
    return parts().match(cats(), on=("p_cat", "c_id")).match(orders(), on=("p_id", "o_part"))


# -- Q15-shaped: revenue per supplier over lineitem ⋈ supplier ------------------------------


LINEITEM = [
    {"l_orderkey": o, "l_linenumber": n, "l_suppkey": s, "l_extendedprice": float(10 * o + n)}
    for o, n, s in [(1, 1, 0), (1, 2, 1), (2, 1, 0), (2, 2, 2), (3, 1, 1), (3, 2, None), (4, 1, 0)]
]
SUPPLIER = [{"s_suppkey": k, "s_name": f"Supplier#{k}"} for k in range(3)]


def revenue(rows):
    rows = list(rows)
    yield {**rows[0], "total_revenue": sum(r["l_extendedprice"] for r in rows)}


# lineitems of suppliers 7 and 9, which the supplier table does not hold (no foreign key)
ORPHANS = [{"l_orderkey": 5, "l_linenumber": n, "l_suppkey": s, "l_extendedprice": float(n)}
           for n, s in [(1, 7), (2, 7), (3, 9), (4, None)]]


def q15_flow(with_fk=True, supplier_key=True, lineitem=LINEITEM, supplier=SUPPLIER):
    fks = {("l_suppkey",): ("supplier", ("s_suppkey",))} if with_fk else None
    li = uf.source("lineitem", rows=lineitem, key=["l_orderkey", "l_linenumber"], foreign_keys=fks)
    su = uf.source("supplier", rows=supplier, key=["s_suppkey"] if supplier_key else None)
    return li.match(su, on=("l_suppkey", "s_suppkey")).reduce(["s_suppkey"], revenue)


# -- Theorem 4: a Reduce whose key holds all of R, over R x S --------------------------------


REGIONS = [{"r_id": 1, "r_name": "EU"}, {"r_id": 2, "r_name": "US"}]
SALES = [{"s_item": i % 3, "s_amount": i} for i in range(7)]


def per_item(rows):
    rows = list(rows)
    for r in rows:
        yield {**r, "n_sales": len(rows)}


def theorem4_flow(region_key=True):
    regions = uf.source("region", rows=REGIONS, key=["r_id"] if region_key else None)
    sales = uf.source("sales", rows=SALES)
    return regions.cross(sales).reduce(["r_id", "r_name", "s_item"], per_item)


# -- CoGroup -----------------------------------------------------------------------------------


def count_matches(left, right):
    right = list(right)
    for p in left:
        for o in right:
            yield {**p, **o, "n_orders": len(right)}


def tag_price(r):
    return {**r, "p_band": r["p_price"] // 10 if r["p_price"] is not None else None}


def cogroup_flow(fn=tag_price, filter_=False):
    cg = parts().cogroup(orders(), on=("p_id", "o_part"), f=count_matches)
    return cg.filter(fn) if filter_ else cg.map(fn)


# -- CoGroup and a Reduce: the tagged union, Reduce-Reduce on it -------------------------------------


ORDERS_OF_PARTS = [{"o_id": i, "o_part": i % 4 if i != 5 else None, "o_qty": i * 3 % 7} for i in range(9)]


def order_lines():
    return uf.source("orders", rows=ORDERS_OF_PARTS)


def parts_with_keys():
    return uf.source("parts", rows=PARTS, key=["p_id"])


def with_part_price(left, right):
    """Each order once, with its part's price; none when the part is unknown."""
    right = list(right)
    if right:
        for o in left:
            yield {**o, "o_price": right[0]["p_price"]}


def busy_parts(rows):
    """The orders of parts ordered at least twice, whole."""
    rows = list(rows)
    if len(rows) >= 2:
        yield from rows


def big_order_parts(rows):
    rows = list(rows)
    if any(r["o_qty"] > 4 for r in rows):
        yield from rows


def cheap_parts(rows):
    """Reads the price the CoGroup adds: must stay above it."""
    rows = list(rows)
    if all(r["o_price"] is not None and r["o_price"] < 30 for r in rows):
        yield from rows


def orders_per_part(rows):
    """One record per part: not a group filter."""
    rows = list(rows)
    yield {"o_part": rows[0]["o_part"], "n_orders": len(rows)}


def cogroup_reduce_flow(reduce_fn=busy_parts, cogroup_fn=with_part_price, key=("o_part",), below=False):
    orders = order_lines()
    if below:
        orders = orders.reduce(list(key), reduce_fn)
    flow = orders.cogroup(parts_with_keys(), on=("o_part", "p_id"), f=cogroup_fn)
    return flow if below else flow.reduce(list(key), reduce_fn)


def priced_big_orders(left, right):
    """Drops orders one by one: not all-or-nothing on the orders of a part."""
    right = list(right)
    for o in left:
        if o["o_qty"] >= 2 and right:
            yield {**o, "o_price": right[0]["p_price"]}

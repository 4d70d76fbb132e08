"""Arithmetic on order, traffic and measurement records: totals, discounts, ratios,
unit conversions, integer buckets, Decimal money."""

from decimal import Decimal

VAT = 0.2
FREE_SHIPPING_OVER = 50.0
SHIPPING_FEE = 4.99


def line_total(r):
    return {**r, "total": r["price"] * r["qty"]}


def discounted_total(r):
    return {**r, "total": round(r["price"] * r["qty"] * (1 - r["discount"]), 2)}


def net_price(r):
    return {**r, "net_price": r["price"] * (1 - r["discount"])}


def price_with_vat(r):
    return {**r, "gross": r["price"] * (1 + VAT)}


def price_with_tax_rate(r):
    return {**r, "gross": r["price"] + r["price"] * r["tax_rate"]}


def margin(r):
    return {**r, "margin": r["price"] - r["cost"]}


def margin_pct(r):
    return {**r, "margin_pct": (r["price"] - r["cost"]) / r["price"] * 100}


def unit_price(r):
    return {**r, "unit_price": r["amount"] / r["qty"]}


def ctr(r):
    return {**r, "ctr": r["clicks"] / r["views"] if r["views"] else 0.0}


def conversion_rate(r):
    return {**r, "conv_rate": r["orders"] / r["visits"] * 100 if r["visits"] > 0 else None}


def kg_to_lb(r):
    return {**r, "weight_lb": r["weight_kg"] * 2.20462}


def km_to_miles(r):
    return {**r, "miles": r["distance_km"] / 1.609344}


def celsius_to_fahrenheit(r):
    return {**r, "temp_f": r["temp_c"] * 9 / 5 + 32}


def cents_to_dollars(r):
    return {**r, "amount": r["amount_cents"] / 100}


def dollars_to_cents(r):
    return {**r, "amount_cents": int(r["amount"] * 100)}


def duration_minutes(r):
    return {**r, "minutes": r["duration_s"] // 60}


def duration_hms(r):
    return {**r, "hours": r["duration_s"] // 3600, "minutes": r["duration_s"] % 3600 // 60,
            "seconds": r["duration_s"] % 60}


def bucket_of_100(r):
    return {**r, "bucket": r["user_id"] % 100}


def page_number(r):
    return {**r, "page": r["position"] // 20 + 1}


def shipping(r):
    return {**r, "shipping": 0.0 if r["price"] * r["qty"] >= FREE_SHIPPING_OVER else SHIPPING_FEE}


def pct_change(r):
    return {**r, "change_pct": (r["revenue"] - r["prev_revenue"]) / r["prev_revenue"] * 100}


def abs_delta(r):
    return {**r, "delta": abs(r["actual"] - r["forecast"])}


def clamp_score(r):
    return {**r, "score": max(0, min(100, r["score"]))}


def clamp_ratio(r):
    return {**r, "ratio": min(max(r["ratio"], 0.0), 1.0)}


def negate_refund(r):
    return {**r, "amount": -r["amount"] if r["is_refund"] else r["amount"]}


def squared_error(r):
    return {**r, "sq_err": (r["actual"] - r["forecast"]) ** 2}


def compound_interest(r):
    return {**r, "balance": r["principal"] * (1 + r["rate"]) ** r["years"]}


def bmi(r):
    return {**r, "bmi": r["weight_kg"] / (r["height_m"] * r["height_m"])}


def avg_basket(r):
    return {**r, "avg_basket": round(r["revenue"] / r["orders"], 2) if r["orders"] else 0.0}


def loyalty_points(r):
    return {**r, "points": int(r["amount"]) // 10}


def seats_left(r):
    return {**r, "seats_left": r["capacity"] - r["booked"]}


def total_items(r):
    return {**r, "items": r["qty"] + r["free_qty"]}


def is_bulk(r):
    return r["qty"] * r["price"] > 1000


def is_profitable(r):
    return r["price"] - r["cost"] > 0


def high_ctr(r):
    return r["views"] > 0 and r["clicks"] / r["views"] > 0.05


def even_user(r):
    return r["user_id"] % 2 == 0


def decimal_line_total(r):
    return {**r, "total": r["unit_price"] * r["qty"]}


def decimal_with_fee(r):
    return {**r, "total": r["amount"] + Decimal("0.30")}


def decimal_vat(r):
    return {**r, "vat": r["amount"] * Decimal("0.20")}


def decimal_net(r):
    return {**r, "net": r["amount"] - r["fee"]}


def decimal_split(r):
    return {**r, "share": r["amount"] / 3}


def decimal_positive(r):
    return r["amount"] > 0


def weighted_score(r):
    return {**r, "score": 0.6 * r["quality"] + 0.3 * r["speed"] + 0.1 * r["price_score"]}


def avg_speed_kmh(r):
    return {**r, "speed_kmh": r["distance_km"] / (r["duration_s"] / 3600)}


def tip_pct(r):
    return {**r, "tip_pct": r["tip"] / r["fare"] * 100 if r["fare"] > 0 else 0.0}


def stock_value(r):
    return {**r, "stock_value": r["on_hand"] * r["cost"]}


def reorder_qty(r):
    return {**r, "reorder": max(r["target"] - r["on_hand"], 0)}


def cents_rounding(r):
    return {**r, "amount": round(r["amount"], 2)}


def bool_count(r):
    return {**r, "n_flags": r["is_new"] + r["is_promo"] + r["is_gift"]}


ORDER = {"price": "float", "qty": "int:qty", "discount": "float:rate"}

FUNCTIONS = [
    (line_total, "map", {"price": "float", "qty": "int:qty"}),
    (discounted_total, "map", ORDER),
    (net_price, "map", {"price": "float", "discount": "float:rate"}),
    (price_with_vat, "map", {"price": "float"}),
    (price_with_tax_rate, "map", {"price": "float", "tax_rate": "float:rate"}),
    (margin, "map", {"price": "float", "cost": "float"}),
    (margin_pct, "map", {"price": "float", "cost": "float"}),
    (unit_price, "map", {"amount": "float", "qty": "int:qty"}),
    (ctr, "map", {"clicks": "int:count", "views": "int:count"}),
    (conversion_rate, "map", {"orders": "int:count", "visits": "int:count"}),
    (kg_to_lb, "map", {"weight_kg": "float"}),
    (km_to_miles, "map", {"distance_km": "float"}),
    (celsius_to_fahrenheit, "map", {"temp_c": "float"}),
    (cents_to_dollars, "map", {"amount_cents": "int"}),
    (dollars_to_cents, "map", {"amount": "float"}),
    (duration_minutes, "map", {"duration_s": "int:seconds"}),
    (duration_hms, "map", {"duration_s": "int:seconds"}),
    (bucket_of_100, "map", {"user_id": "int:id"}),
    (page_number, "map", {"position": "int:count"}),
    (shipping, "map", {"price": "float", "qty": "int:qty"}),
    (pct_change, "map", {"revenue": "float", "prev_revenue": "float"}),
    (abs_delta, "map", {"actual": "float", "forecast": "float"}),
    (clamp_score, "map", {"score": "int"}),
    (clamp_ratio, "map", {"ratio": "float"}),
    (negate_refund, "map", {"amount": "float", "is_refund": "bool"}),
    (squared_error, "map", {"actual": "float", "forecast": "float"}),
    (compound_interest, "map", {"principal": "float", "rate": "float:rate", "years": "int:small"}),
    (bmi, "map", {"weight_kg": "float", "height_m": "float:height"}),
    (avg_basket, "map", {"revenue": "float", "orders": "int:count"}),
    (loyalty_points, "map", {"amount": "float"}),
    (seats_left, "map", {"capacity": "int", "booked": "int"}),
    (total_items, "map", {"qty": "int:qty", "free_qty": "int:qty"}),
    (is_bulk, "filter", {"price": "float", "qty": "int:qty"}),
    (is_profitable, "filter", {"price": "float", "cost": "float"}),
    (high_ctr, "filter", {"clicks": "int:count", "views": "int:count"}),
    (even_user, "filter", {"user_id": "int:id"}),
    (decimal_line_total, "map", {"unit_price": "decimal", "qty": "int:qty"}),
    (decimal_with_fee, "map", {"amount": "decimal"}),
    (decimal_vat, "map", {"amount": "decimal"}),
    (decimal_net, "map", {"amount": "decimal", "fee": "decimal:fee"}),
    (decimal_split, "map", {"amount": "decimal"}),
    (decimal_positive, "filter", {"amount": "decimal"}),
    (weighted_score, "map", {"quality": "float:rate", "speed": "float:rate", "price_score": "float:rate"}),
    (avg_speed_kmh, "map", {"distance_km": "float", "duration_s": "int:seconds"}),
    (tip_pct, "map", {"tip": "float", "fare": "float"}),
    (stock_value, "map", {"on_hand": "int:qty", "cost": "float"}),
    (reorder_qty, "map", {"target": "int:qty", "on_hand": "int:qty"}),
    (cents_rounding, "map", {"amount": "float"}),
    (bool_count, "map", {"is_new": "bool", "is_promo": "bool", "is_gift": "bool"}),
]

"""Branches: buckets, tiers, None handling, defaults, compound filters, early returns."""


def price_band(r):
    if r["price"] < 10:
        band = "low"
    elif r["price"] < 100:
        band = "mid"
    else:
        band = "high"
    return {**r, "band": band}


def age_group(r):
    if r["age"] < 18:
        return {**r, "age_group": "minor"}
    elif r["age"] < 65:
        return {**r, "age_group": "adult"}
    return {**r, "age_group": "senior"}


def size_class(r):
    return {**r, "size": "S" if r["qty"] < 5 else "M" if r["qty"] < 20 else "L"}


def tier_from_spend(r):
    spend = r["spend"]
    if spend >= 10000:
        tier = "gold"
    elif spend >= 1000:
        tier = "silver"
    else:
        tier = "bronze"
    return {**r, "tier": tier}


def discount_or_zero(r):
    return {**r, "discount": r["discount"] if r["discount"] is not None else 0.0}


def coalesce_or(r):
    return {**r, "nickname": r["nickname"] or r["first_name"]}


def qty_or_one(r):
    return {**r, "qty": r["qty"] or 1}


def has_price(r):
    return r["price"] is not None


def has_price_and_positive(r):
    return r["price"] is not None and r["price"] > 0


def valid_order(r):
    return r["qty"] > 0 and r["price"] > 0 and r["status"] != "cancelled"


def active_adult(r):
    return r["is_active"] and r["age"] >= 18


def inactive(r):
    return not r["is_active"]


def either_flag(r):
    return r["is_promo"] or r["is_new"]


def truthy_comment(r):
    return bool(r["comment"])


def safe_ratio(r):
    if r["views"] == 0:
        return {**r, "ctr": None}
    return {**r, "ctr": r["clicks"] / r["views"]}


def sign_label(r):
    if r["delta"] > 0:
        return {**r, "trend": "up"}
    if r["delta"] < 0:
        return {**r, "trend": "down"}
    return {**r, "trend": "flat"}


def late_fee(r):
    fee = 0.0
    if r["days_late"] > 0:
        fee = 5.0 + r["days_late"] * 0.5
    return {**r, "late_fee": fee}


def capped_fee(r):
    fee = r["amount"] * 0.03
    if fee > 25:
        fee = 25.0
    return {**r, "fee": fee}


def pass_fail(r):
    return {**r, "passed": r["score"] >= 50}


def is_pass(r):
    return r["score"] >= 50


def weekend_or_holiday(r):
    return r["is_weekend"] or r["is_holiday"]


def rush_hour(r):
    return 7 <= r["hour"] <= 9 or 16 <= r["hour"] <= 19


def quantity_bucket(r):
    q = r["qty"]
    return {**r, "bucket": 0 if q <= 0 else 1 if q == 1 else 2 if q <= 5 else 3}


def none_safe_upper(r):
    return {**r, "code": r["code"].upper() if r["code"] is not None else None}


def none_safe_len(r):
    return {**r, "name_len": len(r["name"]) if r["name"] else 0}


def none_safe_sum(r):
    return {**r, "total": (r["a"] or 0) + (r["b"] or 0)}


def nonempty_city(r):
    return r["city"] is not None and r["city"].strip() != ""


def nan_as_missing(r):
    return {**r, "price": None if r["price"] != r["price"] else r["price"]}


def refund_sign(r):
    amount = r["amount"]
    if r["type"] == "refund":
        amount = -amount
    return {**r, "signed_amount": amount}


def vip_or_big(r):
    return r["tier"] == "gold" or r["amount"] > 500


def between_prices(r):
    return 10 <= r["price"] <= 100


def not_between(r):
    return not (10 <= r["price"] <= 100)


def status_flag(r):
    return {**r, "is_closed": r["status"] in ("cancelled", "refunded"), "is_open": r["status"] == "pending"}


def missing_to_default_date(r):
    return {**r, "ship_date": r["ship_date"] if r["ship_date"] is not None else r["order_date"]}


def overdue(r):
    return r["paid_date"] is None and r["due_date"] < r["as_of"]


def bool_to_int(r):
    return {**r, "is_active_int": 1 if r["is_active"] else 0}


def int_flag_to_bool(r):
    return {**r, "is_active": r["active_flag"] == 1}


def yes_no(r):
    return {**r, "subscribed": "yes" if r["is_subscribed"] else "no"}


def only_generator(r):
    if r["qty"] > 0:
        yield {**r, "unit": r["amount"] / r["qty"]}


def emit_or_skip(r):
    if r["status"] == "cancelled":
        return
    yield {**r, "active": True}


def max_of_three(r):
    return {**r, "best": max(r["q1"], r["q2"], r["q3"])}


def min_nonneg(r):
    return {**r, "stock": min(r["on_hand"], r["reserved"]) if r["on_hand"] >= 0 else 0}


FUNCTIONS = [
    (price_band, "map", {"price": "float"}),
    (age_group, "map", {"age": "int:age"}),
    (size_class, "map", {"qty": "int:qty"}),
    (tier_from_spend, "map", {"spend": "float"}),
    (discount_or_zero, "map", {"discount": "float:rate"}),
    (coalesce_or, "map", {"nickname": "str:first", "first_name": "str:first"}),
    (qty_or_one, "map", {"qty": "int:qty"}),
    (has_price, "filter", {"price": "float"}),
    (has_price_and_positive, "filter", {"price": "float"}),
    (valid_order, "filter", {"qty": "int:qty", "price": "float", "status": "str:status"}),
    (active_adult, "filter", {"is_active": "bool", "age": "int:age"}),
    (inactive, "filter", {"is_active": "bool"}),
    (either_flag, "filter", {"is_promo": "bool", "is_new": "bool"}),
    (truthy_comment, "filter", {"comment": "str:text"}),
    (safe_ratio, "map", {"clicks": "int:count", "views": "int:count"}),
    (sign_label, "map", {"delta": "float"}),
    (late_fee, "map", {"days_late": "int:small"}),
    (capped_fee, "map", {"amount": "float"}),
    (pass_fail, "map", {"score": "int:pct"}),
    (is_pass, "filter", {"score": "int:pct"}),
    (weekend_or_holiday, "filter", {"is_weekend": "bool", "is_holiday": "bool"}),
    (rush_hour, "filter", {"hour": "int:hour"}),
    (quantity_bucket, "map", {"qty": "int:qty"}),
    (none_safe_upper, "map", {"code": "str:country"}),
    (none_safe_len, "map", {"name": "str:name"}),
    (none_safe_sum, "map", {"a": "int", "b": "int"}),
    (nonempty_city, "filter", {"city": "str:city"}),
    (nan_as_missing, "map", {"price": "float"}),
    (refund_sign, "map", {"amount": "float", "type": "str:txtype"}),
    (vip_or_big, "filter", {"tier": "str:tier", "amount": "float"}),
    (between_prices, "filter", {"price": "float"}),
    (not_between, "filter", {"price": "float"}),
    (status_flag, "map", {"status": "str:status"}),
    (missing_to_default_date, "map", {"ship_date": "date", "order_date": "date"}),
    (overdue, "filter", {"paid_date": "date:maybe", "due_date": "date", "as_of": "date"}),
    (bool_to_int, "map", {"is_active": "bool"}),
    (int_flag_to_bool, "map", {"active_flag": "int:bit"}),
    (yes_no, "map", {"is_subscribed": "bool"}),
    (only_generator, "map", {"qty": "int:qty", "amount": "float"}),
    (emit_or_skip, "map", {"status": "str:status"}),
    (max_of_three, "map", {"q1": "float", "q2": "float", "q3": "float"}),
    (min_nonneg, "map", {"on_hand": "int", "reserved": "int"}),
]

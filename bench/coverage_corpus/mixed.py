"""Whole enrichment steps as they appear in pipelines: several fields at once, look-ups,
arithmetic, dates and strings together; JSON and hashing; loops and try."""

import hashlib
import json
import math
from datetime import date, datetime, timedelta
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

RATES = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.04}
REGIONS = {"FR": "EU", "DE": "EU", "GB": "UK", "US": "NA", "CH": "EU", "TR": "EMEA"}
VAT = {"FR": 0.20, "DE": 0.19, "GB": 0.20, "CH": 0.081}
START = date(2024, 1, 1)


def enrich_order(r):
    total = r["price"] * r["qty"]
    return {**r, "total": total, "total_eur": total * RATES.get(r["currency"], 1.0),
            "region": REGIONS.get(r["country"], "other"), "year": r["order_date"].year}


def order_summary(r):
    return {**r, "summary": f"{r['qty']} x {r['sku']} for {r['price']}"}


def invoice_line(r):
    net = r["price"] * r["qty"] * (1 - r["discount"])
    vat = net * VAT.get(r["country"], 0.0)
    return {**r, "net": net, "vat": vat, "gross": net + vat}


def trip_metrics(r):
    minutes = (r["dropoff_ts"] - r["pickup_ts"]).total_seconds() / 60
    return {**r, "minutes": minutes, "mph": r["distance"] / (minutes / 60) if minutes > 0 else None}


def valid_trip(r):
    return r["distance"] > 0 and r["fare"] > 0 and r["dropoff_ts"] > r["pickup_ts"]


def fare_per_mile(r):
    return {**r, "fare_per_mile": round(r["fare"] / r["distance"], 2) if r["distance"] else None}


def customer_key(r):
    return {**r, "customer_key": r["email"].strip().lower() + "|" + r["country"]}


def hashed_email(r):
    return {**r, "email_hash": hashlib.sha256(r["email"].strip().lower().encode()).hexdigest()}


def md5_bucket(r):
    return {**r, "bucket": int(hashlib.md5(str(r["user_id"]).encode()).hexdigest(), 16) % 10}


def json_payload_field(r):
    return {**r, "event_type": json.loads(r["payload"]).get("type")}


def to_json(r):
    return {**r, "payload": json.dumps({"id": r["order_id"], "status": r["status"]})}


def cohort_month(r):
    return {**r, "cohort": f"{r['signup_date'].year}-{r['signup_date'].month:02d}"}


def cohort_key(r):
    return {**r, "cohort": r["signup_date"].year * 100 + r["signup_date"].month}


def days_active(r):
    return {**r, "days_active": (r["last_seen"] - r["signup_date"]).days}


def churned(r):
    return r["last_seen"] < r["as_of"] - timedelta(days=90)


def ltv(r):
    return {**r, "ltv": r["avg_order"] * r["orders_per_year"] * r["years"]}


def rfm_score(r):
    recency = 3 if r["days_since"] < 30 else 2 if r["days_since"] < 90 else 1
    frequency = 3 if r["orders"] >= 10 else 2 if r["orders"] >= 3 else 1
    return {**r, "rfm": recency * 10 + frequency}


def score_loop(r):
    score = 0
    for w in r["comment"].lower().split():
        if w in ("great", "good", "excellent"):
            score += 1
        elif w in ("bad", "awful", "terrible"):
            score -= 1
    return {**r, "sentiment": score}


def weekday_revenue_key(r):
    return {**r, "key": f"{r['order_date'].weekday()}-{r['country']}"}


def promo_eligible(r):
    return r["country"] in ("FR", "DE") and r["price"] * r["qty"] >= 50 and r["order_date"] >= START


def decimal_invoice(r):
    net = r["unit_price"] * r["qty"]
    return {**r, "net": net, "vat": net * Decimal("0.2")}


def decimal_rounded(r):
    return {**r, "amount": r["amount"].quantize(Decimal("0.01"))}


def decimal_to_float(r):
    return {**r, "amount_f": float(r["amount"])}


def order_key(r):
    return {**r, "order_key": hashlib.md5(f"{r['country']}|{r['order_id']}".encode()).hexdigest()}


def sample_by_hash(r):
    return hashlib.sha1(r["email"].encode("utf-8")).hexdigest() < "4"


def decimal_half_up(r):
    return {**r, "total": (r["unit_price"] * r["qty"]).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)}


def decimal_with_tax(r):
    return {**r, "gross": round(r["amount"] * Decimal("1.075"), 2)}


def decimal_whole_units(r):
    return {**r, "units": r["amount"].quantize(Decimal("1"), ROUND_FLOOR)}


def geo_bucket(r):
    return {**r, "cell": f"{math.floor(r['lat'])}:{math.floor(r['lon'])}"}


def impressions_filter(r):
    return r["impressions"] >= 1000 and r["clicks"] / r["impressions"] >= 0.01


def cpc(r):
    return {**r, "cpc": r["spend"] / r["clicks"] if r["clicks"] > 0 else None}


def roas(r):
    return {**r, "roas": round(r["revenue"] / r["spend"], 3) if r["spend"] else 0.0}


def sku_category(r):
    prefix = r["sku"][:3]
    return {**r, "category": {"BOO": "books", "MUS": "music", "GAM": "games"}.get(prefix, "other")}


def delivery_eta(r):
    return {**r, "eta": r["order_date"] + timedelta(days=2 if r["express"] else 5)}


def utc_day_string(r):
    return {**r, "day": r["ts"].strftime("%Y-%m-%d")}


def ts_from_epoch(r):
    return {**r, "ts": datetime(1970, 1, 1) + timedelta(seconds=r["epoch_s"])}


def label_amount(r):
    return {**r, "label": r["currency"] + " " + str(r["amount_cents"] // 100) + "." +
            str(r["amount_cents"] % 100).zfill(2)}


def running_text(r):
    out = []
    for part in r["tags"].split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return {**r, "tags": ",".join(out)}


def try_ratio(r):
    try:
        ratio = r["a"] / r["b"]
    except ZeroDivisionError:
        ratio = float("inf")
    return {**r, "ratio": ratio}


def high_value_customer(r):
    return r["total_spend"] * RATES.get(r["currency"], 1.0) > 5000 and not r["is_employee"]


def order_flags(r):
    return {**r, "is_big": r["qty"] * r["price"] > 500, "is_intl": r["country"] != "FR",
            "is_new": r["customer_orders"] == 0}


def tuple_sort_key(r):
    return {**r, "sort_key": (r["country"], -r["qty"])}


def list_field(r):
    return {**r, "dims": [r["width"], r["height"]]}


def dict_field(r):
    return {**r, "meta": {"city": r["city"], "country": r["country"]}}


FUNCTIONS = [
    (enrich_order, "map", {"price": "float", "qty": "int:qty", "currency": "str:currency",
                           "country": "str:country", "order_date": "date"}),
    (order_summary, "map", {"qty": "int:qty", "sku": "str:sku", "price": "float"}),
    (invoice_line, "map", {"price": "float", "qty": "int:qty", "discount": "float:rate", "country": "str:country"}),
    (trip_metrics, "map", {"pickup_ts": "datetime", "dropoff_ts": "datetime", "distance": "float"}),
    (valid_trip, "filter", {"distance": "float", "fare": "float", "pickup_ts": "datetime", "dropoff_ts": "datetime"}),
    (fare_per_mile, "map", {"fare": "float", "distance": "float"}),
    (customer_key, "map", {"email": "str:email", "country": "str:country"}),
    (hashed_email, "map", {"email": "str:email"}),
    (md5_bucket, "map", {"user_id": "int:id"}),
    (json_payload_field, "map", {"payload": "str:json"}),
    (to_json, "map", {"order_id": "int:id", "status": "str:status"}),
    (cohort_month, "map", {"signup_date": "date"}),
    (cohort_key, "map", {"signup_date": "date"}),
    (days_active, "map", {"last_seen": "date", "signup_date": "date"}),
    (churned, "filter", {"last_seen": "date", "as_of": "date"}),
    (ltv, "map", {"avg_order": "float", "orders_per_year": "float", "years": "int:small"}),
    (rfm_score, "map", {"days_since": "int:count", "orders": "int:count"}),
    (score_loop, "map", {"comment": "str:text"}),
    (weekday_revenue_key, "map", {"order_date": "date", "country": "str:country"}),
    (promo_eligible, "filter", {"country": "str:country", "price": "float", "qty": "int:qty", "order_date": "date"}),
    (decimal_invoice, "map", {"unit_price": "decimal", "qty": "int:qty"}),
    (decimal_rounded, "map", {"amount": "decimal"}),
    (decimal_to_float, "map", {"amount": "decimal"}),
    (order_key, "map", {"country": "str:country", "order_id": "int"}),
    (sample_by_hash, "filter", {"email": "str:email"}),
    (decimal_half_up, "map", {"unit_price": "decimal", "qty": "int:qty"}),
    (decimal_with_tax, "map", {"amount": "decimal"}),
    (decimal_whole_units, "map", {"amount": "decimal"}),
    (geo_bucket, "map", {"lat": "float:lat", "lon": "float:lon"}),
    (impressions_filter, "filter", {"impressions": "int:count", "clicks": "int:count"}),
    (cpc, "map", {"spend": "float", "clicks": "int:count"}),
    (roas, "map", {"revenue": "float", "spend": "float"}),
    (sku_category, "map", {"sku": "str:sku"}),
    (delivery_eta, "map", {"order_date": "date", "express": "bool"}),
    (utc_day_string, "map", {"ts": "datetime"}),
    (ts_from_epoch, "map", {"epoch_s": "int:seconds"}),
    (label_amount, "map", {"currency": "str:currency", "amount_cents": "int"}),
    (running_text, "map", {"tags": "str:csv"}),
    (try_ratio, "map", {"a": "float", "b": "float"}),
    (high_value_customer, "filter", {"total_spend": "float", "currency": "str:currency", "is_employee": "bool"}),
    (order_flags, "map", {"qty": "int:qty", "price": "float", "country": "str:country",
                          "customer_orders": "int:count"}),
    (tuple_sort_key, "map", {"country": "str:country", "qty": "int:qty"}),
    (list_field, "map", {"width": "int:small", "height": "int:small"}),
    (dict_field, "map", {"city": "str:city", "country": "str:country"}),
]

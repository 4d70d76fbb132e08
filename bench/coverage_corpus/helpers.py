"""Module-level helpers called from pipeline functions: with plain values, with the
whole record, nested, with a try, with defaults."""

import math
import re
from datetime import date, datetime

RATES = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17}


def _normalize_email(email):
    return email.strip().lower()


def _pct(part, whole):
    return part / whole * 100 if whole else 0.0


def _net(price, discount):
    return price * (1 - discount)


def _to_eur(amount, currency):
    return amount * RATES.get(currency, 1.0)


def _bucket(age):
    if age < 18:
        return "minor"
    if age < 65:
        return "adult"
    return "senior"


def _parse_ts(text):
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None


def _parse_date(text):
    return date.fromisoformat(text)


def _safe_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _clean_phone(phone):
    return re.sub(r"[^0-9+]", "", phone)


def _is_valid_email(email):
    return re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", email.strip().lower()) is not None


def _title(name):
    return " ".join(part.capitalize() for part in name.split())


def _order_total(r):
    return r["price"] * r["qty"]


def _is_big(r):
    return r["price"] * r["qty"] > 500


def _quarter(d):
    return (d.month - 1) // 3 + 1


def _minutes(start, end):
    return (end - start).total_seconds() / 60


def _clamp(x, lo, hi):
    return max(lo, min(hi, x))


def _log_scale(x):
    return math.log1p(x)


def _initial(name):
    return name[:1].upper()


def _tax(amount, rate=0.2):
    return amount * rate


def _label(city, country):
    return f"{city} ({country})"


def _grade(score):
    return "A" if score >= 90 else "B" if score >= 75 else "C" if score >= 50 else "F"


def _net_eur(price, discount, currency):
    return _to_eur(_net(price, discount), currency)


def _year(d):
    return d.year


def _nonneg(x):
    return x if x > 0 else 0


def _mask_email(email):
    user, _, domain = email.partition("@")
    return user[:1] + "***@" + domain


def normalized_email(r):
    return {**r, "email": _normalize_email(r["email"])}


def gmail_user(r):
    return _normalize_email(r["email"]).endswith("@gmail.com")


def discount_pct(r):
    return {**r, "discount_pct": _pct(r["discount_amount"], r["price"])}


def net_amount(r):
    return {**r, "net": _net(r["price"], r["discount"])}


def eur_amount(r):
    return {**r, "amount_eur": _to_eur(r["amount"], r["currency"])}


def age_bucket(r):
    return {**r, "age_group": _bucket(r["age"])}


def parsed_ts(r):
    return {**r, "ts": _parse_ts(r["ts_text"])}


def parsed_ts_year(r):
    ts = _parse_ts(r["ts_text"])
    return {**r, "year": ts.year if ts is not None else None}


def parsed_date(r):
    return {**r, "order_date": _parse_date(r["order_date_text"])}


def amount_from_text(r):
    return {**r, "amount": _safe_float(r["amount_text"])}


def clean_phone(r):
    return {**r, "phone": _clean_phone(r["phone"])}


def valid_email(r):
    return _is_valid_email(r["email"])


def titled_name(r):
    return {**r, "name": _title(r["name"])}


def order_total_helper(r):
    return {**r, "total": _order_total(r)}


def big_order(r):
    return _is_big(r)


def order_quarter(r):
    return {**r, "quarter": _quarter(r["order_date"])}


def session_minutes(r):
    return {**r, "minutes": _minutes(r["start"], r["end"])}


def clamped_score(r):
    return {**r, "score": _clamp(r["score"], 0, 100)}


def log_views_helper(r):
    return {**r, "log_views": _log_scale(r["views"])}


def name_initial(r):
    return {**r, "initial": _initial(r["name"])}


def tax_default(r):
    return {**r, "tax": _tax(r["amount"])}


def tax_explicit(r):
    return {**r, "tax": _tax(r["amount"], 0.07)}


def place_label(r):
    return {**r, "place": _label(r["city"], r["country"])}


def grade(r):
    return {**r, "grade": _grade(r["score"])}


def net_eur(r):
    return {**r, "net_eur": _net_eur(r["price"], r["discount"], r["currency"])}


def ordered_in_2024(r):
    return _year(r["order_date"]) == 2024


def positive_balance(r):
    return {**r, "balance": _nonneg(r["balance"])}


def masked_email(r):
    return {**r, "email_masked": _mask_email(r["email"])}


def total_with_lambda(r):
    total = (lambda p, q: p * q)(r["price"], r["qty"])
    return {**r, "total": total}


def helper_in_condition(r):
    return {**r, "segment": "vip" if _to_eur(r["amount"], r["currency"]) > 1000 else "regular"}


FUNCTIONS = [
    (normalized_email, "map", {"email": "str:email"}),
    (gmail_user, "filter", {"email": "str:email"}),
    (discount_pct, "map", {"discount_amount": "float", "price": "float"}),
    (net_amount, "map", {"price": "float", "discount": "float:rate"}),
    (eur_amount, "map", {"amount": "float", "currency": "str:currency"}),
    (age_bucket, "map", {"age": "int:age"}),
    (parsed_ts, "map", {"ts_text": "str:isots"}),
    (parsed_ts_year, "map", {"ts_text": "str:isots"}),
    (parsed_date, "map", {"order_date_text": "str:isodate"}),
    (amount_from_text, "map", {"amount_text": "str:number"}),
    (clean_phone, "map", {"phone": "str:phone"}),
    (valid_email, "filter", {"email": "str:email"}),
    (titled_name, "map", {"name": "str:name"}),
    (order_total_helper, "map", {"price": "float", "qty": "int:qty"}),
    (big_order, "filter", {"price": "float", "qty": "int:qty"}),
    (order_quarter, "map", {"order_date": "date"}),
    (session_minutes, "map", {"start": "datetime", "end": "datetime"}),
    (clamped_score, "map", {"score": "int"}),
    (log_views_helper, "map", {"views": "int:count"}),
    (name_initial, "map", {"name": "str:name"}),
    (tax_default, "map", {"amount": "float"}),
    (tax_explicit, "map", {"amount": "float"}),
    (place_label, "map", {"city": "str:city", "country": "str:country"}),
    (grade, "map", {"score": "int:pct"}),
    (net_eur, "map", {"price": "float", "discount": "float:rate", "currency": "str:currency"}),
    (ordered_in_2024, "filter", {"order_date": "date"}),
    (positive_balance, "map", {"balance": "float"}),
    (masked_email, "map", {"email": "str:email"}),
    (total_with_lambda, "map", {"price": "float", "qty": "int:qty"}),
    (helper_in_condition, "map", {"amount": "float", "currency": "str:currency"}),
]

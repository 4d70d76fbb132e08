"""Constant look-ups: exchange rates, regions, VAT tables, status sets, code lists."""

RATES = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.04, "JPY": 0.0062}
REGIONS = {"FR": "EU", "DE": "EU", "IT": "EU", "ES": "EU", "CH": "EU", "GB": "UK", "US": "NA", "CA": "NA",
           "BR": "LATAM", "JP": "APAC", "TR": "EMEA"}
VAT_BY_COUNTRY = {"FR": 0.20, "DE": 0.19, "IT": 0.22, "ES": 0.21, "CH": 0.081, "GB": 0.20}
COUNTRY_NAMES = {"FR": "France", "DE": "Deutschland", "CH": "Schweiz", "TR": "Türkiye", "JP": "日本"}
EU = {"FR", "DE", "IT", "ES", "NL", "BE", "AT", "PT"}
CLOSED = frozenset({"cancelled", "refunded"})
DONE = ("paid", "shipped", "delivered")
STATUS_CODES = {"pending": 0, "paid": 1, "shipped": 2, "delivered": 3, "cancelled": 9}
STATUS_BY_CODE = {0: "pending", 1: "paid", 2: "shipped", 3: "delivered", 9: "cancelled"}
PRIORITY = {"gold": 1, "silver": 2, "bronze": 3}
TIER_DISCOUNT = {"gold": 0.15, "silver": 0.10, "bronze": 0.05}
WEEKDAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
VAT_BY_CATEGORY = {"FR": {"food": 0.055, "books": 0.055, "other": 0.20}, "DE": {"food": 0.07, "other": 0.19},
                   "GB": {"food": 0.0, "other": 0.20}}
TIER_RATES = {"gold": {"EUR": 0.15, "USD": 0.12}, "silver": {"EUR": 0.10}, "bronze": {}, "platinum": {"EUR": 0.2}}
BLOCKED_DOMAINS = {"mailinator.com", "example.com", "test.com"}
CATEGORY_IDS = {"books": 10, "music": 20, "games": 30, "garden": 40}
SHIPPING_BY_ZONE = {1: 4.99, 2: 7.99, 3: 12.50}
FEATURE_FLAGS = {"beta": True, "legacy": False}
HOLIDAYS = {"2024-12-25", "2024-01-01", "2024-07-14"}
COUPONS = {"WELCOME10": 0.10, "SPRING20": 0.20, "VIP": 0.30}
UNIT_FACTORS = {"g": 0.001, "kg": 1.0, "lb": 0.453592, "oz": 0.0283495}
ALIASES = {"NYC": "New York", "SF": "San Francisco", "LA": "Los Angeles"}
CURRENCY_OF = {"FR": "EUR", "DE": "EUR", "GB": "GBP", "US": "USD", "CH": "CHF", "JP": "JPY"}
NESTED = {"FR": {"vat": 0.2, "currency": "EUR"}, "US": {"vat": 0.0, "currency": "USD"}}
MIXED_RATES = {"EUR": 1, "USD": 0.92}


def to_eur(r):
    return {**r, "amount_eur": RATES.get(r["currency"], 1.0) * r["amount"]}


def to_eur_strict(r):
    return {**r, "amount_eur": RATES[r["currency"]] * r["amount"]}


def region(r):
    return {**r, "region": REGIONS.get(r["country"], "other")}


def region_upper(r):
    return {**r, "region": REGIONS.get(r["country"].strip().upper(), "other")}


def vat(r):
    return {**r, "vat": r["price"] * VAT_BY_COUNTRY.get(r["country"], 0.0)}


def country_name(r):
    return {**r, "country_name": COUNTRY_NAMES.get(r["country"], r["country"])}


def in_eu(r):
    return r["country"] in EU


def not_in_eu(r):
    return r["country"] not in EU


def open_order(r):
    return r["status"] not in CLOSED


def done_order(r):
    return r["status"] in DONE


def paid_or_shipped(r):
    return r["qty"] > 0 and r["status"] in {"paid", "shipped"}


def status_code(r):
    return {**r, "status_code": STATUS_CODES.get(r["status"], -1)}


def status_from_code(r):
    return {**r, "status": STATUS_BY_CODE[r["status_code"]]}


def status_name_or_unknown(r):
    return {**r, "status": STATUS_BY_CODE.get(r["status_code"], "unknown")}


def priority(r):
    return {**r, "priority": PRIORITY.get(r["tier"], 4)}


def tier_price(r):
    return {**r, "price": round(r["price"] * (1 - TIER_DISCOUNT.get(r["tier"], 0.0)), 2)}


def weekday_name(r):
    return {**r, "weekday_name": WEEKDAY_NAMES[r["order_date"].weekday()]}


def month_name(r):
    return {**r, "month_name": MONTHS[r["order_date"].month - 1]}


def blocked_email(r):
    return r["email"].split("@")[-1] not in BLOCKED_DOMAINS


def category_id(r):
    return {**r, "category_id": CATEGORY_IDS.get(r["category"])}


def shipping_fee(r):
    return {**r, "shipping": SHIPPING_BY_ZONE.get(r["zone"], 19.99)}


def flag_enabled(r):
    return FEATURE_FLAGS.get(r["feature"], False)


def is_holiday(r):
    return r["order_date"].isoformat() in HOLIDAYS


def coupon_discount(r):
    return {**r, "discount": COUPONS.get(r["coupon"], 0.0)}


def coupon_total(r):
    return {**r, "total": r["price"] * r["qty"] * (1 - COUPONS.get(r["coupon"], 0.0))}


def weight_kg(r):
    return {**r, "weight_kg": r["weight"] * UNIT_FACTORS[r["unit"]]}


def city_alias(r):
    return {**r, "city": ALIASES.get(r["city"], r["city"])}


def currency_of(r):
    return {**r, "currency": CURRENCY_OF.get(r["country"], "EUR")}


def nested_vat(r):
    return {**r, "vat": NESTED.get(r["country"], {}).get("vat", 0.2)}


def mixed_rate(r):
    return {**r, "amount_eur": MIXED_RATES.get(r["currency"], 1) * r["amount"]}


def known_currency(r):
    return r["currency"] in RATES


def eu_large(r):
    return r["country"] in EU and r["amount"] > 100


def region_label(r):
    return {**r, "label": REGIONS.get(r["country"], "other") + "/" + r["country"]}


def status_in_list(r):
    return r["status"] in ["paid", "shipped", "delivered"]


def flag_bit(r):
    return r["flags"] & 4 != 0


def has_any_flag(r):
    return {**r, "is_fraud": bool(r["flags"] & 1), "is_vip": bool(r["flags"] & 2)}


def set_flag(r):
    return {**r, "flags": r["flags"] | 8}


def shift_flags(r):
    return {**r, "level": r["flags"] >> 2}


def local_lookup(r):
    sizes = {"S": 1, "M": 2, "L": 3, "XL": 4}
    return {**r, "size_rank": sizes.get(r["size"], 0)}


def size_in_tuple(r):
    return r["size"] in ("L", "XL")


def zone_by_int_code(r):
    return {**r, "shipping": SHIPPING_BY_ZONE[r["zone"]]}


CUR = {"currency": "str:currency", "amount": "float"}

def vat_by_category(r):
    return {**r, "vat": VAT_BY_CATEGORY.get(r["country"], {}).get(r["category"], 0.20)}


def tier_rate(r):
    return {**r, "rate": TIER_RATES[r["tier"]].get(r["currency"], 0.0)}


FUNCTIONS = [
    (vat_by_category, "map", {"country": "str:country", "category": "str:category"}),
    (tier_rate, "map", {"tier": "str:tier", "currency": "str:currency"}),
    (to_eur, "map", CUR),
    (to_eur_strict, "map", CUR),
    (region, "map", {"country": "str:country"}),
    (region_upper, "map", {"country": "str:country"}),
    (vat, "map", {"price": "float", "country": "str:country"}),
    (country_name, "map", {"country": "str:country"}),
    (in_eu, "filter", {"country": "str:country"}),
    (not_in_eu, "filter", {"country": "str:country"}),
    (open_order, "filter", {"status": "str:status"}),
    (done_order, "filter", {"status": "str:status"}),
    (paid_or_shipped, "filter", {"qty": "int:qty", "status": "str:status"}),
    (status_code, "map", {"status": "str:status"}),
    (status_from_code, "map", {"status_code": "int:status"}),
    (status_name_or_unknown, "map", {"status_code": "int:status"}),
    (priority, "map", {"tier": "str:tier"}),
    (tier_price, "map", {"price": "float", "tier": "str:tier"}),
    (weekday_name, "map", {"order_date": "date"}),
    (month_name, "map", {"order_date": "date"}),
    (blocked_email, "filter", {"email": "str:email"}),
    (category_id, "map", {"category": "str:category"}),
    (shipping_fee, "map", {"zone": "int:zone"}),
    (flag_enabled, "filter", {"feature": "str:feature"}),
    (is_holiday, "filter", {"order_date": "date"}),
    (coupon_discount, "map", {"coupon": "str:coupon"}),
    (coupon_total, "map", {"price": "float", "qty": "int:qty", "coupon": "str:coupon"}),
    (weight_kg, "map", {"weight": "float", "unit": "str:unit"}),
    (city_alias, "map", {"city": "str:city"}),
    (currency_of, "map", {"country": "str:country"}),
    (nested_vat, "map", {"country": "str:country"}),
    (mixed_rate, "map", CUR),
    (known_currency, "filter", {"currency": "str:currency"}),
    (eu_large, "filter", {"country": "str:country", "amount": "float"}),
    (region_label, "map", {"country": "str:country"}),
    (status_in_list, "filter", {"status": "str:status"}),
    (flag_bit, "filter", {"flags": "int:flags"}),
    (has_any_flag, "map", {"flags": "int:flags"}),
    (set_flag, "map", {"flags": "int:flags"}),
    (shift_flags, "map", {"flags": "int:flags"}),
    (local_lookup, "map", {"size": "str:size"}),
    (size_in_tuple, "filter", {"size": "str:size"}),
    (zone_by_int_code, "map", {"zone": "int:zone"}),
]

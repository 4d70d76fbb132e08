"""Cleaning raw text fields: casts, trimming, boolean parsing, number parsing, regexes,
loops over characters, try/except around parsing."""

import re
import string
import unicodedata

TRUE_WORDS = {"true", "yes", "1", "y"}
ZIP_RE = re.compile(r"^\d{5}$")


def parse_bool(r):
    return {**r, "opt_in": r["opt_in_text"].strip().lower() in TRUE_WORDS}


def parse_bool_tuple(r):
    return {**r, "opt_in": r["opt_in_text"] in ("true", "True", "1")}


def amount_float(r):
    return {**r, "amount": float(r["amount_text"])}


def amount_float_or_none(r):
    try:
        return {**r, "amount": float(r["amount_text"])}
    except ValueError:
        return {**r, "amount": None}


def qty_int(r):
    return {**r, "qty": int(r["qty_text"])}


def qty_int_stripped(r):
    return {**r, "qty": int(r["qty_text"].strip())}


def qty_int_or_zero(r):
    try:
        qty = int(r["qty_text"])
    except ValueError:
        qty = 0
    return {**r, "qty": qty}


def zip_valid(r):
    return ZIP_RE.match(r["zip"]) is not None


def zip_regex_inline(r):
    return re.fullmatch(r"\d{5}", r["zip"]) is not None


def only_digits_regex(r):
    return {**r, "phone": re.sub(r"\D", "", r["phone"])}


def only_digits_loop(r):
    digits = ""
    for ch in r["phone"]:
        if ch.isdigit():
            digits += ch
    return {**r, "phone": digits}


def only_digits_join(r):
    return {**r, "phone": "".join(ch for ch in r["phone"] if ch.isdigit())}


def slug_chars(r):
    return {**r, "slug": "".join(c for c in r["title"].strip().lower() if c.isalnum() or c in "-_")}


def no_punctuation(r):
    return {**r, "comment": "".join(ch for ch in r["comment"] if ch not in string.punctuation)}


def keep_hex(r):
    return {**r, "ref": "".join([c for c in r["ref"].upper() if c in "0123456789ABCDEF"])}


def collapse_spaces(r):
    return {**r, "name": " ".join(r["name"].split())}


def collapse_spaces_regex(r):
    return {**r, "name": re.sub(r"\s+", " ", r["name"]).strip()}


def strip_accents(r):
    text = unicodedata.normalize("NFKD", r["city"])
    return {**r, "city_ascii": "".join(c for c in text if not unicodedata.combining(c))}


def remove_currency_symbol(r):
    return {**r, "amount": float(r["price_text"].replace("$", "").replace(",", "").strip())}


def percent_text(r):
    return {**r, "rate": float(r["rate_text"].rstrip("%")) / 100}


def trim_all(r):
    return {**r, "name": r["name"].strip(), "city": r["city"].strip()}


def empty_to_none(r):
    return {**r, "comment": r["comment"].strip() or None}


def upper_country_or_unknown(r):
    return {**r, "country": r["country"].strip().upper() if r["country"].strip() else "UNKNOWN"}


def lowercase_status(r):
    return {**r, "status": r["status"].strip().lower()}


def valid_status(r):
    return r["status"].strip().lower() in {"paid", "shipped", "pending", "cancelled", "refunded", "delivered"}


def email_has_dot_domain(r):
    return "." in r["email"].split("@")[-1]


def extract_number(r):
    m = re.search(r"(\d+)", r["ref"])
    return {**r, "ref_num": int(m.group(1)) if m else None}


def split_name(r):
    parts = r["name"].strip().split(" ", 1)
    return {**r, "first": parts[0], "last": parts[1] if len(parts) > 1 else ""}


def tags_count(r):
    return {**r, "n_tags": len([t for t in r["tags"].split(",") if t.strip()])}


def first_tag(r):
    return {**r, "first_tag": r["tags"].split(",")[0].strip()}


def is_numeric_id(r):
    return r["ref"].strip().isdigit()


def is_ascii_name(r):
    return r["name"].isascii()


def normalize_unicode(r):
    return {**r, "name": unicodedata.normalize("NFC", r["name"])}


def int_from_digits(r):
    return int(r["zip"]) > 50000


def float_text_positive(r):
    return float(r["amount_text"]) > 0


def sanitize_sku(r):
    sku = r["sku"].upper()
    for ch in " -_/":
        sku = sku.replace(ch, "")
    return {**r, "sku": sku}


def swap_case(r):
    return {**r, "code": r["code"].swapcase()}


def zero_pad_zip(r):
    return {**r, "zip": r["zip"].strip().zfill(5)}


def bad_value_sentinel(r):
    return {**r, "amount": r["amount"] if r["amount"] != -999.0 else None}


def int_cast_of_bool(r):
    return {**r, "flag": int(r["is_active"])}


def str_cast_of_int_field(r):
    return {**r, "zip": str(r["zip_int"])}


SKU_RE = re.compile(r"^[a-z]{3}-\d{4}$", re.IGNORECASE)


def sku_valid(r):
    return SKU_RE.match(r["sku"]) is not None

FUNCTIONS = [
    (slug_chars, "map", {"title": "str:text"}),
    (no_punctuation, "map", {"comment": "str:text"}),
    (keep_hex, "map", {"ref": "str:ref"}),
    (parse_bool, "map", {"opt_in_text": "str:booltext"}),
    (parse_bool_tuple, "map", {"opt_in_text": "str:booltext"}),
    (amount_float, "map", {"amount_text": "str:number"}),
    (amount_float_or_none, "map", {"amount_text": "str:number"}),
    (qty_int, "map", {"qty_text": "str:digits"}),
    (qty_int_stripped, "map", {"qty_text": "str:digits"}),
    (qty_int_or_zero, "map", {"qty_text": "str:digits"}),
    (zip_valid, "filter", {"zip": "str:digits"}),
    (zip_regex_inline, "filter", {"zip": "str:digits"}),
    (only_digits_regex, "map", {"phone": "str:phone"}),
    (only_digits_loop, "map", {"phone": "str:phone"}),
    (only_digits_join, "map", {"phone": "str:phone"}),
    (collapse_spaces, "map", {"name": "str:name"}),
    (collapse_spaces_regex, "map", {"name": "str:name"}),
    (strip_accents, "map", {"city": "str:city"}),
    (remove_currency_symbol, "map", {"price_text": "str:money"}),
    (percent_text, "map", {"rate_text": "str:percent"}),
    (trim_all, "map", {"name": "str:name", "city": "str:city"}),
    (empty_to_none, "map", {"comment": "str:text"}),
    (upper_country_or_unknown, "map", {"country": "str:country"}),
    (lowercase_status, "map", {"status": "str:status"}),
    (valid_status, "filter", {"status": "str:status"}),
    (email_has_dot_domain, "filter", {"email": "str:email"}),
    (extract_number, "map", {"ref": "str:ref"}),
    (split_name, "map", {"name": "str:name"}),
    (tags_count, "map", {"tags": "str:csv"}),
    (first_tag, "map", {"tags": "str:csv"}),
    (is_numeric_id, "filter", {"ref": "str:ref"}),
    (is_ascii_name, "filter", {"name": "str:name"}),
    (normalize_unicode, "map", {"name": "str:name"}),
    (int_from_digits, "filter", {"zip": "str:digits"}),
    (float_text_positive, "filter", {"amount_text": "str:number"}),
    (sanitize_sku, "map", {"sku": "str:sku"}),
    (swap_case, "map", {"code": "str:country"}),
    (zero_pad_zip, "map", {"zip": "str:digits"}),
    (bad_value_sentinel, "map", {"amount": "float"}),
    (int_cast_of_bool, "map", {"is_active": "bool"}),
    (str_cast_of_int_field, "map", {"zip_int": "int"}),
    (sku_valid, "filter", {"sku": "str"}),
]

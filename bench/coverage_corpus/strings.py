"""String handling on customer, product and address records: cleaning, case, prefixes,
concatenation, f-strings, padding, parsing digits."""


def clean_email(r):
    return {**r, "email": r["email"].strip().lower()}


def is_gmail(r):
    return r["email"].strip().lower().endswith("@gmail.com")


def email_domain(r):
    return {**r, "domain": r["email"].split("@")[-1].lower()}


def has_email(r):
    return "@" in r["email"]


def name_upper(r):
    return {**r, "name": r["name"].upper()}


def name_title(r):
    return {**r, "name": r["name"].strip().title()}


def name_capitalized(r):
    return {**r, "first_name": r["first_name"].capitalize()}


def full_name(r):
    return {**r, "full_name": r["first_name"] + " " + r["last_name"]}


def full_name_fstring(r):
    return {**r, "full_name": f"{r['first_name']} {r['last_name']}"}


def city_country(r):
    return {**r, "location": f"{r['city']}, {r['country']}"}


def label_with_id(r):
    return {**r, "label": f"order-{r['order_id']}"}


def padded_id(r):
    return {**r, "id_str": str(r["order_id"]).zfill(8)}


def str_id(r):
    return {**r, "key": str(r["customer_id"])}


def composite_key(r):
    return {**r, "key": str(r["store_id"]) + "-" + str(r["sku_id"])}


def zip_as_int(r):
    return {**r, "zip_code": int(r["zip"])}


def zip_prefix(r):
    return {**r, "zip_prefix": r["zip"][:2]}


def last4(r):
    return {**r, "card_last4": r["card_number"][-4:]}


def name_length(r):
    return {**r, "name_len": len(r["name"])}


def short_name(r):
    return len(r["name"].strip()) <= 10


def non_empty_comment(r):
    return r["comment"] != ""


def has_comment(r):
    return bool(r["comment"].strip())


def sku_prefix_ok(r):
    return r["sku"].startswith("SKU-")


def strip_sku_prefix(r):
    return {**r, "sku_num": r["sku"][4:]}


def sku_upper(r):
    return {**r, "sku": r["sku"].strip().upper()}


def mentions_refund(r):
    return "refund" in r["comment"].lower()


def is_https(r):
    return r["url"].startswith("https://")


def url_host(r):
    return {**r, "host": r["url"].split("/")[2]}


def replace_spaces(r):
    return {**r, "slug": r["title"].strip().lower().replace(" ", "-")}


def first_word(r):
    return {**r, "first_word": r["title"].split()[0] if r["title"].split() else ""}


def word_count(r):
    return {**r, "n_words": len(r["comment"].split())}


def initials(r):
    return {**r, "initials": r["first_name"][:1] + r["last_name"][:1]}


def country_upper_eq(r):
    return r["country"].upper() == "FR"


def country_code_clean(r):
    return {**r, "country": r["country"].strip().upper()}


def price_label(r):
    return {**r, "label": f"{r['price']:.2f} EUR"}


def repr_label(r):
    return {**r, "label": f"{r['name']!r}"}


def phone_digits(r):
    return {**r, "phone": r["phone"].replace(" ", "").replace("-", "")}


def is_french_mobile(r):
    return r["phone"].replace(" ", "").startswith(("+336", "+337"))


def count_commas(r):
    return {**r, "n_fields": r["csv_line"].count(",") + 1}


def ljust_name(r):
    return {**r, "name_fixed": r["name"].ljust(12)}


def casefold_match(r):
    return r["city"].casefold() == "zürich"


def lower_city(r):
    return {**r, "city_key": r["city"].lower()}


def strip_dashes(r):
    return {**r, "ref": r["ref"].strip("-")}


def digits_only(r):
    return r["zip"].isdigit()


def rstrip_slash(r):
    return {**r, "url": r["url"].rstrip("/")}


def starts_with_digit(r):
    return r["ref"][:1] in ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9")


def concat_tags(r):
    return {**r, "tags": ",".join([r["category"], r["brand"]])}


def str_of_bool(r):
    return {**r, "flag_text": str(r["is_active"])}


def str_of_float(r):
    return {**r, "price_text": str(r["price"])}


def name_contains_space(r):
    return " " in r["name"].strip()


NAME = {"name": "str:name"}

def file_name(r):
    return {**r, "file": r["path"].rsplit("/", 1)[-1]}


def extension(r):
    return {**r, "ext": r["file"].rsplit(".", maxsplit=1)[-1].lower()}

FUNCTIONS = [
    (clean_email, "map", {"email": "str:email"}),
    (is_gmail, "filter", {"email": "str:email"}),
    (email_domain, "map", {"email": "str:email"}),
    (has_email, "filter", {"email": "str:email"}),
    (name_upper, "map", NAME),
    (name_title, "map", NAME),
    (name_capitalized, "map", {"first_name": "str:first"}),
    (full_name, "map", {"first_name": "str:first", "last_name": "str:last"}),
    (full_name_fstring, "map", {"first_name": "str:first", "last_name": "str:last"}),
    (city_country, "map", {"city": "str:city", "country": "str:country"}),
    (label_with_id, "map", {"order_id": "int:id"}),
    (padded_id, "map", {"order_id": "int:id"}),
    (str_id, "map", {"customer_id": "int:id"}),
    (composite_key, "map", {"store_id": "int:small", "sku_id": "int:id"}),
    (zip_as_int, "map", {"zip": "str:digits"}),
    (zip_prefix, "map", {"zip": "str:digits"}),
    (last4, "map", {"card_number": "str:card"}),
    (name_length, "map", NAME),
    (short_name, "filter", NAME),
    (non_empty_comment, "filter", {"comment": "str:text"}),
    (has_comment, "filter", {"comment": "str:text"}),
    (sku_prefix_ok, "filter", {"sku": "str:sku"}),
    (strip_sku_prefix, "map", {"sku": "str:sku"}),
    (sku_upper, "map", {"sku": "str:sku"}),
    (mentions_refund, "filter", {"comment": "str:text"}),
    (is_https, "filter", {"url": "str:url"}),
    (url_host, "map", {"url": "str:url"}),
    (replace_spaces, "map", {"title": "str:text"}),
    (first_word, "map", {"title": "str:text"}),
    (word_count, "map", {"comment": "str:text"}),
    (initials, "map", {"first_name": "str:first", "last_name": "str:last"}),
    (country_upper_eq, "filter", {"country": "str:country"}),
    (country_code_clean, "map", {"country": "str:country"}),
    (price_label, "map", {"price": "float"}),
    (repr_label, "map", NAME),
    (phone_digits, "map", {"phone": "str:phone"}),
    (is_french_mobile, "filter", {"phone": "str:phone"}),
    (count_commas, "map", {"csv_line": "str:csv"}),
    (ljust_name, "map", NAME),
    (casefold_match, "filter", {"city": "str:city"}),
    (lower_city, "map", {"city": "str:city"}),
    (strip_dashes, "map", {"ref": "str:ref"}),
    (digits_only, "filter", {"zip": "str:digits"}),
    (rstrip_slash, "map", {"url": "str:url"}),
    (starts_with_digit, "filter", {"ref": "str:ref"}),
    (concat_tags, "map", {"category": "str:category", "brand": "str:brand"}),
    (str_of_bool, "map", {"is_active": "bool"}),
    (str_of_float, "map", {"price": "float"}),
    (name_contains_space, "filter", NAME),
    (file_name, "map", {"path": "str"}),
    (extension, "map", {"file": "str"}),
]

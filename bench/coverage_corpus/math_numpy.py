"""math and numpy scalar calls on metrics, geo coordinates and model features."""

import math

import numpy as np

MEAN_PRICE = 42.5
STD_PRICE = 12.25
EARTH_RADIUS_KM = 6371.0


def log_views(r):
    return {**r, "log_views": math.log1p(r["views"])}


def log_price(r):
    return {**r, "log_price": math.log(r["price"])}


def log10_revenue(r):
    return {**r, "log10_revenue": math.log10(r["revenue"])}


def log2_size(r):
    return {**r, "log2_size": math.log2(r["size_bytes"])}


def log_base(r):
    return {**r, "log_b": math.log(r["revenue"], 10)}


def sqrt_area(r):
    return {**r, "side": math.sqrt(r["area"])}


def exp_decay(r):
    return {**r, "weight": math.exp(-r["age_days"] / 30)}


def floor_price(r):
    return {**r, "price_floor": math.floor(r["price"])}


def ceil_boxes(r):
    return {**r, "boxes": math.ceil(r["qty"] / 12)}


def fabs_error(r):
    return {**r, "abs_err": math.fabs(r["actual"] - r["forecast"])}


def hypot_dist(r):
    return {**r, "dist": math.hypot(r["dx"], r["dy"])}


def euclid_dist(r):
    return {**r, "dist": math.sqrt(r["dx"] ** 2 + r["dy"] ** 2)}


def sigmoid(r):
    return {**r, "prob": 1 / (1 + math.exp(-r["logit"]))}


def zscore(r):
    return {**r, "price_z": (r["price"] - MEAN_PRICE) / STD_PRICE}


def is_nan_price(r):
    return math.isnan(r["price"])


def finite_price(r):
    return math.isfinite(r["price"])


def bearing(r):
    return {**r, "angle": math.atan2(r["dy"], r["dx"])}


def deg_to_rad(r):
    return {**r, "lat_rad": math.radians(r["lat"])}


def haversine_km(r):
    lat1, lon1 = math.radians(r["lat"]), math.radians(r["lon"])
    lat2, lon2 = math.radians(r["dest_lat"]), math.radians(r["dest_lon"])
    a = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return {**r, "km": 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(a))}


def cos_lat(r):
    return {**r, "cos_lat": math.cos(r["lat"] * math.pi / 180)}


def tanh_score(r):
    return {**r, "score": math.tanh(r["logit"])}


def trunc_amount(r):
    return {**r, "whole": math.trunc(r["amount"])}


def pow_growth(r):
    return {**r, "projected": r["revenue"] * math.pow(1.05, r["years"])}


def np_sqrt(r):
    return {**r, "root": np.sqrt(r["x"])}


def np_log1p(r):
    return {**r, "log_views": np.log1p(r["views"])}


def np_clip(r):
    return {**r, "ratio": np.clip(r["ratio"], 0.0, 1.0)}


def np_sign(r):
    return {**r, "direction": np.sign(r["delta"])}


def np_round(r):
    return {**r, "price": np.round(r["price"], 2)}


def np_exp(r):
    return {**r, "growth": np.exp(r["rate"])}


def np_abs(r):
    return {**r, "abs_delta": np.abs(r["delta"])}


def np_isnan(r):
    return not np.isnan(r["price"])


def np_floor_div(r):
    return {**r, "bucket": int(np.floor(r["price"] / 10))}


def np_float(r):
    return {**r, "price": float(np.float64(r["price"]) * 1.1)}


def np_maximum(r):
    return {**r, "floor_price": np.maximum(r["price"], 1.0)}


def np_log_ratio(r):
    return {**r, "log_ratio": np.log(r["revenue"] / r["prev_revenue"])}


def int_of_float(r):
    return {**r, "qty": int(r["qty_f"])}


def float_of_int(r):
    return {**r, "views_f": float(r["views"])}


def round_half(r):
    return {**r, "stars": round(r["rating"] * 2) / 2}


def round_int(r):
    return {**r, "price_int": round(r["price"])}


def abs_float(r):
    return {**r, "abs_delta": abs(r["delta"])}


def pow_int(r):
    return {**r, "sq": r["n"] ** 2}


def isclose_total(r):
    return math.isclose(r["actual"], r["forecast"], rel_tol=0.01)


def nan_to_zero(r):
    return {**r, "price": 0.0 if math.isnan(r["price"]) else r["price"]}


def self_neq_nan(r):
    return r["price"] == r["price"]


def gcd_pack(r):
    return {**r, "pack": math.gcd(r["qty"], 12)}


def copysign_delta(r):
    return {**r, "unit": math.copysign(1.0, r["delta"])}


FUNCTIONS = [
    (log_views, "map", {"views": "int:count"}),
    (log_price, "map", {"price": "float:pos"}),
    (log10_revenue, "map", {"revenue": "float:pos"}),
    (log2_size, "map", {"size_bytes": "int:count"}),
    (log_base, "map", {"revenue": "float:pos"}),
    (sqrt_area, "map", {"area": "float:pos"}),
    (exp_decay, "map", {"age_days": "int:count"}),
    (floor_price, "map", {"price": "float"}),
    (ceil_boxes, "map", {"qty": "int:qty"}),
    (fabs_error, "map", {"actual": "float", "forecast": "float"}),
    (hypot_dist, "map", {"dx": "float", "dy": "float"}),
    (euclid_dist, "map", {"dx": "float", "dy": "float"}),
    (sigmoid, "map", {"logit": "float:logit"}),
    (zscore, "map", {"price": "float"}),
    (is_nan_price, "filter", {"price": "float"}),
    (finite_price, "filter", {"price": "float"}),
    (bearing, "map", {"dx": "float", "dy": "float"}),
    (deg_to_rad, "map", {"lat": "float:lat"}),
    (haversine_km, "map", {"lat": "float:lat", "lon": "float:lon", "dest_lat": "float:lat", "dest_lon": "float:lon"}),
    (cos_lat, "map", {"lat": "float:lat"}),
    (tanh_score, "map", {"logit": "float:logit"}),
    (trunc_amount, "map", {"amount": "float"}),
    (pow_growth, "map", {"revenue": "float", "years": "int:small"}),
    (np_sqrt, "map", {"x": "float:pos"}),
    (np_log1p, "map", {"views": "int:count"}),
    (np_clip, "map", {"ratio": "float"}),
    (np_sign, "map", {"delta": "float"}),
    (np_round, "map", {"price": "float"}),
    (np_exp, "map", {"rate": "float:rate"}),
    (np_abs, "map", {"delta": "float"}),
    (np_isnan, "filter", {"price": "float"}),
    (np_floor_div, "map", {"price": "float"}),
    (np_float, "map", {"price": "float"}),
    (np_maximum, "map", {"price": "float"}),
    (np_log_ratio, "map", {"revenue": "float:pos", "prev_revenue": "float:pos"}),
    (int_of_float, "map", {"qty_f": "float"}),
    (float_of_int, "map", {"views": "int"}),
    (round_half, "map", {"rating": "float:rating"}),
    (round_int, "map", {"price": "float"}),
    (abs_float, "map", {"delta": "float"}),
    (pow_int, "map", {"n": "int"}),
    (isclose_total, "filter", {"actual": "float", "forecast": "float"}),
    (nan_to_zero, "map", {"price": "float"}),
    (self_neq_nan, "filter", {"price": "float"}),
    (gcd_pack, "map", {"qty": "int:qty"}),
    (copysign_delta, "map", {"delta": "float"}),
]

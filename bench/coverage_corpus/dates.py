"""Dates and timestamps: calendar parts, durations, windows, ages, formatting, parsing."""

from datetime import date, datetime, timedelta, timezone

CUTOFF = date(2024, 1, 1)
LAUNCH = datetime(2023, 6, 1, 9, 0)
EPOCH = datetime(1970, 1, 1)


def order_year(r):
    return {**r, "year": r["order_date"].year}


def order_month(r):
    return {**r, "month": r["order_date"].month}


def year_month(r):
    return {**r, "ym": r["order_date"].year * 100 + r["order_date"].month}


def order_day(r):
    return {**r, "day": r["order_date"].day}


def quarter(r):
    return {**r, "quarter": (r["order_date"].month - 1) // 3 + 1}


def in_2024(r):
    return r["order_date"].year == 2024


def after_cutoff(r):
    return r["order_date"] >= CUTOFF


def in_q1_2024(r):
    return date(2024, 1, 1) <= r["order_date"] < date(2024, 4, 1)


def shipped_late(r):
    return r["shipped_date"] > r["promised_date"]


def december(r):
    return r["order_date"].month == 12


def weekday(r):
    return {**r, "weekday": r["order_date"].weekday()}


def is_weekend(r):
    return r["order_date"].weekday() >= 5


def iso_date(r):
    return {**r, "date_str": r["order_date"].isoformat()}


def month_label(r):
    return {**r, "month_label": r["order_date"].strftime("%Y-%m")}


def days_to_ship(r):
    return {**r, "days_to_ship": (r["shipped_date"] - r["order_date"]).days}


def minutes_between(r):
    return {**r, "minutes": (r["end"] - r["start"]).total_seconds() / 60}


def session_seconds(r):
    return {**r, "seconds": (r["ended_at"] - r["started_at"]).total_seconds()}


def due_date(r):
    return {**r, "due": r["invoice_date"] + timedelta(days=30)}


def expires_at(r):
    return {**r, "expires_at": r["created_at"] + timedelta(hours=24)}


def created_date(r):
    return {**r, "created_day": r["created_at"].date()}


def created_hour(r):
    return {**r, "hour": r["created_at"].hour}


def business_hours(r):
    return 9 <= r["created_at"].hour < 18


def created_year(r):
    return {**r, "year": r["created_at"].year}


def since_launch(r):
    return r["created_at"] >= LAUNCH


def epoch_seconds(r):
    return {**r, "epoch": (r["ts"] - EPOCH).total_seconds()}


def ts_iso(r):
    return {**r, "ts_str": r["ts"].isoformat()}


def ts_minute_bucket(r):
    return {**r, "bucket": r["ts"].replace(second=0, microsecond=0)}


def first_of_month(r):
    return {**r, "month_start": r["order_date"].replace(day=1)}


def age_years(r):
    return {**r, "age": (r["as_of"] - r["birth_date"]).days // 365}


def age_exact(r):
    today = r["as_of"]
    born = r["birth_date"]
    return {**r, "age": today.year - born.year - ((today.month, today.day) < (born.month, born.day))}


def adult(r):
    return r["as_of"].year - r["birth_date"].year >= 18


def parse_iso_date(r):
    return {**r, "order_date": date.fromisoformat(r["order_date_text"])}


def parse_ts(r):
    return {**r, "ts": datetime.strptime(r["ts_text"], "%Y-%m-%d %H:%M:%S")}


def utc_hour(r):
    return {**r, "hour_utc": r["event_ts"].hour}


def utc_date(r):
    return {**r, "event_day": r["event_ts"].date()}


def to_naive_utc(r):
    return {**r, "event_ts": r["event_ts"].astimezone(timezone.utc).replace(tzinfo=None)}


def recent_event(r):
    return r["event_ts"] >= datetime(2024, 1, 1, tzinfo=timezone.utc)


def same_day(r):
    return r["start"].date() == r["end"].date()


def late_night(r):
    return r["ts"].hour >= 22 or r["ts"].hour < 6


def fiscal_year(r):
    return {**r, "fiscal_year": r["order_date"].year + 1 if r["order_date"].month >= 7 else r["order_date"].year}


def day_of_year(r):
    return {**r, "doy": r["order_date"].timetuple().tm_yday}


def iso_week(r):
    return {**r, "week": r["order_date"].isocalendar()[1]}


def date_key(r):
    d = r["order_date"]
    return {**r, "date_key": d.year * 10000 + d.month * 100 + d.day}


def same_month(r):
    return r["order_date"].year == r["shipped_date"].year and r["order_date"].month == r["shipped_date"].month


DAY = {"order_date": "date"}
SHIP = {"order_date": "date", "shipped_date": "date"}
SPAN = {"start": "datetime", "end": "datetime"}

def due_by_terms(r):
    return {**r, "due": r["invoice_date"] + timedelta(days=r["terms_days"])}


def session_end(r):
    return {**r, "ends_at": r["ts"] + timedelta(minutes=r["duration_min"])}

FUNCTIONS = [
    (order_year, "map", DAY),
    (order_month, "map", DAY),
    (year_month, "map", DAY),
    (order_day, "map", DAY),
    (quarter, "map", DAY),
    (in_2024, "filter", DAY),
    (after_cutoff, "filter", DAY),
    (in_q1_2024, "filter", DAY),
    (shipped_late, "filter", {"shipped_date": "date", "promised_date": "date"}),
    (december, "filter", DAY),
    (weekday, "map", DAY),
    (is_weekend, "filter", DAY),
    (iso_date, "map", DAY),
    (month_label, "map", DAY),
    (days_to_ship, "map", SHIP),
    (minutes_between, "map", SPAN),
    (session_seconds, "map", {"started_at": "datetime", "ended_at": "datetime"}),
    (due_date, "map", {"invoice_date": "date"}),
    (expires_at, "map", {"created_at": "datetime"}),
    (created_date, "map", {"created_at": "datetime"}),
    (created_hour, "map", {"created_at": "datetime"}),
    (business_hours, "filter", {"created_at": "datetime"}),
    (created_year, "map", {"created_at": "datetime"}),
    (since_launch, "filter", {"created_at": "datetime"}),
    (epoch_seconds, "map", {"ts": "datetime"}),
    (ts_iso, "map", {"ts": "datetime"}),
    (ts_minute_bucket, "map", {"ts": "datetime"}),
    (first_of_month, "map", DAY),
    (age_years, "map", {"as_of": "date", "birth_date": "date:birth"}),
    (age_exact, "map", {"as_of": "date", "birth_date": "date:birth"}),
    (adult, "filter", {"as_of": "date", "birth_date": "date:birth"}),
    (parse_iso_date, "map", {"order_date_text": "str:isodate"}),
    (parse_ts, "map", {"ts_text": "str:isots"}),
    (utc_hour, "map", {"event_ts": "datetime:utc"}),
    (utc_date, "map", {"event_ts": "datetime:utc"}),
    (to_naive_utc, "map", {"event_ts": "datetime:utc"}),
    (recent_event, "filter", {"event_ts": "datetime:utc"}),
    (same_day, "filter", SPAN),
    (late_night, "filter", {"ts": "datetime"}),
    (fiscal_year, "map", DAY),
    (day_of_year, "map", DAY),
    (iso_week, "map", DAY),
    (date_key, "map", DAY),
    (same_month, "filter", SHIP),
    (due_by_terms, "map", {"invoice_date": "date", "terms_days": "int"}),
    (session_end, "map", {"ts": "datetime", "duration_min": "int"}),
]

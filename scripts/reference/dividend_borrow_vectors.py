#!/usr/bin/env python3
"""Independent reference vectors for the dividend math (compute/src/dividend.rs).

Writes compute/tests/data/dividend_borrow_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/dividend_borrow_vectors.py

Data: a deterministic quarterly payer from 2019 to 2026 (ex-dates on the 12th of Feb/May/Aug/Nov
moved off weekends to the Monday, amounts rising each January by a fixed schedule, one cut
year), evaluated at several as-of dates; and a grid of spot / forward / rate / years cases for
the put-call parity implied dividend. Inputs and expected figures are both written into the
JSON, so the Rust test needs nothing else.

Every figure is computed here with pandas / numpy, never from the Rust output:

* declared yield = amount x payments per year / price x 100;
* trailing 12 months = sum of amounts with ex-date in (as_of - 365 days, as_of];
* complete calendar-year totals: pandas groupby year over the years after the first ex-date's
  year and before the as-of year; CAGR = (last / first) ** (1 / (years - 1)) - 1, x 100, None
  below two years or with a non-positive first total;
* growth = latest annualised amount / annualised amount of the payment nearest (as_of-latest
  ex-date - 365 days), within 45 days, - 1, x 100;
* implied dividend PV = S - F * exp(-r T), annualised = PV / T.

The borrow-rate figures are not part of this file yet (the borrow endpoint is not served).
Deterministic: no randomness, no wall-clock data.
"""

import math
import os

import numpy as np
import pandas as pd

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "dividend_borrow_vectors.json")

AMOUNT_BY_YEAR = {
    2019: 0.41, 2020: 0.43, 2021: 0.43, 2022: 0.30, 2023: 0.33, 2024: 0.36, 2025: 0.385,
    2026: 0.41,
}
AS_OF = ["2021-06-30", "2022-01-03", "2024-11-12", "2026-11-20"]


def payments():
    rows = []
    for year, amount in AMOUNT_BY_YEAR.items():
        for month in (2, 5, 8, 11):
            day = pd.Timestamp(year=year, month=month, day=12)
            while day.weekday() >= 5:
                day += pd.Timedelta(days=1)
            rows.append((day, amount))
    return pd.DataFrame(rows, columns=["ex_date", "amount"])


def figures(frame, as_of):
    past = frame[frame.ex_date <= as_of]
    window = past[past.ex_date > as_of - pd.Timedelta(days=365)]
    trailing = float(window.amount.sum())
    first_year = int(past.ex_date.dt.year.min())
    by_year = past.groupby(past.ex_date.dt.year).amount.sum()
    years = list(range(first_year + 1, as_of.year))
    totals = [[y, float(by_year.get(y, 0.0))] for y in years]
    if len(totals) >= 2 and totals[0][1] > 0:
        span = totals[-1][0] - totals[0][0]
        cagr = ((totals[-1][1] / totals[0][1]) ** (1.0 / span) - 1.0) * 100.0
    else:
        cagr = None
    latest = past.iloc[-1]
    target = latest.ex_date - pd.Timedelta(days=365)
    gaps = (past.ex_date - target).abs().dt.days
    near = past[gaps <= 45]
    growth = None
    if len(near):
        earlier = near.loc[gaps[gaps <= 45].idxmin()]
        growth = (latest.amount * 4 / (earlier.amount * 4) - 1.0) * 100.0
    return {
        "as_of": as_of.date().isoformat(),
        "trailing_annual": trailing,
        "annual_totals": totals,
        "cagr_pct": cagr,
        "growth_pct": growth,
        "latest_amount": float(latest.amount),
    }


def main():
    frame = payments()
    cases = [figures(frame, pd.Timestamp(a)) for a in AS_OF]
    yields = []
    for amount, per_year, price in [(0.41, 4, 187.3), (0.05, 12, 91.0), (1.2, 2, 55.5), (3.0, 1, 240.0)]:
        yields.append({"amount": amount, "per_year": per_year, "price": price,
                       "yield_pct": amount * per_year / price * 100.0})
    implied = []
    for s, q, r, t in [(100.0, 0.02, 0.05, 0.5), (187.3, 0.009, 0.043, 1.1), (55.5, 0.0, 0.01, 0.08),
                       (4500.0, 0.014, 0.045, 0.75)]:
        f = s * np.exp((r - q) * t)
        pv = s - f * math.exp(-r * t)
        implied.append({"s": s, "f": float(f), "r": r, "t": t, "pv": pv, "annualised": pv / t})
    payload = {
        "payments": [[d.date().isoformat(), float(a)] for d, a in zip(frame.ex_date, frame.amount)],
        "cases": cases,
        "yields": yields,
        "implied": implied,
        "versions": {"numpy": np.__version__, "pandas": pd.__version__},
    }
    write_vectors(OUT, payload, indent=1)


if __name__ == "__main__":
    main()

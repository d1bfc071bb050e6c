#!/usr/bin/env python3
"""Independent reference vectors for the earnings and seasonality math (compute/src/earnings.rs,
compute/src/vol/close.rs, compute/src/vol/stats.rs, compute/src/seasonality.rs).

Writes compute/tests/data/earnings_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/earnings_vectors.py

Data: the last 1,300 sessions (2013-10 .. 2018-12) of the S&P 500 daily open/close bundled with
the `arch` package (`arch.data.sp500`), cut at 2018-12-14 so the final month is incomplete.
On those sessions, a deterministic set of earnings reports (every 63rd session from the 30th:
after the close of the session before, before the open of the session itself, or of unknown
timing) and a deterministic 30-day IV series with a bump at the close before each reaction.
Inputs and expected figures are both written into the JSON, so the Rust test needs nothing else.

Every figure is computed here with pandas / numpy, never from the Rust output:

* reaction session: before-open -> the first session on or after the report date; after-close
  -> the first session after it; unknown timing -> no gap; none more than 5 days after the
  report date or at index 0.
* gap = open of the reaction session / close of the session before - 1, x 100; up when >= 0;
  beat when actual >= estimate; the statistics by direction and by beat/miss; IV crush =
  (iv before - iv after) / iv before x 100 with its mean and median.
* drift at 1/5/10/20 sessions = close of the h-th session from the reaction (the reaction
  session first) / reaction open - 1, x 100, where the series reaches; continuation / reversal
  rates over the events with a non-zero gap, mean drift by gap sign.
* seasonality over 3 years: pandas month-end (quarter-end) last closes, pct_change x 100, the
  last 36 (12) complete periods, grouped by calendar month (quarter): mean, median, sample std
  (ddof=1), share > 0, count.

Deterministic: no randomness, no wall-clock data.
"""

import math
import os

import numpy as np
import pandas as pd
from arch.data import sp500

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "earnings_vectors.json")

SESSIONS = 1300
CUT = pd.Timestamp("2018-12-14")
HORIZONS = [1, 5, 10, 20]
MAX_REACTION_DELAY_DAYS = 5


def none_if_nan(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def main():
    data = sp500.load().iloc[-SESSIONS:]
    data = data[data.index <= CUT]
    dates = [d.date() for d in data.index]
    opens = data["Open"].astype(float).tolist()
    closes = data["Close"].astype(float).tolist()
    n = len(dates)

    # --- the reports --------------------------------------------------------------------------
    reports = []
    k = 0
    while 30 + 63 * k < n:
        r = 30 + 63 * k
        kind = ["amc", "bmo", "tbd"][k % 3]
        report_date = dates[r - 1] if kind == "amc" else dates[r]
        estimate = 1.0 + 0.05 * k
        actual = estimate + (0.03 if k % 4 != 1 else -0.04)
        reports.append(
            {"date": report_date.isoformat(), "timing": kind, "eps_estimate": estimate, "eps_actual": actual}
        )
        k += 1

    date_index = pd.DatetimeIndex(pd.to_datetime(dates))

    def reaction(report):
        d = pd.Timestamp(report["date"])
        if report["timing"] == "bmo":
            i = int(date_index.searchsorted(d, side="left"))
        elif report["timing"] == "amc":
            i = int(date_index.searchsorted(d, side="right"))
        else:
            return None
        if i < 1 or i >= n or (date_index[i] - d).days > MAX_REACTION_DELAY_DAYS:
            return None
        return i

    reactions = [(rep, reaction(rep)) for rep in reports]
    reactions = [(rep, s) for rep, s in reactions if s is not None]
    reaction_sessions = {s for _, s in reactions}

    # A 30-day IV per session: a slow wave, raised at the close before each reaction.
    iv = [15.0 + 5.0 * math.sin(i / 17.0) + (12.0 if (i + 1) in reaction_sessions else 0.0) for i in range(n)]

    rows = []
    for rep, s in reactions:
        gap = (opens[s] / closes[s - 1] - 1.0) * 100.0
        drift = []
        for h in HORIZONS:
            j = s + h - 1
            drift.append((closes[j] / opens[s] - 1.0) * 100.0 if j < n else None)
        rows.append(
            {
                "report_date": rep["date"],
                "session": s,
                "gap": gap,
                "beat": rep["eps_actual"] >= rep["eps_estimate"],
                "iv_before": iv[s - 1],
                "iv_after": iv[s],
                "drift": drift,
            }
        )
    frame = pd.DataFrame(rows)
    gaps = frame["gap"]
    crush = (frame["iv_before"] - frame["iv_after"]) / frame["iv_before"] * 100.0

    def mean_or_none(series):
        return none_if_nan(series.mean()) if len(series) else None

    stats = {
        "total_earnings": int(len(frame)),
        "up_count": int((gaps >= 0).sum()),
        "down_count": int((gaps < 0).sum()),
        "beat_count": int(frame["beat"].sum()),
        "miss_count": int((~frame["beat"]).sum()),
        "avg_move_pct": mean_or_none(gaps),
        "avg_abs_move_pct": mean_or_none(gaps.abs()),
        "avg_up_move_pct": mean_or_none(gaps[gaps >= 0]),
        "avg_down_move_pct": mean_or_none(gaps[gaps < 0]),
        "avg_beat_move_pct": mean_or_none(gaps[frame["beat"]]),
        "avg_miss_move_pct": mean_or_none(gaps[~frame["beat"]]),
        "max_up_pct": none_if_nan(gaps[gaps >= 0].max()),
        "max_down_pct": none_if_nan(gaps[gaps < 0].min()),
        "avg_iv_crush_pct": none_if_nan(crush.mean()),
        "median_iv_crush_pct": none_if_nan(crush.median()),
    }

    drift_stats = []
    for hi, h in enumerate(HORIZONS):
        pairs = [(r["gap"], r["drift"][hi]) for r in rows if r["gap"] != 0.0 and r["drift"][hi] is not None]
        g = np.array([p[0] for p in pairs])
        d = np.array([p[1] for p in pairs])
        drift_stats.append(
            {
                "horizon": h,
                "events": len(pairs),
                "continuation_rate": float(np.mean(g * d > 0) * 100.0) if len(pairs) else None,
                "reversal_rate": float(np.mean(g * d < 0) * 100.0) if len(pairs) else None,
                "avg_drift_positive_gap": float(d[g > 0].mean()) if (g > 0).any() else None,
                "avg_drift_negative_gap": float(d[g < 0].mean()) if (g < 0).any() else None,
            }
        )

    # --- seasonality --------------------------------------------------------------------------
    close_series = pd.Series(closes, index=date_index)

    def seasonal(freq, per_year, label):
        last = close_series.groupby(close_series.index.to_period(freq)).last()
        returns = (last.pct_change() * 100.0).iloc[1:]
        returns = returns.iloc[:-1]  # the final period of the series is incomplete
        returns = returns.iloc[-3 * per_year :]
        out = {}
        for key, group in returns.groupby(label(returns.index)):
            values = group.to_numpy()
            out[str(int(key))] = {
                "returns": values.tolist(),
                "avg": float(values.mean()),
                "median": float(np.median(values)),
                "std": float(values.std(ddof=1)) if len(values) > 1 else None,
                "positive_pct": float((values > 0).mean() * 100.0),
            }
        first = returns.index[0]
        last_p = returns.index[-1]
        return out, [first.year, first.month if freq == "M" else first.quarter], [
            last_p.year,
            last_p.month if freq == "M" else last_p.quarter,
        ]

    monthly, first_month, last_month = seasonal("M", 12, lambda idx: idx.month)
    quarterly, _, _ = seasonal("Q", 4, lambda idx: idx.quarter)

    out = {
        "source": "arch.data.sp500 (S&P 500 daily bars), last 1,300 sessions cut at 2018-12-14; "
        "synthetic reports and IV; figures by scripts/reference/earnings_vectors.py",
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "inputs": {
            "dates": [d.isoformat() for d in dates],
            "opens": opens,
            "closes": closes,
            "iv30d": iv,
            "reports": reports,
        },
        "reactions": [{"report_date": r["report_date"], "session": r["session"], "gap": r["gap"]} for r in rows],
        "statistics": stats,
        "drift_horizons": HORIZONS,
        "drift_events": [{"session": r["session"], "drift": r["drift"]} for r in rows],
        "drift_statistics": drift_stats,
        "seasonality": {
            "years": 3,
            "monthly": monthly,
            "quarterly": quarterly,
            "first_month": first_month,
            "last_month": last_month,
        },
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    write_vectors(OUT, out, indent=1)
    print(f"wrote {OUT}: {len(rows)} reactions of {len(reports)} reports over {n} sessions")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Independent reference vectors for the volatility math (compute/src/vol).

Writes compute/tests/data/vol_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/vol_vectors.py

Data: the last 1,300 sessions (2013-10 .. 2018-12) of the S&P 500 daily OHLC bundled with
the `arch` package (`arch.data.sp500`, Yahoo Finance data shipped in arch's test data); the
bars and dates are written into the JSON so the Rust tests need nothing else.

Every figure is computed here with numpy / pandas / arch, never from the Rust output:

* hv: close-to-close HV at 10/20/60/252 sessions: pandas rolling std (ddof=1) of log returns
  x sqrt(252) x 100; the full rolling series of each window.
* cone: per window, min / p10 / p25 / p50 / p75 / p90 / max / mean of that rolling series
  (NaNs dropped) with np.percentile's default "linear" method (rank p*(n-1), the definition
  `vol::distribution` documents).
* iv_rank: a deterministic IV series built from the HV20 series (1.1*hv20 + 2 + 1.5 sin(i/9));
  rank = (cur - min)/(max - min)*100 over the previous 252 values, percentile = share of them
  strictly below today (x100), as `vol::iv_rank_percentile` and `vol::percentile_of` define.
* range: Parkinson, Garman-Klass and Yang-Zhang written out in numpy (formulas in the Rust
  module docs) at 10/20/60/252 sessions as of the last bar, and the 20-session rolling series.
* garch: arch's arch_model(r, mean="Constant", vol="GARCH", p=1, q=1, dist="normal") on
  100 * log returns (all 1,299, and the last 500), fitted with a tight SLSQP tolerance; its
  params, log-likelihood, backcast, last conditional variance and forecast(horizon=h)
  variances, annualised as sqrt(252 * mean of the h daily variances).
* vix: a plain Python implementation of the Cboe white-paper steps on synthetic two-term SPX
  chains (Black-76 prices on a skewed smile, rounded to ticks, bid/ask around them, zero bids
  in the wings and one isolated zero bid on each side).

Deterministic: fixed seeds, no wall-clock data.
"""

import math
import os
import platform

import arch
import numpy as np
import pandas as pd
from arch import arch_model
from arch.data import sp500
from scipy.stats import norm

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "vol_vectors.json")

SESSIONS = 1300
HV_WINDOWS = [10, 20, 60, 252]
RANGE_WINDOWS = [10, 20, 60, 252]
ANNUAL = 252.0


def nan_to_none(values):
    return [None if (v is None or (isinstance(v, float) and math.isnan(v))) else float(v) for v in values]


# --- realized vol, cones, ranks -------------------------------------------------------------


def hv_block(close: pd.Series) -> dict:
    r = np.log(close).diff()
    out = {"windows": HV_WINDOWS, "last": {}, "series": {}, "cone": {}}
    for w in HV_WINDOWS:
        series = r.rolling(w).std(ddof=1) * math.sqrt(ANNUAL) * 100.0
        out["series"][str(w)] = nan_to_none(series.to_numpy())
        out["last"][str(w)] = float(series.iloc[-1])
        values = series.dropna().to_numpy()
        p = np.percentile(values, [10, 25, 50, 75, 90])
        out["cone"][str(w)] = {
            "count": int(values.size),
            "min": float(values.min()),
            "p10": float(p[0]),
            "p25": float(p[1]),
            "p50": float(p[2]),
            "p75": float(p[3]),
            "p90": float(p[4]),
            "max": float(values.max()),
            "mean": float(values.mean()),
        }
    return out


def iv_rank_block(close: pd.Series) -> dict:
    hv20 = (np.log(close).diff().rolling(20).std(ddof=1) * math.sqrt(ANNUAL) * 100.0).dropna()
    i = np.arange(hv20.size)
    iv = (1.1 * hv20.to_numpy() + 2.0 + 1.5 * np.sin(i / 9.0))[-253:]
    lookback, current = iv[:-1], iv[-1]
    lo, hi = lookback.min(), lookback.max()
    vrp = iv - hv20.to_numpy()[-253:]
    return {
        "iv_series": [float(v) for v in iv],
        "current": float(current),
        "rank": float(np.clip((current - lo) / (hi - lo) * 100.0, 0.0, 100.0)),
        "percentile": float(np.mean(lookback < current) * 100.0),
        "min": float(lo),
        "max": float(hi),
        "mean": float(lookback.mean()),
        "std": float(lookback.std(ddof=1)),
        "vrp_series": [float(v) for v in vrp],
        "vrp_percentile_of_last": float(np.mean(vrp[:-1] < vrp[-1]) * 100.0),
    }


# --- range estimators ------------------------------------------------------------------------


def parkinson(o, h, l, c):
    return np.sum(np.log(h / l) ** 2) / (4.0 * math.log(2.0) * h.size)


def garman_klass(o, h, l, c):
    return np.mean(0.5 * np.log(h / l) ** 2 - (2.0 * math.log(2.0) - 1.0) * np.log(c / o) ** 2)


def yang_zhang(o, h, l, c):
    # Arrays hold N + 1 bars: bar 0 only gives the close before the window.
    n = o.size - 1
    overnight = np.log(o[1:] / c[:-1])
    open_close = np.log(c[1:] / o[1:])
    hh, ll, oo, cc = h[1:], l[1:], o[1:], c[1:]
    rs = np.log(hh / cc) * np.log(hh / oo) + np.log(ll / cc) * np.log(ll / oo)
    k = 0.34 / (1.34 + (n + 1) / (n - 1))
    return np.var(overnight, ddof=1) + k * np.var(open_close, ddof=1) + (1 - k) * np.mean(rs)


ESTIMATORS = {"parkinson": (parkinson, 0), "garman_klass": (garman_klass, 0), "yang_zhang": (yang_zhang, 1)}


def annualised(daily_variance):
    return 100.0 * math.sqrt(ANNUAL * max(daily_variance, 0.0))


def range_block(bars: pd.DataFrame) -> dict:
    o, h, l, c = (bars[k].to_numpy() for k in ("Open", "High", "Low", "Close"))
    out = {"windows": RANGE_WINDOWS, "last": {}, "series_20": {}}
    for name, (fn, extra) in ESTIMATORS.items():
        out["last"][name] = {}
        for w in RANGE_WINDOWS:
            s = slice(o.size - w - extra, o.size)
            out["last"][name][str(w)] = annualised(fn(o[s], h[s], l[s], c[s]))
        series = []
        for i in range(o.size):
            start = i + 1 - 20 - extra
            if start < 0:
                series.append(None)
            else:
                s = slice(start, i + 1)
                series.append(annualised(fn(o[s], h[s], l[s], c[s])))
        out["series_20"][name] = series
    return out


# --- GARCH -----------------------------------------------------------------------------------

HORIZONS = [1, 5, 20, 60]


def garch_case(name: str, returns_pct: np.ndarray) -> dict:
    model = arch_model(returns_pct, mean="Constant", vol="GARCH", p=1, q=1, dist="normal", rescale=False)
    res = model.fit(disp="off", tol=1e-12, options={"maxiter": 5000})
    assert res.convergence_flag == 0, res.optimization_result
    forecast = res.forecast(horizon=max(HORIZONS), reindex=False).variance.to_numpy()[-1]
    mu, omega, alpha, beta = (float(res.params[k]) for k in ("mu", "omega", "alpha[1]", "beta[1]"))
    return {
        "name": name,
        "returns_from": int(SESSIONS - 1 - returns_pct.size),
        "observations": int(returns_pct.size),
        "mu": mu,
        "omega": omega,
        "alpha": alpha,
        "beta": beta,
        "log_likelihood": float(res.loglikelihood),
        "backcast": float(model._backcast),
        "last_variance": float(res.conditional_volatility[-1] ** 2),
        "variance_forecast": [float(v) for v in forecast],
        "forecast_vol_pct": {str(h): math.sqrt(ANNUAL * float(np.mean(forecast[:h]))) for h in HORIZONS},
        "long_run_vol_pct": math.sqrt(ANNUAL * omega / (1.0 - alpha - beta)),
    }


# --- VIX on synthetic chains --------------------------------------------------------------------


def synthetic_chain(rng, forward, years, rate, strikes, atm_vol):
    """Black-76 mids on a skewed smile, quoted on a 0.05 tick; far wings bid 0."""
    rows = []
    discount = math.exp(-rate * years)
    for k in strikes:
        m = math.log(k / forward)
        vol = atm_vol - 0.35 * m + 0.9 * m * m
        sd = vol * math.sqrt(years)
        d1 = (-m + 0.5 * sd * sd) / sd
        d2 = d1 - sd
        call = discount * (forward * norm.cdf(d1) - k * norm.cdf(d2))
        put = discount * (k * norm.cdf(-d2) - forward * norm.cdf(-d1))
        quotes = []
        for value in (call, put):
            half = max(0.05, round(0.02 * value / 0.05) * 0.05)
            bid = max(0.0, math.floor((value - half * rng.uniform(0.5, 1.0)) / 0.05) * 0.05)
            ask = max(bid + 0.05, math.ceil((value + half * rng.uniform(0.5, 1.0)) / 0.05) * 0.05)
            if value < 0.04:
                bid = 0.0
            quotes.append((round(bid, 2), round(ask, 2)))
        rows.append([float(k), quotes[0][0], quotes[0][1], quotes[1][0], quotes[1][1]])
    return rows


def white_paper_term(rows, years, rate):
    """The white paper's steps, one expiration (rows: strike, call bid/ask, put bid/ask)."""
    growth = math.exp(rate * years)
    both = [(k, (cb + ca) / 2, (pb + pa) / 2) for k, cb, ca, pb, pa in rows if cb > 0 and pb > 0]
    best = min(both, key=lambda x: (abs(x[1] - x[2]), x[0]))
    forward = best[0] + growth * (best[1] - best[2])
    strikes = [r[0] for r in rows]
    i0 = max(i for i, k in enumerate(strikes) if k <= forward)
    k0 = strikes[i0]
    picked = []
    zeros = 0
    for i in range(i0 - 1, -1, -1):
        if rows[i][3] > 0:
            zeros = 0
            picked.insert(0, (rows[i][0], (rows[i][3] + rows[i][4]) / 2))
        else:
            zeros += 1
            if zeros == 2:
                break
    puts = len(picked)
    r0 = rows[i0]
    picked.append((k0, ((r0[1] + r0[2]) / 2 + (r0[3] + r0[4]) / 2) / 2))
    zeros = 0
    calls = 0
    for i in range(i0 + 1, len(rows)):
        if rows[i][1] > 0:
            zeros = 0
            calls += 1
            picked.append((rows[i][0], (rows[i][1] + rows[i][2]) / 2))
        else:
            zeros += 1
            if zeros == 2:
                break
    total = 0.0
    for j, (k, q) in enumerate(picked):
        if j == 0:
            dk = picked[1][0] - k
        elif j == len(picked) - 1:
            dk = k - picked[j - 1][0]
        else:
            dk = (picked[j + 1][0] - picked[j - 1][0]) / 2
        total += dk / (k * k) * growth * q
    adjustment = (forward / k0 - 1) ** 2 / years
    return {
        "forward_strike": best[0],
        "forward": forward,
        "k0": k0,
        "puts_used": puts,
        "calls_used": calls,
        "lowest_strike": picked[0][0],
        "highest_strike": picked[-1][0],
        "strip_sum": total,
        "forward_adjustment": adjustment,
        "variance": 2 / years * total - adjustment,
    }


def vix_block() -> list:
    rng = np.random.default_rng(20240601)
    cases = []
    for case, (spot, atm) in enumerate([(4500.0, 0.16), (3800.0, 0.30), (5200.0, 0.11)]):
        terms = []
        for days, minutes_extra, rate in [(24, 510, 0.0525), (31, 990, 0.0531)]:
            years = (days * 1440 + minutes_extra) / 525600.0
            forward = spot * math.exp(rate * years) * (1.0 + 0.0003 * case)
            # 5-point strikes near the money, 25 further out, 50 in the far wings.
            strikes = sorted(
                set(
                    list(np.arange(round(spot * 0.9 / 5) * 5, spot * 1.06, 5.0))
                    + list(np.arange(round(spot * 0.6 / 25) * 25, spot * 1.2, 25.0))
                    + list(np.arange(round(spot * 0.3 / 50) * 50, spot * 1.4, 50.0))
                )
            )
            rows = synthetic_chain(rng, forward, years, rate, strikes, atm)
            # An isolated zero bid on each side, which must not stop the walk.
            below = [i for i, r in enumerate(rows) if r[0] < spot * 0.93 and r[3] > 0]
            above = [i for i, r in enumerate(rows) if r[0] > spot * 1.03 and r[1] > 0]
            rows[below[len(below) // 2]][3] = 0.0
            rows[above[len(above) // 3]][1] = 0.0
            term = white_paper_term(rows, years, rate)
            terms.append({"years": years, "rate": rate, "chain": rows, "expected": term})
        n1, n2 = terms[0]["years"] * 525600.0, terms[1]["years"] * 525600.0
        v = (
            terms[0]["years"] * terms[0]["expected"]["variance"] * (n2 - 43200.0) / (n2 - n1)
            + terms[1]["years"] * terms[1]["expected"]["variance"] * (43200.0 - n1) / (n2 - n1)
        ) * 525600.0 / 43200.0
        cases.append({"near": terms[0], "next": terms[1], "vix": 100.0 * math.sqrt(v)})
    return cases


def main():
    data = sp500.load().iloc[-SESSIONS:]
    bars = data[["Open", "High", "Low", "Close"]].astype(float)
    returns_pct = 100.0 * np.diff(np.log(bars["Close"].to_numpy()))
    out = {
        "generator": "scripts/reference/vol_vectors.py",
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
            "arch": arch.__version__,
        },
        "source": "arch.data.sp500 (S&P 500 daily OHLC, Yahoo Finance), last %d sessions" % SESSIONS,
        "dates": [d.strftime("%Y-%m-%d") for d in bars.index],
        "open": bars["Open"].tolist(),
        "high": bars["High"].tolist(),
        "low": bars["Low"].tolist(),
        "close": bars["Close"].tolist(),
        "hv": hv_block(bars["Close"]),
        "iv_rank": iv_rank_block(bars["Close"]),
        "range": range_block(bars),
        "garch": [garch_case("all", returns_pct), garch_case("last_500", returns_pct[-500:])],
        "vix": vix_block(),
    }
    write_vectors(OUT, out, separators=(",", ":"))
    print("wrote", OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
